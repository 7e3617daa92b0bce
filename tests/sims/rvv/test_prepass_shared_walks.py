"""Loop walks shared across programs (``trace._SHARED_WALKS``): a program whose loop words match another's takes
its walk, and its pre-pass is the same Trace as with every program walking its own loops, and as with no rolling;
a program whose loop differs in one word (same length, same context) must not take it."""

from __future__ import annotations

import pytest

from kcgym.sims.rvv import ACCELERATOR, trace
from kcgym.sims.rvv.config import EXT_BASE
from tests.sims.rvv.test_prepass_fast import _prepass as prepass_with
from tests.sims.rvv.test_prepass_fast import assert_same_prepass, c1_kernels
from tests.sims.rvv.test_trace_rolled import loop_program

HW = ACCELERATOR.make_hw()


def variant(source: str, imm: int) -> str | None:
    """BatchScorer's kind of distinct kernel (``bench_scoring.variant``), None where the kernel names every
    register the variant could use."""
    from benchmarks.bench_scoring import variant as bench_variant
    try:
        return bench_variant("RVV", source, imm)
    except SystemExit:
        return None


def shared_hits(monkeypatch) -> list[bool]:
    """Record each look-up of a shared walk: whether it was taken."""
    hits: list[bool] = []
    real = trace._shared_walk

    def spy(p, key):
        w = real(p, key)
        hits.append(w is not False)
        return w

    monkeypatch.setattr(trace, "_shared_walk", spy)
    return hits


def same_three_ways(monkeypatch, name: str, program, ext: int, max_steps: int) -> None:
    """Shared walks (warm), each program's own walks, no rolling: one Trace."""
    shared = prepass_with(monkeypatch, True, program, ext, max_steps, True)
    monkeypatch.setattr(trace, "PREPASS_SHARE_WALKS", False)
    own = prepass_with(monkeypatch, True, program, ext, max_steps, True)
    monkeypatch.setattr(trace, "PREPASS_SHARE_WALKS", True)
    unrolled = prepass_with(monkeypatch, True, program, ext, max_steps, False)
    assert_same_prepass(shared, own, name + " shared vs own")
    assert_same_prepass(shared, unrolled, name + " shared vs unrolled")


@pytest.mark.parametrize("max_steps", [50_000_000, 5001])
def test_kernel_variants_take_shared_walks_and_keep_the_trace(monkeypatch, max_steps):
    hits = shared_hits(monkeypatch)
    trace._SHARED_WALKS.clear()
    for name, source, ext in c1_kernels():
        for imm in (1, 2, 3000):
            if (v := variant(source, imm)) is not None:
                same_three_ways(monkeypatch, f"{name} variant {imm}", ACCELERATOR.assemble(v, HW), ext, max_steps)
    assert any(hits)  # the matmul variants' loops are walked once, then shared


def test_a_loop_that_differs_in_one_word_walks_anew(monkeypatch):
    """Loops of one length, context and key state whose words differ (a stride, a step): each walks its own; the
    same program again takes the walk (and one that differs outside the loop, its bound, may)."""
    hits = shared_hits(monkeypatch)
    trace._SHARED_WALKS.clear()
    base = loop_program(3)
    edits = [("", "", None), ("", "", True), ("addi a1, a1, 4", "addi a1, a1, 8", False),  # (one walk per key:
             ("addi t1, t1, 1", "addi t1, t1, 2", False), ("li t0,", "li t0, 2 *", None),  # the last one stored)
             ("addi a0, a0,", "addi a0, a0, 4 +", False)]
    for k, (old, new, taken) in enumerate(edits):
        before = len(hits)
        source = base.replace(old, new, 1) if old else base
        same_three_ways(monkeypatch, f"edit {k}", ACCELERATOR.assemble(source, HW), 4096, 50_000_000)
        if taken is not None:
            assert any(hits[before:]) == taken, (k, hits[before:])
    for seed in range(40):  # generated loops: many share a length and context, few their words
        same_three_ways(monkeypatch, f"loop {seed}", ACCELERATOR.assemble(loop_program(seed), HW), 4096, 50_000_000)


VECTOR_LOOP = f"""    li a1, {EXT_BASE}
    li t0, 300
    vsetvli s6, zero, e32, m1, ta, mu
loop:
    vle32.v v1, (a1)
    vadd.vv v2, v2, v1
    addi a1, a1, 4
    addi t0, t0, -1
    bnez t0, loop
    ret
"""


def test_a_vector_loop_that_differs_in_one_word_walks_anew(monkeypatch):
    """A body with a vector load (whose walk also checks its memory region), edited in one word: not taken."""
    hits = shared_hits(monkeypatch)
    trace._SHARED_WALKS.clear()
    for k, (old, new, taken) in enumerate([("", "", None), ("", "", True), ("vadd.vv", "vsub.vv", False),
                                           ("addi a1, a1, 4", "addi a1, a1, 8", False), ("", "", False)]):
        before = len(hits)
        source = VECTOR_LOOP.replace(old, new, 1) if old else VECTOR_LOOP
        program = ACCELERATOR.assemble(source, HW)
        same_three_ways(monkeypatch, f"vector edit {k}", program, 4096, 50_000_000)
        if taken is not None:
            assert any(hits[before:]) == taken, (k, hits[before:])
        for value in trace._SHARED_WALKS.values():  # every kept walk's span lies in the program that walked it
            if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], trace.rolled.Walk):
                lo, hi = value[1].pcs
                assert 0 <= lo <= hi <= program.length and len(value[0]) == hi - lo + 1


def test_the_shared_walks_are_bounded(monkeypatch):
    monkeypatch.setattr(trace, "SHARED_WALK_ENTRIES", 3)
    trace._SHARED_WALKS.clear()
    for name, source, ext in list(c1_kernels())[:4]:
        same_three_ways(monkeypatch, name, ACCELERATOR.assemble(source, HW), ext, 50_000_000)
        assert len(trace._SHARED_WALKS) <= 3
