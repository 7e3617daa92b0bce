"""The walk cache of VLIW loop rolling (``rolled.Walks``): a loop body walked once is re-based to each new start.

A re-based walk must be the walk from that start, every field: generated bodies of scalar arithmetic, moving
pointers, lanes and DMAs walked from many starts (some differing only in values that flow into fields, some
in values that decide addresses or lanes, where the cache must walk again); and whole programs that roll one
body from several starts (other EXT addresses and rows, a register that decides a pointer or a lane, an EXT
address that runs out or wraps in a later instance, a step budget inside a later instance) against the
interpreter and against the pre-pass without the cache (the whole Trace).
"""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.sims.vliw import machine as M
from kcgym.sims.vliw import rolled, trace
from kcgym.sims.vliw.accelerator import ACCELERATOR
from tests.sims.vliw.test_prepass_blocks import assert_same_trace  # (every field, rolled segments too)
from tests.sims.vliw.test_trace_differential import EXT_ELEMENTS, HW, _assembles, _ext
from tests.sims.vliw.test_trace_rolled import _compare


@pytest.fixture(autouse=True)
def _trace_path(monkeypatch):
    """The trace path, rolling loops of any program (as ``test_trace_rolled``)."""
    monkeypatch.setenv(trace.SIM_ENV, "trace")
    monkeypatch.setattr(trace, "ROLL_ABOVE", 0)


KINDS = (trace.K_LD, trace.K_VEC, trace.K_MOV, trace.K_DMAI, trace.K_DMAO, trace.K_MAC, trace.K_MMUL)


def _body(rng: np.random.Generator) -> list[str]:
    """A straight-line loop body: scalar arithmetic over r1-r9 and the pointers (every affine case of
    ``rolled.Forms`` and the pinning ones: MUL, SHRI, ANDI), loads and stores through moving pointers, lanes
    from registers, DMAs with EXT start and stride from registers."""
    r = lambda: f"r{int(rng.integers(1, 10))}"  # noqa: E731
    p = lambda: f"p{int(rng.integers(0, 4))}"  # noqa: E731
    x = lambda: f"x{int(rng.integers(0, 12))}"  # noqa: E731
    out = []
    for _ in range(int(rng.integers(3, 9))):
        k = int(rng.integers(0, 11))
        out.append({0: f"ADD {r()}, {r()}, {r()}", 1: f"ADDI {r()}, {r()}, {int(rng.integers(-300, 300))}",
                    2: f"SUB {r()}, {r()}, {r()}", 3: f"SHLI {r()}, {r()}, {int(rng.integers(0, 32))}",
                    4: f"MUL {r()}, {r()}, {r()}", 5: f"{rng.choice(['SHRI', 'ANDI'])} {r()}, {r()}, "
                                                     f"{int(rng.integers(0, 9))}",
                    6: f"PADD {p()}, {p()}, {r()}", 7: f"MOVP {r()}, {p()}", 8: f"PMOV {p()}, {r()}",
                    9: f"PADDI {p()}, {p()}, 64", 10: f"VLD {x()}, {p()}, 64 || VST {x()}, {p()}, -64"}[k])
        if rng.random() < 0.3:
            out.append(f"VBCSTL {x()}, {x()}, {r()}")
        if rng.random() < 0.4:
            out.append(f"{rng.choice(['DMAI', 'DMAO'])} {p()}, {r()}, {r()}, {int(rng.integers(1, 3))}, 128")
    return [line for line in out if _assembles(line)] or ["NOP"]


def _structure(lines: list[str]):
    """(decoded program, Structure) of ``lines`` as the body of a LOOPI (the walk reads the bundles only: a body
    ``rolled.facts`` would decline -- a value carried from iteration to iteration -- is walked all the same)."""
    program = ACCELERATOR.assemble("\n".join(["LOOPI 50, end", *lines, "end:"]) + "\n", HW)
    machine = M.Machine(HW)
    words = program.padded(HW.imem_bundles + 1, machine.halt_row)
    dec = trace._decode(machine, words[:len(lines) + 3])
    return dec, rolled.Structure(tuple(range(1, len(lines) + 1)), (), (), 1)


