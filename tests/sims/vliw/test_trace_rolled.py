"""Rolled hardware loops on the VLIW trace path (``kcgym/sims/vliw/rolled.py``) against the interpreter.

Each program is made to hit one case of the rolling rules -- a steady loop, banks whose conflicts change
from iteration to iteration, a fault in the last iteration, a step budget that ends inside a loop, nested
loops, DMAs inside loops, a value carried from iteration to iteration, a non-finite value inside a rolled
loop -- and the whole final machine state (DM, EXT, registers, loop stack, scoreboard, DMA times, cycles,
faults) must be the interpreter's bit for bit. Where a case should roll, the test also checks it did.
"""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.evaluation import Evaluator
from kcgym.sims.vliw import machine as M
from kcgym.sims.vliw import rolled, trace
from kcgym.sims.vliw.accelerator import ACCELERATOR
from kcgym.tasks import TASKS
from tests.sims.trace_contract import assert_same_results
from tests.sims.vliw.test_trace_differential import (
    EXT_ELEMENTS,
    HW,
    MAX_STEPS,
    _both,
    _dm_addr,
    _ext,
    _op,
    _run_state,
    assert_same_state,
)

STEADY = """DMAI p0, r0, r0, 1, 4096
PMOVI p1, 8192
LOOPI 100, end
VLD x0, p0, 64 || ADDI r2, r2, 1
VADD x1, x0, x0
NOP
VST x1, p1, 64
end:
"""
# the load walks 64 bytes an iteration, the store 128: their banks meet at some iterations only
BANKS = """PMOVI p0, 7168
PMOVI p1, 0
VBCST x1, 2.0
LOOPI 120, end
VLD x0, p0, 64 || VST x1, p1, 128
VMUL x2, x0, x0
end:
"""
# the load runs off the end of DM in its last iteration
FAULT_LAST = f"""PMOVI p0, {HW.dm_bytes - 64 * 49}
LOOPI 50, end
VLD x0, p0, 64
VADD x1, x0, x0
end:
"""
NESTED = """DMAI p0, r0, r0, 1, 8192
PMOVI p1, 16384
PMOVI p2, 0
MOVI r3, 0
LOOPI 6, outer
PMOVI p0, 0
LOOPI 40, inner
VLD x0, p0, 64 || VLDB x3, p2, 2
VMUL x2, x0, x3
NOP
VST x2, p1, 64
inner:
ADDI r3, r3, 1
outer:
"""
# both levels roll: the inner loop in the first outer iterations, then the outer loop over iterations whose
# template holds a rolled inner loop
NESTED_BOTH = """DMAI p0, r0, r0, 1, 8192
PMOVI p1, 16384
LOOPI 24, outer
PMOVI p0, 0
LOOPI 10, inner
VLD x0, p0, 64
VADD x2, x0, x0
NOP
VST x2, p1, 64
inner:
NOP
outer:
"""
# a tile at a time: DMA in to one DM buffer, compute, DMA out to a moving EXT address
DMA_LOOP = """MOVI r1, 0
MOVI r2, 16384
PMOVI p0, 0
PMOVI p2, 4096
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
# an accumulator chain from iteration to iteration: not independent, so stepped
CARRIED = """DMAI p0, r0, r0, 1, 2048
CZERO c1
LOOPI 60, end
VLD x0, p0, 0
VMAC c1, x0, x0
end:
VCONV x3, c1
VST x3, p0, 0
"""
# a value carried through DM: iteration m reads the line iteration m - 1 stored (must not roll)
CARRIED_DM = """VBCST x5, 0.75
PMOVI p0, 0
VST x5, p0, 0
PMOVI p1, 64
LOOPI 60, end
VLD x0, p0, 64
VADD x1, x0, x5
VST x1, p1, 64
end:
"""
# iteration 37 divides by zero (a lane of the loaded line is 0): the first non-finite line is inside the loop
NONFINITE = """DMAI p0, r0, r0, 1, 4096
MOVI r1, 0
PMOVI p1, 8192
LOOPI 60, end
VLD x0, p0, 64
VINV x1, x0
VST x1, p1, 64
end:
"""


def _branchy(flip: int, n: int = 100) -> str:
    """A loop whose branch on a counter (affine in the iteration) is taken at iteration ``flip - 1`` only:
    the two paths compute different values, and the taken one pays the branch penalty."""
    return f"""DMAI p0, r0, r0, 1, 4096
