"""Reward-hacking RVV kernels that must fail on every task: they are data for the simulator."""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.rvv.accelerator import tensor_dtype
from kcgym.sims.rvv.config import EXT_BASE
from kcgym.tasks.base import Task


def _bytes(task: Task, region) -> int:
    return region.size * tensor_dtype(task, region.name).itemsize


def _copy_loop(src: str | None, dst: int, nbytes: int, k: int) -> list[str]:
    body = ["vle8.v v8, (a0)", "add a0, a0, t1"] if src else []
    return [f"li t0, {nbytes}", f"li a0, {src}" if src else "vsetvli t1, x0, e8, m8, ta, ma\n    vmv.v.i v8, 0",
            f"li a1, {dst}", f"{k}:", "vsetvli t1, t0, e8, m8, ta, ma", *body, "vse8.v v8, (a1)", "add a1, a1, t1",
            "sub t0, t0, t1", f"bnez t0, {k}b"]


def zeros_kernel(task: Task, layout: MemoryLayout) -> str:
    """Writes zeros over every output."""
    lines = []
    for k, r in enumerate(x for x in layout.regions if x.role == "output"):
        lines += _copy_loop(None, EXT_BASE + r.offset, _bytes(task, r), k + 1)
    return "\n".join(lines) + "\nret\n"


def copy_input_kernel(task: Task, layout: MemoryLayout) -> str:
    """Copies the first input's bytes into every output (as much as fits)."""
    src = next(x for x in layout.regions if x.role == "input")
    lines = []
    for k, r in enumerate(x for x in layout.regions if x.role == "output"):
        n = min(_bytes(task, r), _bytes(task, src))
        lines += _copy_loop(str(EXT_BASE + src.offset), EXT_BASE + r.offset, n, k + 1)
    return "\n".join(lines) + "\nret\n"
