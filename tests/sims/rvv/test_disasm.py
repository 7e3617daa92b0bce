"""RVV disassembler: assemble -> disassemble -> assemble gives the same words and data, as on NPU and VLIW."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kcgym.isa.spec import Imm, Reg
from kcgym.sims.rvv import ACCELERATOR
from kcgym.sims.rvv import isa as I
from kcgym.sims.rvv.assembler import assemble
from kcgym.sims.rvv.disasm import disassemble, disassemble_word
from kcgym.sims.rvv.expert import EXPERTS
from kcgym.tasks import tasks_for
from tests.sims.rvv import isa_programs as P

HW = ACCELERATOR.make_hw()


def _round_trip(source: str) -> None:
    prog = assemble(source, HW)
    text = disassemble(prog.words, prog.data)
    again = assemble(text, HW)
    np.testing.assert_array_equal(again.words, prog.words)
    assert again.data == prog.data
    assert disassemble(again.words, again.data) == text  # a fixed point


def _kernels() -> list[tuple[str, str]]:
    out = []
    for name, task in tasks_for("int8").items():
        cfg = task.config("RVV", 1)
        out.append((f"{name}/compiler", ACCELERATOR.compile(task, cfg, HW)))
        if name in EXPERTS and (src := ACCELERATOR.expert(task, cfg, HW)) is not None:
            out.append((f"{name}/expert", src))
    return out


KERNELS = _kernels()


@pytest.mark.parametrize("source", [s for _, s in KERNELS], ids=[n for n, _ in KERNELS])
def test_every_compiler_and_expert_kernel_round_trips_at_c1(source):
    _round_trip(source)


@pytest.mark.parametrize("k", range(len(P.programs(seed=0))))
def test_isa_programs_round_trip(k):
    """The generated programs cover every mnemonic of the table."""
    _round_trip(P.programs(seed=0)[k][0])


def test_pseudos_data_and_local_labels_round_trip():
    _round_trip(""".data
table: .word 1, -2, 0x7fffffff
       .byte 255
.align 2
.text
    la a0, table
    li a1, 0x12345678
    call 2f
1:  addi a1, a1, -1
    vsetivli t0, 7, e16, m2, tu, mu
    vle16.v v2, (a0), v0.t
    vmerge.vim v4, v2, -3, v0
    vmsgt.vv v6, v2, v4
    csrr a2, vlenb
    bnez a1, 1b
    j 3f
2:  ret
3:  jalr zero, -4(ra)
""")


def test_words_print_as_gnu_as():
    prog = assemble("lw a0, -4(sp)\nvsetvli t0, a0, e32, m4, ta, ma\nvadd.vx v8, v4, t1, v0.t\nvmv.x.s a1, v8\n", HW)
    assert [disassemble_word(r) for r in prog.words] == [
        "lw a0, -4(sp)", "vsetvli t0, a0, e32, m4, ta, ma", "vadd.vx v8, v4, t1, v0.t", "vmv.x.s a1, v8"]


@st.composite
def words(draw) -> np.ndarray:
    """Random well-formed words of every form; vector registers are multiples of 8 and LMUL is m1, so no
    register-group rule can reject them."""
    n = draw(st.integers(1, 12))
    rows = np.zeros((n, I.N_FIELDS), np.int32)
    for row in rows:
        spec = draw(st.sampled_from(I.INSTRUCTIONS))
        row[[I.F_OP, I.F_CLS, I.F_SUB]] = I.OPCODE[spec.mnemonic], I.CLASS_ID[spec.cls], spec.sub
        row[[I.F_SRC, I.F_W, I.F_SGN, I.F_VM]] = spec.src, spec.w, spec.sgn, 1
        for o in spec.operands:
            kind = o.kind
            if isinstance(kind, Reg):
                row[o.field] = draw(st.integers(0, 31)) if kind.file == "x" else draw(st.sampled_from((8, 16, 24)))
            elif isinstance(kind, Imm):
                row[o.field] = draw(st.integers(int(kind.lo), int(kind.hi)))
            elif kind in (I.MEM, I.JMEM):
                row[I.F_IMM], row[I.F_RS1] = draw(st.integers(-2048, 2047)), draw(st.integers(0, 31))
            elif kind == I.VMEM:
                row[I.F_RS1] = draw(st.integers(0, 31))
            elif kind == I.LABEL:
                row[I.F_IMM] = draw(st.integers(0, n))
            elif kind == I.CSR:
                row[I.F_IMM] = draw(st.integers(0, len(I.CSR_NAMES) - 1))
            elif kind == I.VTYPE:
                row[I.F_IMM] = draw(st.integers(0, 3)) << 6 | draw(st.integers(0, 2)) << 3
            elif kind == I.MASK:
                row[I.F_VM] = draw(st.integers(0, 1))
            elif kind == I.V0:
                row[I.F_VM] = 0
    return rows


@settings(max_examples=150, deadline=None)
@given(words())
def test_random_words_round_trip(w):
    again = assemble(disassemble(w), HW)
    np.testing.assert_array_equal(again.words, w)
