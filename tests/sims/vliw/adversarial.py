"""Reward-hacking VLIW kernels that must fail on every task: they are data for the simulator.

Both walk the outputs in DMA-sized chunks inside a hardware loop, so the program stays a few
bundles long even where the outputs are megabytes (BatchMatMul C5: 512 chunks).
"""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.vliw.config import VLIWConfig

CHUNK = 8192


def _chunked(lines: list[str], label: str, size_bytes: int, body: list[str], bump: list[str]) -> None:
    """``body`` on every whole CHUNK of ``size_bytes`` in a loop (``bump`` advances its registers), then the rest."""
    whole, rest = divmod(size_bytes, CHUNK)
    if whole:
        lines.append(f"LOOPI {whole}, {label}")
        lines += [ln.format(n=CHUNK) for ln in body] + bump
        lines.append(f"{label}:")
    if rest:
        lines += [ln.format(n=rest) for ln in body]


def zeros_kernel(layout: MemoryLayout, hw: VLIWConfig) -> str:
    """DMAs (never-written, zero) data memory over every output."""
    lines = ["PMOVI p0, 32768"]
    for i, r in enumerate(x for x in layout.regions if x.role == "output"):
        lines.append(f"MOVI r1, {2 * r.offset}")
        _chunked(lines, f"zeros_{i}", 2 * r.size, ["DMAO p0, r1, r0, 1, {n}"], [f"ADDI r1, r1, {CHUNK}"])
    return "\n".join(lines) + "\n"


def copy_input_kernel(layout: MemoryLayout, hw: VLIWConfig) -> str:
    """Copies the first input into every output (the output's leading part where it is smaller)."""
    src = next(x for x in layout.regions if x.role == "input")
    lines = ["PMOVI p0, 0"]
    for i, r in enumerate(x for x in layout.regions if x.role == "output"):
        lines += [f"MOVI r1, {2 * src.offset}", f"MOVI r2, {2 * r.offset}"]
        _chunked(lines, f"copy_{i}", 2 * min(r.size, src.size),
                 ["DMAI p0, r1, r0, 1, {n}", "DMAO p0, r2, r0, 1, {n}"],
                 [f"ADDI r1, r1, {CHUNK}", f"ADDI r2, r2, {CHUNK}"])
    return "\n".join(lines) + "\n"
