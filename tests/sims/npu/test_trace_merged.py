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


# ---- compact memories (trace.compact_rows): programs touching different rows, the tops of memories ---------
V, R, L = HW.VLEN, HW.v_prefetch_rows, HW.MLEN
TOP_VS = (HW.vsram_rows - R) * V  # the last R rows of VSRAM
TOP_MS = (HW.msram_tiles - 1) * L * L  # the last MSRAM tile
TOP_HBM = HBM_ELEMENTS - R * V  # the last R rows of HBM below the limit


def _lines(*lines: str) -> str:
    return "\n".join(["S_ADDI_INT gp9, gp0, 0", *lines, "C_HALT"]) + "\n"


def _addr(reg: int, value: int) -> list[str]:
    hi, lo = value >> 12, value & 0xFFF
    return [f"S_LUI_INT gp{reg}, {hi}", f"S_ADDI_INT gp{reg}, gp{reg}, {lo}"]


# each program names the rows it touches; every pair shares some HBM rows and differs in the SRAM rows
PROGRAMS = {
    # the tops of VSRAM, MSRAM and HBM: the last rows must stay inside the compact memory (no clamped windows)
    "tops": _lines(*_addr(1, TOP_VS), *_addr(7, TOP_MS), *_addr(10, TOP_HBM), "C_SET_ADDR_REG a2, gp10, gp0",
                   "C_SET_ADDR_REG a1, gp0, gp0", f"H_PREFETCH_V gp1, gp9, a1, 0, {R}", "H_PREFETCH_M gp7, gp9, a1, 0",
                   "M_MM gp7, gp1", "M_TMM gp7, gp1", f"M_MM_WO gp1, {V - HW.BLEN}", "V_EXP_V gp1, gp1",
                   f"H_STORE_V gp1, gp9, a2, 0, {R}"),
    # read-modify-write of HBM rows another program only reads: each must see the input, not the other's write
    "rmw": _lines("S_LI_FP f1, 2.0", "S_ADDI_INT gp1, gp0, 128", "C_SET_ADDR_REG a0, gp0, gp0",
                  "H_PREFETCH_V gp1, gp9, a0, 0, 2", "V_MUL_VF gp1, gp1, f1", "H_STORE_V gp1, gp9, a0, 0, 2"),
    "reader": _lines("S_ADDI_INT gp1, gp0, 640", "S_ADDI_INT gp2, gp0, 4096", "C_SET_ADDR_REG a0, gp0, gp0",
                     "C_SET_ADDR_REG a1, gp2, gp0", "H_PREFETCH_V gp1, gp9, a0, 0, 4", "V_ADD_VV gp1, gp1, gp1",
                     "H_STORE_V gp1, gp9, a1, 0, 4"),
    # strided DMAs (STRIDE of 3 rows): a whole span is one range (the tile 190 rows, only read: shared); the
    # store's own span holds unwritten rows
    "strided": _lines("S_ADDI_INT gp11, gp0, 192", "C_SET_STRIDE_REG gp11", "S_ADDI_INT gp2, gp0, 12288",
                      "C_SET_ADDR_REG a0, gp0, gp0", "C_SET_ADDR_REG a1, gp2, gp0", "S_ADDI_INT gp1, gp0, 2048",
                      "H_PREFETCH_V gp1, gp9, a0, 1, 4", "V_RECI_V gp1, gp1", "H_STORE_V gp1, gp9, a1, 1, 4",
                      "H_PREFETCH_M gp0, gp9, a0, 1", "S_ADDI_INT gp3, gp0, 4", "M_MM gp3, gp1",
                      "M_MM_WO gp1, 4", "H_STORE_V gp1, gp9, a1, 0, 1"),
    # a non-finite value at different steps: every program's own first non-finite line
    "nan_early": _lines("S_ADDI_INT gp1, gp0, 64", "C_SET_ADDR_REG a0, gp0, gp0",
                        f"S_ADDI_INT gp10, gp0, {HBM_ELEMENTS - 640}", "C_SET_ADDR_REG a1, gp10, gp0",
                        "H_PREFETCH_V gp1, gp9, a1, 0, 1", "H_STORE_V gp1, gp9, a0, 0, 1"),
    "nan_late": _lines("S_ADDI_INT gp1, gp0, 64", "C_SET_ADDR_REG a0, gp0, gp0", "H_PREFETCH_V gp1, gp9, a0, 0, 1",
                       "V_EXP_V gp1, gp1", "V_EXP_V gp1, gp1", "V_EXP_V gp1, gp1", "V_EXP_V gp1, gp1",
                       "H_STORE_V gp1, gp9, a0, 0, 1"),
    # faults: an out-of-bounds HBM store after data operations, and a misaligned VSRAM row
    "fault_hbm": _lines("S_ADDI_INT gp1, gp0, 256", "C_SET_ADDR_REG a0, gp0, gp0", "H_PREFETCH_V gp1, gp9, a0, 0, 2",
                        *_addr(10, HBM_ELEMENTS), "C_SET_ADDR_REG a1, gp10, gp0", "H_STORE_V gp1, gp9, a1, 0, 1"),
    "fault_align": _lines("S_ADDI_INT gp1, gp0, 64", "C_SET_ADDR_REG a0, gp0, gp0", "H_PREFETCH_V gp1, gp9, a0, 0, 1",
                          "S_ADDI_INT gp2, gp0, 65", "V_ADD_VV gp1, gp2, gp1"),
    "no_data": _lines("S_ADDI_INT gp3, gp0, 7", "S_LI_FP f2, 1.5"),
}


