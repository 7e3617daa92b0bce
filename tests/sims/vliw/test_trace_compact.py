"""The VLIW trace path's compact data-path state (``trace.compact``) against the interpreter.

The data path holds only the rows a trace references (renumbered densely, the rolled region shifted whole,
row 0 a zero row) and EXT's elements ``[0, W)``. These programs sit on its edges -- a DM line nothing
writes, the top DM line, the last EXT row of the image (the window's last row), faults one byte past DM and
EXT, rolled segments whose rows are affine in the iteration, DMAs out of a rolled loop to a moving EXT
address -- and the whole final machine state must be the interpreter's bit for bit, with the compact state
in use (the test checks it was). Also: the EXT window against brute-force enumeration of what a DMA line
touches, ``_decode`` against its per-field definition, and ``simulate``'s in-place EXT.
"""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.evaluation import Evaluator
from kcgym.sims.vliw import machine as M
from kcgym.sims.vliw import rolled, trace
from kcgym.sims.vliw.accelerator import ACCELERATOR
from kcgym.sims.vliw.config import LANES
from kcgym.tasks import TASKS
from tests.sims.trace_contract import assert_same_results
from tests.sims.vliw.test_trace_differential import EXT_ELEMENTS, HW, _both, _ext, _run_state, assert_same_state

TOP = HW.dm_bytes - 64  # the top DM line's byte address
LAST_ROW = 2 * (EXT_ELEMENTS - LANES)  # the last EXT row of the image (bytes)

EDGES = f"""DMAI p0, r0, r0, 1, 128
MOVI r1, {LAST_ROW}
PMOVI p1, {TOP}
PMOVI p2, 8192
DMAI p1, r1, r0, 1, 64
VLD x0, p2, 0
VLD x1, p1, 0
VADD x2, x0, x1
VBCST x3, 3.0
VMUL x4, x2, x3
NOP
VST x4, p1, 0
MOVI r2, {LAST_ROW - 64}
DMAO p1, r2, r0, 1, 64
DMAO p0, r1, r0, 1, 64
"""
# a DM line read before anything writes it (its initial zeros), and the top line written, then read back
UNTOUCHED = f"""PMOVI p0, 12288
PMOVI p1, {TOP}
VLD x0, p0, 0 || VLD x1, p1, 0
VBCST x2, 2.0
VADD x3, x0, x2
VMAX x4, x1, x3
NOP
VST x4, p1, 0
VLD x5, p1, 0
VADD x6, x5, x5
"""
OOB_DM_EDGE = f"""PMOVI p1, {TOP}
VBCST x1, 1.0
VST x1, p1, 64
VST x1, p1, 0
"""
OOB_EXT_EDGE = f"""DMAI p0, r0, r0, 1, 64
MOVI r1, {2 * EXT_ELEMENTS - 64}
DMAO p0, r1, r0, 1, 64
MOVI r2, {2 * EXT_ELEMENTS - 62}
DMAO p0, r2, r0, 1, 64
"""
# rolled: a stream up to the top DM line, then that block out to the last EXT rows; and a rolled loop of
# DMAs out to a moving EXT address ending at the image's last row
ROLLED_TOP = f"""DMAI p0, r0, r0, 1, 4096
PMOVI p1, {HW.dm_bytes - 64 * 64}
LOOPI 64, end
VLD x0, p0, 64
VADD x1, x0, x0
NOP
VST x1, p1, 64
end:
MOVI r1, {2 * EXT_ELEMENTS - 4096}
PMOVI p2, {HW.dm_bytes - 4096}
DMAO p2, r1, r0, 1, 4096
"""
ROLLED_DMA = f"""MOVI r1, 0
MOVI r2, {2 * EXT_ELEMENTS - 30 * 128}
PMOVI p0, 0
PMOVI p2, {TOP - 64}
LOOPI 30, end
DMAI p0, r1, r0, 1, 256 || ADDI r1, r1, 256
PMOVI p1, 0
PMOVI p3, 128
VLD x0, p1, 64
VLD x1, p1, 64
VADD x2, x0, x1
VLD x3, p1, 64 || VLD x4, p3, 64
VMAX x5, x3, x4
NOP
VST x2, p2, 64
VST x5, p2, -64
DMAO p2, r2, r0, 1, 128 || ADDI r2, r2, 128
end:
"""
CASES = {"edges": (EDGES, 0, False), "untouched": (UNTOUCHED, 0, False), "oob_dm": (OOB_DM_EDGE, M.F_OOB_DM, False),
         "oob_ext": (OOB_EXT_EDGE, M.F_OOB_EXT, False), "rolled_top": (ROLLED_TOP, 0, True),
         "rolled_dma": (ROLLED_DMA, 0, True)}


