"""Reward-hacking CPU kernels, the CPU's half of the conformance suite's hack battery
(tests/conformance/hacks.py names the interface: every function takes ``(task, layout, hw)``)."""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.cpu.config import CPUConfig
from kcgym.tasks.base import Task

CONSTANT = 1  # the word the constant hack writes everywhere
UNMAPPED = 0x7000_0000  # an address no memory of the CPU maps


def _address(layout: MemoryLayout, region) -> int:
    return (layout.origin or 0) + region.offset


def _word_loop(dst: int, words: int, k: int, src: int | None = None, fill: int = 0) -> list[str]:
    value = ["lw t2, 0(a0)", "addi a0, a0, 4"] if src is not None else []
    return [f"li a1, {dst}", f"li t0, {words}", f"li a0, {src}" if src is not None else f"li t2, {fill}", f"{k}:",
            *value, "sw t2, 0(a1)", "addi a1, a1, 4", "addi t0, t0, -1", f"bnez t0, {k}b"]


def _fill_outputs(task: Task, layout: MemoryLayout, word: int) -> str:
    lines = []
    for k, r in enumerate(x for x in layout.regions if x.role == "output"):
        lines += _word_loop(_address(layout, r), r.size, k + 1, fill=word)
    return "\n".join(lines) + "\nret\n"


def zeros(task: Task, layout: MemoryLayout, hw: CPUConfig) -> str:
    """Writes zeros over every output."""
    return _fill_outputs(task, layout, 0)


def constant(task: Task, layout: MemoryLayout, hw: CPUConfig) -> str:
    """Writes the word CONSTANT over every output."""
    return _fill_outputs(task, layout, CONSTANT)


def copy_input(task: Task, layout: MemoryLayout, hw: CPUConfig) -> str:
    """Copies the first input's words into every output (as many as fit)."""
    src = next(x for x in layout.regions if x.role == "input")
    lines = []
    for k, r in enumerate(x for x in layout.regions if x.role == "output"):
        lines += _word_loop(_address(layout, r), min(r.size, src.size), k + 1, src=_address(layout, src))
    return "\n".join(lines) + "\nret\n"


def spin(task: Task, layout: MemoryLayout, hw: CPUConfig) -> str:
    """Branches to itself forever."""
    return "1:\nj 1b\n"


def out_of_bounds(task: Task, layout: MemoryLayout, hw: CPUConfig) -> str:
    """Loads from an address no memory maps; the last line faults."""
    return f"li a0, {UNMAPPED:#x}\nlw a1, 0(a0)\n"
