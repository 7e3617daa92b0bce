"""Assembler preprocessing: comments, ``.equ``/``.set``, ``.macro``, ``.rept``, ``.irp`` and ``.if``.

GNU ``as`` semantics where they exist (``\\arg`` substitution, ``\\@`` counter). Every
emitted line keeps its original line number and a note of the expansion it came from, so
errors and runtime faults point at the line the author wrote.

Expansion is budgeted (:mod:`kcgym.limits`): every ``.rept``/``.irp`` iteration and macro call
costs work whether or not its body is empty, and so does every line copied, so nested repeats,
self-recursive macros and doubling macro arguments end in an ordinary ``line:col`` error at the
first line past a limit instead of hanging the process that assembles them.
"""

from __future__ import annotations

import re
from collections.abc import Set
from dataclasses import dataclass, field

from kcgym.isa.diagnostics import Diagnostic, Suggester
from kcgym.isa.expr import ExprError, evaluate
from kcgym.limits import (
    MAX_DIAGNOSTICS,
    MAX_EXPANDED_LINES,
    MAX_EXPANSION_CHARS,
    MAX_EXPANSION_WORK,
    MAX_LINE_CHARS,
    MAX_MACRO_DEPTH,
)

MAX_DEPTH = MAX_MACRO_DEPTH  # re-exported under its old name
DIRECTIVES = (".equ", ".set", ".macro", ".endm", ".rept", ".irp", ".endr", ".if", ".else", ".endif")
# block directive -> (the openers that nest inside it, its closer, the error code of a missing closer)
_BLOCKS: dict[str, tuple[tuple[str, ...], str, str]] = {
    ".macro": ((".macro",), ".endm", "E012"),
    ".rept": ((".rept", ".irp"), ".endr", "E013"),
    ".irp": ((".rept", ".irp"), ".endr", "E013"),
    ".if": ((".if",), ".endif", "E013"),
}
_OPENERS = tuple(_BLOCKS)


# What the guides say about the directives this module adds to GNU-style macros (rendered into each
# machine's guide as {{assembler_directives}}, so the docs and the preprocessor cannot drift).
DIRECTIVES_DOC = (
    "`.rept`/`.irp` blocks nest; `.if EXPR` ... [`.else` ...] `.endif` keeps one branch (EXPR is a constant "
    "expression; nonzero keeps the first). Macro arguments are substituted as text before the body expands "
    "(`m 2+1` passes `2+1`, not 3) and evaluated where they land, even in a `.rept` count or an `.if`."
)


class _Abort(Exception):
    """A budget ran out: the preprocessor stops at once (its diagnostic is already recorded)."""


@dataclass
class SourceLine:
    text: str  # code without comment
    line: int  # 1-based line in the original source
    display: str  # text shown under the caret (expanded text for expansions)
    origin: str | None = None
    symbols: dict[str, int | float] = field(default_factory=dict)  # snapshot at this line


@dataclass
class Macro:
    name: str
    params: list[tuple[str, str | None]]  # (name, default)
    body: list[SourceLine]
    line: int


def split_operands(text: str, start: int) -> list[tuple[str, int]]:
    """Split ``text[start:]`` (``a, b, (c, d)``) at top-level commas: ``(stripped text, 1-based column)``.

    Splits at every comma first and merges pieces while brackets are open: Python work per comma,
    not per character, so a line of thousands of parentheses costs what its commas cost.
    """
    spans, cur_start, depth, pos = [], start, 0, start
    pieces = text[start:].split(",")
    if "(" not in text[start:] and "[" not in text[start:]:  # nothing opens a bracket: every comma splits
        for piece in pieces:
            spans.append((piece.strip(), pos + len(piece) - len(piece.lstrip()) + 1))
            pos += len(piece) + 1
        return spans
    for k, piece in enumerate(pieces):
        depth += piece.count("(") + piece.count("[") - piece.count(")") - piece.count("]")
        pos += len(piece)
        if depth <= 0 or k == len(pieces) - 1:
            raw = text[cur_start:pos]
            lead = len(raw) - len(raw.lstrip())
            spans.append((raw.strip(), cur_start + lead + 1))
            cur_start, depth = pos + 1, 0
        pos += 1  # the comma
    return spans


def strip_comment(text: str, prefixes: tuple[str, ...]) -> str:
    if '"' in text:  # a comment character inside a string literal (.string "a#b") starts no comment
        return _strip_comment_quoted(text, prefixes)
    cut = len(text)
    for p in prefixes:
        i = text.find(p)
        if i != -1:
            cut = min(cut, i)
    return text[:cut]