def _start(rng: np.random.Generator) -> tuple[list, list]:
    r0 = [0] + [int(v) for v in rng.integers(-(1 << 31), 1 << 31, 15)]
    p0 = [int(v) * 64 for v in rng.integers(0, HW.dm_bytes // 64, 8)]
    return r0, p0


def _same_walk(a, b) -> None:
    assert (a is None) == (b is None)
    if a is not None:
        assert a[0] == b[0]  # every operation: kind, step, fields, modes, deps, lines
        assert a[1] == b[1]  # every event
        assert a[2]._replace(memo=None) == b[2]  # registers after the iteration, local rows, live-outs, sinks


def test_forms_pin_what_decides():
    """A MUL, SHRI or ANDI operand, an address and a lane are pinned; values that only flow into fields are not."""
    dec, s = _structure(["ADDI r2, r1, 64", "MUL r4, r3, r5", "SHRI r6, r7, 2", "PMOV p1, r8",
                         "VLD x0, p1, 64 || VBCSTL x1, x2, r9", "DMAI p0, r2, r0, 1, 128"])
    fm = rolled.Forms()
    got = rolled.walk(dec, s, [0] * 16, [0] * 8, [0] * 16, [0] * 8, list(range(12)), list(range(8)), KINDS, fm)
    assert got is not None
    assert fm.pins == {3, 5, 7, 8, 9, 16}  # r3 r5 (MUL), r7 (SHRI), r8 (p1's address), r9 (lane), p0 (DMA's DM)
    assert {1: 1} in [f for w, f in got[2].sinks if w[0] == "op"]  # the DMA's EXT start: r1 + 64


@pytest.mark.parametrize("seed", range(40))
def test_rebased_walks_are_walks(seed):
    """Each generated body from 30 starts (each a change of one to three registers of an earlier start, or a new
    one): the cached walk is the fresh one, and some starts re-base a cached walk."""
    rng = np.random.default_rng(900 + seed)
    dec, s = _structure(_body(rng))
    dr = [0] * 16
    for i in rng.choice(np.arange(1, 10), 2, replace=False):
        dr[int(i)] = int(rng.choice([64, 256, -128, 1 << 20]))
    dr2 = list(dr)  # (a second delta for some starts: a walk of one delta is never another's)
    dr2[int(np.flatnonzero(dr)[0])] += 2
    dp = [0] * 8
    dp[int(rng.integers(0, 4))] = 64 * int(rng.integers(1, 3))
    walks = rolled.Walks()
    starts = [_start(rng)]
    for _ in range(30):
        r0, p0 = (list(v) for v in starts[int(rng.integers(0, len(starts)))])
        if rng.random() < 0.15:
            r0, p0 = _start(rng)
        for _ in range(int(rng.integers(1, 4))):
            i = int(rng.integers(1, 24))
            delta = int(rng.choice([64, -256, 1 << 30, 12345]))
            if i < 16:
                r0[i] = trace._w(r0[i] + delta)
            else:
                p0[i - 16] = (p0[i - 16] + 64 * delta) % HW.dm_bytes
        xs = [int(v) for v in rng.integers(0, 5000, 12)]
        cs = [int(v) for v in rng.integers(0, 5000, 8)]
        starts.append((r0, p0))
        d = dr2 if rng.random() < 0.3 else dr
        _same_walk(walks.walk(dec, s, r0, p0, d, dp, xs, cs, KINDS), rolled.walk(dec, s, r0, p0, d, dp, xs, cs, KINDS))
    assert walks.hits > 0 or not walks.memo


class _Counted(rolled.Walks):
    made: list = []

    def __init__(self) -> None:
        super().__init__()
        _Counted.made.append(self)


def _hits(monkeypatch, src: str, max_steps: int = 100_000) -> tuple[trace.Trace, int]:
    """``_compare`` (trace path against the interpreter) of ``src``, its Trace the same as the pre-pass's without
    the walk cache; the trace and the cache's hits."""
    _Counted.made = []
    monkeypatch.setattr(rolled, "Walks", _Counted)
    tr = _compare(src, max_steps)
    program = ACCELERATOR.assemble(src, HW)
    words = program.padded(HW.imem_bundles + 1, M.Machine(HW).halt_row)
    H = _ext(0).shape[1]
    cached = trace.prepass(words, HW, EXT_ELEMENTS, max_steps, H)
    with monkeypatch.context() as mp:
        mp.setattr(_Counted, "walk", lambda self, *a: rolled.walk(*a))
        fresh = trace.prepass(words, HW, EXT_ELEMENTS, max_steps, H)
    assert_same_trace(cached, fresh)
    return tr, _Counted.made[0].hits


def _outer(inner: str, setup: str = "", outer_step: str = "", n: int = 6, m: int = 24) -> str:
    """An outer loop of ``n`` instances of a rolled inner loop of ``m`` iterations (DMA_LOOP's tile: DMA in, two
    loads, a store, DMA out) whose start registers differ per instance."""
    return f"""MOVI r1, 0
MOVI r2, 16384
{setup}
LOOPI {n}, outer
PMOVI p0, 0
PMOVI p2, 4096
LOOPI {m}, inner
DMAI p0, r1, r0, 1, 256 || ADDI r1, r1, 256
PMOVI p1, 0
{inner}
VLD x0, p1, 64
VADD x2, x0, x1
NOP
VST x2, p2, 64
VST x2, p2, -64
DMAO p2, r2, r0, 1, 128 || ADDI r2, r2, 128
inner:
{outer_step}
NOP
outer:
"""


def test_one_body_rolled_from_other_ext_addresses(monkeypatch):
    """The inner loop rolls in each outer instance from its own EXT addresses and rows: walked once, re-based
    after (the outer loop's first instances step, later ones roll whole, inner loops and all)."""
    tr, hits = _hits(monkeypatch, _outer("VLD x1, p1, 64", n=4))
    assert len(tr.rolls) >= 2 and hits >= 1


def test_a_register_that_decides_a_pointer_is_not_reused(monkeypatch):
    """The inner loop's load pointer comes from a register that moves per outer instance (``PMOV``, a line
    further into the tile): pinned, so no instance reuses another's walk, and each rolls with its own addresses."""
    tr, hits = _hits(monkeypatch, _outer("PMOV p1, r5\nVLD x1, p1, 0", "MOVI r5, 0", "ADDI r5, r5, 64", n=4))
    assert tr.rolls and hits == 0


def test_a_register_that_decides_a_lane_is_not_reused(monkeypatch):
    """The inner loop broadcasts the lane a register names, a lane further each outer instance: pinned."""
    tr, hits = _hits(monkeypatch, _outer("VLD x3, p1, 0\nVBCSTL x1, x3, r6", "MOVI r6, 1", "ADDI r6, r6, 5", n=4))
    assert tr.rolls and hits == 0


def test_a_body_that_differs_by_one_immediate(monkeypatch):
    """Two copies of the loop, the second's EXT start steps by 2 bytes more: other bundles, never one walk."""
    second = _outer("VLD x1, p1, 64", n=2).replace("ADDI r1, r1, 256", "ADDI r1, r1, 258")
    src = _outer("VLD x1, p1, 64", n=2) + second.replace("inner", "inner2").replace("outer", "outer2")
    tr, hits = _hits(monkeypatch, src)
    assert len(tr.rolls) == 4 and hits == 2  # (each copy's second instance)


def test_a_delta_that_differs_per_instance(monkeypatch):
    """The inner loop's EXT start steps by a register that grows each outer instance: another delta, another
    walk; the same delta again, a re-based one."""
    src = _outer("VLD x1, p1, 64", "MOVI r7, 256", "ADDI r7, r7, 0").replace("ADDI r1, r1, 256", "ADD r1, r1, r7")
    _, hits = _hits(monkeypatch, src)
    assert hits >= 1
    tr, _ = _hits(monkeypatch, src.replace("ADDI r7, r7, 0", "ADDI r7, r7, 2"))
    assert len(tr.rolls) >= 4


@pytest.mark.parametrize("step", [0, 1000])
def test_a_later_instance_runs_off_ext(monkeypatch, step):
    """The EXT start grows each instance (by 6 KB, and ``step`` more): the sixth instance's DMAs run past EXT in
    some iteration. The re-based walk's checks stop its roll before it, and the stepped rest faults as the
    interpreter does."""
    tr, hits = _hits(monkeypatch, _outer("VLD x1, p1, 64", outer_step=f"ADDI r1, r1, {step}"))
    assert int(tr.ctl[M.FAULT]) != 0 and hits >= 1


WRAPS = """MOVI r10, 1
SHLI r10, r10, 31
MOVI r11, 1
SHLI r11, r11, 31
ADDI r11, r11, {start}
MOVI r2, 16384
LOOPI 5, outer
PMOVI p0, 0
PMOVI p2, 4096
LOOPI 24, inner
ADD r3, r10, r11
DMAI p0, r3, r0, 1, 256 || ADDI r10, r10, 256
PMOVI p1, 0
VLD x0, p1, 64
VADD x2, x0, x0
VST x2, p2, 0
DMAO p2, r2, r0, 1, 128 || ADDI r2, r2, 128
inner:
ADDI r10, r10, 1048575
ADDI r11, r11, -1048575
outer:
"""


@pytest.mark.parametrize("start", [0, 4096])
def test_ext_starts_that_wrap(monkeypatch, start):
    """The EXT start is the sum of two registers near -2**31 (it wraps): each instance moves both by a million, the
    sum by 6 KB. Re-based mod 2**32 as the walk computes it; from ``start`` 4096 the last instance's DMA in runs
    past EXT mid-loop, where its roll stops and the stepped rest faults."""
    tr, hits = _hits(monkeypatch, WRAPS.format(start=start))
    assert hits >= 1 and tr.rolls
    assert (int(tr.ctl[M.FAULT]) != 0) == (start > 0)


@pytest.mark.parametrize("budget", [300, 407, 431, 612])
def test_step_budget_inside_a_later_instance(monkeypatch, budget):
    """A step budget that ends inside a later instance's rolled inner loop: its bundle and state."""
    tr, _ = _hits(monkeypatch, _outer("VLD x1, p1, 64", n=4), max_steps=budget)
    assert int(tr.ctl[M.STEPS]) == budget
