"""Many NPU programs in one data-path call (``trace.run_many``) against one by one (``trace.run``) and the oracle.

A merged call moves each program into its own range of every memory and runs all their levels together;
every program's whole final state (SRAMs, HBM, registers, accumulators, scoreboard times, the first
non-finite line) must be what it gets alone, bit for bit: on generated programs that fault, overflow and
produce NaNs, on compiler and expert kernels, and on a batch larger than one call (``MERGE_PROGRAMS``).
"""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.evaluation import Evaluator
from kcgym.sims.npu import machine as M
from kcgym.sims.npu import trace
from kcgym.sims.npu.accelerator import ACCELERATOR
from kcgym.tasks import TASKS
from tests.sims.npu.test_trace_differential import (
    HBM_ELEMENTS,
    HW,
    _hbm,
    assert_same_state,
    generated_program,
)

HW_JSON = HW.model_dump_json()
FPM = np.linspace(-2, 2, HW.fpsram_size, dtype=np.float32)


def _words(source: str) -> np.ndarray:
    program = ACCELERATOR.assemble(source, HW)
    return program.padded(M.bucket(program.length, 1024), M.Machine(HW).halt_row)


def _check(words: list[np.ndarray], hbm: np.ndarray, max_steps: int) -> list:
    merged = trace.run_many(HW_JSON, words, hbm, FPM, np.int32(HBM_ELEMENTS), np.int32(max_steps))
    oracle = M.oracle_runner(HW_JSON)[1]
    for w, st in zip(words, merged, strict=True):
        alone = trace.run(HW_JSON, w, hbm, FPM, np.int32(HBM_ELEMENTS), np.int32(max_steps))
        if alone is None:  # left to the oracle alone: so it is merged
            assert st is None
            continue
        assert st is not None
        assert_same_state(st, alone)
        assert_same_state(st, oracle(w, hbm, FPM, np.int32(HBM_ELEMENTS), np.int32(max_steps)))
    return merged


@pytest.mark.parametrize("first", [0, 12])
def test_generated_programs_merged_equal_alone(first):
    """Twelve generated programs (faults, NaNs, step budgets) in one call: each as it runs alone. The second
    batch's HBM image is twice the limit (as the accelerator's bucket is): the merged call holds only the rows
    below the limit and must give the rest back unchanged."""
    words = [_words(generated_program(seed)) for seed in range(first, first + 12)]
    hbm = _hbm(first)
    if first:
        hbm = np.concatenate([hbm, np.full_like(hbm, np.nan)], axis=1)
        hbm[:, -1] = 7.0
    merged = _check(words, hbm, 400 if first else 100_000)
    faults = {int(np.asarray(st.ctl)[0, M.FAULT]) for st in merged if st is not None}
    assert len(faults) >= 2  # the batch mixes clean runs and faults
    assert any(int(np.asarray(st.nan_pc)[1]) >= 0 for st in merged if st is not None)  # and per-program NaN lines


def test_more_programs_than_one_call():
    """A batch past MERGE_PROGRAMS takes several calls; the order of results is the order of programs."""
    words = [_words(generated_program(seed, n_ops=25)) for seed in range(trace.MERGE_PROGRAMS + 3)]
    _check(words, _hbm(3), 100_000)


def test_kernels_whole_state():
    """Compiler and expert kernels of four tasks merged in one call: each whole final state equals its own."""
    words = []
    for name in ("matmul", "softmax", "layernorm", "relu"):
        task = TASKS[name]
        cfg = task.config("NPU", 1)
        words += [_words(s) for s in (ACCELERATOR.compile(task, cfg, HW), ACCELERATOR.expert(task, cfg, HW)) if s]
    _check(words, _hbm(5), 100_000)


@pytest.mark.parametrize("name", ["matmul", "softmax", "layernorm"])
def test_kernels_merged_through_the_accelerator(name):
    """Compiler and expert kernels (plus one of each twice) through ``run_many``: the same RunResults as
    ``run`` gives each alone (outputs, cycles, counts, faults)."""
    task = TASKS[name]
    cfg = task.config("NPU", 1)
    sources = [ACCELERATOR.compile(task, cfg, HW), ACCELERATOR.expert(task, cfg, HW)]
    sources = [s for s in sources if s is not None]
    programs = [ACCELERATOR.assemble(s, HW) for s in [*sources, *sources]]
    inputs = Evaluator(ACCELERATOR, task, cfg, HW).input_sets(0, 2)
    many = ACCELERATOR.run_many(programs, task, cfg, HW, inputs, 1_000_000)
    from tests.sims.trace_contract import assert_same_results

    for program, results in zip(programs, many, strict=True):
        assert_same_results(results, ACCELERATOR.run(program, task, cfg, HW, inputs, 1_000_000))
