"""The assembly emitter shared by the VLIW template compiler and the expert kernels."""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.emit import Emitter


class Asm(Emitter):
    """Lines of assembly: one call emits one bundle (join operations with ``||`` for more)."""

    comment_marker = "//"
    default_author = "the kcgym VLIW template compiler"

    def __init__(self, title: str, author: str | None = None):
        super().__init__(title, author)
        self._labels = 0

    def fresh(self, stem: str) -> str:
        self._labels += 1
        return f"{stem}_{self._labels}"

    def loop(self, count: int | str, comment: str = "") -> _Loop:
        """``with asm.loop(n):`` a zero-overhead loop (immediate count, or a register name)."""
        return _Loop(self, count, comment)


class _Loop:
    def __init__(self, asm: Asm, count: int | str, comment: str):
        self.asm, self.count, self.comment = asm, count, comment
        self.end = asm.fresh("end")

    def __enter__(self) -> None:
        op = "LOOP" if isinstance(self.count, str) else "LOOPI"
        self.asm(f"{op} {self.count}, {self.end}", self.comment)
        self.asm.indent += 1

    def __exit__(self, *exc: object) -> None:
        self.asm.indent -= 1
        self.asm.label(self.end)


def ext_bytes(layout: MemoryLayout, name: str, element: int = 0) -> int:
    """Byte address in EXT of element ``element`` of tensor ``name``."""
    return 2 * (layout.region(name).offset + element)
