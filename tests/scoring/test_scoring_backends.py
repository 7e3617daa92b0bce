"""BatchScorer's paths agree record for record: merged NPU chunks vs one kernel at a time, worker processes vs
threads; a lost worker scores its kernels internal_error (no hang), and workers die with their parent."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from kcgym.scoring import BatchScorer

ENV = "KernelCraft-NPU-matmul"
SPIN = "C_LOOP_START gp1, 60000\nS_ADDI_INT gp2, gp2, 1\nC_LOOP_END gp1\n"  # runs into the step budget


def mixed(scorer: BatchScorer) -> list[str | None]:
    """Correct (compiler, expert, numbered variants), wrong, syntax error, spin, duplicates and None."""
    env = scorer.env
    compiled = env.accelerator.compile(env.task, env.cfg, env.hw)
    expert = env.accelerator.expert(env.task, env.cfg, env.hw)
    lines = compiled.splitlines()
    stores = [i for i, line in enumerate(lines) if "WO" in line.split("#")[0].upper()]
    wrong = "\n".join(line for i, line in enumerate(lines) if i != stores[-1])
    variants = [f"S_ADDI_INT gp15, gp0, {i}\n{compiled}" for i in range(20)]
    return [compiled, expert, wrong, "NOT_AN_OP gp1\n", SPIN, None, *variants, compiled, wrong, None, expert]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _wait_gone(pid: int, seconds: float = 20.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.fixture(scope="module")
def threads() -> BatchScorer:
    return BatchScorer(ENV, 1, max_workers=2)


def test_merged_chunks_equal_one_kernel_at_a_time(threads: BatchScorer):
    assert threads.env.accelerator.merged_programs > 1  # the NPU merges: the batch below takes that path
    batch = mixed(threads)
    together = threads.score(batch, seed=4)
    alone = [threads.score([k], seed=4)[0].model_copy(update={"index": i}) for i, k in enumerate(batch)]
    assert together == alone
    kinds = {r.error_class for r in together}
    assert {None, "functional", "syntax", "no_kernel"} <= kinds
    assert any(r.error and "STEP_BUDGET" in r.error for r in together)


def test_processes_equal_threads_and_a_lost_worker_scores_internal_error(threads: BatchScorer):
    batch = mixed(threads)
    procs = BatchScorer(ENV, 1, max_workers=2, backend="processes")
    try:
        assert procs.score(batch, seed=4) == threads.score(batch, seed=4)
        pid = procs._workers.start()[0]
        os.kill(pid, 9)
        assert _wait_gone(pid)
        lost = procs.score(batch, seed=4)  # the pool is broken: records, not a hang or an exception
        assert [r.index for r in lost] == list(range(len(batch)))
        pairs = list(zip(batch, lost, strict=True))
        assert all(r.error_class == ("no_kernel" if k is None else "internal_error") for k, r in pairs)
        assert all("scoring worker lost" in r.error for k, r in pairs if k is not None)
        assert procs.score(batch, seed=4) == threads.score(batch, seed=4)  # a fresh pool scores again
    finally:
        procs.close()


def test_bad_backend_and_env_objects_are_refused(threads: BatchScorer):
    with pytest.raises(ValueError, match="backend"):
        BatchScorer(ENV, 1, backend="fork")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="env id"):
        BatchScorer(threads.env, backend="processes")


CHILD = """
import os, sys
from kcgym.scoring import BatchScorer
s = BatchScorer("KernelCraft-NPU-matmul", 1, max_workers=1, backend="processes")
print(*s._workers.start(), flush=True)
os._exit(0)  # no cleanup: the workers must notice on their own
"""


def test_workers_die_with_their_parent():
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.returncode == 0, out.stderr[-2000:]
    pids = [int(p) for p in out.stdout.split()]
    assert pids and all(_wait_gone(p) for p in pids)


class _EchoScorer:
    """A worker's stand-in scorer: a record naming each kernel; a chunk holding "die" kills its worker."""

    def score(self, kernels, seed=0):
        if "die" in kernels:
            os._exit(1)
        from kcgym.scoring import internal_error_scores

        return [internal_error_scores(RuntimeError(f"echo {k}"), 1)[0] for k in kernels]


def _echo_scorer() -> _EchoScorer:
    return _EchoScorer()


def test_a_worker_lost_mid_batch_scores_its_chunks_internal_error_in_order():
    """A worker that dies on a chunk in the middle of a batch: that chunk's kernels (and any chunk the broken
    pool did not finish) score internal_error, every other record is its own kernel's, all in batch order."""
    from kcgym.scoring_workers import WorkerPool

    procs = BatchScorer(ENV, 1, max_workers=2, backend="processes")
    procs._workers = WorkerPool(_echo_scorer, (), 2)
    try:
        kernels: list[str | None] = [f"k{i}" for i in range(100)]
        kernels[60], kernels[7], kernels[90] = "die", None, "k3"  # a None and a duplicate too
        records = procs.score(kernels)
        assert [r.index for r in records] == list(range(len(kernels)))
        lost = [k for k, r in zip(kernels, records, strict=True) if r.error and "scoring worker lost" in r.error]
        assert "die" in lost and len(lost) < len(set(kernels) - {None})  # its chunk lost, not every chunk
        for k, r in zip(kernels, records, strict=True):
            if k is None:
                assert r.error_class == "no_kernel"
            elif k not in lost:
                assert r.error and f"echo {k}" in r.error  # each record is its own kernel's
        kernels[60] = "k60"
        again = procs.score(kernels)  # a fresh pool scores again
        assert all(f"echo {k}" in (r.error or "") for k, r in zip(kernels, again, strict=True) if k is not None)
    finally:
        procs.close()


def test_even_chunks():
    """Chunks of at most ``size``, as few as fit, sizes within one of each other, in order."""
    from kcgym.scoring import _even_chunks

    items = [str(i) for i in range(100)]
    assert [len(c) for c in _even_chunks(items, 32)] == [25, 25, 25, 25]
    assert [len(c) for c in _even_chunks(items, 100)] == [100]
    assert [len(c) for c in _even_chunks(items[:5], 2)] == [2, 2, 1]
    assert sum(_even_chunks(items, 7), []) == items
    assert _even_chunks([], 8) == []
