"""Loop rolling in the RVV pre-pass (``kcgym/sims/rvv/rolled.py``, ``trace._Run.roll``) against the pre-pass
without it: the same Trace -- control state, scoreboard, counts, taint and every recorded data operation -- or the
same give-up, on every compiler and expert kernel at C1 (to the end and under step budgets that stop inside
rolled loops), and on generated loops that roll and loops that almost roll but must not, or only part of the way:
a branch whose outcome flips in iteration k, a vsetvli whose vl shrinks at the tail, an address that runs out of
its memory (a fault in iteration k) or is misaligned, a value that wraps past int32, a data-dependent branch, a
store to external memory that a later load reads, DTCM loads and stores, a non-affine scalar, a step budget or the
cycle limit inside the loop. A few of them also run the whole trace path against the interpreter (the oracle).
"""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.sims.rvv import ACCELERATOR, rolled, trace
from kcgym.sims.rvv.config import EXT_BASE
from tests.sims.rvv.test_prepass_fast import _prepass as prepass_with
from tests.sims.rvv.test_prepass_fast import assert_same_prepass, c1_kernels
from tests.sims.rvv.test_trace_differential import _both

HW = ACCELERATOR.make_hw()
EXT = 4096
BUDGETS = (50_000_000, 777, 5001, 12_345)


def loop_program(seed: int) -> str:
    """A generated loop: a counter ``t1`` to ``t0`` (or a countdown), pointers into external memory moving by a
    random stride, and a random body from the parts below -- most of which roll, some of which stop rolling at
    an iteration k, or never roll."""
    rng = np.random.default_rng(seed)
    trips = int(rng.choice((3, 7, 20, 40, 100)))
    k = int(rng.integers(0, trips + 2))
    stride = int(rng.choice((4, 4, 8, 16, -4, 2, 64, 200)))
    start = EXT_BASE + (2048 if stride < 0 else int(rng.choice((0, 4, 1024))))
    lines = [f"    li a0, {start}", f"    li a1, {EXT_BASE + 512}", f"    li a2, {EXT_BASE + 3072}",
             f"    li t0, {trips}", "    li t1, 0", f"    li t2, {k}", f"    li a5, {int(rng.integers(1, 4 * trips))}",
             f"    li s4, {int(rng.choice((0, 0x7FFFFF00, -0x7FFFFF00, -5)))}", "    li s5, 0",
             f"    li t6, {int(rng.choice((0, 1, -1, 1 << 20)))}", "    addi sp, sp, -16", "    sw t0, 4(sp)",
             "    vsetvli s6, zero, e32, m1, ta, mu", "    vmv.v.i v2, 0", "    vmv.v.i v4, 0", "loop:"]
    parts = [
        ["    lw s0, 0(a0)", "    add s1, s1, s0"],  # data into a scalar, every iteration
        ["    vle32.v v1, (a1)", "    vadd.vv v2, v2, v1"],
        ["    lw s0, 0(a0)", "    vle32.v v1, (a1)", "    vmacc.vx v4, s0, v1"],
        ["    vse32.v v2, (a2)"],
        ["    sw s0, 0(a2)", "    lw s3, 0(a2)"],  # a store that the next load reads (external memory)
        ["    blt t1, t2, 1f", "    addi s5, s5, 1", "1:"],  # flips in iteration k
        ["    beq t1, t2, 1f", "    addi s5, s5, 3", "1:"],
        ["    bltu t1, t2, 1f", "    addi s5, s5, 5", "1:"],
        ["    slli s2, t1, 3", "    add s2, s2, a1", "    lw s3, 0(s2)"],  # an address from the counter
        ["    vsetvli s7, a5, e32, m1, ta, mu", "    sub a5, a5, s7", "    vle32.v v3, (a1)",
         "    vsetvli zero, zero, e32, m1, ta, mu"],  # vl = min(a5, VLMAX): shrinks at the tail
        ["    vsetvli zero, zero, e8, m1, ta, mu", "    vadd.vv v5, v5, v5", "    vsetvli zero, zero, e32, m1, ta, mu"],
        ["    addi s4, s4, 255", "    blt s4, zero, 1f", "    addi s5, s5, 1", "1:"],  # wraps past int32
        ["    mul s2, t1, t1"],  # not affine: no roll
        ["    mul s2, t1, t6", "    add s2, s2, a0"],  # affine (t6 does not move)
        ["    lw s3, 4(sp)"],  # a known DTCM word: not data
        ["    sw t1, 8(sp)"],  # a DTCM store: no roll
        ["    lw s0, 0(a0)", "    beqz s0, 1f", "    addi s5, s5, 1", "1:"],  # a branch on data
        ["    vmv.x.s s3, v2", "    add s5, s5, s3"],
        ["    vadd.vv v6, v6, v1", "    vadd.vv v7, v7, v1", "    vadd.vv v6, v6, v7", "    vadd.vv v8, v8, v6",
         "    vmul.vv v9, v8, v8", "    vadd.vv v10, v9, v1", "    vadd.vv v11, v10, v1", "    vadd.vv v12, v11, v1",
         "    vadd.vv v13, v12, v1"],  # more vector instructions than the queue is deep
        ["    auipc s8, 0", "    addi s8, s8, 12", "    lui s9, 4"],
        ["    xor s10, t1, t1", "    and s11, a0, t6"],  # not affine (and of a moving value): no roll
    ]
    picks = rng.choice(len(parts), size=int(rng.integers(1, 5)), replace=False)
    lines += [line.replace("1f", f"j{n}").replace("1:", f"j{n}:")  # one label per part
              for n, i in enumerate(picks) for line in parts[int(i)]]
    lines += [f"    addi a0, a0, {stride}", "    addi a1, a1, 4", "    addi a2, a2, 4"]
    if rng.random() < 0.5:
        lines += ["    addi t1, t1, 1", f"    {rng.choice(('bne', 'blt'))} t1, t0, loop"]
    else:
        lines += ["    addi t1, t1, 1", "    addi t0, t0, -1", "    bnez t0, loop"]
    return "\n".join(lines + ["    addi sp, sp, 16", "    ret"]) + "\n"