def _strip_comment_quoted(text: str, prefixes: tuple[str, ...]) -> str:
    quoted, i = False, 0
    while i < len(text):
        c = text[i]
        if quoted and c == "\\":
            i += 2
            continue
        if c == '"':
            quoted = not quoted
        elif not quoted and any(text.startswith(p, i) for p in prefixes):
            return text[:i]
        i += 1
    return text


# '.' alone (the location counter) or a name GNU as allows but this evaluator does not (".LANCHOR0")
_ASSEMBLER_VALUE = re.compile(r"(?<![\w.$])\.(?![\w$])|(?<![\w.$])[.$][\w.$]*|\$")


class Preprocessor:
    def __init__(self, comment_prefixes: tuple[str, ...], base_symbols: dict[str, int | float],
                 reserved: Set[str], defer_sets: bool = False):
        """``defer_sets``: a ``.set``/``.equ`` whose value needs labels or the location counter ``.`` (compiler
        output: ``.set .LANCHOR0, . + 0``) is left in the output for the assembler instead of being an error."""
        self.defer_sets = defer_sets
        self.prefixes = comment_prefixes
        self.base = dict(base_symbols)
        self.symbols: dict[str, int | float] = dict(base_symbols)
        self.reserved = reserved  # register names and mnemonics: not symbol names
        self.macros: dict[str, Macro] = {}
        self.diags: list[Diagnostic] = []
        self.out: list[SourceLine] = []
        self.counter = 0
        self.work = 0  # budget spent: iterations, macro calls, lines copied
        self.chars = 0  # characters copied by substitution
        self.suggest = Suggester()

    def err(self, sl: SourceLine, code: str, msg: str, col: int = 1, length: int = 1,
            hint: str | None = None) -> None:
        if len(self.diags) < MAX_DIAGNOSTICS:
            self.diags.append(Diagnostic.error(code, msg, line=sl.line, col=col, length=length,
                                               source_line=sl.display, hint=hint, origin=sl.origin))

    def abort(self, sl: SourceLine, code: str, msg: str, hint: str, col: int = 1, length: int = 1) -> None:
        """Record a budget error at ``sl`` and stop preprocessing (nothing is emitted)."""
        self.diags.append(Diagnostic.error(code, msg, line=sl.line, col=col, length=length,
                                           source_line=sl.display[:200], hint=hint, origin=sl.origin))
        raise _Abort

    def run(self, source: str) -> list[SourceLine]:
        lines = []
        for i, t in enumerate(source.splitlines()):
            code = strip_comment(t, self.prefixes)
            sl = SourceLine(code, i + 1, t)
            if len(code) > MAX_LINE_CHARS:
                self.err(sl, "E013", f"line has {len(code)} code characters; the limit is {MAX_LINE_CHARS}",
                         MAX_LINE_CHARS + 1, hint="split it into several lines")
                sl = SourceLine("", i + 1, t[:200])
            lines.append(sl)
        try:
            self.expand(lines, 0)
        except _Abort:
            return []
        return self.out

    def _charge(self, sl: SourceLine, units: int, chars: int = 0) -> None:
        self.work += units
        self.chars += chars
        if self.work > MAX_EXPANSION_WORK:
            self.abort(sl, "E013", f"expansion needs more than {MAX_EXPANSION_WORK} steps of work (every .rept/.irp "
                       "iteration, macro call and copied line counts)",
                       "a macro probably invokes itself, or .rept blocks nest too deep; use hardware loops")
        if self.chars > MAX_EXPANSION_CHARS:
            self.abort(sl, "E013", f"expansion copies more than {MAX_EXPANSION_CHARS} characters",
                       "a macro argument probably grows at every level")

    # -- helpers --------------------------------------------------------------------
    @staticmethod
    def _split_head(text: str) -> tuple[str, str, int]:
        parts = text.split(None, 1)  # the head, and the rest without its leading whitespace
        if not parts:
            return "", "", 0
        col = len(text) - len(text.lstrip())
        return parts[0], parts[1].rstrip() if len(parts) > 1 else "", col

    @staticmethod
    def split_args(rest: str) -> list[str]:
        return [t for t, _ in split_operands(rest, 0)] if rest.strip() else []

    def _collect_block(self, lines: list[SourceLine], start: int, opener: tuple[str, ...], closer: str
                       ) -> tuple[list[SourceLine], int] | None:
        depth, i = 1, start + 1
        while i < len(lines):
            head = self._split_head(lines[i].text)[0].lower()
            if head in opener:
                depth += 1
            elif head == closer:
                depth -= 1
                if depth == 0:
                    return lines[start + 1 : i], i
            i += 1
        return None

    def _emit(self, sl: SourceLine) -> None:
        if len(self.out) >= MAX_EXPANDED_LINES:
            self.abort(sl, "E013", f"expansion exceeds {MAX_EXPANDED_LINES} lines",
                       "reduce .rept counts or use hardware loops")
        sl.symbols = self.symbols
        self.out.append(sl)

    # -- expansion ------------------------------------------------------------------
    def expand(self, lines: list[SourceLine], depth: int) -> None:
        if depth > MAX_MACRO_DEPTH:
            if lines:
                self.abort(lines[0], "E012", f"macro/repeat nesting deeper than {MAX_MACRO_DEPTH}",
                           "a macro probably invokes itself")
            return
        i = 0
        while i < len(lines):
            sl = lines[i]
            head, rest, col = self._split_head(sl.text)
            low = head.lower()
            if not head:
                i += 1
                continue
            self._charge(sl, 1)
            rest_col = (sl.text.find(rest, col + len(head)) + 1) if rest else col + len(head) + 2
            if low in (".equ", ".set"):
                if not self._define(sl, rest, rest_col):
                    self._emit(sl)
            elif low in _BLOCKS:
                opener, closer, code = _BLOCKS[low]
                block = self._collect_block(lines, i, opener, closer)
                if block is None:
                    self.err(sl, code, f"'{low}' without a matching '{closer}'", col + 1, len(head))
                    return
                body, end = block
                if low == ".macro":
                    self._define_macro(sl, rest, body, col)
                elif low == ".rept":
                    self._rept(sl, rest, body, depth, rest_col)
                elif low == ".irp":
                    self._irp(sl, rest, body, depth, col)
                else:
                    self._if(sl, rest, body, depth, rest_col)
                i = end
            elif low in (".endm", ".endr", ".endif", ".else"):
                what = "a '.if'" if low in (".endif", ".else") else "an opening directive"
                self.err(sl, "E013", f"'{low}' without {what}", col + 1, len(head))
            elif low.startswith(".") and not low.endswith(":") and low not in self.reserved:  # ".L1:" is a label
                close = self.suggest(low, DIRECTIVES)
                self.err(sl, "E011", f"unknown directive '{head[:40]}'", col + 1, len(head),
                         hint=f"did you mean '{close}'?" if close else
                         "supported directives: " + " ".join(DIRECTIVES))
            elif head in self.macros or low in self.macros:
                self._invoke(self.macros.get(head) or self.macros[low], sl, rest, depth)
            else:
                self._emit(sl)
            i += 1

    def _define(self, sl: SourceLine, rest: str, col: int) -> bool:
        """Define the symbol (True), or return False to leave the line to the assembler (``defer_sets``)."""
        args = self.split_args(rest)
        if len(args) != 2 or not args[0]:
            self.err(sl, "E011", "expected '.equ NAME, expression'", col)
            return True
        name = args[0]
        if self.defer_sets and (_ASSEMBLER_VALUE.search(name) or _ASSEMBLER_VALUE.search(args[1])):
            return False
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", name):
            self.err(sl, "E011", f"invalid symbol name {name[:40]!r}", col)
            return True
        if name in self.base:
            self.err(sl, "E011", f"'{name}' is a predefined hardware constant and cannot be redefined", col,
                     len(name))
            return True
        if name.lower() in self.reserved:
            self.err(sl, "E011", f"'{name}' is a register or mnemonic and cannot be a symbol", col, len(name))
            return True
        ecol = sl.text.find(args[1], col - 1) + 1 if args[1] else col
        try:
            value = evaluate(args[1], self.symbols, allow_float=True)
        except ExprError as e:
            if self.defer_sets and e.message.startswith("unknown symbol"):
                return False  # maybe a label: the assembler knows
            self.err(sl, "E007", e.message, ecol + e.offset, e.length, e.hint)
            return True
        self.symbols = {**self.symbols, name: value}
        self._charge(sl, len(self.symbols) // 64)  # the snapshot copies the table
        return True


    def _define_macro(self, sl: SourceLine, rest: str, body: list[SourceLine], col: int) -> None:
        parts = rest.replace(",", " ").split()
        if not parts:
            self.err(sl, "E012", "'.macro' needs a name", col + 1, 6)
            return
        name, params = parts[0], []
        for p in parts[1:]:
            pname, _, default = p.partition("=")
            params.append((pname, default if _ else None))
        if name.lower() in self.reserved:
            self.err(sl, "E012", f"macro name '{name}' clashes with a mnemonic or register", col + 1)
            return
        self.macros[name] = Macro(name, params, body, sl.line)

    def _substitute(self, body: list[SourceLine], subst: dict[str, str], origin: str,
                    at: SourceLine) -> list[SourceLine]:
        """A copy of ``body`` with ``\\name`` replaced (textually, before the copy is expanded)."""
        self._charge(at, len(body) + 1, sum(len(b.text) for b in body))
        keys = sorted(subst, key=len, reverse=True)
        out = []
        for b in body:
            text = b.text
            if "\\" in text:
                for k in keys:
                    text = text.replace("\\" + k, subst[k])
                if len(text) > MAX_LINE_CHARS:
                    self.abort(at, "E013", f"macro substitution makes a line of {len(text)} characters; the limit "
                               f"is {MAX_LINE_CHARS}", "a macro argument probably grows at every level")
                self._charge(at, 0, len(text))
            display = b.display if text == b.text else text
            note = origin if b.origin is None else f"{origin}; {b.origin}"
            out.append(SourceLine(text, b.line, display, note))
        return out

    def _invoke(self, m: Macro, sl: SourceLine, rest: str, depth: int) -> None:
        args = self.split_args(rest) if rest.strip() else []
        if len(args) > len(m.params):
            self.err(sl, "E012", f"macro '{m.name}' takes {len(m.params)} argument(s), got {len(args)}")
            return
        subst = {}
        for idx, (pname, default) in enumerate(m.params):
            val = args[idx] if idx < len(args) and args[idx] != "" else default
            if val is None:
                self.err(sl, "E012", f"macro '{m.name}': missing value for argument '{pname}'",
                         hint=f"usage: {m.name} " + ", ".join(p for p, _ in m.params))
                return
            subst[pname] = val
        self.counter += 1
        subst["@"] = str(self.counter)
        origin = f"in expansion of macro '{m.name}' called at line {sl.line}"
        self.expand(self._substitute(m.body, subst, origin, sl), depth + 1)

    def _count(self, sl: SourceLine, rest: str, col: int, what: str) -> int | None:
        """A constant expression (a .rept count or an .if condition), or None after an error."""
        try:
            n = evaluate(rest, self.symbols)
        except ExprError as e:
            self.err(sl, "E007", e.message, col + e.offset, e.length, e.hint)
            return None
        if what == ".rept" and not 0 <= n <= MAX_EXPANDED_LINES:
            self.err(sl, "E013", f".rept count {n} out of range 0..{MAX_EXPANDED_LINES}", col)
            return None
        return int(n)

    def _rept(self, sl: SourceLine, rest: str, body: list[SourceLine], depth: int, col: int) -> None:
        n = self._count(sl, rest, col, ".rept")
        for k in range(n or 0):
            origin = f"in repetition {k + 1}/{n} of .rept at line {sl.line}"
            self.expand(self._substitute(body, {}, origin, sl), depth + 1)

    def _irp(self, sl: SourceLine, rest: str, body: list[SourceLine], depth: int, col: int) -> None:
        args = self.split_args(rest)
        if not args or not args[0]:
            self.err(sl, "E013", "expected '.irp symbol, value1, value2, ...'", col + 1)
            return
        sym, values = args[0], args[1:]
        for v in values:
            origin = f"in .irp {sym}={v} at line {sl.line}"
            self.expand(self._substitute(body, {sym: v}, origin, sl), depth + 1)

    def _if(self, sl: SourceLine, rest: str, body: list[SourceLine], depth: int, col: int) -> None:
        """``.if EXPR`` ... [``.else`` ...] ``.endif``: expand one branch (EXPR != 0 takes the first)."""
        split, nest = len(body), 0
        for k, b in enumerate(body):
            head = self._split_head(b.text)[0].lower()
            if head == ".if":
                nest += 1
            elif head == ".endif":
                nest -= 1
            elif head == ".else" and nest == 0:
                if split != len(body):
                    self.err(b, "E013", "a second '.else' in one '.if' block", hint=f"the '.if' is at line {sl.line}")
                    return
                split = k
        if not rest.strip():
            self.err(sl, "E007", "'.if' needs a constant expression", col)
            return
        cond = self._count(sl, rest, col, ".if")
        if cond is None:
            return
        branch = body[:split] if cond else body[split + 1 :]
        self.expand(branch, depth + 1)
