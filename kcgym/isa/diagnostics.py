"""Compiler-grade diagnostics: ``line:col``, the offending text under a caret, a hint.

The assembler collects every error it can find before giving up, so a kernel writer (or a
model) fixes them all in one round trip instead of one per turn.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any, Literal

from kcgym.limits import MAX_SUGGESTED_WORD, MAX_SUGGESTIONS
from kcgym.suggest import closest


@dataclass(frozen=True)
class Diagnostic:
    severity: Literal["error", "warning"]
    code: str  # stable id, e.g. "E101"; documented in the reference
    message: str
    line: int  # 1-based
    col: int  # 1-based
    length: int = 1  # caret width
    source_line: str = ""
    hint: str | None = None
    origin: str | None = None  # e.g. "in expansion of macro 'tile' (line 40)"

    @classmethod
    def error(cls, code: str, message: str, *, line: int, col: int = 1, length: int = 1,
              source_line: str = "", hint: str | None = None, origin: str | None = None) -> Diagnostic:
        return cls("error", code, message, line, col, max(1, length), source_line, hint, origin)

    @classmethod
    def warning(cls, code: str, message: str, *, line: int, col: int = 1, length: int = 1,
                source_line: str = "", hint: str | None = None, origin: str | None = None) -> Diagnostic:
        return cls("warning", code, message, line, col, max(1, length), source_line, hint, origin)

    def render(self, filename: str = "kernel.s") -> str:
        out = [f"{filename}:{self.line}:{self.col}: {self.severity}[{self.code}]: {self.message}"]
        if self.source_line:
            src = self.source_line.rstrip("\n").expandtabs(1)
            out.append(f"    {src}")
            out.append("    " + " " * (self.col - 1) + "^" + "~" * (self.length - 1))
        if self.origin:
            out.append(f"  note: {self.origin}")
        if self.hint:
            out.append(f"  hint: {self.hint}")
        return "\n".join(out)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class AssemblyError(Exception):
    """Raised with *all* diagnostics of a source that did not assemble."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = diagnostics
        errors = [d for d in diagnostics if d.severity == "error"]
        super().__init__(f"{len(errors)} error(s)")

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    def render(self, filename: str = "kernel.s", limit: int = 50) -> str:
        errs = self.errors
        shown = self.diagnostics[:limit]
        text = "\n".join(d.render(filename) for d in shown)
        more = len(self.diagnostics) - len(shown)
        if more > 0:
            text += f"\n... and {more} more diagnostic(s)"
        n_warn = len(self.diagnostics) - len(errs)
        return text + f"\n{len(errs)} error(s), {n_warn} warning(s)"


class Suggester:
    """"Did you mean" for one assembly: :func:`kcgym.suggest.closest` (bounded per word), and at most
    ``MAX_SUGGESTIONS`` computed per assembly (thousands of jumps to near-miss labels stay cheap)."""

    def __init__(self) -> None:
        self.left = MAX_SUGGESTIONS

    def __call__(self, word: str, options: Iterable[str], cutoff: float = 0.6) -> str | None:
        if self.left <= 0 or not word or len(word) > MAX_SUGGESTED_WORD:  # a huge word costs no budget
            return None
        self.left -= 1
        return closest(word, options, cutoff)
