"""Sections of an RVV assembly file and where they land: what GNU ``as`` + ``ld`` would place where.

Compilers (clang-14, GCC 12) scatter a kernel's data over many sections (``.rodata.cst16``,
``.sdata``, ``.sbss``, ``.rodata.str1.1`` ...) and switch between them freely. GNU ``as`` keeps
one byte stream per section; the linker then concatenates the streams in the order of its
script, each aligned to the largest alignment requested in it. :data:`DATA_ORDER` is that
order, used both here (the simulator's DTCM image) and in the QEMU harness's linker script
(:mod:`kcgym.sims.rvv.qemu`), so the two worlds agree byte for byte. Code sections go to the
ITCM in source order (see :func:`text_order_error`).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field

# The linker script's data patterns, in order (GNU ld wildcard syntax; COMMON holds .comm symbols).
DATA_ORDER = (".data", ".data.*", ".rodata", ".rodata.*", ".srodata", ".srodata.*", ".sdata", ".sdata.*",
              ".bss", ".bss.*", ".sbss", ".sbss.*", "COMMON")
NOBITS = (".bss", ".bss.*", ".sbss", ".sbss.*", "COMMON")  # zero-filled: storing a non-zero value is an error
# Sections that are not loaded (notes, debug info, attributes, address-significance tables): contents dropped.
DISCARDED = (".note*", ".comment*", ".debug*", ".riscv.attributes", ".llvm_addrsig", ".llvm.*", ".stab*")


def kind(name: str) -> str | None:
    """'text', 'data', 'discard', or None for a section the flat image has no place for."""
    if name == ".text" or name.startswith(".text."):
        return "text"
    if any(fnmatch.fnmatchcase(name, p) for p in DATA_ORDER):
        return "data"
    if any(fnmatch.fnmatchcase(name, p) for p in DISCARDED):
        return "discard"
    return None


def _rank(name: str) -> int:
    return next(k for k, p in enumerate(DATA_ORDER) if fnmatch.fnmatchcase(name, p))


def is_nobits(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in NOBITS)


@dataclass
class DataSection:
    """One section's bytes as GNU ``as`` assembles them, and the largest alignment asked for in it."""

    name: str
    data: bytearray = field(default_factory=bytearray)
    align: int = 1


class DataSections:
    """Per-section byte streams; :meth:`layout` concatenates them in the linker's order."""

    def __init__(self) -> None:
        self.sections: dict[str, DataSection] = {}  # in order of creation (the object file's section order)
        for name in (".data", ".bss"):  # GNU as creates these two up front, before any directive
            self.sections[name] = DataSection(name)

    def get(self, name: str) -> DataSection:
        if name not in self.sections:
            self.sections[name] = DataSection(name)
        return self.sections[name]

    @property
    def total(self) -> int:
        """Bytes of all sections without the gaps between them (an early, cheap size check)."""
        return sum(len(s.data) for s in self.sections.values())

    def layout(self) -> tuple[bytes, dict[str, int]]:
        """The flat image and each section's offset in it: sections in :data:`DATA_ORDER` (creation order
        within one pattern, as ld takes them from one object file), each aligned to its own alignment."""
        ordered = sorted(self.sections.values(), key=lambda s: _rank(s.name))  # stable: creation order kept
        image, offsets = bytearray(), {}
        for s in ordered:
            if not s.data:
                offsets[s.name] = len(image)
                continue
            image += bytes((-len(image)) % s.align)
            offsets[s.name] = len(image)
            image += s.data
        return bytes(image), offsets


def linker_data_patterns() -> str:
    """The ``*(...)`` input-section list of the QEMU linker script's data output section."""
    return " ".join(f"*({p})" for p in DATA_ORDER)


def text_order_error(order: list[str]) -> str | None:
    """Code sections in the ITCM come in source order; ld puts ``.text`` first and each ``.text.*`` whole.

    Both agree when ``.text`` (if used) comes first and no code section is re-entered after another
    one received code; otherwise the message says why the file cannot be laid out faithfully.
    """
    if ".text" in order and order[0] != ".text":
        return f"code in '.text' after code in '{order[0]}': the linker would place '.text' first"
    for k, name in enumerate(order):  # consecutive entries differ: a repeat is a section re-entered
        if name in order[:k]:
            return f"code section '{name}' is continued after code in '{order[k - 1]}'"
    return None


_ESCAPES = {"b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92, '"': 34, "'": 39, "a": 7, "e": 27}


class StringError(ValueError):
    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.message, self.offset = message, offset


def parse_strings(text: str) -> list[bytes]:
    """``"a\\n", "b\\001"`` -> the bytes of each string, GNU ``as`` escapes (``\\ooo``, ``\\xhh``, ``\\n`` ...)."""
    out: list[bytes] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i >= n or text[i] != '"':
            raise StringError("expected a string in double quotes", i)
        opening = i
        i += 1
        buf = bytearray()
        while True:
            if i >= n:
                raise StringError("missing closing '\"'", opening)
            c = text[i]
            if c == '"':
                i += 1
                break
            if c != "\\":
                buf += c.encode()
                i += 1
                continue
            i += 1
            if i >= n:
                raise StringError("a '\\' ends the string", i - 1)
            e = text[i]
            if m := re.match(r"[0-7]{1,3}", text[i:]):
                buf.append(int(m.group(0), 8) & 0xFF)
                i += m.end()
            elif e in "xX" and (m := re.match(r"[0-9A-Fa-f]+", text[i + 1:])):
                buf.append(int(m.group(0), 16) & 0xFF)
                i += 1 + m.end()
            elif e in _ESCAPES:
                buf.append(_ESCAPES[e])
                i += 1
            else:
                buf += e.encode()  # GNU as keeps an unknown escape's character
                i += 1
        out.append(bytes(buf))
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            return out
        if text[i] != ",":
            raise StringError("expected ',' between strings", i)
        i += 1
