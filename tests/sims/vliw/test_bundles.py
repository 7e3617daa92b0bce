"""VLIW assembly: bundle syntax, slot rules, static loop/DMA checks, disassembly round trips."""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.isa import AssemblyError, disassemble
from kcgym.sims.vliw import ACCELERATOR
from kcgym.sims.vliw.isa import VLIW_ISA

HW = ACCELERATOR.make_hw()


def errors(src: str) -> list:
    with pytest.raises(AssemblyError) as e:
        ACCELERATOR.assemble(src, HW)
    return e.value.errors


def test_three_bundle_syntaxes_encode_the_same_word():
    ops = ["VLD x0, p0, 64", "VLD x1, p1, 64", "VADD x2, x3, x4", "VST x5, p2, 64", "ADDI r1, r1, 1",
           "VCONV x6, c0", "NOP"]
    bar = ACCELERATOR.assemble(" || ".join(ops), HW)
    semi = ACCELERATOR.assemble("{ " + " ; ".join(ops) + " }", HW)
    lines = ACCELERATOR.assemble("{\n" + "\n".join(ops) + "\n}", HW)
    assert bar.length == semi.length == lines.length == 1
    np.testing.assert_array_equal(bar.words, semi.words)
    np.testing.assert_array_equal(bar.words, lines.words)


def test_one_line_is_one_bundle_and_labels_count_bundles():
    prog = ACCELERATOR.assemble("MOVI r1, 1\nVBCST x0, 1.0 || MOVI r2, 2\nhere: J here\n", HW)
    assert prog.length == 3 and prog.lines == [1, 2, 3]
    assert "J 2" in disassemble(VLIW_ISA, prog.words)


@pytest.mark.parametrize(
    "src, code, col, fragment",
    [
        ("VADD x1, x2, x3 || VMUL x4, x5, x6", "E020", 20, "at most 1 VEC"),
        ("VLD x0, p0, 64 || VLD x1, p1, 64 || VLD x2, p2, 64", "E020", 37, "at most 2 LD"),
        ("VST x0, p0, 64 ; VST x1, p1, 64", "E020", 18, "at most 1 ST"),
        ("MOVI r1, 1 || ADDI r2, r2, 1", "E020", 15, "at most 1 SCL"),
        ("VCONV x1, c0 || VMOV x2, x3", "E020", 17, "at most 1 MOV"),
        ("J 0 || HALT", "E020", 8, "at most 1 CTL"),
        ("VLD x1, p0, 64 || VADD x1, x2, x3", "E021", 24, "write x1"),
        ("VLD x1, p0, 64 || VLD x2, p0, 64", "E021", 27, "write p0"),
        ("VLD x1, p0, 64 || PADDI p0, p0, 64", "E021", 25, "write p0"),
        ("{ VADD x1, x2, x3\n", "E022", 1, "without a matching '}'"),
        ("VADD x1, x2, x3 }", "E022", 17, "without a matching '{'"),
        ("{ VADD x1, x2, x3\nlab: VMOV x4, x5 }", "E022", 1, "label 'lab' inside a bundle"),
        ("LOOPI 3, end\nend: NOP", "E110", 10, "at least one body bundle"),
        ("LOOPI 2, a\nLOOPI 2, a\nNOP\na: NOP", "E113", 10, "same label"),
        ("DMAI p0, r1, r2, 4, 8192", "E112", 18, "at most 16384"),
        ("VLD x0, p0, 32", "E006", 13, "multiple of 64"),
        ("VADD x1, x2, x12", "E004", 14, "x0..x11"),
        ("VMAC x1, x2, x3", "E003", 6, "accumulator"),
        ("VADDD x1, x2, x3", "E001", 1, "did you mean 'VADD'"),
    ],
)
def test_slot_rules_and_static_checks_name_the_problem(src, code, col, fragment):
    diags = errors(src)
    d = next(d for d in diags if d.code == code)
    assert d.col == col, d.render()
    assert fragment in d.render()


def test_all_bundle_errors_are_reported_at_once():
    diags = errors("VADD x1, x2, x3 || VSUB x4, x5, x6\nMOVI r1, 1 || MOVI r2, 2\nVLD x0, p0, 64 || VLD x0, p1, 64")
    assert [d.code for d in diags] == ["E020", "E020", "E021"]
    assert [d.line for d in diags] == [1, 2, 3]
    assert "a bundle holds 2 LD, 1 ST, 1 VEC, 1 SCL, 1 MOV, 1 CTL" in diags[0].render()


def test_program_memory_limit_counts_bundles():
    src = "\n".join(["VLD x0, p0, 64 || VLD x1, p1, 64 || VADD x2, x3, x4"] * HW.imem_bundles)
    assert ACCELERATOR.assemble(src, HW).length == HW.imem_bundles
    (d,) = errors(src + "\nNOP")
    assert d.code == "E014" and f"holds {HW.imem_bundles}" in d.message


def test_disassembly_round_trips():
    src = """
        MOVI r1, 100 || VLD x0, p0, 64 || VLD x1, p1, -64
        top: LOOPI 4, done
            VMACL c1, x0, x1, r3 || VST x2, p2, 128 || VBCST x7, -1.5
        done: DMAI p0, r1, r2, 2, 64 || PADDI p3, p3, 2
        BNEZ r1, top
    """
    prog = ACCELERATOR.assemble(src, HW)
    again = ACCELERATOR.assemble(disassemble(VLIW_ISA, prog.words), HW)
    np.testing.assert_array_equal(prog.words, again.words)
