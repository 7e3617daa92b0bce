"""The VLIW pre-pass's compiled runs of bundles (``kcgym/sims/vliw/blocks.py``) against its generic per-bundle
path: the whole Trace (every field, the data operations as bytes, the rolled segments) is the same with blocks
compiled at the first entry (``BLOCK_AFTER = 1``, ``BLOCK_MIN_RUNS = 0``: nearly every bundle runs compiled) as
without them (``None``, the pre-pass before blocks existed), on every C1 VLIW compiler and expert kernel (C2 and
C3 in the slow tier), on generated programs that fault, spin, branch and stop at the step budget, and at the
cycle limit."""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.evaluation import Evaluator
from kcgym.limits import MAX_HW_CYCLES
from kcgym.sims.vliw import blocks, trace
from kcgym.sims.vliw import machine as M
from kcgym.sims.vliw.accelerator import ACCELERATOR
from kcgym.sims.vliw.config import VLIWConfig
from kcgym.tasks import TASKS
from tests.sims.vliw.test_trace_differential import EXT_ELEMENTS, VLIW_TASKS, _ext, generated_program

HW = VLIWConfig()


def _words(program, hw: VLIWConfig = HW) -> np.ndarray:
    return program.padded(hw.imem_bundles + 1, M.Machine(hw).halt_row)


def assert_same_trace(a: trace.Trace, b: trace.Trace) -> None:
    for field in trace.Trace._fields:
        x, y = getattr(a, field), getattr(b, field)
        if field == "rolls":
            assert len(x) == len(y)
            for (n0, s0), (n1, s1) in zip(x, y, strict=True):
                assert n0 == n1
                for f in s0._fields:
                    np.testing.assert_array_equal(np.asarray(getattr(s0, f)), np.asarray(getattr(s1, f)), err_msg=f)
        elif isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            assert (x is None) == (y is None), field
            if x is not None:
                assert x.dtype == y.dtype and x.shape == y.shape, field
                assert x.tobytes() == y.tobytes(), field
        else:
            assert x == y, field


def both(monkeypatch, words: np.ndarray, hw: VLIWConfig, limit: int, max_steps: int, H: int, roll: bool,
         ) -> tuple[trace.Trace, int]:
    """(the Trace, checked the same both ways, and the blocks compiled)."""
    monkeypatch.setattr(blocks, "BLOCK_AFTER", None)
    old = trace.prepass(words, hw, limit, max_steps, H, roll)
    compiled = []
    real = blocks.compile_block

    def counted(*args):
        compiled.append(args[1])
        return real(*args)

    monkeypatch.setattr(blocks, "BLOCK_AFTER", 1)
    monkeypatch.setattr(blocks, "BLOCK_MIN_RUNS", 0)
    monkeypatch.setattr(blocks, "compile_block", counted)
    new = trace.prepass(words, hw, limit, max_steps, H, roll)
    assert_same_trace(new, old)
    return new, len(compiled)


def _kernel_case(monkeypatch, name: str, kind: str, index: int) -> None:
    task = TASKS[name]
    cfg = task.config("VLIW", index)
    src = ACCELERATOR.compile(task, cfg, HW) if kind == "compiler" else ACCELERATOR.expert(task, cfg, HW)
    if src is None:
        pytest.skip(f"no expert kernel for {name}")
    inputs = Evaluator(ACCELERATOR, task, cfg, HW).input_sets(0, 1)
    seen = []
    real = trace.prepass

    def grab(*args, **kwargs):  # the arguments the accelerator's run passes (limit, budget, EXT bucket, roll)
        seen.append(args)
        raise _Captured

    monkeypatch.setattr(trace, "prepass", grab)
    monkeypatch.setenv(trace.SIM_ENV, "trace")
    trace._TRACES.clear()
    with pytest.raises(_Captured):
        ACCELERATOR.run(ACCELERATOR.assemble(src, HW), task, cfg, HW, inputs, 50_000_000)
    monkeypatch.setattr(trace, "prepass", real)
    trace._TRACES.clear()
    tr, n_blocks = both(monkeypatch, *seen[0])
    assert n_blocks > 0 and int(tr.ctl[M.STEPS]) > 0


class _Captured(Exception):
    pass


