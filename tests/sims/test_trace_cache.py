"""The shared trace cache (``kcgym.sims.trace_cache``): bounded, least recently used, and safe to share between
threads (BatchScorer's thread pool and an eval's concurrent episodes put and get in the same cache)."""

from __future__ import annotations

import threading

from kcgym.sims.trace_cache import TraceCache


def test_entries_and_bytes_are_bounded_least_recent_out():
    cache = TraceCache(3, 10, size=len)
    for k in "abc":
        cache.put(k, "xx")
    assert cache.get("a") == "xx"  # "a" is now the most recent: "b" goes first
    cache.put("d", "xx")
    assert cache.get("b") is None and len(cache) == 3
    cache.put("e", "x" * 9)  # bytes past the bound: the oldest go until it fits (the newest entry always stays)
    assert len(cache) == 1 and cache.get("e") == "x" * 9
    cache.put("f", "y" * 50)
    assert cache.values() == ["y" * 50]
    cache.clear()
    assert len(cache) == 0


def test_another_threads_put_waits_for_an_eviction_in_progress():
    """A put from another thread lands while this one's eviction walks the entries' sizes: without the lock the
    walk raised 'OrderedDict mutated during iteration' (an eval with two concurrent episodes did, in the NPU's
    cache)."""
    cache = TraceCache(8, 100, size=None)  # type: ignore[arg-type]
    errors: list[BaseException] = []
    started = threading.Event()
    threads: list[threading.Thread] = []

    def other() -> None:
        started.set()
        cache.put("other", 1)

    def size(value: int) -> int:
        if value == 2 and not started.is_set():  # the first size the eviction asks for: let the other put run
            t = threading.Thread(target=other)
            threads.append(t)
            t.start()
            started.wait(5)
            t.join(0.2)  # (with the lock it waits for this put to finish; without, it mutates the entries now)
        return value

    cache.size = size
    cache.put("one", 2)
    try:
        cache.put("two", 2)
    except RuntimeError as e:  # pragma: no cover - the failure this test exists for
        errors.append(e)
    for t in threads:
        t.join(5)
    assert len(threads) == 1 and not errors, errors
    assert cache.get("other") == 1 and cache.get("one") == 2 and cache.get("two") == 2