def _programs() -> list[np.ndarray]:
    return [_words(src) for src in PROGRAMS.values()]


def test_compact_programs_whole_state():
    """The hand-made programs in one call, twice over (so a program meets its own copy): each whole final state
    equals its own alone, and the oracle's; the faults and non-finite lines differ per program."""
    merged = _check(_programs() * 2, _hbm(7), 100_000)
    by = dict(zip(PROGRAMS, merged, strict=False))
    assert int(np.asarray(by["fault_hbm"].ctl)[0, M.FAULT]) == M.F_OOB_HBM
    assert int(np.asarray(by["fault_align"].ctl)[0, M.FAULT]) == M.F_MISALIGNED
    assert int(np.asarray(by["nan_early"].nan_pc)[0]) >= 0
    assert int(np.asarray(by["nan_early"].nan_pc)[0]) != int(np.asarray(by["nan_late"].nan_pc)[0])
    assert int(np.asarray(by["rmw"].nan_pc)[0]) == -1


def test_compact_memory_holds_only_touched_rows():
    """The merged memory holds each program's touched SRAM rows and written HBM rows, not whole memories."""
    d = trace.dims_of(HW, HBM_ELEMENTS)
    lvs = []
    for w in _programs():
        tr = trace.prepass(w, HW, HBM_ELEMENTS, 100_000)
        lvs.append(trace.levelled(tr.ops, HW, d))
    c = trace.compact_rows(lvs, HW, d)
    names = list(PROGRAMS)
    sram = c.bounds[:, 1] - c.bounds[:, 0]
    own_hbm = c.bounds[:, 3] - c.bounds[:, 2]
    # R VSRAM rows (the M_MM windows inside them), one tile, and row 0: V_EXP_V's unused second source (gp0),
    # which the data path gathers all the same
    assert sram[names.index("tops")] == R + L + 1
    assert own_hbm[names.index("tops")] == R
    assert own_hbm[names.index("reader")] == 4  # its store; the rows it reads stay in the shared image
    assert own_hbm[names.index("strided")] == 3 * 3 + 1  # the strided store's whole span (10 rows)
    assert sram[names.index("no_data")] == own_hbm[names.index("no_data")] == 0
    assert len(c.src) == sram.sum() + own_hbm.sum() < d.vs + d.ms


def test_calls_split_by_rows(monkeypatch):
    """Programs past MERGE_ROWS go to the next call (each call at least one program): same states, in order."""
    monkeypatch.setattr(trace, "MERGE_ROWS", 80)
    _check(_programs(), _hbm(8), 100_000)


@pytest.mark.parametrize("first", [0, 12])
def test_partial_states_are_the_whole_ones(first):
    """``whole=False`` (the accelerator's merged runs): what a result reads is the whole state's, HBM up to the
    limit; the rest is empty."""
    words = [_words(generated_program(seed)) for seed in range(first, first + 12)] + _programs()
    hbm = _hbm(first)
    args = (HW_JSON, words, hbm, FPM, np.int32(HBM_ELEMENTS), np.int32(100_000))
    for whole, part in zip(trace.run_many(*args), trace.run_many(*args, whole=False), strict=True):
        if whole is None:
            assert part is None
            continue
        for field in trace.Final._fields:
            a, b = np.asarray(getattr(part, field)), np.asarray(getattr(whole, field))
            if field == "hbm":
                b = b[:, :a.shape[1]]
                assert a.shape[1] == HBM_ELEMENTS
            if field != "prof":
                np.testing.assert_array_equal(a.view(np.int32) if a.dtype == np.float32 else a,
                                              b.view(np.int32) if b.dtype == np.float32 else b, err_msg=field)
        assert np.asarray(part.vs).size == 0


def test_row_buckets():
    """A merged call's rows: at least what it needs, less than a quarter more, few distinct sizes."""
    sizes = {trace._bucket_rows(n) for n in range(1, 20_000)}
    assert all(trace._bucket_rows(n) >= n for n in range(1, 20_000))
    assert all(trace._bucket_rows(n) < 1.25 * n + trace.MERGE_MIN_ROWS for n in range(1, 20_000))
    assert len(sizes) <= 30


def test_one_program_per_call(monkeypatch):
    """MERGE_PROGRAMS = 1 (``bench_scoring.py --merge`` measures it): a compact call of one program each."""
    monkeypatch.setattr(trace, "MERGE_PROGRAMS", 1)
    _check(_programs()[:4], _hbm(9), 100_000)
