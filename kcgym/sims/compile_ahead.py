"""Compiling a data path's jitted functions on a background thread while the pre-pass runs in Python.

A trace-ahead run's first call of its data path compiles it (a second or two cold, on the first simulate of a
shape in a process), and until now that compile waited for the pre-pass to end and the pre-pass for it. XLA
compiles with the GIL released, so a thread that lowers and compiles the functions for the shapes the run will
call them with (``jit(f).lower(*shapes).compile()``) lets the compile use the second core while the pre-pass
goes on; jit keeps the executable, so the run's own calls, made once the future is done, find it (a run waits
for the future before its first call, so nothing compiles twice). A failed compile is only a lost head start:
the run's call then compiles as it always did.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor

MAX_KEYS = 64  # shape keys remembered per process (a forgotten one compiles again only if jit dropped it too)

_EXECUTOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kcgym-compile")
_FUTURES: OrderedDict[Hashable, Future] = OrderedDict()
_LOCK = threading.Lock()


def _after_fork_in_child() -> None:
    """A forked child has none of its parent's threads: a new executor (the old one would queue work for a
    thread that is not there, and a wait on it would never end), no futures, a fresh lock."""
    global _EXECUTOR, _LOCK
    _EXECUTOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kcgym-compile")
    _FUTURES.clear()
    _LOCK = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


def ahead(key: Hashable, compile_fn: Callable[[], object]) -> Future:
    """The future of ``compile_fn()`` for ``key``: submitted to the background thread the first time per key."""
    with _LOCK:
        fut = _FUTURES.get(key)
        if fut is None:
            while len(_FUTURES) >= MAX_KEYS:
                _FUTURES.popitem(last=False)
            fut = _FUTURES[key] = _EXECUTOR.submit(compile_fn)
        return fut


def wait(fut: Future) -> None:
    """Until ``fut`` is done; a compile that failed is left to the caller's own call (never raised here)."""
    with contextlib.suppress(Exception):  # (a head start lost, not an error: the jit call compiles it again)
        fut.result()
