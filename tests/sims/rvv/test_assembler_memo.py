"""The RVV assembler's memos (``_HEADS``, ``_ROWS``) change nothing: every source assembles to the same program, or
fails with the same diagnostics, with the memos warm from other sources as with everything computed afresh."""

from __future__ import annotations

import random
import threading
from pathlib import Path

import pytest

from kcgym.isa.diagnostics import AssemblyError
from kcgym.limits import MAX_DIAGNOSTICS
from kcgym.registry import ACCELERATORS, SUPPORTED, task_for
from kcgym.sims.rvv import assembler as A
from kcgym.sims.rvv import clang_baseline
from tests.isa.corpus import mutants
from tests.isa.hostile import hostile_sources

OUTPUT = Path(__file__).parent / "compiler_output"


def outcome(assemble, source: str):
    """Everything a caller can see of an assembly: the program's fields, or the error's diagnostics."""
    try:
        p = assemble(source)
    except AssemblyError as e:
        return "error", [repr(d) for d in e.diagnostics]
    return ("ok", p.words.tobytes(), p.words.shape, p.lines, p.origins, [repr(d) for d in p.warnings], p.data,
            p.symbols)


def assert_same(sources: list[str]) -> None:
    """Each source, in turn, on the memoized path (memos warm from the sources before it) and afresh."""
    for k, source in enumerate(sources):
        assert outcome(A.assemble, source) == outcome(A.assemble_unmemoized, source), (k, source[:300])


def committed_kernels() -> list[str]:
    acc = ACCELERATORS["RVV"]
    hw = acc.make_hw()
    out = [p.read_text() for p in sorted(OUTPUT.glob("*.s"))]
    for name in SUPPORTED["RVV"]:
        task = task_for("RVV", name)
        for cfg in task.configs("RVV"):
            out.append(acc.compile(task, cfg, hw))
            if (expert := acc.expert(task, cfg, hw)) is not None:
                out.append(expert)
    return out + [clang_baseline.assembly(stem) for stem in clang_baseline.stems()]


@pytest.fixture(scope="module")
def kernels() -> list[str]:
    return committed_kernels()


def test_every_committed_kernel_assembles_alike_twice(kernels):
    assert len(kernels) > 10
    assert_same(kernels)
    assert_same(kernels)  # now every memo is warm with these very lines


def test_mutants_and_hostile_sources_agree_or_fail_alike(kernels):
    sources = [m for i, k in enumerate(kernels[:12]) for m in mutants(k, "RVV", 12, seed=i)]
    assert_same(sources + list(hostile_sources("RVV").values()))


# the same line text in programs where its value differs: a memo keyed on the text alone would be wrong here
CONTEXTS = [
    "addi a0, a0, N\nvsetvli t0, a0, e8, m1, ta, ma\nvadd.vv v1, v2, v3\n",
    ".equ N, 7\naddi a0, a0, N\n",
    ".equ N, 5000\naddi a0, a0, N\n",
    "vsetvli t0, a0, e8, m1, ta, ma\nvadd.vv v1, v2, v3\nvwadd.vv v2, v4, v6\n",
    "vsetvli t0, a0, e8, m2, ta, ma\nvadd.vv v1, v2, v3\nvwadd.vv v2, v4, v6\n",
    "vsetvli t0, a0, e8, m4, ta, ma\nx:\nvadd.vv v1, v2, v3\nvwadd.vv v2, v4, v6\n",
    "vsetvli t0, a0, e8, m4, ta, ma\nvadd.vv v1, v2, v3, v0.t\nvadd.vv v0, v2, v3, v0.t\n",
    "1:\naddi a0, a0, 1\nbnez a0, 1b\nj 1f\n1:\nnop\n",
    "nop\n1:\naddi a0, a0, 1\nbnez a0, 1b\nj 1f\nnop\n1:\nnop\n",
    "lw a0, 8(a1)\nlw a0, 0x8(a1)\nlw a0, N(a1)\nlw a0, (a1)\nsw a0, -4(sp)\n",
    ".equ N, 12\nlw a0, N(a1)\n",
    ".data\nd: .word 1\n.text\nlw a0, %lo(d)(a1)\nla a0, d\naddi a0, a0, %lo(d)\n",
    ".data\n.zero 16\nd: .word 1\n.text\nlw a0, %lo(d)(a1)\nla a0, d\naddi a0, a0, %lo(d)\n",
    "addi a0, a0, .\naddi a0, a0, .\naddi a0, a0, 2047\naddi a0, a0, 2048\naddi a0, a0, -2049\n",
    "x: addi a0, a0, 1\naddi a0, a0, 1\nx: addi a0, a0, 1\n",
    "addi a0, a0, 1 # c\n  addi   a0 ,a0,  1\nADDI A0, A0, 1\naddi a0, a0, 1, 2\naddi a0, a0\n",
    "jalr a0\njalr ra, 0(a0)\njalr ra, 4(a0)\njal x0\nret\ncsrr a0, vl\ncsrr a0, vlenb\ncsrr a0, foo\n",
    "vsetvli t0, a0, e64, m1\nvsetvli t0, a0, e8, mf2\nvsetvli t0, a0, e8, m3, ta, ma, xx\nvsetvli t0, a0\n",
    "li a0, 5\nli a0, 5000\nli a0, N\n.equ N, 3\nli a0, N\nmv a0, a1\nnot a0, a1\nvnot.v v1, v2, v0.t\n",
    "vle8.v v1, (a0)\nvle8.v v1, 4(a0)\nvse32.v v2, (a1), v0.t\nvluxei8.v v4, (a0), v8\n",
]


