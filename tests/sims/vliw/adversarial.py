"""Reward-hacking VLIW kernels, the VLIW's half of the conformance suite's hack battery
(tests/conformance/hacks.py names the interface: every function takes ``(task, layout, hw)``).

The output writers walk the outputs in DMA-sized chunks inside a hardware loop, so the program stays a
few bundles long even where the outputs are megabytes (BatchMatMul C5: 512 chunks).
"""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.vliw.config import VLIWConfig
from kcgym.tasks.base import Task

CHUNK = 8192
SOURCE_DM = 32768  # the DM bytes [SOURCE_DM, SOURCE_DM + CHUNK) the output writers copy out
CONSTANT = 1.0  # what the constant hack writes everywhere
LINE = 64  # bytes one VST writes


def _chunked(lines: list[str], label: str, size_bytes: int, body: list[str], bump: list[str]) -> None:
    """``body`` on every whole CHUNK of ``size_bytes`` in a loop (``bump`` advances its registers), then the rest."""
    whole, rest = divmod(size_bytes, CHUNK)
    if whole:
        lines.append(f"LOOPI {whole}, {label}")
        lines += [ln.format(n=CHUNK) for ln in body] + bump
        lines.append(f"{label}:")
    if rest:
        lines += [ln.format(n=rest) for ln in body]


def _dm_over_outputs(layout: MemoryLayout) -> list[str]:
    """DMAs DM[SOURCE_DM ..] over every output, one CHUNK at a time."""
    lines = [f"PMOVI p0, {SOURCE_DM}"]
    for i, r in enumerate(x for x in layout.regions if x.role == "output"):
        lines.append(f"MOVI r1, {2 * r.offset}")
        _chunked(lines, f"out_{i}", 2 * r.size, ["DMAO p0, r1, r0, 1, {n}"], [f"ADDI r1, r1, {CHUNK}"])
    return lines


def zeros(task: Task, layout: MemoryLayout, hw: VLIWConfig) -> str:
    """DMAs (never-written, zero) data memory over every output."""
    return "\n".join(_dm_over_outputs(layout)) + "\n"


def constant(task: Task, layout: MemoryLayout, hw: VLIWConfig) -> str:
    """Fills (as much as one CHUNK of) DM with CONSTANT and DMAs it over every output."""
    largest = max(2 * r.size for r in layout.regions if r.role == "output")
    lines = -(-min(largest, CHUNK) // LINE)  # no more VSTs than the outputs need: short kernels have short budgets
    fill = [f"PMOVI p1, {SOURCE_DM}", f"VBCST x1, {CONSTANT}", f"LOOPI {lines}, filled",
            f"VST x1, p1, {LINE}", "filled:"]
    return "\n".join(fill + _dm_over_outputs(layout)) + "\n"


def copy_input(task: Task, layout: MemoryLayout, hw: VLIWConfig) -> str:
    """Copies the first input into every output (the output's leading part where it is smaller)."""
    src = next(x for x in layout.regions if x.role == "input")
    lines = ["PMOVI p0, 0"]
    for i, r in enumerate(x for x in layout.regions if x.role == "output"):
        lines += [f"MOVI r1, {2 * src.offset}", f"MOVI r2, {2 * r.offset}"]
        _chunked(lines, f"copy_{i}", 2 * min(r.size, src.size),
                 ["DMAI p0, r1, r0, 1, {n}", "DMAO p0, r2, r0, 1, {n}"],
                 [f"ADDI r1, r1, {CHUNK}", f"ADDI r2, r2, {CHUNK}"])
    return "\n".join(lines) + "\n"


def spin(task: Task, layout: MemoryLayout, hw: VLIWConfig) -> str:
    """Jumps to itself forever."""
    return "spin:\nJ spin\n"


def out_of_bounds(task: Task, layout: MemoryLayout, hw: VLIWConfig) -> str:
    """DMAs in from before the start of EXT; the last line faults."""
    return "MOVI r1, -64\nPMOVI p0, 0\nDMAI p0, r1, r0, 1, 64\n"
