"""The path cache of VLIW loop rolling (``rolled.Follows``): a path-dependent loop body followed once is reused
from each start whose pinned registers agree and whose branches go the same way.

A reused path must be the path ``rolled.follow`` takes from that start, its branch events too: generated bodies of
scalar arithmetic with forward branches on moving and fixed registers and register LOOPs, followed from many starts
(some moving only values the branches test without changing their outcome, some making a branch register zero,
some changing a LOOP count); and whole programs whose path-dependent loop rolls in several instances, against the
interpreter and against the pre-pass without the cache (the whole Trace).
"""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.sims.vliw import machine as M
from kcgym.sims.vliw import rolled, trace
from kcgym.sims.vliw.accelerator import ACCELERATOR
from tests.sims.vliw.test_prepass_blocks import assert_same_trace
from tests.sims.vliw.test_trace_differential import EXT_ELEMENTS, HW, _assembles, _ext
from tests.sims.vliw.test_trace_rolled import _compare


@pytest.fixture(autouse=True)
def _trace_path(monkeypatch):
    monkeypatch.setenv(trace.SIM_ENV, "trace")
    monkeypatch.setattr(trace, "ROLL_ABOVE", 0)


def _scalar(rng: np.random.Generator) -> str:
    r = lambda: f"r{int(rng.integers(1, 10))}"  # noqa: E731
    return str(rng.choice([f"ADD {r()}, {r()}, {r()}", f"ADDI {r()}, {r()}, {int(rng.integers(-3, 4))}",
                           f"SUB {r()}, {r()}, {r()}", f"SHLI {r()}, {r()}, {int(rng.integers(0, 3))}",
                           f"MUL {r()}, {r()}, {r()}", f"ANDI {r()}, {r()}, {int(rng.integers(0, 4))}",
                           f"SHRI {r()}, {r()}, 1", "NOP"]))


def _body(rng: np.random.Generator) -> list[str]:
    """Scalar bundles with 1-3 forward branches (each skipping a bundle or two) on r1-r9 and, sometimes, a
    register LOOP (its count: r8, which the deltas never move) over a bundle or two."""
    out: list[str] = []
    for b in range(int(rng.integers(1, 4))):
        out += [_scalar(rng) for _ in range(int(rng.integers(0, 3)))]
        out.append(f"{rng.choice(['BEQZ', 'BNEZ'])} r{int(rng.integers(1, 10))}, skip{b}")
        out += [_scalar(rng) for _ in range(int(rng.integers(1, 3)))]
        out.append(f"skip{b}:")
    if rng.random() < 0.4:
        out += ["LOOP r8, lp", _scalar(rng), "lp:"]
    out.append(_scalar(rng))
    return [line for line in out if line.endswith(":") or line.startswith(("BEQZ", "BNEZ", "LOOP")) or
            _assembles(line)]


def _decoded(lines: list[str]):
    """(decoded program, body start, body end) of ``lines`` as the body of a LOOPI."""
    program = ACCELERATOR.assemble("\n".join(["LOOPI 50, end", *lines, "end:"]) + "\n", HW)
    machine = M.Machine(HW)
    n = 1 + sum(1 for line in lines if not line.endswith(":"))
    words = program.padded(HW.imem_bundles + 1, machine.halt_row)
    return trace._decode(machine, words[:n + 2]), 1, n


def _start(rng: np.random.Generator) -> tuple[list, list]:
    r0 = [0] + [int(v) for v in rng.choice([0, 0, 1, -1, 2, 5, 64, 1000, -(1 << 31)], 15)]
    r0[8] = int(rng.integers(-1, 4))  # (the LOOP count)
    return r0, [int(v) * 64 for v in rng.integers(0, 16, 8)]