PMOVI p1, 8192
MOVI r2, {flip}
LOOPI {n}, end
VLD x0, p0, 64 || ADDI r2, r2, -1
BEQZ r2, skip
VADD x1, x0, x0
J join
skip:
VMUL x1, x0, x0
join:
VST x1, p1, 64
end:
"""


BRANCH_MID, BRANCH_LAST, BRANCH_NEVER = _branchy(40), _branchy(100), _branchy(1000)
# the branch tests the low bit of the counter (not affine in the iteration): the path alternates, never rolled
BRANCH_NOT_AFFINE = """DMAI p0, r0, r0, 1, 4096
PMOVI p1, 8192
LOOPI 60, end
VLD x0, p0, 64 || ADDI r2, r2, 1
ANDI r3, r2, 1
BNEZ r3, odd
VADD x1, x0, x0
J join
odd:
VMUL x1, x0, x0
join:
VST x1, p1, 64
end:
"""
# an outer loop whose body holds a register-count LOOP (its count constant), a LOOPI and a branch that
# flips at outer iteration 20: the outer loop rolls around the flip, inner loops and all
OUTER = """DMAI p0, r0, r0, 1, 8192
PMOVI p1, 16384
MOVI r5, 3
MOVI r2, 21
LOOPI 40, outer
ADDI r2, r2, -1
PMOVI p0, 0
LOOP r5, inner
VLD x0, p0, 64
VADD x2, x0, x0
inner:
BNEZ r2, common
VMUL x2, x2, x2
common:
LOOPI 2, inner2
VST x2, p1, 64
inner2:
NOP
outer:
"""
# an inner LOOP whose count register grows by one each outer iteration: the outer path changes, so the
# outer loop is stepped (the inner loop, long enough later on, rolls by itself)
OUTER_MOVING = """DMAI p0, r0, r0, 1, 8192
PMOVI p1, 16384
MOVI r5, 1
LOOPI 30, outer
PMOVI p0, 0
LOOP r5, inner
VLD x0, p0, 64
VADD x2, x0, x0
VST x2, p1, 64
inner:
ADDI r5, r5, 1
outer:
"""
# the branch flips at iteration 29, then the load runs off the end of DM at iteration 49
FAULT_AFTER_FLIP = f"""PMOVI p0, {HW.dm_bytes - 64 * 49}
MOVI r2, 30
LOOPI 80, end
VLD x0, p0, 64 || ADDI r2, r2, -1
BEQZ r2, skip
VADD x1, x0, x0
skip:
NOP
end:
"""

CASES = {"steady": (STEADY, True), "banks": (BANKS, True), "fault_last": (FAULT_LAST, True), "nested": (NESTED, True),
         "nested_both": (NESTED_BOTH, True), "dma_loop": (DMA_LOOP, True), "carried": (CARRIED, False),
         "carried_dm": (CARRIED_DM, False),
         "nonfinite": (NONFINITE, True), "branch_mid": (BRANCH_MID, True), "branch_last": (BRANCH_LAST, True),
         "branch_never": (BRANCH_NEVER, True), "branch_not_affine": (BRANCH_NOT_AFFINE, False),
         "outer": (OUTER, True), "outer_moving": (OUTER_MOVING, True), "fault_after_flip": (FAULT_AFTER_FLIP, True)}


def generated_loop(seed: int) -> str:
    """A random loop of 20-60 iterations for rolling: its body first sets every vector and accumulator
    register (so no value is carried and it may roll), then runs random bundles (``_op``: every instruction,
    DMAs, moving pointers, some faulting operands), an inner LOOPI or register LOOP, and branches on counters
    that flip at a random iteration (or never) and on a constant."""
    rng = np.random.default_rng(500 + seed)
    bad = 0.03 if seed % 3 == 2 else 0.0

    def op() -> str:  # (DMAs on every fourth seed only: a DMA an iteration is rarely steady)
        slots = [s for s in _op(rng, bad).split(" || ") if seed % 4 == 3 or not s.startswith("DMA")]
        return " || ".join(slots) or "NOP"

    lines = [f"PMOVI p{i}, {_dm_addr(rng, 0.0)}" for i in range(6)]
    lines += ["MOVI r1, 3", "MOVI r2, 7", "MOVI r3, 30", "MOVI r5, 3", "MOVI r6, -5",
              f"MOVI r7, {int(rng.integers(5, 70))}", f"MOVI r8, {int(rng.integers(0, 64)) * 2}",
              f"MOVI r9, {int(rng.integers(0, 512)) * 64}", f"MOVI r10, {int(rng.choice([0, 64, 256]))}",
              "MOVI r11, 256", f"MOVI r13, {int(rng.integers(1, 4))}", f"MOVI r14, {int(rng.integers(0, 64)) * 2}",
              f"MOVI r15, {int(rng.integers(2, 70))}", f"LOOPI {int(rng.integers(20, 61))}, outer"]
    lines += [f"VBCST x{i}, {0.25 * (i + 1)!r}" for i in range(12)] + [f"CZERO c{i}" for i in range(8)]
    body = [op() for _ in range(int(rng.integers(4, 12)))]
    inner = [op() for _ in range(int(rng.integers(1, 4)))]
    at = int(rng.integers(0, len(body) + 1))
    body[at:at] = ["LOOP r13, inner" if rng.random() < 0.5 else "LOOPI 2, inner", *inner, "inner:"]
    at = int(rng.integers(0, len(body) + 1))
    body[at:at] = ["ADDI r15, r15, -1", "BEQZ r15, flip", op(), "J join", "flip:", op(), "join:"]
    at = int(rng.integers(0, len(body) + 1))
    body[at:at] = ["BNEZ r7, go", op(), "go:", "BEQZ r0, on", "NOP", "on:"]
    return "\n".join([*lines, *body, "NOP", "outer:"]) + "\n"


def _ext_with_zero() -> np.ndarray:
    e = _ext(5)
    e[:, 7] = 1.0  # (not -0.0: the first line would already give -inf)
    e[:, 37 * 32 + 3] = 0.0  # a zero where the NONFINITE loop's 37th line reads
    return e


def _compare(src: str, max_steps: int = 100_000) -> trace.Trace:
    program = ACCELERATOR.assemble(src, HW)
    hw_json = HW.model_dump_json()
    ext = _ext_with_zero()
    trace._TRACES.clear()
    new = _run_state(trace.batched_runner(hw_json)[1], program, ext, max_steps)
    assert_same_state(new, _run_state(M.batched_runner(hw_json)[1], program, ext, max_steps))
    ((tr, plan, _),) = trace._TRACES.values()
    assert plan is not None and not tr.exotic
    return tr
# a store to a fixed line between a moving store and the load that reads the moving store's line: at iteration 30
# the moving line is the fixed one, so the load reads the later store's value there (the roll stops before it)
WRITER_BETWEEN = """VBCST x1, 1.0
VBCST x2, 2.0
PMOVI p1, 8192
PMOVI p3, 8192
PMOVI p2, 10112
PMOVI p4, 16384
LOOPI 60, end
VST x1, p1, 64
VST x2, p2, 0
VLD x3, p3, 64
VADD x4, x3, x3
VST x4, p4, 64
end:
"""
CASES["writer_between"] = (WRITER_BETWEEN, True)
# the last iteration's x1 of a rolled loop (a row of its segment) is read by every iteration of the next, longer
# loop, whose own rows overwrite that row: the pre-pass evicts x1 before rolling that loop, and the loop's reads of
# it follow it there (else iterations after the one writing x1's old row read that iteration's x2)
LIVE_ACROSS = """DMAI p0, r0, r0, 1, 8192
LOOPI 11, first
VLD x0, p0, 64
VADD x3, x0, x0
VADD x1, x3, x0
first:
LOOPI 60, second
VMUL x2, x1, x1
NOP
second:
"""
CASES["live_across"] = (LIVE_ACROSS, True)


# a double buffer: each iteration prefetches the next block into the other buffer and reads the current one, then
# swaps them (r4 = r8 - r4). The state repeats every second back-edge: the loop rolls as iterations of two passes,
# the first pass reading the line the second pass's prefetch wrote one (two-pass) iteration before
DOUBLE_BUFFER = """MOVI r1, 0
MOVI r3, 20480
MOVI r4, 0
MOVI r8, 4096
PMOVI p7, 0
DMAI p7, r1, r0, 1, 512
LOOPI 30, end
SUB r5, r8, r4
ADDI r1, r1, 512
PMOV p7, r5
DMAI p7, r1, r0, 1, 512
PMOV p0, r4
VLD x0, p0, 64
VLD x5, p0, 64
VADD x1, x0, x5
PMOVI p1, 8192
VST x1, p1, 64
PMOVI p2, 8192
DMAO p2, r3, r0, 1, 64
ADDI r3, r3, 64
SUB r4, r8, r4
end:
"""
CASES["double_buffer"] = (DOUBLE_BUFFER, True)
# the DMA out walks down EXT over the block every iteration's DMA in reads: the second iteration (the template of
# the first roll tried) writes it, no later one does. The rolled iterations' DMAs among themselves do not overlap,
# but the template runs in the segment too, where every DMA in runs before every DMA out: that roll is refused
TEMPLATE_OUT_READ_BACK = """MOVI r1, 2880
MOVI r3, 2944
PMOVI p1, 8192
VBCST x1, 3.0
VST x1, p1, 64
LOOPI 40, end
DMAI p0, r1, r0, 1, 64
PMOVI p1, 8192
DMAO p1, r3, r0, 1, 64
ADDI r3, r3, -64
NOP
VLD x0, p0, 0
VADD x2, x0, x0
PMOVI p2, 12288
VST x2, p2, 64
end:
"""
CASES["template_out_read_back"] = (TEMPLATE_OUT_READ_BACK, True)


@pytest.fixture(autouse=True)
def _trace_path(monkeypatch):
    """The trace path, rolling loops of any program (by default only those of long ones roll)."""
    monkeypatch.setenv(trace.SIM_ENV, "trace")
    monkeypatch.setattr(trace, "ROLL_ABOVE", 0)


@pytest.fixture(params=["levelled", "rolled"])
def data_path(request, monkeypatch):
    """Both data paths of a rolled segment: expanded into levelled groups (the default, ``rolled.expand``) and
    unrolled on the device a chunk at a time (``trace.unrolled``: a trace past ``rolled.EXPAND_MAX_OPS``, even its
    segments of few iterations, ``rolled.EXPAND_BELOW``)."""
    monkeypatch.setattr(rolled, "EXPAND_MIN_LANES", 1 if request.param == "levelled" else rolled.EXPAND_MAX_OPS + 1)
    if request.param == "rolled":
        monkeypatch.setattr(rolled, "EXPAND_BELOW", 0)
    return request.param


@pytest.mark.parametrize("case", list(CASES))
def test_rolled_loops_whole_state(case, data_path):
    src, rolls = CASES[case]
    tr = _compare(src)
    if case == "double_buffer":  # rolled as iterations of two passes (the swap repeats every second back-edge)
        assert all(len(seg.pcs) == 2 * len(set(seg.pcs.tolist())) for _, seg in tr.rolls)
    assert bool(tr.rolls) == rolls
    if case == "nonfinite":
        assert int(tr.ctl[M.STEPS]) > 0
    if case in ("fault_last", "fault_after_flip"):
        assert int(tr.ctl[M.FAULT]) == M.F_OOB_DM
    if case in ("banks", "branch_mid", "fault_after_flip", "writer_between"):  # rolled in pieces, stepped in
        assert len(tr.rolls) >= 2  # between (the conflicts change; the branch flips; the last writer changes)
    if case == "live_across":  # both loops roll, and the second reads the first's value where it was evicted
        assert len(tr.rolls) >= 2
    if case == "outer":  # the outer loop rolls (a segment's iteration runs more than one bundle per pc)
        assert any(len(seg.pcs) > len(set(seg.pcs.tolist())) for _, seg in tr.rolls)
    if case == "outer_moving":  # only the inner loop rolls: every segment is one inner iteration
        assert all(len(seg.pcs) == 3 for _, seg in tr.rolls)


GENERATED = 16  # seeds of generated loops


@pytest.mark.parametrize("seed", range(GENERATED))
def test_generated_loops_whole_state(seed, data_path):
    """Random loops with branches and inner loops (``generated_loop``), trace path against the interpreter;
    every fourth with a step budget that may stop it inside the loop."""
    _compare(generated_loop(seed), max_steps=700 if seed % 4 == 0 else 100_000)


def test_generated_loops_roll():
    """Some generated loops roll (the test above then compares rolled branches, not only stepped ones; most
    fault early or carry a value through DM from iteration to iteration, and are stepped)."""
    rolls = 0
    for seed in range(GENERATED):
        program = ACCELERATOR.assemble(generated_loop(seed), HW)
        words = program.padded(HW.imem_bundles + 1, M.Machine(HW).halt_row)
        tr = trace.prepass(words, HW, EXT_ELEMENTS, 100_000, _ext(0).shape[1])
        rolls += bool(tr.rolls)
    assert rolls >= 3


@pytest.mark.parametrize("flip", [40, 100, 1000])
def test_branch_rolls_up_to_its_flip(flip):
    """The roll stops right before the iteration whose branch flips (in the middle, at the last iteration,
    never), that iteration is stepped, and the loop rolls again after it where enough iterations are left."""
    tr = _compare(_branchy(flip))
    flip_seq = 5 + (flip - 1) * 5  # its first bundle: 4 before the loop, 5 a not-taken iteration
    spans = [(int(seg.seq_lo), int(seg.seq_hi)) for _, seg in tr.rolls]
    assert spans[0][1] == (flip_seq - 1 if flip <= 100 else 4 + 100 * 5)
    assert len(spans) == (2 if flip == 40 else 1)
    # ... the last one to the loop's end (the taken iteration is a bundle shorter)
    assert spans[-1][1] == (flip_seq - 1 if flip == 100 else 4 + 100 * 5 - (flip < 100))


@pytest.mark.parametrize("case", ["steady", "nested", "dma_loop", "branch_mid", "outer"])
@pytest.mark.parametrize("cut", [1, 2, 3, 5, 7])
def test_step_budget_inside_a_rolled_loop(case, cut):
    """A budget that ends mid-loop (in the rolled iterations, at several bundles of one iteration; for
    ``outer`` inside an outer iteration, in its inner loops): the run stops at the interpreter's bundle,
    with its state."""
    src, _ = CASES[case]
    budget = {"steady": 250, "nested": 600, "dma_loop": 200, "branch_mid": 150, "outer": 150}[case] + cut
    tr = _compare(src, max_steps=budget)
    assert int(tr.ctl[M.STEPS]) == budget
    assert tr.rolls


def test_rolls_are_cut_at_the_region_and_the_rest_is_stepped(monkeypatch):
    """Fewer rows for rolled values than the loop needs: the loop rolls in several segments, each reusing
    the rows (values still held in them are moved out first)."""
    monkeypatch.setattr(rolled, "ROLL_ROWS", 40)
    monkeypatch.setattr(trace.rolled, "ROLL_ROWS", 40)
    tr = _compare(NESTED)
    assert len(tr.rolls) >= 6


def test_short_programs_step_every_iteration(monkeypatch):
    """Below ``trace.ROLL_ABOVE`` bundles nothing rolls (and the results are the same)."""
    monkeypatch.setattr(trace, "ROLL_ABOVE", 10_000)
    assert not _compare(STEADY).rolls


def _compare_kernel(monkeypatch, name: str, index: int, n_inputs: int = 2, kind: str = "compiler"):
    """The ``kind`` kernel (compiler or expert) for ``name`` at config ``index``, trace path against the
    interpreter on ``n_inputs`` input sets; returns the trace and its plan."""
    task = TASKS[name]
    cfg = task.config("VLIW", index)
    source = ACCELERATOR.compile(task, cfg, HW) if kind == "compiler" else ACCELERATOR.expert(task, cfg, HW)
    program = ACCELERATOR.assemble(source, HW)
    inputs = Evaluator(ACCELERATOR, task, cfg, HW).input_sets(0, n_inputs)
    trace._TRACES.clear()
    new, old = _both(monkeypatch, program, task, cfg, inputs, MAX_STEPS)
    assert_same_results(new, old)
    ((tr, plan, _),) = trace._TRACES.values()
    assert plan is not None
    return tr, plan


@pytest.mark.parametrize("name", ["matmul", "conv2d", "softmax", "layernorm", "gemv", "flash_attention", "linear"])
def test_kernels_rolled_c2(monkeypatch, name):
    """C2 compiler kernels with every steady loop rolled (the default rolls long programs only)."""
    _compare_kernel(monkeypatch, name, 2)


def test_rolled_kernel_batch_matmul_c2(monkeypatch):
    """The -O2 compiler's batch_matmul (the kernel rolling is for): its strip loops roll."""
    tr, _ = _compare_kernel(monkeypatch, "batch_matmul", 2)
    assert tr.rolls


