"""An assembled program: decoded ``int32[N, F]`` words plus the PC -> source-line map; a bounded cache of them."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

import numpy as np

from kcgym.isa.diagnostics import AssemblyError, Diagnostic


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


class ProgramCache:
    """A bounded LRU of assembly outcomes: a :class:`Program`, or the diagnostics of a source that failed.

    Agents and RL loops assemble the same source again and again (``assemble``, then ``simulate``, then
    ``submit``; the same completion many times in a GRPO group), so the outcome is kept by a key that the
    caller derives from everything assembly depends on (machine, hardware config, source). Bounded by entry
    count and by the characters of source held (a kernel may be a megabyte); the least recently used entry
    goes first. Cached programs are shared, so their words are made read-only. Thread-safe.
    """

    def __init__(self, max_entries: int, max_chars: int):
        self.max_entries = max_entries
        self.max_chars = max_chars
        # key -> (program, None) or (None, diagnostics of the failure); and the source's length
        self._entries: OrderedDict[Hashable, tuple[tuple[Program | None, list[Diagnostic] | None], int]] = (
            OrderedDict())
        self._chars = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable, source: str, assemble: Callable[[str], Program]) -> Program:
        """The program of ``source`` (assembled by ``assemble`` on a miss); raises AssemblyError like it."""
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
                self.hits += 1
        if hit is None:
            with self._lock:
                self.misses += 1
            outcome: tuple[Program | None, list[Diagnostic] | None]
            try:
                outcome = (assemble(source), None)
            except AssemblyError as e:
                outcome = (None, list(e.diagnostics))
            if isinstance(getattr(outcome[0], "words", None), np.ndarray):
                outcome[0].words.setflags(write=False)  # type: ignore[union-attr]
            self._put(key, outcome, len(source))
        else:
            outcome = hit[0]
        program, diagnostics = outcome
        if diagnostics is None:
            return program  # type: ignore[return-value]
        raise AssemblyError(list(diagnostics))  # a fresh exception (and list) per caller

    def _put(self, key: Hashable, outcome: tuple[Program | None, list[Diagnostic] | None], chars: int) -> None:
        if chars > self.max_chars:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._chars -= old[1]
            self._entries[key] = (outcome, chars)
            self._chars += chars
            while len(self._entries) > self.max_entries or self._chars > self.max_chars:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._chars -= dropped

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._chars = 0
