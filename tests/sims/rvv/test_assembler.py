"""The RVV assembler: GNU-as syntax, pseudo-instructions, directives and precise diagnostics."""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.isa.diagnostics import AssemblyError
from kcgym.sims.rvv import isa as I
from kcgym.sims.rvv.assembler import assemble
from kcgym.sims.rvv.config import DTCM_BASE, RVVConfig


def errors(source: str) -> list:
    with pytest.raises(AssemblyError) as e:
        assemble(source)
    return e.value.errors


def one_error(source: str):
    errs = errors(source)
    assert len(errs) == 1, [d.render() for d in errs]
    return errs[0]


def mnemonic_of(word: np.ndarray) -> str:
    return I.INSTRUCTIONS[word[I.F_OP]].mnemonic


def test_pseudo_instructions_expand_like_gnu_as():
    p = assemble("li a0, 5\nli a1, 0x20000000\nmv a2, a1\nnot a3, a2\nneg a4, a3\nj end\nnop\nend: ret\n")
    assert [mnemonic_of(w) for w in p.words] == ["addi", "lui", "addi", "addi", "xori", "sub", "jal", "addi", "jalr"]
    assert p.words[1, I.F_IMM] == 0x20000 and p.words[2, I.F_IMM] == 0
    assert p.words[6, I.F_IMM] == 8  # j end -> instruction index of 'end'
    assert p.lines == [1, 2, 2, 3, 4, 5, 6, 7, 8]


def test_li_splits_with_rounding_of_the_low_part():
    p = assemble("li a0, 0x12345fff")
    hi, lo = int(p.words[0, I.F_IMM]), int(p.words[1, I.F_IMM])
    assert ((hi << 12) + lo) & 0xFFFFFFFF == 0x12345FFF and -2048 <= lo < 2048


def test_data_section_labels_and_la():
    p = assemble(".data\ntab: .byte 1, 2\n.align 2\nw: .word -1\n.half 7\n.text\nla a0, w\nlw a1, 0(a0)\n")
    assert p.data == bytes([1, 2, 0, 0, 255, 255, 255, 255, 7, 0])
    assert p.symbols == {"tab": DTCM_BASE, "w": DTCM_BASE + 4}
    assert [mnemonic_of(w) for w in p.words] == ["auipc", "addi", "lw"]
    hi, lo = int(p.words[0, I.F_IMM]), int(p.words[1, I.F_IMM])
    assert (hi << 12) + lo == DTCM_BASE + 4  # auipc at pc 0


def test_numeric_local_labels_resolve_backward_and_forward():
    p = assemble("1: addi t0, t0, 1\nbnez t0, 1f\nj 1b\n1: ret\n")
    assert p.words[1, I.F_IMM] == 3 and p.words[2, I.F_IMM] == 0


def test_vector_operands_masks_and_vtype():
    p = assemble("vsetvli t0, a0, e16, m2, ta, mu\nvadd.vv v2, v4, v6, v0.t\nvle8.v v8, (a1)\n"
                 "vmacc.vx v10, t1, v12\nvluxei8.v v2, (a2), v4\n")
    w = p.words
    assert w[0, I.F_IMM] == (0 << 7) | (1 << 6) | (1 << 3) | 1
    assert (w[1, I.F_RD], w[1, I.F_RS2], w[1, I.F_RS1], w[1, I.F_VM]) == (2, 4, 6, 0)
    assert w[2, I.F_VM] == 1 and w[2, I.F_RS1] == 11
    assert (w[3, I.F_RD], w[3, I.F_RS1], w[3, I.F_RS2]) == (10, 6, 12)


def test_all_errors_at_once_with_line_column_and_hint():
    errs = errors("addi t7, t0, 1\nvadd.vi v1, v2, 16\nvsetvli t0, a0, e64, m1\nfoo a0\n")
    by_line = {d.line: d for d in errs}
    assert set(by_line) == {1, 2, 3, 4}
    assert by_line[1].col == 6 and "no t7" in by_line[1].hint
    assert by_line[2].code == "E005" and by_line[2].col == 17 and ".vx form" in by_line[2].hint
    assert by_line[3].code == "E019" and "ELEN is 32" in by_line[3].message
    assert by_line[4].code == "E001"


def test_misaligned_register_group_is_an_error_under_the_known_vtype():
    d = one_error("vsetvli t0, a0, e8, m4, ta, ma\nvadd.vv v2, v4, v8\n")
    assert d.code == "E023" and d.line == 2 and "multiple of 4" in d.message and d.col == 9


def test_group_check_across_a_label_is_only_a_warning():
    p = assemble("vsetvli t0, a0, e8, m4, ta, ma\nloop:\nvadd.vv v2, v4, v8\nbnez a0, loop\n")
    assert [w.code for w in p.warnings] == ["W023"] and p.warnings[0].line == 3


def test_widening_at_m8_needs_more_than_eight_registers():
    d = one_error("vsetvli t0, a0, e8, m8, ta, ma\nvwadd.vv v0, v8, v16\n")
    assert d.code == "E023" and "maximum is 8" in d.message


def test_masked_write_to_v0_is_an_error():
    assert one_error("vsetvli t0, a0, e8, m1, ta, ma\nvadd.vv v0, v1, v2, v0.t\n").code == "E022"


@pytest.mark.parametrize(("source", "code", "col"), [
    ("vle8.v v1, 4(a0)", "E015", 12),
    ("lw a0, a1", "E015", 8),
    ("beq a0, a1, nowhere", "E010", 13),
    ("vadd.vv v1, v2", "E002", 13),
    ("vadd.vv v1, v2, v3, v1.t", "E017", 21),
    ("csrr a0, mstatus", "E018", 10),
    ("addi a0, a0, 5000", "E005", 14),
    ("vfadd.vv v1, v2, v3", "E001", 1),
    (".word 5", "E020", 1),
    (".data\nadd a0, a0, a0", "E020", 1),
    ("vsetvli t0, a0, e8, mf2", "E019", 21),
])
def test_precise_errors(source, code, col):
    d = errors(source)[0]
    assert (d.code, d.col) == (code, col), d.render()


def test_program_over_the_itcm_names_the_limit():
    source = ".rept 2304\nadd a0, a0, a1\n.endr\n"  # 9 KB of instructions
    d = one_error(source)
    assert d.code == "E014" and "ITCM" in d.message and "8192 bytes" in d.message


def test_a_larger_itcm_config_accepts_it():
    assert assemble(".rept 2304\nadd a0, a0, a1\n.endr\n", RVVConfig(itcm_bytes=16384)).length == 2304


def test_macros_equ_and_hi_lo():
    p = assemble(".equ BASE, 0x20000010\n.macro inc r\naddi \\r, \\r, 1\n.endm\nlui a0, %hi(BASE)\n"
                 "addi a0, a0, %lo(BASE)\ninc a0\n")
    assert (int(p.words[0, I.F_IMM]) << 12) + int(p.words[1, I.F_IMM]) == 0x20000010
    assert mnemonic_of(p.words[2]) == "addi" and p.lines[2] == 3 and "line 7" in p.origins[2]


def test_dot_l_labels_and_ignored_directives():
    p = assemble(".text\n.globl kernel\n.type kernel, @function\nkernel:\n.Lloop:\nbnez a0, .Lloop\nret\n"
                 ".size kernel, .-kernel\n")
    assert p.length == 2 and p.words[0, I.F_IMM] == 0
