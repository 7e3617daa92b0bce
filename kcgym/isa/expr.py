"""Constant expressions in operands and directives: ``(MLEN * 4) + TILE << 2``.

A tiny recursive-descent evaluator (no ``eval``): integers in decimal, hex (0x), binary
(0b), floats where the operand allows them, symbols from ``.equ`` and the hardware config,
and C precedence for ``| ^ & << >> + - * / %`` and unary ``- + ~``.

Bounded like the rest of the assembler (:mod:`kcgym.limits`): integers are 64-bit (a literal or
an intermediate value outside ``INT_MIN..UINT_MAX`` is an error, so ``.set a, a*a`` cannot grow a
big integer), floats must stay finite, and nesting deeper than ``MAX_EXPR_DEPTH`` is an error
rather than a ``RecursionError``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from kcgym.limits import INT_MIN, MAX_EXPR_DEPTH, UINT_MAX

_BLANK_TAIL = re.compile(r"\s*\Z")
_MAX_LITERAL_DIGITS = 80  # longer than any 64-bit literal, even in binary with separators

_TOKEN = re.compile(
    r"\s*(?:(?P<num>0[xX][0-9a-fA-F_]+|0[bB][01_]+|\d[\d_]*\.\d*(?:[eE][+-]?\d+)?|\d[\d_]*[eE][+-]?\d+|"
    r"\.\d+(?:[eE][+-]?\d+)?|\d[\d_]*)|(?P<name>[A-Za-z_][A-Za-z0-9_.]*)|(?P<op><<|>>|[-+*/%&|^~()]))"
)


class ExprError(Exception):
    def __init__(self, message: str, offset: int = 0, length: int = 1, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.length = max(1, length)
        self.hint = hint


def tokenize(text: str) -> list[tuple[str, str, int]]:
    pos, out = 0, []
    while pos < len(text):
        if _BLANK_TAIL.match(text, pos):
            break
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            j = pos
            while j < len(text) and text[j].isspace():
                j += 1
            raise ExprError(f"unexpected character {text[j]!r} in expression", j, 1)
        kind = m.lastgroup
        assert kind is not None
        out.append((kind, m.group(kind), m.start(kind)))
        pos = m.end()
    return out


def _parse_number(tok: str, offset: int) -> int | float:
    if len(tok) > _MAX_LITERAL_DIGITS:
        raise ExprError(f"number {tok[:20]}... is {len(tok)} digits long; values are limited to 64 bits",
                        offset, len(tok))
    t = tok.replace("_", "")
    try:
        if t[:2].lower() == "0x":
            return int(t, 16)
        if t[:2].lower() == "0b":
            return int(t, 2)
        if any(c in t for c in ".eE"):
            return float(t)
        return int(t, 10)
    except ValueError as e:
        raise ExprError(f"malformed number {tok!r}", offset, len(tok)) from e


def _checked(v: int | float, offset: int, length: int) -> int | float:
    """``v`` if it is a 64-bit integer or a finite float; ExprError otherwise."""
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ExprError("value is not a finite number", offset, length)
        return v
    if not INT_MIN <= v <= UINT_MAX:
        raise ExprError(f"value does not fit in 64 bits (allowed: {INT_MIN}..{UINT_MAX})", offset, length,
                        "integers in expressions are 64-bit")
    return v


class _Parser:
    _BINARY = [("|",), ("^",), ("&",), ("<<", ">>"), ("+", "-"), ("*", "/", "%")]

    def __init__(self, text: str, symbols: Mapping[str, int | float], allow_float: bool):
        self.text = text
        self.toks = tokenize(text)
        self.i = 0
        self.symbols = symbols
        self.allow_float = allow_float
        self.depth = 0  # open parentheses and unary operators

    def peek(self) -> tuple[str, str, int] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def parse(self) -> int | float:
        if not self.toks:
            raise ExprError("empty expression", 0, 1)
        v = self.binary(0)
        t = self.peek()
        if t is not None:
            raise ExprError(f"unexpected {t[1]!r} in expression", t[2], len(t[1]))
        return v

    def binary(self, level: int) -> int | float:
        if level == len(self._BINARY):
            return self.unary()
        left = self.binary(level + 1)
        while (t := self.peek()) is not None and t[0] == "op" and t[1] in self._BINARY[level]:
            self.i += 1
            right = self.binary(level + 1)
            left = _checked(self.apply(t[1], left, right, t[2]), t[2], len(t[1]))
        return left

    def apply(self, op: str, a: int | float, b: int | float, off: int) -> int | float:
        is_float = isinstance(a, float) or isinstance(b, float)
        if op in ("<<", ">>", "&", "|", "^", "%") and is_float:
            raise ExprError(f"operator {op!r} needs integer operands", off, len(op))
        if op in ("/", "%") and b == 0:
            raise ExprError("division by zero in expression", off, 1)
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            if is_float:
                return a / b
            q = abs(a) // abs(b)  # C-style truncation toward zero
            return q if (a >= 0) == (b >= 0) else -q
        if op == "%":
            return a - b * (abs(a) // abs(b) if (a >= 0) == (b >= 0) else -(abs(a) // abs(b)))
        if op == "<<":
            if b < 0 or b > 62:
                raise ExprError("shift amount out of range 0..62", off, 2)
            return a << b
        if op == ">>":
            if b < 0 or b > 62:
                raise ExprError("shift amount out of range 0..62", off, 2)
            return a >> b
        if op == "&":
            return a & b
        if op == "|":
            return a | b
        return a ^ b

    def unary(self) -> int | float:
        t = self.peek()
        if t is None:
            raise ExprError("expression ends early", len(self.text), 1)
        kind, val, off = t
        if kind == "op" and val in ("-", "+", "~", "("):
            self.depth += 1
            if self.depth > MAX_EXPR_DEPTH:
                raise ExprError(f"expression nests deeper than {MAX_EXPR_DEPTH} levels", off, 1,
                                "simplify it, or split it with .equ")
            try:
                return self._nested(kind, val, off)
            finally:
                self.depth -= 1
        return self._atom(kind, val, off)

    def _nested(self, kind: str, val: str, off: int) -> int | float:
        if val in ("-", "+", "~"):
            self.i += 1
            v = self.unary()
            if val == "-":
                return _checked(-v, off, 1)
            if val == "~":
                if isinstance(v, float):
                    raise ExprError("operator '~' needs an integer", off, 1)
                return _checked(~v, off, 1)
            return v
        self.i += 1  # "("
        v = self.binary(0)
        t2 = self.peek()
        if t2 is None or t2[1] != ")":
            raise ExprError("missing ')'", off, 1)
        self.i += 1
        return v

    def _atom(self, kind: str, val: str, off: int) -> int | float:
        if kind == "num":
            self.i += 1
            v = _checked(_parse_number(val, off), off, len(val))
            if isinstance(v, float) and not self.allow_float:
                raise ExprError(f"{val!r} is not an integer", off, len(val), "this operand takes an integer")
            return v
        if kind == "name":
            self.i += 1
            if val in self.symbols:
                v = self.symbols[val]
                if isinstance(v, float) and not self.allow_float:
                    raise ExprError(f"symbol {val!r} is a float; an integer is needed", off, len(val))
                return v
            raise ExprError(f"unknown symbol {val!r}", off, len(val))
        raise ExprError(f"unexpected {val!r} in expression", off, len(val))


def evaluate(text: str, symbols: Mapping[str, int | float], *, allow_float: bool = False) -> int | float:
    """Evaluate ``text``; raises :class:`ExprError` with the offset of the problem."""
    return _Parser(text, symbols, allow_float).parse()