def _followed(seed: int) -> rolled.Follows:
    """A generated body from 40 starts (each an earlier one with one or two registers moved, or a new one), at one
    or two passes: the cached path is ``follow``'s every time, its branch events too."""
    rng = np.random.default_rng(1600 + seed)
    dec, start, end = _decoded(_body(rng))
    dr = [0] * 16
    for i in rng.choice(np.arange(1, 8), 2, replace=False):
        dr[int(i)] = int(rng.choice([1, -1, 2, 64]))
    dp = [0] * 8
    follows = rolled.Follows()
    starts = [_start(rng)]
    for _ in range(40):
        r0, p0 = (list(v) for v in starts[int(rng.integers(0, len(starts)))])
        if rng.random() < 0.15:
            r0, p0 = _start(rng)
        for _ in range(int(rng.integers(1, 3))):
            i = int(rng.integers(1, 10))
            r0[i] = trace._w(r0[i] + int(rng.choice([1, -1, 16, -(r0[i])])))  # (the last: that register zero)
        starts.append((r0, p0))
        passes = 2 if rng.random() < 0.3 else 1
        got = follows.follow(dec, start, end, len(dec), r0, p0, dr, dp, passes)
        assert got == rolled.follow(dec, start, end, len(dec), r0, p0, dr, dp, passes)
    return follows


@pytest.mark.parametrize("seed", range(40))
def test_cached_paths_are_paths(seed):
    _followed(seed)


def test_cached_paths_are_reused():
    """Most generated bodies reuse a path from some start (a MUL, ANDI or SHRI pins its operands: some never)."""
    assert sum(_followed(seed).hits > 0 for seed in range(40)) >= 20


def test_a_branch_register_is_not_pinned():
    """A counter the body branches on moves from start to start; the path is reused while its branch goes the
    same way (its event's value moved with it), and followed again where the counter is zero."""
    dec, start, end = _decoded(["ADDI r6, r6, -1", "BNEZ r6, skip", "NOP", "skip:", "NOP"])
    follows = rolled.Follows()
    dr, dp = [0] * 6 + [-1] + [0] * 9, [0] * 8
    for v in (9, 8, 7, 1, 6):
        r0 = [0] * 6 + [v] + [0] * 9
        assert follows.follow(dec, start, end, len(dec), r0, [0] * 8, dr, dp, 1) == rolled.follow(
            dec, start, end, len(dec), r0, [0] * 8, dr, dp, 1)
    assert follows.hits == 3  # (8, 7 and 6 reuse 9's path; 1 makes the register zero at the branch)


class _Counted(rolled.Follows):
    made: list = []

    def __init__(self) -> None:
        super().__init__()
        _Counted.made.append(self)


# an outer loop of instances of a 16-iteration loop whose path depends on a counter (swiglu's expert's shape: a
# prefetch on the first iteration of each instance, none on the last; a double buffer swapped each iteration)
PREFETCH = """MOVI r1, 0
MOVI r4, 4096
MOVI r8, 12288
LOOPI 5, outer
MOVI r6, 16
LOOPI 16, inner
ADDI r6, r6, -1
ADDI r15, r6, -15
BNEZ r15, no_first
PMOVI p3, 8192
DMAI p3, r1, r0, 1, 128
no_first:
BEQZ r6, no_next
SUB r5, r8, r4
PMOV p7, r5
DMAI p7, r1, r0, 1, 256 || ADDI r1, r1, 256
no_next:
PMOV p0, r4
VLD x0, p0, 64
VADD x1, x0, x0
NOP
VST x1, p0, 0
SUB r4, r8, r4
inner:
NOP
outer:
"""


def test_a_path_dependent_loop_rolled_in_several_instances(monkeypatch):
    """The inner loop's path depends on its counter: followed once per period and reused in the later instances
    (the outer loop's registers move, its counter's outcomes do not); the trace is the uncached pre-pass's and the
    results the interpreter's."""
    _Counted.made = []
    monkeypatch.setattr(rolled, "Follows", _Counted)
    tr = _compare(PREFETCH)
    assert tr.rolls
    words = ACCELERATOR.assemble(PREFETCH, HW).padded(HW.imem_bundles + 1, M.Machine(HW).halt_row)
    H = _ext(0).shape[1]
    cached = trace.prepass(words, HW, EXT_ELEMENTS, 100_000, H)
    with monkeypatch.context() as mp:
        mp.setattr(_Counted, "follow", lambda self, *a: rolled.follow(*a))
        fresh = trace.prepass(words, HW, EXT_ELEMENTS, 100_000, H)
    assert_same_trace(cached, fresh)
    assert _Counted.made[0].hits >= 1