@pytest.mark.slow
@pytest.mark.parametrize("index", [3, 4])
def test_rolled_kernel_batch_matmul_large(monkeypatch, index):
    """batch_matmul at C3 and C4 against the interpreter (C5: 9M bundles, minutes on the interpreter; the
    benchmark compares it, ``benchmarks/bench_speed.py``)."""
    tr, _ = _compare_kernel(monkeypatch, "batch_matmul", index, 1)
    assert tr.rolls


@pytest.mark.slow
@pytest.mark.parametrize("index", [3, 4])
def test_batch_matmul_expert_rolls_two_slabs_at_a_time(monkeypatch, index):
    """batch_matmul's C3 and C4 experts (0.6M and 3.6M bundles) against the interpreter (C5's 64 slabs a batch roll
    too; on the interpreter it takes minutes). The W buffers swap every slab, so the slab loop rolls as iterations
    of two slabs, each block reading what the one before prefetched: at C3 6 of them a batch, at C4 (K = 512:
    2 x ~4,300 bundles, within ``rolled.WALK_MAX``) 6 of 8; both segments of few iterations, run levelled
    (``rolled.EXPAND_BELOW``)."""
    tr, _ = _compare_kernel(monkeypatch, "batch_matmul", index, 1, kind="expert")
    halves = [np.split(seg.pcs, 2) for _, seg in tr.rolls]
    assert tr.rolls and all(len(a) > 2000 and np.array_equal(a, b) for a, b in halves)