def _kernels(index: int):
    for name in VLIW_TASKS:
        for kind in ("compiler", "expert"):
            yield pytest.param(name, kind, index, id=f"{name}-{kind}-C{index}")


@pytest.mark.parametrize("name,kind,index", list(_kernels(1)))
def test_kernels_c1(monkeypatch, name, kind, index):
    _kernel_case(monkeypatch, name, kind, index)


@pytest.mark.slow
@pytest.mark.parametrize("name,kind,index", [*_kernels(2), *_kernels(3)])
def test_kernels_c2_c3(monkeypatch, name, kind, index):
    _kernel_case(monkeypatch, name, kind, index)


@pytest.mark.parametrize("roll", [False, True])
@pytest.mark.parametrize("seed", range(24))
def test_generated_programs(monkeypatch, seed, roll):
    """Faults (out of bounds, misaligned, bad lanes, loop depth) inside blocks, branches into their middles, and
    every fourth a step budget that stops the run inside one."""
    words = _words(ACCELERATOR.assemble(generated_program(seed), HW))
    max_steps = 90 if seed % 4 == 0 else 100_000
    both(monkeypatch, words, HW, EXT_ELEMENTS, max_steps, _ext(seed).shape[1], roll)


def test_budget_stops_at_every_bundle_of_a_block(monkeypatch):
    """A hot straight-line loop body stopped by the step budget at each of its bundles in turn."""
    src = ("PMOVI p1, 64\nLOOPI 40, end\nVLD x1, p0, 0 || ADDI r1, r1, 1\nVADD x2, x1, x1\nVST x2, p1, 0\n"
           "VMUL x3, x2, x1 || PADDI p2, p2, 64\nVMAC c0, x3, x1\nend:\nHALT\n")
    words = _words(ACCELERATOR.assemble(src, HW))
    for max_steps in range(100, 112):
        tr, n_blocks = both(monkeypatch, words, HW, EXT_ELEMENTS, max_steps, 16384, False)
        assert n_blocks and int(tr.ctl[M.STEPS]) == max_steps and not tr.ctl[M.HALTED]


def test_fault_in_the_middle_of_a_block(monkeypatch):
    """A pointer that walks off DM in a hot loop: the block runs up to the faulting bundle, which the exact checks
    then stop at the interpreter's pc, slot and detail."""
    src = f"PMOVI p1, {HW.dm_bytes - 64 * 30}\nLOOPI 100, end\nVADD x2, x1, x1\nVLD x1, p1, 64\nNOP\nend:\nHALT\n"
    tr, n_blocks = both(monkeypatch, _words(ACCELERATOR.assemble(src, HW)), HW, EXT_ELEMENTS, 100_000, 16384,
                        False)
    assert n_blocks and tr.ctl[M.FAULT] == M.F_OOB_DM and tr.ctl[M.FAULT_PC] == 3


def test_cycle_limit_inside_a_block(monkeypatch):
    """Long multiplies in a loop that steps (``roll=False``) past CYCLE_LIMIT: the blocks stop short of the limit
    (their bound on the clock) and the generic path faults at the interpreter's bundle."""
    hw = VLIWConfig(mul_latency=MAX_HW_CYCLES)
    src = "LOOPI 2000, outer\nLOOPI 200, inner\nVMUL x1, x0, x0\nVMUL x2, x1, x1\nNOP\ninner:\nNOP\nouter:\nHALT\n"
    words = _words(ACCELERATOR.assemble(src, hw), hw)
    tr, n_blocks = both(monkeypatch, words, hw, 4096, 10_000_000, 4096, False)
    assert n_blocks and tr.ctl[M.FAULT] == M.F_CYCLE_LIMIT


def test_blocks_hold_no_control_and_end_before_loop_ends():
    """A block never holds a LOOP/branch/HALT/DMA bundle and ends at the bundle before a loop's end label."""
    src = ("LOOPI 4, a\nNOP\nNOP\nNOP\na:\nNOP\nNOP\nMOVI r1, 2\nb:\nADDI r1, r1, -1\nNOP\nBNEZ r1, b\n"
           "DMAI p0, r0, r0, 1, 64\nNOP\nHALT\n")
    program = ACCELERATOR.assemble(src, HW)
    words = _words(program)
    machine = M.Machine(HW)
    recs = trace._records(trace._decode(machine, words[:20]), HW.dm_bytes)
    ends = frozenset(c[2] for *_, c, _, _ in recs if c[0] in (trace.CK_LOOPI, trace.CK_LOOP))
    assert ends == {4}
    assert [blocks.extent(recs, pc, ends, len(recs)) for pc in range(14)] == [0, 3, 2, 1, 5, 4, 3, 2, 1, 0, 0, 1, 0, 0]


