"""The VLIW pre-pass's compiled blocks shared across programs (``blocks.compile_block``'s cache, keyed by the
config, the pre-pass's constants and the block's bundle words, its code relative to its first pc): a program
that finds a block compiled by another -- at another pc, with other values in its registers, faulting or wrapping
around inside it -- gives the same whole Trace as without blocks; a block that differs by one immediate or
register is compiled anew; the cache keeps at most ``BLOCK_CACHE_ENTRIES`` blocks."""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.sims.vliw import blocks, trace
from kcgym.sims.vliw import machine as M
from kcgym.sims.vliw.accelerator import ACCELERATOR
from tests.sims.vliw.test_prepass_blocks import HW, _words, assert_same_trace
from tests.sims.vliw.test_trace_differential import EXT_ELEMENTS

BODY = ("VLD x1, p1, 0 || ADDI r1, r1, 1\nVADD x2, x1, x1 || PADDI p1, p1, {step}\nVST x2, p2, 0\n"
        "VMUL x3, x2, x1 || PADDI p3, p3, {inc}\nVMAC c0, x3, x1\n")

LOOP_PC = 7  # the loop body's first bundle after no padding


def kernel(pad: int = 0, step: int = 64, inc: int = 64, p1: int = 0, p3: int = 0, count: int = 300,
           reg: str = "x3") -> np.ndarray:
    """A hot LOOPI over :data:`BODY` after ``pad`` scalar bundles (the loop's pc), pointers set before it."""
    body = BODY.format(step=step, inc=inc).replace("VMAC c0, x3", f"VMAC c0, {reg}")
    src = "".join(f"ADDI r2, r2, {i + 1}\n" for i in range(pad))
    src += (f"PMOVI p1, {p1}\nPMOVI p2, 4096\nMOVI r3, {p3 >> 3}\nSHLI r3, r3, 3\nADDI r3, r3, {p3 & 7}\n"
            f"PMOV p3, r3\nLOOPI {count}, end\n{body}end:\nHALT\n")
    return _words(ACCELERATOR.assemble(src, HW))


@pytest.fixture
def compiles(monkeypatch):
    """The blocks compiled (``(first pc, bundles)``), from an empty cache."""
    monkeypatch.setattr(blocks, "_COMPILED", type(blocks._COMPILED)())
    made: list[tuple[int, int]] = []
    real = blocks._source

    def counted(recs, start, n, c):
        made.append((start, n))
        return real(recs, start, n, c)

    monkeypatch.setattr(blocks, "_source", counted)
    return made


def prepass(monkeypatch, words: np.ndarray, after: int | None, max_steps: int = 100_000) -> trace.Trace:
    monkeypatch.setattr(blocks, "BLOCK_AFTER", after)
    return trace.prepass(words, HW, EXT_ELEMENTS, max_steps, 16384, False)


def same_as_without_blocks(monkeypatch, words: np.ndarray, max_steps: int = 100_000) -> trace.Trace:
    """The Trace with blocks (cache as it is), checked against the Trace without any."""
    ref = prepass(monkeypatch, words, None, max_steps)
    got = prepass(monkeypatch, words, blocks.BLOCK_AFTER if blocks.BLOCK_AFTER is not None else 24, max_steps)
    assert_same_trace(got, ref)
    return got


def test_a_block_is_reused_at_another_pc(monkeypatch, compiles):
    monkeypatch.setattr(blocks, "BLOCK_AFTER", 24)
    same_as_without_blocks(monkeypatch, kernel(pad=0))
    first = list(compiles)
    assert first and all(n > 1 for _, n in first)
    for pad in (3, 17):  # the same loop body further down: no compile, and the same Trace as without blocks
        tr = same_as_without_blocks(monkeypatch, kernel(pad=pad))
        assert compiles == first and tr.ctl[M.HALTED] and not tr.ctl[M.FAULT]
        assert set(tr.ops[:, 2].tolist()) >= {pad + LOOP_PC + j for j in range(5)}  # (its own pcs in the operations)


@pytest.mark.parametrize("change", [dict(step=128), dict(inc=32), dict(reg="x2")])
def test_a_block_differing_by_one_immediate_or_register_is_compiled_anew(monkeypatch, compiles, change):
    monkeypatch.setattr(blocks, "BLOCK_AFTER", 24)
    same_as_without_blocks(monkeypatch, kernel())
    n_first = len(compiles)
    same_as_without_blocks(monkeypatch, kernel(**change))
    assert len(compiles) > n_first


def test_the_cache_keeps_at_most_its_bound(monkeypatch, compiles):
    monkeypatch.setattr(blocks, "BLOCK_AFTER", 24)
    monkeypatch.setattr(blocks, "BLOCK_CACHE_ENTRIES", 2)
    for inc in (64, 128, 192):  # three distinct loop bodies, one block each
        same_as_without_blocks(monkeypatch, kernel(inc=inc))
        assert len(blocks._COMPILED) <= 2
    assert len(compiles) == 3
    same_as_without_blocks(monkeypatch, kernel(inc=192))  # the most recent: still there
    assert len(compiles) == 3
    same_as_without_blocks(monkeypatch, kernel(inc=64))  # the oldest: evicted, compiled again
    assert len(compiles) == 4 and len(blocks._COMPILED) == 2


def test_a_fault_inside_a_cached_block(monkeypatch, compiles):
    """The block compiled by a program that runs it cleanly; another runs it with a pointer that walks off DM in
    its middle: the block stops at that bundle and the exact checks fault at the interpreter's pc and slot."""
    monkeypatch.setattr(blocks, "BLOCK_AFTER", 24)
    same_as_without_blocks(monkeypatch, kernel())
    n_first = len(compiles)
    tr = same_as_without_blocks(monkeypatch, kernel(p1=HW.dm_bytes - 64 * 100))
    assert len(compiles) == n_first
    assert tr.ctl[M.FAULT] == M.F_OOB_DM and tr.ctl[M.FAULT_PC] == LOOP_PC


def test_wrap_around_inside_a_cached_block(monkeypatch, compiles):
    """A pointer post-incremented past int32 inside the block (it wraps, as the interpreter's does), in a program
    that found the block compiled by one where it did not."""
    monkeypatch.setattr(blocks, "BLOCK_AFTER", 24)
    inc = 1 << 19
    same_as_without_blocks(monkeypatch, kernel(inc=inc))
    n_first = len(compiles)
    tr = same_as_without_blocks(monkeypatch, kernel(inc=inc, p3=0x7FFFFFF8 - inc * 50))
    assert len(compiles) == n_first and tr.ctl[M.HALTED]
    assert int(tr.p[3]) < 0  # (it wrapped)


def test_a_step_budget_inside_a_cached_block(monkeypatch, compiles):
    """The budget stops the run at each bundle of the loop body in turn, in a program that found the body's block
    compiled by another (the stepped tail may compile blocks from the body's later bundles: their own entries)."""
    monkeypatch.setattr(blocks, "BLOCK_AFTER", 24)
    same_as_without_blocks(monkeypatch, kernel())
    assert compiles == [(LOOP_PC, 5)]
    for max_steps in range(200, 206):
        tr = same_as_without_blocks(monkeypatch, kernel(pad=2), max_steps)
        assert int(tr.ctl[M.STEPS]) == max_steps and not tr.ctl[M.HALTED]
    assert (2 + LOOP_PC, 5) not in compiles