def test_a_path_dependent_loop_that_never_rolls_is_given_up(monkeypatch):
    """A branchy inner loop that cannot roll (its branch tests a bit of a counter) is followed at no more
    than ``rolled.DYNAMIC_TRIES`` back-edges over all its instances, not at every instance's."""
    src = """DMAI p0, r0, r0, 1, 4096
PMOVI p1, 8192
LOOPI 12, outer
LOOPI 30, inner
VLD x0, p0, 0 || ADDI r2, r2, 1
ANDI r3, r2, 1
BNEZ r3, odd
VADD x1, x0, x0
J join
odd:
VMUL x1, x0, x0
join:
VST x1, p1, 0
inner:
NOP
outer:
"""
    calls: dict = {}
    follow = rolled.follow

    def counted(dec, start, end, *rest):
        if len(rest) > 1:  # (with the template's registers)
            calls[start, end] = calls.get((start, end), 0) + 1
        return follow(dec, start, end, *rest)

    monkeypatch.setattr(rolled, "follow", counted)
    assert not _compare(src).rolls
    assert calls and all(0 < n <= rolled.DYNAMIC_TRIES for n in calls.values())  # (12 instances x ROLL_TRIES
    # back-edges each without the limit, for the inner loop)


def test_line_times_compared_relative_to_each_back_edge():
    """``trace._same_since`` (the DM lines' DMA times at two back-edges, as arrays) against its definition:
    times relative to each back-edge's cycle, past ones as zero."""
    rng = np.random.default_rng(5)
    for _ in range(300):
        n = int(rng.integers(1, 40))
        t0, t1 = (int(t) for t in rng.integers(0, 200, 2))
        before = rng.integers(0, 400, n).tolist()
        now = [max(a - t0, 0) + t1 if rng.random() < 0.8 else int(rng.integers(0, 400)) for a in before]
        if rng.random() < 0.5:  # (times in the past at both: any values up to the back-edge)
            now = [int(rng.integers(0, t1 + 1)) if a <= t0 else b for a, b in zip(before, now, strict=True)]
        want = all(max(a - t0, 0) == max(b - t1, 0) for a, b in zip(before, now, strict=True))
        assert trace._same_since(before, now, t0, t1) == want


