"""The assembly budget (kcgym.limits): every hostile source of issue 14 is a fast, located error.

Times are CPU seconds of the assembling thread (``time.thread_time``: neither a loaded machine nor
another thread of the process, such as JAX's, makes them flaky), after the machine's modules are
imported and the garbage collector has run (neither a first import nor a full collection of what
earlier tests left is the source's cost: late in the whole suite, one pushed VLIW many_errors from
0.07 s alone to 0.98 s); "well under a second" is the bar.
"""

from __future__ import annotations

import gc
import time

import pytest

from kcgym import limits
from kcgym.isa.diagnostics import AssemblyError
from kcgym.isa.expr import ExprError, evaluate
from kcgym.isa.preprocess import DIRECTIVES_DOC
from kcgym.registry import ACCELERATORS
from tests.isa.hostile import SYNTAX, hostile_sources

MACHINES = ("NPU", "VLIW", "RVV")
CASES = [(m, name) for m in MACHINES for name in hostile_sources(m)]
CPU_SECONDS = 0.8


def assemble(machine: str, source: str):
    acc = ACCELERATORS[machine]
    return acc.assemble(source, acc.make_hw(None))


def errors(machine: str, source: str):
    with pytest.raises(AssemblyError) as e:
        assemble(machine, source)
    return e.value.errors


@pytest.mark.parametrize(("machine", "name"), CASES, ids=[f"{m}-{n}" for m, n in CASES])
def test_hostile_source_is_a_fast_located_error(machine, name):
    source = hostile_sources(machine)[name]
    ACCELERATORS[machine].make_hw(None)  # imports the machine (lazily loaded)
    gc.collect()  # the suite's own garbage, not this source's, must not set off a full collection in the window
    t0 = time.thread_time()
    errs = errors(machine, source)
    assert time.thread_time() - t0 < CPU_SECONDS
    assert errs and all(d.line >= 1 and d.col >= 1 for d in errs)
    assert errs[0].render()


@pytest.mark.parametrize("machine", MACHINES)
def test_each_budget_names_itself(machine):
    src = hostile_sources(machine)
    assert "nesting deeper than" in errors(machine, src["recursive_macro"])[0].message
    assert f"more than {limits.MAX_EXPANSION_WORK} steps" in errors(machine, src["nested_empty_rept"])[0].message
    assert "64 bits" in errors(machine, src["set_square"])[0].message
    assert "nests deeper than" in errors(machine, src["deep_parens_operand"])[0].message
    assert "digits long" in errors(machine, src["huge_literal"])[0].message
    assert f"limit is {limits.MAX_LINE_CHARS}" in errors(machine, src["doubling_macro_arg"])[0].message
    many = errors(machine, src["many_errors"])
    assert len(many) == limits.MAX_DIAGNOSTICS + 1 and many[-1].code == "E030"


def test_rvv_data_is_checked_before_it_is_allocated():
    src = hostile_sources("RVV")
    (d,) = errors("RVV", src["data_rept_zero"])
    assert d.code == "E014" and "DTCM" in d.message and d.line == 3  # once, not once per repetition
    assert errors("RVV", "jal\nfoo:\nnop")[0].code == "E002"
    assert errors("RVV", ".data\n.zero 40000")[0].code in ("E005", "E014")
    assert errors("RVV", ".text\nnop\n.balign 16384")[0].code in ("E005", "E014")


@pytest.mark.parametrize(("text", "value"), [
    ("0xFFFFFFFFFFFFFFFF", (1 << 64) - 1), ("-9223372036854775808", -(1 << 63)), ("(" * 32 + "1" + ")" * 32, 1),
    ("1 << 62", 1 << 62), ("2 + 3 * 4 - 10 / 3 % 2", 13),
])
def test_values_inside_the_limits_evaluate(text, value):
    assert evaluate(text, {}) == value


@pytest.mark.parametrize("text", [
    "0x1_0000_0000_0000_0000", "(" * 33 + "1" + ")" * 33, "-" * 33 + "1", "4294967296 * 4294967296",
    "~0xFFFFFFFFFFFFFFFF", "1" * 5000, "-9223372036854775808 - 1",
])
def test_values_beyond_the_limits_are_errors(text):
    with pytest.raises(ExprError):
        evaluate(text, {})


def test_float_overflow_is_an_error():
    with pytest.raises(ExprError, match="finite"):
        evaluate("1e308 * 10", {}, allow_float=True)


@pytest.mark.parametrize("machine", MACHINES)
def test_if_else_endif_nested_rept_and_macro_arguments(machine):
    nop, imm = SYNTAX[machine]["nop"], SYNTAX[machine]["imm"]
    base = len(assemble(machine, nop).lines)  # some machines append a HALT

    def count(src: str) -> int:
        return len(assemble(machine, src).lines) - base + 1

    assert count(f".if 1\n{nop}\n.else\n{nop}\n{nop}\n.endif") == 1
    assert count(f".equ N, 0\n.if N\n{nop}\n.else\n{nop}\n{nop}\n.endif") == 2
    assert count(f".if 1\n.if 0\n{nop}\n.endif\n{nop}\n.endif") == 1  # nested .if
    assert count(f".rept 3\n.rept 2\n{nop}\n.endr\n.endr") == 6  # nested .rept
    assert count(f".macro m n\n.rept \\n\n{nop}\n.endr\n.endm\nm 2+1") == 3  # the argument is text: 2+1
    assert count(f".macro m n\n.if \\n - 2\n{nop}\n.endif\n.endm\nm 2\nm 3") == 1
    body = imm.format(imm="\\v * 2")
    assert assemble(machine, f".macro m v\n{body}\n.endm\nm 1+2").lines[0] == 2  # the body's line


def test_macro_arguments_are_text_evaluated_where_used():
    from kcgym.sims.rvv import isa as I

    program = assemble("RVV", ".macro m v\naddi a0, zero, \\v * 2\naddi a1, zero, (\\v) * 2\n.endm\nm 1+2")
    assert [int(program.words[k, I.F_IMM]) for k in range(2)] == [5, 6]  # 1+2*2 and (1+2)*2


@pytest.mark.parametrize("machine", MACHINES)
def test_if_errors_are_located(machine):
    nop = SYNTAX[machine]["nop"]
    assert errors(machine, f".if\n{nop}\n.endif")[0].code == "E007"
    assert errors(machine, f".if 1\n{nop}\n.else\n.else\n.endif")[0].line == 4
    assert errors(machine, ".else")[0].code == "E013"
    assert errors(machine, f".if UNDEFINED\n{nop}\n.endif")[0].code == "E007"


@pytest.mark.parametrize("machine", MACHINES)
def test_guides_state_the_limits_and_directives(machine):
    acc = ACCELERATORS[machine]
    text = "\n".join(s.text for s in acc.docs(acc.make_hw(None)))
    assert limits.assembly_limits_markdown() in text
    assert DIRECTIVES_DOC in text
    assert "{{" not in text
