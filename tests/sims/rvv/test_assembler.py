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


# ---- compiler output as it is: clang-14 (RVV intrinsics) and GCC 12 -O2 files in compiler_output/ ----------
OUTPUT = __import__("pathlib").Path(__file__).parent / "compiler_output"


def test_clang_output_assembles_with_its_sections_laid_out_like_ld():
    p = assemble((OUTPUT / "clang_sample.s").read_text())
    # .rodata.cst16 (tab), .rodata.str1.1 (.L.str), then .sbss aligned to 4 (gsum, lsum): the linker's order
    assert p.symbols["tab"] == DTCM_BASE and p.symbols[".L.str"] == DTCM_BASE + 16
    assert p.symbols["gsum"] == DTCM_BASE + 24 and p.symbols["lsum"] == DTCM_BASE + 28
    assert p.data[:16] == bytes(range(1, 17)) and p.data[16:22] == b"hello\0" and len(p.data) == 32
    assert p.symbols["helper"] == 4 * p.symbols[".Lfunc_end0"] // 4  # .Lfunc_end labels are code labels


def test_gcc_output_assembles_with_anchors_and_data_before_rodata():
    p = assemble((OUTPUT / "gcc_sample.s").read_text())
    s = p.symbols
    # .rodata.str1.4 comes first in the file, but ld takes .data, then .rodata, then .rodata.*, .sdata, .bss, .sbss
    assert s["bigtab"] == DTCM_BASE and s[".LANCHOR2"] == s["bigtab"]  # .set .LANCHOR2,. + 0
    assert s["tab"] == s[".LANCHOR0"] == DTCM_BASE + 32 and s["CSWTCH.12"] == DTCM_BASE + 48
    assert s[".LC0"] == DTCM_BASE + 72 and s["st"] == DTCM_BASE + 80 and s["garr"] == s[".LANCHOR1"]
    assert s["garr"] == DTCM_BASE + 88 and s["lsum"] == DTCM_BASE + 488
    assert p.data[72:78] == b"hello\0" and p.data[80:85] == bytes([1, 0, 0, 0, 120])


def test_hi_lo_of_dotted_symbols_and_pcrel_pairs():
    p = assemble(".data\n.zero 8\n.set .LANCHOR0, . + 4\n.word 7\n.text\nlui a0, %hi(.LANCHOR0)\n"
                 "addi a0, a0, %lo(.LANCHOR0)\n.Lpcrel_hi0:\nauipc a1, %pcrel_hi(.LANCHOR0)\n"
                 "addi a1, a1, %pcrel_lo(.Lpcrel_hi0)\n")
    w = p.words
    assert (int(w[0, I.F_IMM]) << 12) + int(w[1, I.F_IMM]) == DTCM_BASE + 12
    assert (int(w[2, I.F_IMM]) << 12) + int(w[3, I.F_IMM]) + 8 == DTCM_BASE + 12  # auipc at pc 8


def test_strings_escapes_and_a_hash_inside_quotes():
    p = assemble('.data\n.ascii "a#b\\n", "\\x41\\101\\""  # comment\n.string "z"\n.asciz ""\n')
    assert p.data == b"a#b\nAA\"z\0\0"


def test_data_words_may_name_labels_defined_later_and_comm():
    p = assemble(".section .rodata\ntab: .word code, w\n.data\nw: .half 3\n.comm buf, 8, 8\n.lcomm lb, 4, 4\n"
                 ".text\ncode: ret\n")
    s = p.symbols
    assert p.data[:2] == bytes([3, 0]) and p.data[2:10] == (0).to_bytes(4, "little") + s["w"].to_bytes(4, "little")
    assert s["w"] == DTCM_BASE and s["tab"] == DTCM_BASE + 2 and s["lb"] == DTCM_BASE + 12
    assert s["buf"] == DTCM_BASE + 16 and len(p.data) == 24  # COMMON last, aligned to 8


def test_jal_with_one_operand_links_through_ra():
    p = assemble("jal f\nf: ret\n")
    assert (p.words[0, I.F_RD], p.words[0, I.F_IMM]) == (1, 1)


def test_section_push_pop_previous_and_ignored_directives():
    p = assemble('.attribute 4, 16\n.attribute arch, "rv32i2p1_m2p0"\n.option push\n.option nopic\n.option pop\n'
                 '.pushsection .sdata, "aw"\nx: .byte 1\n.popsection\nnop\n.section .rodata\n.byte 2\n.previous\n'
                 'nop\n.section ".note.GNU-stack","",@progbits\n.addrsig\n.addrsig_sym x\n.hidden x\n')
    assert p.length == 2 and p.data == bytes([2, 1])


@pytest.mark.parametrize(("source", "code", "col"), [
    (".bss\n.word 1", "E020", 7),
    (".section .sbss\n.byte 0\n.zero 2, 1", "E020", 1),
    (".section .foo,\"aw\"", "E021", 10),
    (".data\n.string \"abc", "E007", 9),
    (".data\n.ascii abc", "E007", 8),
    (".option rvx", "E011", 9),
    ("lui a0, %hi(.Lnope)", "E007", 13),
    ("addi a0, a0, %pcrel_lo(x)\nx: nop", "E007", 24),
    (".section .text.a\nnop\n.text\nnop", "E021", 1),
    (".data\n.word .Lmissing", "E007", 7),
])
def test_compiler_directive_errors(source, code, col):
    d = errors(source)[0]
    assert (d.code, d.col) == (code, col), d.render()