def test_a_rolled_trace_runs_one_data_path_function(monkeypatch):
    """With rolled segments left rolled (the default below ``EXPAND_MIN_LANES``) every chunk (levelled groups and
    rolled ones) goes to ``DataPath.packed_mixed`` with the same shapes: one compile of the data path for the
    trace, not one per kind and chunk size."""
    _compare(NESTED_BOTH)
    ((tr, _, chunks),) = trace._TRACES.values()
    assert tr.rolls and all(mixed for mixed, _ in chunks)
    assert len({tuple((a.shape, a.dtype) for a in part) for _, part in chunks}) == 1
    assert {bool(part[3]) for _, part in chunks} == {False, True}  # (both kinds of chunk occur)


@pytest.mark.parametrize("lanes", [1, 10 ** 9])
def test_rolled_segments_within_the_bounds_run_levelled(monkeypatch, lanes):
    """Segments of EXPAND_MIN_LANES operations x iterations or more, within EXPAND_MAX_OPS, join the levelled data
    path (``rolled.expand``): no chunk is a mixed one, and the segments stay in the plan for the first non-finite
    value's line; below the bound (or past the other) they stay rolled."""
    monkeypatch.setattr(rolled, "EXPAND_MIN_LANES", lanes)
    tr = _compare(NESTED_BOTH)
    ((_, plan, chunks),) = trace._TRACES.values()
    levelled = lanes == 1
    assert tr.rolls and plan.mixed != levelled and all(mixed != levelled for mixed, _ in chunks)
    assert len(plan.segs) == len(tr.rolls)
    assert any(isinstance(p, rolled.Rolled) for p in plan.parts) != levelled
    monkeypatch.setattr(rolled, "EXPAND_MIN_LANES", 1)
    monkeypatch.setattr(rolled, "EXPAND_MAX_OPS", 10)
    _compare(NESTED_BOTH)
    ((_, plan, _),) = trace._TRACES.values()
    assert plan.mixed