def _full_rows(tr: trace.Trace) -> int:
    return trace.layout_of(HW, 1 << 20, rolled.ROLL_ROWS if tr.rolls else 0).dump + 1


@pytest.fixture(autouse=True)
def _trace_path(monkeypatch):
    monkeypatch.setenv(trace.SIM_ENV, "trace")
    monkeypatch.setattr(trace, "ROLL_ABOVE", 0)  # roll any steady loop (by default only long programs' roll)


@pytest.mark.parametrize("case", list(CASES))
def test_compact_state_whole_state(case):
    src, fault, rolls = CASES[case]
    program = ACCELERATOR.assemble(src, HW)
    hw_json = HW.model_dump_json()
    ext = _ext(7)
    ext[:, EXT_ELEMENTS - 2 * LANES:EXT_ELEMENTS] = np.arange(2 * LANES, dtype=np.float32)  # (not NaN: visible)
    trace._TRACES.clear()
    new = _run_state(trace.batched_runner(hw_json)[1], program, ext, 100_000)
    old = _run_state(M.batched_runner(hw_json)[1], program, ext, 100_000)
    assert_same_state(new, old)
    ((tr, pl, _),) = trace._TRACES.values()
    assert pl is not None and not tr.exotic
    assert pl.rows < _full_rows(tr) and pl.ext < ext.shape[1]  # the compact state ran
    assert int(np.asarray(old.ctl)[0, M.FAULT]) == fault and bool(tr.rolls) == rolls
    if case in ("edges", "rolled_top", "rolled_dma"):  # the image's last row was written
        assert not np.array_equal(np.asarray(old.ext)[:, EXT_ELEMENTS - LANES:EXT_ELEMENTS],
                                  ext[:, EXT_ELEMENTS - LANES:EXT_ELEMENTS])
    if case != "oob_ext":
        assert np.asarray(old.dm)[0, HW.dm_elements - LANES:].any()  # the top DM line was written


@pytest.mark.parametrize("name", ["matmul", "softmax", "conv2d"])
def test_compact_state_kernels(monkeypatch, name):
    """C1 compiler kernels (ROLL_ABOVE = 0: their loops roll where steady) on the compact state."""
    task = TASKS[name]
    cfg = task.config("VLIW", 1)
    program = ACCELERATOR.assemble(ACCELERATOR.compile(task, cfg, HW), HW)
    inputs = Evaluator(ACCELERATOR, task, cfg, HW).input_sets(0, 2)
    trace._TRACES.clear()
    new, old = _both(monkeypatch, program, task, cfg, inputs, 10_000_000)
    assert_same_results(new, old)
    ((tr, pl, _),) = trace._TRACES.values()
    assert pl is not None and pl.rows < _full_rows(tr)


def _touched(kind: int, f: np.ndarray) -> np.ndarray:
    """The EXT elements a DMA line's live lanes touch, in the interpreter's int32 arithmetic."""
    e0, re, rs, width, per_strip, tot = (np.int32(f[c]) for c in trace.EXT_FIELDS[kind])
    e = np.arange(e0, min(int(e0) + LANES, int(tot)), dtype=np.int32)
    within = e % per_strip
    with np.errstate(over="ignore"):
        return re // 2 + (within // width) * (rs // 2) + (e // per_strip) * width + within % width