def test_renaming_rings_wrap_past_held_rows(monkeypatch):
    """More renamed values than each ring has slots (x, c, DM lines) while a register and a DM line keep a value
    from before the loop: allocation must skip their rows, in blocks as in the generic path; and more operations
    than one flush of the pre-pass's list (``FLUSH_OPS``)."""
    src = ("VBCST x11, 1.0\nCZERO c7\nPMOVI p1, 640\nVST x11, p1, 0\nPMOVI p1, 64\nLOOPI 17000, end\n"
           "VADD x1, x11, x11 || VLD x2, p0, 0\nVST x1, p1, 0 || VMAC c7, x1, x2\n"
           "VST x2, p1, 0 || VMPY c1, x11, x11\nend:\nVCONV x3, c7\nHALT\n")
    words = _words(ACCELERATOR.assemble(src, HW))
    tr, n_blocks = both(monkeypatch, words, HW, EXT_ELEMENTS, 1_000_000, 16384, False)
    assert n_blocks and tr.ops is not None and len(tr.ops) > trace.FLUSH_OPS and tr.ctl[M.HALTED]
    allocated = 17000 * 2  # per ring: more values than it has slots
    assert min(trace.X_SLOTS, trace.C_SLOTS, HW.dm_lines + trace.LINE_SLOTS) < allocated


def test_bundles_their_loops_run_rarely_are_not_compiled(monkeypatch):
    """By default a run of bundles is compiled only where the LOOPI counts around it reach ``BLOCK_MIN_RUNS``."""
    compiled = []
    real = blocks.compile_block
    monkeypatch.setattr(blocks, "compile_block", lambda *a: compiled.append(a[1]) or real(*a))
    for count, hot in ((blocks.BLOCK_MIN_RUNS - 1, False), (blocks.BLOCK_MIN_RUNS, True)):
        compiled.clear()
        src = f"LOOPI {count}, end\nVADD x1, x0, x0\nVMUL x2, x1, x1\nend:\nHALT\n"
        trace.prepass(_words(ACCELERATOR.assemble(src, HW)), HW, EXT_ELEMENTS, 100_000, 16384, False)
        assert compiled == ([1] if hot else [])


def _cold_bundles_by_definition(recs: list, ck_loopi: int) -> list[int]:
    """``blocks.cold_bundles`` as its docstring defines it: exact products of the enclosing LOOPI counts."""
    runs = [1] * len(recs)
    for pc, rec in enumerate(recs):
        ctl = rec[9]
        if ctl[0] == ck_loopi and ctl[1] > 1:
            for q in range(pc + 1, min(ctl[2], len(recs))):
                runs[q] *= ctl[1]
    return [pc for pc, n in enumerate(runs) if n < blocks.BLOCK_MIN_RUNS]


def _recs(ctl: list[tuple[int, int, int]]) -> list:
    return [[None] * 9 + [c, False] for c in ctl]


def test_cold_bundles_saturating_products_match_the_exact_ones():
    """The saturated products give the exact products' answer (random nests of every count kind, loop ends past
    the program, other control kinds), also on a nest of 4,096 LOOPIs of count 65,535, which no assembled
    program has (4 deep at most) but raw words may: exact products there took 6.9 s."""
    rng = np.random.default_rng(0)
    ck = trace.CK_LOOPI
    for _ in range(300):
        n = int(rng.integers(1, 60))
        ctl = [(int(rng.choice([0, ck, ck + 1])), int(rng.choice([0, 1, 2, 3, 16, 255, 256, 65535])),
                int(rng.integers(0, n + 4))) for _ in range(n)]
        assert blocks.cold_bundles(_recs(ctl), ck) == _cold_bundles_by_definition(_recs(ctl), ck)
    deep = _recs([(ck, 65535, 4096)] * 4096)  # every bundle inside every loop before it
    assert blocks.cold_bundles(deep, ck) == [0]
