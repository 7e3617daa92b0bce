"""The assembler's fast paths (plain operands, bracket-free operand lists, VLIW line splitting) agree with the
general paths they short-cut, diagnostics included."""

from __future__ import annotations

import pytest

from kcgym.isa.expr import ExprError, _Parser, evaluate
from kcgym.isa.preprocess import split_operands

SYMBOLS = {"MLEN": 64, "HALF": 0.5, "a.b": 3}


@pytest.mark.parametrize("text", ["0", "7", "-5", "007", "123456789012345678", "-123456789012345678", "MLEN",
                                  "a.b", "HALF", "NOPE", "1_000", "19999999999999999999", "- 5", "MLEN "])
@pytest.mark.parametrize("allow_float", [False, True])
def test_evaluate_fast_path_matches_the_parser(text, allow_float):
    def outcome(fn):
        try:
            return ("ok", fn(), None)
        except ExprError as e:
            return ("err", e.message, (e.offset, e.length, e.hint))

    fast = outcome(lambda: evaluate(text, SYMBOLS, allow_float=allow_float))
    slow = outcome(lambda: _Parser(text, SYMBOLS, allow_float).parse())
    assert fast == slow and type(fast[1]) is type(slow[1])


def _split_general(text: str, start: int) -> list[tuple[str, int]]:
    """split_operands' general (bracket-aware) path, forced by a bracket that opens nothing at the end."""
    spans = split_operands(text + ",(", start)
    return spans[:-1] if spans[-1][0] == "(" else spans


@pytest.mark.parametrize("text", ["OP a, b, c", "OP  a ,  b,c  ", "OP a,,b", "OP ,", "OP a), b", "OP", "OP   "])
def test_split_operands_without_brackets_matches_the_general_path(text):
    assert split_operands(text, 2) == _split_general(text, 2)


def test_vliw_line_splitting_keeps_its_columns():
    from kcgym.isa.assembler import _bundle_pieces

    line = "  ADD r1, r2, r3 || MUL r4, r5, r6 ; NOP { ADDI r1, r0, 1 } |||x"
    pieces = _bundle_pieces(line, 0)
    assert [k for k, _, _ in pieces] == ["op", "op", "op", "{", "op", "}", "op"]
    assert [line[s:e].strip() for _, s, e in pieces] == ["ADD r1, r2, r3", "MUL r4, r5, r6", "NOP", "{",
                                                         "ADDI r1, r0, 1", "}", "|x"]


class _Everything(dict):
    """A symbol table that holds every name (as 7)."""

    def __contains__(self, key):
        return True

    def __getitem__(self, key):
        return 7


@pytest.mark.parametrize("text", ["0", "-5", "0x1f", "0XFF", "0b101", "1_000", "1.5", "1e5", "-0.0", ".5", "0o17",
                                  "1 + 2", "(3) << 2", "MLEN", "a.b", "2 * MLEN", "0x1g", "1e", "e1", "_", "~7",
                                  "(((1)))", "1 $", "", "   ", "12abc", "3 + x", ".L1", "$"])
def test_names_symbols_says_when_a_value_can_depend_on_the_table(text):
    from kcgym.isa.expr import names_symbols

    def outcome(table, allow_float):
        try:
            v = evaluate(text, table, allow_float=allow_float)
            return ("ok", v, type(v))
        except ExprError as e:
            return ("err", e.message, e.offset, e.length, e.hint)

    for allow_float in (False, True):
        if not names_symbols(text):  # then no table changes the outcome
            assert outcome({}, allow_float) == outcome(_Everything(), allow_float), text
    assert names_symbols(text) == (text in ("MLEN", "a.b", "2 * MLEN", "0x1g", "1e", "e1", "_", "12abc", "3 + x",
                                            ".L1", "0o17"))