def _prepass(monkeypatch, roll: bool, program, ext: int, max_steps: int, fast: bool = True):
    return prepass_with(monkeypatch, fast, program, ext, max_steps, roll)


def _same(monkeypatch, name: str, program, ext: int, max_steps: int) -> bool:
    """The pre-pass with rolling and without give the same Trace (or give-up); whether any loop rolled."""
    rolls = []
    extrapolate = rolled.extrapolate

    def counted(*args):
        out = extrapolate(*args)
        rolls.append(out is not None)
        return out

    monkeypatch.setattr(rolled, "extrapolate", counted)
    on = _prepass(monkeypatch, True, program, ext, max_steps)
    off = _prepass(monkeypatch, False, program, ext, max_steps)
    assert_same_prepass(on, off, name)
    return any(rolls)


def _kernels():
    return c1_kernels()


@pytest.mark.parametrize("max_steps", BUDGETS)
def test_kernels_roll_to_the_same_trace(monkeypatch, max_steps):
    rolled_kernels = [name for name, source, ext in _kernels()
                      if _same(monkeypatch, name, ACCELERATOR.assemble(source, HW), ext, max_steps)]
    if max_steps > 20_000:  # the loops the rolling is for do roll (a regression that never rolled would pass)
        assert {"matmul compiler", "batch_matmul compiler", "linear compiler"} <= set(rolled_kernels)


GENERATED = 240


def test_generated_loops(monkeypatch):
    """Every generated loop to the end and under budgets that stop inside it; most of them roll somewhere."""
    rolled_count = 0
    for seed in range(GENERATED):
        program = ACCELERATOR.assemble(loop_program(seed), HW)
        for max_steps in (50_000_000, 40 + 7 * seed, 150 + seed):
            rolled_count += _same(monkeypatch, f"loop {seed} / {max_steps}", program, EXT, max_steps)
    assert rolled_count > GENERATED // 3


ROLLS = f"""    li a1, {EXT_BASE}
    li t0, 4000
    vsetvli s6, zero, e32, m1, ta, mu
loop:
    vle32.v v1, (a1)
    vadd.vv v2, v2, v1
    lw s0, 4(a1)
    vmacc.vx v4, s0, v1
    addi t0, t0, -1
    bnez t0, loop
    ret
"""  # a loop that rolls: 4,000 iterations of the same path at the same address
STEP = "    addi t0, t0, -1"


def _before_step(text: str, source: str = ROLLS) -> str:
    return source.replace(STEP, text + "\n" + STEP)


REENTERED = f"""    li s0, 2
    li a3, 0
    li a0, {EXT_BASE}
    lw s3, 0(a0)
outer:
    li t1, 0
    li t0, 60
    li a1, {EXT_BASE + EXT - 64 * 12}
inner:
    beq t1, a3, 1f
    lw s3, 0(a1)
    j 2f
1:
    addi s4, s4, 1
    addi s4, s4, 1
2:
    addi a1, a1, 64
    addi t1, t1, 1
    addi a3, a3, 1
    blt t1, t0, inner
    li a3, 1
    addi s0, s0, -1
    bnez s0, outer
    ret
"""  # the inner loop's second entry reuses the first one's walk, where t1 == a3 (no load); now t1 != a3 all the
# way (a path as long, s3 data at both entries), and the load runs out of memory in iteration 12


