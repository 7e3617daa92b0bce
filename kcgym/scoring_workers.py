"""Persistent scoring worker processes: the pool behind ``BatchScorer(..., backend="processes")``.

Threads share one GIL, and the Python around each simulation (assembly, the trace pre-pass, checking
and records) holds it, so a thread pool scores on about one core; worker processes do not share it.
Each worker is started with ``spawn`` (never ``fork``: forking a process that has started JAX's threads
is unsafe), builds its own scorer once from a picklable factory (env, baseline, hidden inputs, the JIT
compilation: all warm), and is then fed chunks of distinct kernels. Workers die with the parent: each
watches its parent's pid and exits once it is gone. A worker that dies mid-batch breaks the pool: the
chunks it held, and every chunk not yet finished, come back as the exception (the caller scores those
kernels ``internal_error``, never waits forever), and the next batch starts a fresh pool.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

PARENT_POLL_S = 0.5  # how often a worker checks that its parent is alive
STARTUP_PROBE_S = 0.05  # how long one start-up probe holds a worker (start: until every worker has answered)
STARTUP_ROUNDS = 200  # rounds of probes start() sends at most (each waits for its answers: a dead pool raises)

_SCORER: Any = None  # the worker's own scorer (one per worker process)


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(PARENT_POLL_S)
        if os.getppid() != parent:  # re-parented: the parent is gone
            os._exit(1)


def _init(factory: Callable[..., Any], args: tuple, parent: int) -> None:
    global _SCORER
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True, name="kcgym-parent-watch").start()
    _SCORER = factory(*args)


def _score(seed: int, kernels: list[str]) -> list[Any]:
    return _SCORER.score(kernels, seed=seed)


def _pid() -> int:
    time.sleep(STARTUP_PROBE_S)  # long enough that one round of probes spreads over every idle worker
    return os.getpid()


class WorkerPool:
    """``processes`` spawned workers, each holding ``factory(*args)`` (an object with ``score(kernels, seed=)``);
    started at the first batch, kept until :meth:`close` (or a worker dies)."""

    def __init__(self, factory: Callable[..., Any], args: tuple, processes: int):
        if processes < 1:
            raise ValueError(f"a worker pool needs at least one process, got {processes}")
        self.factory, self.args, self.processes = factory, args, int(processes)
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def _executor(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(
                    self.processes, mp_context=multiprocessing.get_context("spawn"), initializer=_init,
                    initargs=(self.factory, self.args, os.getpid()))
            return self._pool

    def score_chunks(self, seed: int, chunks: Sequence[list[str]]) -> list[list[Any] | BaseException]:
        """Each chunk's records, in order, or the exception that lost it (a dead worker: the pool is then
        discarded, the next call starts a new one)."""
        pool = self._executor()
        out: list[list[Any] | BaseException] = []
        broken = False
        futures: list[Future[list[Any]] | BaseException] = []
        for chunk in chunks:
            try:
                futures.append(pool.submit(_score, seed, chunk))
            except Exception as e:  # noqa: BLE001  (a pool already broken refuses new work)
                futures.append(e)
        for f in futures:
            if isinstance(f, BaseException):
                out.append(f)
                broken = True
                continue
            try:
                out.append(f.result())
            except Exception as e:  # noqa: BLE001  (BrokenProcessPool, or a worker's own exception)
                out.append(e)
                broken = True
        if broken:
            self.close()
        return out

    def start(self) -> list[int]:
        """Start every worker and wait until each is warm (it has answered a probe, so its scorer is built):
        their process ids."""
        pool = self._executor()
        seen: set[int] = set()
        for _ in range(STARTUP_ROUNDS):
            seen.update(f.result() for f in [pool.submit(_pid) for _ in range(self.processes)])
            if len(seen) >= self.processes:
                break
        return sorted(seen)

    def close(self) -> None:
        """Stop the workers (pending chunks are cancelled)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    def __del__(self) -> None:
        self.close()
