"""The table-driven assembler: every diagnostic kind, expressions, macros, round trips."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kcgym.isa import AssemblyError, assemble, disassemble
from kcgym.isa.expr import ExprError, evaluate
from kcgym.isa.spec import Imm, Reg
from kcgym.sims.npu.config import NPUConfig
from kcgym.sims.npu.isa import NPU_ISA as ISA


def errors(src: str) -> list:
    with pytest.raises(AssemblyError) as e:
        assemble(ISA, src, NPUConfig())
    return e.value.diagnostics


@pytest.mark.parametrize(
    "src, code, line, col, fragment",
    [
        ("S_ADD_INTT gp1, gp2, gp3", "E001", 1, 1, "did you mean 'S_ADD_INT'"),
        ("  M_MM gp1", "E002", 1, 8, "takes 2 operand(s)"),
        ("V_ADD_VV gp1, f1, gp2", "E003", 1, 15, "must be a general-purpose"),
        ("S_ADDI_INT gp1, gp2, gp3", "E003", 1, 22, "must be an immediate"),
        ("S_ADDI_INT gp16, gp0, 1", "E004", 1, 12, "gp0..gp15"),
        ("S_ADDI_INT gp1, gp0, 300000", "E005", 1, 22, "S_LUI_INT"),
        ("S_ADDI_INT gp1, gp0, 1.5", "E007", 1, 22, "not an integer"),
        ("S_ADDI_INT gp1, gp0, MLENN", "E007", 1, 22, "did you mean 'MLEN'"),
        ("loop: C_NOP", "E008", 1, 1, "hardware loops"),
        (".foo 3", "E011", 1, 1, "unknown directive"),
        (".macro m a\nC_NOP", "E012", 1, 1, ".endm"),
        (".rept 2\nC_NOP", "E013", 1, 1, ".endr"),
        (".endr", "E013", 1, 1, "without an opening"),
        (".equ MLEN, 3", "E011", 1, 6, "predefined"),
        ("S_ADDI_INT gp1, , 3", "E016", 1, 17, "empty operand"),
        ("C_LOOP_START gp0, 4\nC_LOOP_END gp0", "E101", 1, 14, "hardwired"),
        ("C_LOOP_START gp1, 2\nC_LOOP_START gp1, 2\nC_LOOP_END gp1\nC_LOOP_END gp1", "E101", 2, 14, "enclosing"),
        ("C_LOOP_START gp1, 2\nC_LOOP_END gp2", "E102", 2, 12, "closes the loop"),
        ("C_LOOP_END gp2", "E102", 1, 1, "without a matching"),
        ("C_LOOP_START gp1, 2\nC_NOP", "E103", 1, 1, "no matching"),
        ("C_LOOP_START gp1, 0\nC_LOOP_END gp1", "E005", 1, 19, "outside 1..65535"),
        ("H_PREFETCH_V gp0, gp0, a0, 0, 5", "E005", 1, 31, "outside 1..4"),
    ],
)
def test_each_error_kind(src, code, line, col, fragment):
    diags = errors(src)
    d = next(d for d in diags if d.code == code)
    assert (d.line, d.col) == (line, col)
    assert fragment in d.render()


def test_rendering_has_caret_and_hint():
    d = errors("S_ADD_INT gp1, gp2, gpx")[0]
    text = d.render()
    assert text.splitlines()[0] == "kernel.s:1:21: error[E003]: operand 'rs2' of S_ADD_INT must be a general-purpose " \
        "integer register (gp0..gp15), got 'gpx'"
    assert "    S_ADD_INT gp1, gp2, gpx\n" in text
    assert "                        ^~~" in text


def test_all_errors_reported_at_once_in_line_order():
    diags = errors("C_NOP\nFOO gp1\nS_ADDI_INT gp99, gp0, 1\nV_EXP_V gp1\nS_ADDI_INT gp1, gp0, 1 << 40")
    assert [d.line for d in diags] == [2, 3, 4, 5]
    assert len({d.code for d in diags}) == 4


def test_warnings_do_not_block():
    prog = assemble(ISA, "C_LOOP_START gp1, 3\nS_ADDI_INT gp1, gp0, 2\nC_LOOP_END gp1\nS_ADDI_INT gp0, gp0, 1")
    assert {w.code for w in prog.warnings} == {"W101", "W001"}


def test_expressions_equ_macros_rept_irp_and_source_map():
    src = r"""
.equ ROW, VLEN * 2          ; 128
.set I, 1
.macro addk reg, k=BLEN
    S_ADDI_INT \reg, \reg, \k