def test_lines_whose_value_depends_on_the_program_agree():
    assert_same(CONTEXTS + CONTEXTS[::-1])


def test_the_cpu_and_the_rvv_assemblers_do_not_share_rows():
    """The CPU's assembler is a subclass with its own CSR names: a row one of them encoded must never serve the
    other (the full suite caught ``csrr a0, mstatus`` passing on the RVV after a CPU kernel had read mstatus)."""
    from kcgym.sims.cpu import assembler as C

    for first, second, line in ((C.assemble, A.assemble, "csrr a0, mstatus"), (A.assemble, C.assemble, "csrr a0, vl")):
        A._ROWS.clear()
        fresh = outcome(second, line + "\n")  # an unsupported CSR on the second machine
        first(line + "\n")  # valid on the first: its row is memoized
        assert fresh[0] == "error" and "E018" in fresh[1][0], line
        assert outcome(second, line + "\n") == fresh, line


def test_a_line_past_the_diagnostic_cap_is_not_memoized_silently():
    """Past the cap errors are counted and warnings dropped: a line encoded then must not fill the memo with a
    row whose diagnostics went unseen; the warning that line gives later must still appear."""
    warn = "vsetvli t0, a0, e8, m4, ta, ma\ny:\nvadd.vv v1, v2, v3\n"  # W023 across the label
    capped = "bogus\n" * (MAX_DIAGNOSTICS + 5) + warn
    A._ROWS.clear()
    assert_same([capped, warn])
    assert any("W023" in w for w in outcome(A.assemble, warn)[5])


def test_randomized_operand_mixes_agree():
    rng = random.Random(16)
    ops = ["a0", "t1", "zero", "x31", "x32", "v0", "v8", "v31", "v0.t", "0", "-1", "2047", "2048", "15", "-16",
           "16", "N", "0x10", "8(a0)", "(a1)", "N(a2)", "-4(sp)", "%lo(N)", "1b", "1f", ".", "e8", "m2", "ta", "vl"]
    mnems = ["addi", "slli", "lw", "sw", "jalr", "vadd.vv", "vadd.vx", "vadd.vi", "vle8.v", "vse16.v", "vmv.v.i",
             "vsetvli", "vwadd.vv", "vnsrl.wi", "vredsum.vs", "csrr", "li", "mv", "lui", "beq", "vmerge.vvm"]
    sources = []
    for _ in range(60):
        lines = [".equ N, " + str(rng.choice([1, 4, 3000]))] if rng.random() < 0.5 else []
        for _ in range(rng.randint(1, 12)):
            if rng.random() < 0.1:
                lines.append(rng.choice(["1:", "L:", "vsetvli t0, a0, e16, m2, ta, ma", ".data", ".text"]))
            lines.append(rng.choice(mnems) + " " + ", ".join(rng.choice(ops) for _ in range(rng.randint(0, 4))))
        sources.append("\n".join(lines))
    assert_same(sources)


def test_memos_are_bounded_and_shared_across_threads(kernels, monkeypatch):
    monkeypatch.setattr(A, "MEMO_ENTRIES", 8)  # every few lines a memo is full and starts again
    A._ROWS.clear()
    A._HEADS.clear()
    want = [outcome(A.assemble_unmemoized, k) for k in kernels[:6]]
    got: list[list] = [[] for _ in range(3)]

    def work(i: int) -> None:
        got[i] = [outcome(A.assemble, k) for k in kernels[:6]]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == [want] * 3
    assert len(A._ROWS) <= 8 and len(A._HEADS) <= 8
