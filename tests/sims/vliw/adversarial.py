"""Reward-hacking VLIW kernels that must fail on every task: they are data for the simulator."""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.vliw.config import VLIWConfig

CHUNK = 8192


def _chunks(size_bytes: int) -> list[tuple[int, int]]:
    return [(off, min(CHUNK, size_bytes - off)) for off in range(0, size_bytes, CHUNK)]


def zeros_kernel(layout: MemoryLayout, hw: VLIWConfig) -> str:
    """DMAs (never-written, zero) data memory over every output."""
    lines = ["PMOVI p0, 32768"]
    for r in (x for x in layout.regions if x.role == "output"):
        for off, n in _chunks(2 * r.size):
            lines += [f"MOVI r1, {2 * r.offset + off}", f"DMAO p0, r1, r0, 1, {n}"]
    return "\n".join(lines) + "\n"


def copy_input_kernel(layout: MemoryLayout, hw: VLIWConfig) -> str:
    """Copies the first input into every output (the output's leading part where it is smaller)."""
    src = next(x for x in layout.regions if x.role == "input")
    lines = ["PMOVI p0, 0"]
    for r in (x for x in layout.regions if x.role == "output"):
        for off, n in _chunks(2 * min(r.size, src.size)):
            lines += [f"MOVI r1, {2 * src.offset + off}", f"DMAI p0, r1, r0, 1, {n}",
                      f"MOVI r2, {2 * r.offset + off}", f"DMAO p0, r2, r0, 1, {n}"]
    return "\n".join(lines) + "\n"