.endm
S_ADDI_INT gp1, gp0, (ROW + 3) << 1 | 1
addk gp2
addk gp3, ROW - 1
.rept 2
S_ADDI_INT gp4, gp4, I
.set I, I + 1
.endr
.irp r, gp5, gp6
S_ADDI_INT \r, \r, 0x10 + 0b11
.endr
"""
    prog = assemble(ISA, src)
    assert prog.words[:, 5].tolist() == [263, 4, 127, 1, 2, 19, 19]
    assert prog.lines == [7, 5, 5, 11, 11, 15, 15]
    assert prog.origins[1] == "in expansion of macro 'addk' called at line 8"
    assert "repetition 2/2" in prog.origins[4]


def test_error_inside_macro_names_the_call_site():
    d = errors(".macro bad\nS_ADDI_INT gp1, gp0, NOPE\n.endm\nbad")[0]
    assert d.line == 2 and "called at line 4" in d.render()


def test_recursive_macro_is_an_error_not_a_hang():
    d = errors(".macro r\nr\n.endm\nr")[0]
    assert d.code == "E012"


def test_huge_rept_is_bounded():
    d = errors(".rept 1000000\nC_NOP\n.endr")[0]
    assert d.code == "E013"


def test_program_size_limit():
    hw = NPUConfig(imem_size=8)
    from kcgym.sims.npu.isa import make_isa

    with pytest.raises(AssemblyError) as e:
        assemble(make_isa(hw), ".rept 9\nC_NOP\n.endr", hw)
    assert e.value.diagnostics[0].code == "E014"


def test_expression_evaluator():
    assert evaluate("-(3 + 4) * 2 / 3", {}) == -4  # C truncation toward zero
    assert evaluate("7 % -3", {}) == 1
    assert evaluate("~0 & 0xff ^ 1", {}) == 0xFE
    assert evaluate("1.5e1 / 2", {}, allow_float=True) == 7.5
    for bad in ("1 +", "(1", "1 << 99", "4 / 0", "1 $ 2", "1.5 << 1"):
        with pytest.raises(ExprError):
            evaluate(bad, {}, allow_float=True)


def _operand_text(op, draw) -> str:
    if isinstance(op.kind, Reg):
        rf = ISA.files[op.kind.file]
        lo = 1 if (op.kind.write and rf.zero == 0) else 0
        return f"{rf.prefix}{draw(st.integers(lo, rf.count - 1))}"
    assert isinstance(op.kind, Imm)
    if op.kind.is_float:
        return repr(float(np.float32(draw(st.floats(-1e6, 1e6, allow_nan=False, width=32)))))
    hi = min(op.kind.hi, 4 if op.name == "nrows" else op.kind.hi)
    return str(draw(st.integers(int(op.kind.lo), int(hi))))


@st.composite
def programs(draw):
    lines = []
    for _ in range(draw(st.integers(1, 30))):
        spec = draw(st.sampled_from([s for s in ISA.instructions if not s.mnemonic.startswith("C_LOOP")]))
        lines.append(f"{spec.mnemonic} " + ", ".join(_operand_text(o, draw) for o in spec.operands))
    if draw(st.booleans()):
        lines = ["C_LOOP_START gp15, 3", *lines, "C_LOOP_END gp15"]
    return "\n".join(lines)


@settings(max_examples=150, deadline=None)
@given(programs())
def test_disassemble_round_trip(src):
    prog = assemble(ISA, src)
    again = assemble(ISA, disassemble(ISA, prog.words))
    np.testing.assert_array_equal(again.words, prog.words)


def test_instruction_table_generates_consistent_ids():
    assert len(set(ISA.opcodes.values())) == len(ISA.instructions)
    for spec in ISA.instructions:
        prog = assemble(ISA, f"{spec.mnemonic} " + ", ".join(
            f"{ISA.files[o.kind.file].prefix}1" if isinstance(o.kind, Reg) else "1" for o in spec.operands)
            + ("\nC_LOOP_END gp1" if spec.mnemonic == "C_LOOP_START" else "")
            if spec.mnemonic != "C_LOOP_END" else "C_LOOP_START gp1, 1\nC_LOOP_END gp1")
        row = prog.words[-1 if spec.mnemonic == "C_LOOP_END" else 0]
        assert row[0] == ISA.opcodes[spec.mnemonic]
        assert row[1] == ISA.class_ids[spec.cls] and row[2] == ISA.sub_ids[spec.mnemonic]
