"""An assembled program: decoded ``int32[N, F]`` words plus the PC -> source-line map."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kcgym.isa.diagnostics import Diagnostic


@dataclass
class Program:
    isa_name: str
    words: np.ndarray  # int32[N, F]: [opcode, class, sub, fields...]
    lines: list[int]  # pc -> 1-based source line
    origins: list[str | None]  # pc -> macro/rept expansion note
    source: str
    warnings: list[Diagnostic] = field(default_factory=list)
    slot_lines: list[list[int]] | None = None  # VLIW: word -> slot -> source line of that operation (0: empty)

    @property
    def length(self) -> int:
        return int(self.words.shape[0])

    def line_of(self, pc: int) -> int | None:
        return self.lines[pc] if 0 <= pc < len(self.lines) else None

    def slot_line(self, pc: int, slot: int) -> int | None:
        """The source line of one operation of a VLIW bundle (else the bundle's line)."""
        if self.slot_lines is not None and 0 <= pc < len(self.slot_lines) and 0 <= slot < len(self.slot_lines[pc]):
            return self.slot_lines[pc][slot] or self.line_of(pc)
        return self.line_of(pc)

    def source_line(self, pc: int, line: int | None = None) -> str | None:
        line = self.line_of(pc) if line is None else line
        if line is None:
            return None
        src = self.source.splitlines()
        return src[line - 1] if 0 < line <= len(src) else None

    def padded(self, size: int, fill_row: np.ndarray) -> np.ndarray:
        """Words padded to ``size`` rows with ``fill_row`` (a halt), for size-bucketed JIT."""
        out = np.repeat(fill_row[None, :].astype(np.int32), size, axis=0)
        out[: self.length] = self.words
        return out