# an inner loop of 12 iterations a few of which roll, then a loop of 90
SHORT_AND_LONG = """DMAI p0, r0, r0, 1, 8192
PMOVI p1, 16384
LOOPI 12, short
VLD x0, p0, 64
VADD x2, x0, x0
NOP
VST x2, p1, 64
short:
PMOVI p0, 0
LOOPI 90, long
VLD x0, p0, 64
VMUL x3, x0, x0
NOP
VST x3, p1, 64
long:
"""


@pytest.mark.parametrize("below", [0, None])
def test_segments_of_few_iterations_run_levelled(monkeypatch, below):
    """A segment of fewer than ``rolled.EXPAND_BELOW`` iterations is expanded into levelled groups of its own part
    even where the trace's other segments stay rolled (the plan stays mixed: one data-path function), bit for bit
    as the interpreter; with the bound at 0 both stay rolled."""
    bound = rolled.EXPAND_BELOW
    if below is not None:
        monkeypatch.setattr(rolled, "EXPAND_BELOW", below)
    tr = _compare(SHORT_AND_LONG)
    ((_, plan, chunks),) = trace._TRACES.values()
    counts = sorted(rolled.iterations(seg) for _, seg in tr.rolls)
    assert len(counts) == 2 and counts[0] < bound <= counts[1]
    rolled_parts = [p for p in plan.parts if isinstance(p, rolled.Rolled)]
    assert plan.mixed and all(mixed for mixed, _ in chunks)
    assert len(rolled_parts) == (1 if below is None else 2)
    assert rolled.iterations(rolled_parts[-1]) == counts[1]


# 600 iterations of 8 adds and 8 stores to one line: a part of about 150 groups once expanded
MANY_LANES = "VBCST x1, 1.0\nPMOVI p1, 8192\nLOOPI 600, end\n" + "".join(
    f"VADD x{k}, x1, x1\nVST x{k}, p1, 0\n" for k in range(2, 10)) + "end:\n"


