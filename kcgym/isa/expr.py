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

_MAX_LITERAL_DIGITS = 80  # longer than any 64-bit literal, even in binary with separators

_TOKEN = re.compile(
    r"\s*(?:(?P<num>0[xX][0-9a-fA-F_]+|0[bB][01_]+|\d[\d_]*\.\d*(?:[eE][+-]?\d+)?|\d[\d_]*[eE][+-]?\d+|"
    r"\.\d+(?:[eE][+-]?\d+)?|\d[\d_]*)|(?P<name>[A-Za-z_][A-Za-z0-9_.]*)|(?P<op><<|>>|[-+*/%&|^~()])|(?P<bad>\S))"
)
_LEVEL = {"|": 0, "^": 1, "&": 2, "<<": 3, ">>": 3, "+": 4, "-": 4, "*": 5, "/": 5, "%": 5}  # C precedence


class ExprError(Exception):
    def __init__(self, message: str, offset: int = 0, length: int = 1, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.length = max(1, length)
        self.hint = hint


def _token(m: re.Match[str]) -> tuple[str, str, int]:
    kind = m.lastgroup
    assert kind is not None
    if kind == "bad":
        raise ExprError(f"unexpected character {m.group(kind)!r} in expression", m.start(kind), 1)
    return kind, m.group(kind), m.start(kind)


def tokenize(text: str) -> list[tuple[str, str, int]]:
    """``(kind, text, offset)`` tokens in one regex pass (every non-space character is some token)."""
    return [_token(m) for m in _TOKEN.finditer(text)]


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
    def __init__(self, text: str, symbols: Mapping[str, int | float], allow_float: bool):
        self.text = text
        self._tokens = _TOKEN.finditer(text)  # lazy: an error deep in a long line stops the scan there
        self.cur = self._next()
        self.symbols = symbols
        self.allow_float = allow_float
        self.depth = 0  # open parentheses and unary operators

    def _next(self) -> tuple[str, str, int] | None:
        m = next(self._tokens, None)
        return None if m is None else _token(m)

    def peek(self) -> tuple[str, str, int] | None:
        return self.cur

    def advance(self) -> None:
        self.cur = self._next()

    def parse(self) -> int | float:
        if self.cur is None:
            raise ExprError("empty expression", 0, 1)
        v = self.binary(0)
        t = self.peek()
        if t is not None:
            raise ExprError(f"unexpected {t[1]!r} in expression", t[2], len(t[1]))
        return v

    def binary(self, level: int) -> int | float:
        """Operators of precedence ``level`` and above, left-associative (precedence climbing)."""
        left = self.unary()
        while (t := self.peek()) is not None and t[0] == "op" and _LEVEL.get(t[1], -1) >= level:
            self.advance()
            right = self.binary(_LEVEL[t[1]] + 1)
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
        ia, ib = int(a), int(b)  # the bitwise operators: both are ints here (floats were rejected above)
        if op == "<<":
            if ib < 0 or ib > 62:
                raise ExprError("shift amount out of range 0..62", off, 2)
            return ia << ib
        if op == ">>":
            if ib < 0 or ib > 62:
                raise ExprError("shift amount out of range 0..62", off, 2)
            return ia >> ib
        if op == "&":
            return ia & ib
        if op == "|":
            return ia | ib
        return ia ^ ib

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
            self.advance()
            v = self.unary()
            if val == "-":
                return _checked(-v, off, 1)
            if val == "~":
                if isinstance(v, float):
                    raise ExprError("operator '~' needs an integer", off, 1)
                return _checked(~v, off, 1)
            return v
        self.advance()  # "("
        v = self.binary(0)
        t2 = self.peek()
        if t2 is None or t2[1] != ")":
            raise ExprError("missing ')'", off, 1)
        self.advance()
        return v

    def _atom(self, kind: str, val: str, off: int) -> int | float:
        if kind == "num":
            self.advance()
            v = _checked(_parse_number(val, off), off, len(val))
            if isinstance(v, float) and not self.allow_float:
                raise ExprError(f"{val!r} is not an integer", off, len(val), "this operand takes an integer")
            return v
        if kind == "name":
            self.advance()
            if val in self.symbols:
                v = self.symbols[val]
                if isinstance(v, float) and not self.allow_float:
                    raise ExprError(f"symbol {val!r} is a float; an integer is needed", off, len(val))
                return v
            raise ExprError(f"unknown symbol {val!r}", off, len(val))
        raise ExprError(f"unexpected {val!r} in expression", off, len(val))


# The two shapes most operands have, answered without the parser (same value; anything else, or a
# float symbol where an integer is needed, goes through the parser and its diagnostics): a decimal literal
# short enough to be a 64-bit integer, and the name of a known symbol.
_PLAIN_INT = re.compile(r"-?[0-9]{1,18}")
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


def names_symbols(text: str) -> bool:
    """Whether evaluating ``text`` may look a name up (a symbol or label); if not, its value (or its error) is a
    function of the text alone. Scans the same tokens the parser reads, so a hex literal (``0xff``) names nothing."""
    return _NAME_START.search(text) is not None and any(m.lastgroup == "name" for m in _TOKEN.finditer(text))


_NAME_START = re.compile(r"[A-Za-z_]")  # no such character, no name token


def evaluate(text: str, symbols: Mapping[str, int | float], *, allow_float: bool = False) -> int | float:
    """Evaluate ``text``; raises :class:`ExprError` with the offset of the problem."""
    if _PLAIN_INT.fullmatch(text):
        return int(text)
    if text in symbols and _PLAIN_NAME.fullmatch(text):
        v = symbols[text]
        if allow_float or not isinstance(v, float):
            return v
    return _Parser(text, symbols, allow_float).parse()
