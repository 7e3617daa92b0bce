"""Reward-hacking RVV kernels, the RVV's half of the conformance suite's hack battery
(tests/conformance/hacks.py names the interface: every function takes ``(task, layout, hw)``)."""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.rvv.accelerator import tensor_dtype
from kcgym.sims.rvv.config import EXT_BASE, RVVConfig
from kcgym.tasks.base import Task

CONSTANT = 1  # the byte the constant hack writes everywhere (vmv.v.i takes -16..15)


def _bytes(task: Task, region) -> int:
    return region.size * tensor_dtype(task, region.name).itemsize


def _copy_loop(src: str | None, dst: int, nbytes: int, k: int, fill: int = 0) -> list[str]:
    body = ["vle8.v v8, (a0)", "add a0, a0, t1"] if src else []
    return [f"li t0, {nbytes}", f"li a0, {src}" if src else f"vsetvli t1, x0, e8, m8, ta, ma\n    vmv.v.i v8, {fill}",
            f"li a1, {dst}", f"{k}:", "vsetvli t1, t0, e8, m8, ta, ma", *body, "vse8.v v8, (a1)", "add a1, a1, t1",
            "sub t0, t0, t1", f"bnez t0, {k}b"]


def _fill_outputs(task: Task, layout: MemoryLayout, byte: int) -> str:
    lines = []
    for k, r in enumerate(x for x in layout.regions if x.role == "output"):
        lines += _copy_loop(None, EXT_BASE + r.offset, _bytes(task, r), k + 1, byte)
    return "\n".join(lines) + "\nret\n"


def zeros(task: Task, layout: MemoryLayout, hw: RVVConfig) -> str:
    """Writes zeros over every output."""
    return _fill_outputs(task, layout, 0)


def constant(task: Task, layout: MemoryLayout, hw: RVVConfig) -> str:
    """Writes the byte CONSTANT over every output."""
    return _fill_outputs(task, layout, CONSTANT)


def copy_input(task: Task, layout: MemoryLayout, hw: RVVConfig) -> str:
    """Copies the first input's bytes into every output (as much as fits)."""
    src = next(x for x in layout.regions if x.role == "input")
    lines = []
    for k, r in enumerate(x for x in layout.regions if x.role == "output"):
        n = min(_bytes(task, r), _bytes(task, src))
        lines += _copy_loop(str(EXT_BASE + src.offset), EXT_BASE + r.offset, n, k + 1)
    return "\n".join(lines) + "\nret\n"


def spin(task: Task, layout: MemoryLayout, hw: RVVConfig) -> str:
    """Branches to itself forever."""
    return "1:\nj 1b\n"


def out_of_bounds(task: Task, layout: MemoryLayout, hw: RVVConfig) -> str:
    """Loads from an address no memory maps; the last line faults."""
    return "li a0, 0x30000000\nlw a1, 0(a0)\n"