def test_levelled_parts_are_chunked_by_their_size(monkeypatch):
    """A levelled plan with expanded segments chunks a part of fewer than GROUP_CHUNK groups in SMALL_CHUNKs
    (``trace.levelled_part_chunk``), not padded to a GROUP_CHUNK (swiglu C5's expert: 321 parts of a few hundred
    groups, six times their groups packed and sent)."""
    monkeypatch.setattr(rolled, "EXPAND_MIN_LANES", 1)
    tr = _compare(MANY_LANES)
    ((_, plan, chunks),) = trace._TRACES.values()
    big = [int(g.n) for g in plan.parts if trace.SMALL_CHUNK < int(g.n) < trace.GROUP_CHUNK]
    assert tr.rolls and not plan.mixed and big
    assert {len(part[0]) for _, part in chunks} == {trace.SMALL_CHUNK}


def _ext_disjoint_by_enumeration(events: list, k: int) -> bool:
    """``rolled.ext_disjoint`` by its definition: every element of every rolled DMA over iterations 0..k."""
    sets = []
    if not any(e.extra[0] for e in events):
        return True
    if sum(max(e.extra[5] * e.extra[6] // 2, 0) for e in events) * k > rolled.EXT_CHECK_MAX:
        return False
    for e in events:
        is_out, tiled, re, red, rs, n_r, rowbytes, tb = e.extra
        width = max((tb if tiled else rowbytes) // 2, 1)
        idx = rolled._ext_elements(re, rs, width, max(n_r * width, 1), n_r * rowbytes // 2)
        sets.append((is_out, (idx[None, :] + (red // 2) * np.arange(k + 1)[:, None]).reshape(-1)))
    w = np.concatenate([x for out, x in sets if out])
    reads = [x for out, x in sets if not out]
    return len(np.unique(w)) == len(w) and not (reads and np.isin(np.concatenate(reads), w).any())


def test_ext_disjoint_against_enumeration():
    """``rolled.ext_disjoint`` (pairs of DMAs enumerated only where their ranges meet, a DMA out against itself
    kept per geometry) against the enumeration of every element, on random DMAs: tiled or not, strides of
    either sign and odd ones, starts and moves of either parity, empty ones; and ``_ext_span`` bounds each."""
    rng = np.random.default_rng(16)
    seen = {True: 0, False: 0}
    for _ in range(4000):
        events = []
        for _ in range(int(rng.integers(1, 5))):
            extra = (bool(rng.random() < 0.5), bool(rng.random() < 0.4), int(rng.integers(-20, 400)),
                     int(rng.choice([0, 2, 4, 8, 64, 128, 256, -64, 1, 3])),
                     int(rng.choice([-64, -8, -3, 0, 2, 3, 4, 8, 16, 32, 64, 128])), int(rng.integers(0, 6)),
                     int(rng.choice([0, 2, 4, 8, 16, 32, 64])), int(rng.choice([2, 4, 8, 16])))
            events.append(rolled.Event(0, "dma", 0, 0, extra))
            is_out, tiled, re, red, rs, n_r, rowbytes, tb = extra
            width = max((tb if tiled else rowbytes) // 2, 1)
            idx = rolled._ext_elements(re, rs, width, max(n_r * width, 1), n_r * rowbytes // 2)
            lo, hi = rolled._ext_span(re, rs, width, n_r, n_r * rowbytes // 2)
            assert not len(idx) or lo <= idx.min() <= idx.max() <= hi
        k = int(rng.integers(1, 12))
        want = _ext_disjoint_by_enumeration(events, k)
        memo: dict = {}
        assert rolled.ext_disjoint(events, k, memo) == want == rolled.ext_disjoint(events, k, memo)
        seen[want] += 1
    assert min(seen.values()) > 1000


def test_expand_is_unrolled_on_the_host():
    """``rolled.expand`` computes each iteration's fields as ``trace.unrolled`` does on the device (rows affine in
    the iteration with int32 wrap-around, DM lines' rows from the table, a VLDB's lane): every segment of the
    rolled cases, lane for lane."""
    import jax.numpy as jnp

    seen = 0
    for src, rolls in CASES.values():
        if not rolls:
            continue
        tr = _compare(src)
        for _, seg in tr.rolls:
            seen += 1
            got = rolled.expand(seg)
            dev = np.asarray(trace.unrolled(jnp.asarray(trace.pack_rolled(seg, slice(0, len(seg.kind)))),
                                            jnp.asarray(seg.table)))
            on = dev[:, :, trace.N_FIELDS] != trace.NO_SEQ
            want = dev[on]  # (groups in order, lanes in order: expand's order)
            assert np.array_equal(got[:, 4:], want[:, :trace.N_FIELDS])
            assert np.array_equal(got[:, 1], want[:, trace.N_FIELDS])
            assert np.array_equal(got[:, 0], want[:, trace.N_FIELDS + 1])
            assert np.array_equal(got[:, 2], [seg.pc_of(int(q)) for q in got[:, 1]])
    assert seen >= 10


def _segments(seeds: range = range(12)) -> list:
    """The rolled segments of the rolled cases and of generated loops."""
    segs = []
    for src in [src for src, rolls in CASES.values() if rolls] + [generated_loop(seed) for seed in seeds]:
        segs += [seg for _, seg in _compare(src).rolls]
    return segs


def _with_levels(seg: rolled.Rolled, rng: np.random.Generator) -> list[rolled.Rolled]:
    """``seg``, and copies whose levels, counts and kinds are shuffled (runs of a level and kind that span
    groups, empty and padding groups between them, as no pre-pass makes them)."""
    out = [seg]
    for _ in range(3):
        n = len(seg.kind)
        level = rng.integers(0, 4, n).astype(np.int32)
        kind = np.where(rng.random(n) < 0.1, -1, rng.integers(0, trace.N_KINDS, n)).astype(np.int32)
        cnt = rng.integers(0, 33, n).astype(np.int32)
        out.append(seg._replace(level=level, kind=kind, cnt=cnt))
    return out


def test_schedule_rolled_is_schedule_of_expand():
    """``trace.schedule_rolled`` makes the Groups ``schedule(rolled.expand(seg))`` makes, every array, for every
    segment of the rolled cases and generated loops and shuffled copies of them, at both chunkings and widths."""
    rng = np.random.default_rng(16)
    seen = 0
    for base in _segments():
        for seg in _with_levels(base, rng):
            for chunk in (trace.chunk_size, trace.levelled_part_chunk):
                for wide in (True, False):
                    want = trace.schedule(rolled.expand(seg), chunk, wide)
                    got = trace.schedule_rolled(seg, chunk, wide)
                    assert int(got.n) == int(want.n)
                    for a, b in zip(got[:3], want[:3], strict=True):
                        assert a.dtype == b.dtype and np.array_equal(a, b)
                    seen += 1
    assert seen >= 200


def _last_writer_is_prev_brute(ln, at, src, ln_w, w_n, w_at, n_ops):
    k = ln.shape[1]
    ok = np.ones(k, bool)
    for m in range(1, k + 1):
        for r in range(len(at)):
            last = None
            for mm in range(0, m + 1):
                for w in range(len(w_at)):
                    if (mm, w_at[w]) >= (m, at[r]):
                        continue
                    if ln_w[w, mm] <= ln[r, m - 1] < ln_w[w, mm] + w_n[w] and (last is None or (mm, w_at[w]) > last):
                        last = (mm, w_at[w])
            if last != (m - 1, src[r]):
                ok[m - 1] = False
    return ok


@pytest.mark.parametrize("seed", range(40))
def test_last_writer_is_prev_against_a_brute_force(seed):
    """``rolled._last_writer_is_prev``: per iteration, every prefetched line's last write before its read is
    its prefetch one iteration back -- against a loop over every write, on random writers and readers."""
    rng = np.random.default_rng(seed)
    k, n_ops, n_lines = int(rng.integers(1, 6)), int(rng.integers(4, 10)), int(rng.integers(2, 6))
    w_at = np.sort(rng.choice(n_ops, int(rng.integers(1, n_ops)), replace=False)).astype(np.int64)
    w_n = rng.integers(1, 3, len(w_at)).astype(np.int64)
    ln_w = rng.integers(0, n_lines, (len(w_at), k + 1)).astype(np.int64)
    at = rng.integers(0, n_ops, int(rng.integers(1, 4))).astype(np.int64)
    src = rng.choice(w_at, len(at)).astype(np.int64)
    ln = rng.integers(0, n_lines, (len(at), k)).astype(np.int64)
    if seed % 2:  # (half the cases as a prefetch would be: the source writes the read line every iteration)
        for r in range(len(at)):
            w = int(np.flatnonzero(w_at == src[r])[0])
            ln_w[w, :] = ln[r, 0]
            ln[r, :] = ln[r, 0]
    got = rolled._last_writer_is_prev(ln, at, src, ln_w, w_n, w_at, n_ops)
    assert np.array_equal(got, _last_writer_is_prev_brute(ln, at, src, ln_w, w_n, w_at, n_ops))


def test_a_longer_period_is_tried_only_where_back_edges_differ():
    """``trace._steps_alike``: back-edges that each moved the registers alike (and took as many steps) make a
    period of two that of one repeated (not tried); a swap that alternates a register's delta does not."""
    def snap(r: list, steps: int) -> tuple:
        return (0, [], [], [], [], 0, r + [0] * (16 - len(r)), [0] * 8, steps)
    steady = [snap([0, 4 * i], 10 * i) for i in range(3)]
    assert trace._steps_alike(steady, 2)
    swap = [snap([0, 4 * i, 8320 * (i % 2)], 10 * i) for i in range(3)]
    assert not trace._steps_alike(swap, 2)
    uneven = [snap([0, 4 * i], [0, 10, 30][i]) for i in range(3)]
    assert not trace._steps_alike(uneven, 2)