@pytest.mark.parametrize("seed", range(6))
def test_ext_window_holds_every_touched_element(seed):
    """``_ext_window`` against enumeration: every element a live lane touches lies in [0, W) (else W = H),
    over random geometries: tiled strips, negative strides, partial last lines, wrap-around."""
    rng = np.random.default_rng(seed)
    H = 1 << 20
    windows = bounded = 0
    for _ in range(200):
        n = int(rng.integers(1, 6))
        ops = np.zeros((n, 4 + trace.N_FIELDS), np.int32)
        for i in range(n):
            kind = int(rng.choice([trace.K_DMAI, trace.K_DMAO]))
            width = int(rng.choice([1, 3, 8, 32, 64]))
            n_r = int(rng.integers(1, 9))
            per_strip = n_r * width
            tot = int(rng.integers(1, 4 * per_strip + 2))
            big = rng.random() < 0.1
            re = int(rng.integers(-(1 << 31), (1 << 31) - 1)) if big else 2 * int(rng.integers(0, 40000))
            rs = 2 * int(rng.integers(-300, 300))
            geo = (32 * int(rng.integers(0, -(-tot // 32))), re, rs, width, per_strip, tot)
            ops[i, 0] = kind
            ops[i, [4 + c for c in trace.EXT_FIELDS[kind]]] = geo
        W = trace._ext_window(ops, [], H)
        touched = [_touched(int(o[0]), o[4:]) for o in ops]
        for o, t in zip(ops, touched, strict=True):  # each line's bounds hold what it touches
            lo, hi, exact = trace._ext_bounds(*(o[4 + c:5 + c].astype(np.int64) for c in trace.EXT_FIELDS[int(o[0])]))
            if exact and len(t):
                assert lo <= t.min() and t.max() <= hi, (o, lo, hi, t.min(), t.max())
                bounded += 1
        idx = np.concatenate(touched)
        assert W == H or (idx.min() >= 0 and idx.max() < W), (ops, W)
        windows += W < H
    assert windows > 50 and bounded > 300  # (most geometries here get a window: the test is not vacuous)


def _decode_by_definition(machine: M.Machine, words: np.ndarray) -> list:
    """``trace._decode`` as it was first written: per bundle, a Python loop over every operand field."""
    S, F = machine.S, machine.F
    rows = words.reshape(-1, S, F)
    ops, fields = rows[:, :, 0], rows[:, :, 3:]
    rbase, wbase = machine.read_base[ops], machine.write_base[ops]
    ridx = np.where(rbase >= 0, np.clip(rbase + fields, 0, M.N_READY - 1), 0)
    widx = np.where(wbase >= 0, wbase + fields, M.N_READY)
    wlat = machine.write_latency[ops]
    end = np.maximum(np.max(np.where(wbase >= 0, wlat, 0), axis=(1, 2)), 1)
    n = rows.shape[0]
    r_l, w_l, t_l = ridx.reshape(n, -1).tolist(), widx.reshape(n, -1).tolist(), wlat.reshape(n, -1).tolist()
    out = []
    for b, (row, e) in enumerate(zip(rows.tolist(), end.tolist(), strict=True)):
        reads = sorted({i for i in r_l[b] if i})
        writes = [(i, t) for i, t in zip(w_l[b], t_l[b], strict=True) if i < M.N_READY]
        out.append((row, reads, writes, e))
    return out


@pytest.mark.parametrize("name", ["matmul", "softmax", "batch_matmul"])
def test_decode_matches_its_definition(name):
    task = TASKS[name]
    cfg = task.config("VLIW", 1)
    machine = M.Machine(HW)
    for src in (ACCELERATOR.compile(task, cfg, HW), ACCELERATOR.expert(task, cfg, HW)):
        if src is None:
            continue
        words = ACCELERATOR.assemble(src, HW).padded(HW.imem_bundles + 1, machine.halt_row)[:400]
        assert trace._decode(machine, words) == _decode_by_definition(machine, words)


def test_simulate_overwrites_only_its_own_ext(monkeypatch):
    """``simulate`` lets the trace path write the final EXT into the image it built (no 4 MB copy); a caller
    of ``execute`` keeps its image unchanged, and both give the interpreter's state."""
    task = TASKS["matmul"]
    cfg = task.config("VLIW", 1)
    program = ACCELERATOR.assemble(ACCELERATOR.compile(task, cfg, HW), HW)
    ext = _ext(3)
    before = ext.copy()
    new = ACCELERATOR.execute(program, ext, EXT_ELEMENTS, HW, 100_000)
    np.testing.assert_array_equal(ext.view(np.uint32), before.view(np.uint32))
    mine = ext.copy()
    scratch = ACCELERATOR.execute(program, mine, EXT_ELEMENTS, HW, 100_000, scratch=True)
    monkeypatch.setenv(trace.SIM_ENV, "oracle")
    old = ACCELERATOR.execute(program, ext, EXT_ELEMENTS, HW, 100_000)
    assert_same_state(new, old)
    assert_same_state(scratch, old)