EDGES = {  # ROLLS changed: each rolls up to an iteration k where something changes, or must not roll at all
    "runs out of memory in iteration 60": _before_step("    addi a1, a1, 64"),
    "misaligned in iteration 1": _before_step("    addi a1, a1, 2"),
    "a data branch from iteration 50": _before_step("    li t3, 3950\n    blt t0, t3, 1f\n    j 2f\n1:\n"
                                                    "    beqz s0, 2f\n    addi s5, s5, 1\n2:"),
    "a store the next iteration loads": _before_step("    vse32.v v4, (a1)\n    addi a1, a1, 4").replace("4000", "900"),
    "vl shrinks at the tail": _before_step("    vsetvli s7, a5, e32, m1, ta, mu\n    sub a5, a5, s7",
                                           ROLLS.replace("    li t0,", "    li a5, 3000\n    li t0,")),
    "vl from a moving register that wraps": _before_step(
        "    vsetvli s7, a5, e32, m1, ta, mu\n    addi a5, a5, 1",
        ROLLS.replace("    li t0,", "    li a5, 0x7FFFFFC0\n    li t0,")),
    "an equal branch unequal at the next entry": REENTERED,
}


def test_cycle_limit_inside_a_rolled_loop(monkeypatch):
    """The cycle limit is checked before every instruction: a roll stops short of it, and the fault lands where
    the per-instruction path puts it."""
    program = ACCELERATOR.assemble(ROLLS, HW)
    full = _prepass(monkeypatch, False, program, EXT, 50_000_000)
    assert isinstance(full, trace.Trace)
    for limit in (int(full.ctl[trace.M.T_END]) // 3, int(full.ctl[trace.M.T_END]) // 2 + 1):
        monkeypatch.setattr(trace, "CYCLE_LIMIT", limit)
        assert _same(monkeypatch, f"cycle limit {limit}", program, EXT, 50_000_000)
        assert _prepass(monkeypatch, True, program, EXT, 50_000_000).ctl[trace.M.FAULT] == trace.M.F_CYCLE_LIMIT


def test_horizon_is_exact():
    """:func:`rolled.horizon`'s inequalities against brute force: a counter loop ``blt t1, t2`` / ``bne`` /
    ``bltu`` / ``bge`` whose operands move by random steps (wrapping included) holds for exactly the iterations a
    direct evaluation says."""
    rng = np.random.default_rng(7)
    for _ in range(3000):
        s = int(rng.integers(0, 6))
        a0, b0 = (int(v) for v in rng.choice((0, 5, -5, 1 << 30, (1 << 31) - 3, -(1 << 31) + 2, 100), 2))
        da, db = (int(v) for v in rng.choice((0, 1, -1, 3, -7, 1 << 29), 2))
        x = [0] * 32
        x[5], x[6] = a0, b0
        d_out = {5: {5: 1, rolled.K: da & 0xFFFFFFFF}, 6: {6: 1, rolled.K: db & 0xFFFFFFFF}}
        forms = [d_out.get(r, {rolled.K: 0}) for r in range(32)]
        taken = trace.branch_taken(s, a0, b0)
        w = rolled.Walk(1, forms, frozenset((5, 6)), [("branch", {5: 1, rolled.K: 0}, {6: 1, rolled.K: 0}, s, taken)])
        n = rolled.horizon(w, x, [False] * 32, 200)

        def wrap(v: int) -> int:
            return ((v + (1 << 31)) % (1 << 32)) - (1 << 31)

        truth = next((j for j in range(200) if trace.branch_taken(s, wrap(a0 + j * da), wrap(b0 + j * db)) != taken),
                     200)
        assert n <= truth, (s, a0, b0, da, db, n, truth)  # never past the first change
        if n < truth:  # short only where a value would wrap past int32 (or leave its sign: unsigned compares)
            assert any(not -(1 << 31) <= v0 + n * dv <= (1 << 31) - 1 or (s >= 4 and (v0 < 0) != (v0 + n * dv < 0))
                       for v0, dv in ((a0, wrap(da)), (b0, wrap(db)))), (s, a0, b0, da, db, n, truth)


def test_edges_roll_up_to_the_change(monkeypatch):
    """The loops that change in iteration k roll (a regression that stopped rolling them would pass silently) and
    give the same Trace; the one misaligned from iteration 1 never rolls."""
    for name, source in EDGES.items():
        program = ACCELERATOR.assemble(source, HW)
        for max_steps in BUDGETS:
            did = _same(monkeypatch, name, program, EXT, max_steps)
            if max_steps == BUDGETS[0]:
                assert did == (name != "misaligned in iteration 1"), name


@pytest.mark.parametrize("case", [0, 2, 5, 13, 17, 44, 72, 85, 115, *EDGES])
def test_generated_loops_against_the_interpreter(monkeypatch, case):
    """The whole trace path (pre-pass with rolling, data path) against the interpreter on two input sets."""
    source = EDGES[case] if isinstance(case, str) else loop_program(case)
    seed = case if isinstance(case, int) else len(case)
    program = ACCELERATOR.assemble(source, HW)
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, (2, EXT), dtype=np.uint8)
    images[1, :64] = 0  # the data branch goes both ways
    trace._TRACES.clear()
    _both(monkeypatch, program, images, max_steps=200_000)
    _both(monkeypatch, program, images, max_steps=61 + seed)
