"""Templates of RoPE and the MLP blocks: matrix products and elementwise stages through HBM."""

from __future__ import annotations

from collections.abc import Callable

from kcgym.sims.base import MemoryLayout
from kcgym.sims.npu.compiler import stages
from kcgym.sims.npu.compiler.emit import Asm
from kcgym.sims.npu.compiler.scratch import ScratchSpec, scratch_name
from kcgym.sims.npu.compiler.stages import View
from kcgym.sims.npu.config import NPUConfig
from kcgym.tasks.base import Task, TaskConfig


def _rope(task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout) -> str:
    asm = Asm(f"{task.title} {cfg.label}")
    v = {n: View.of(layout, n) for n in ("X", "cos", "sin", "P", "Y")}
    rot = View.of(layout, scratch_name("R"))
    stages.gemm(asm, hw, v["X"], v["P"], rot)
    stages.rope_combine(asm, hw, v["X"], v["cos"], v["sin"], rot, v["Y"])
    return asm.text()


def _ffn(task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout) -> str:
    asm = Asm(f"{task.title} {cfg.label}")
    v = {n: View.of(layout, n) for n in ("X", "W1", "W2", "Y")}
    h, a = View.of(layout, scratch_name("H")), View.of(layout, scratch_name("A"))
    stages.gemm(asm, hw, v["X"], v["W1"], h)
    stages.unary(asm, hw, "silu", h, a)
    stages.gemm(asm, hw, a, v["W2"], v["Y"])
    return asm.text()


def _swiglu(task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout) -> str:
    asm = Asm(f"{task.title} {cfg.label}")
    v = {n: View.of(layout, n) for n in ("X", "W1", "W3", "W2", "Y")}
    g, u, a = (View.of(layout, scratch_name(n)) for n in ("G", "U", "A"))
    stages.gemm(asm, hw, v["X"], v["W1"], g)
    stages.unary(asm, hw, "silu", g, a)
    stages.gemm(asm, hw, v["X"], v["W3"], u)
    stages.binary(asm, hw, "mul", a, u, a)
    stages.gemm(asm, hw, a, v["W2"], v["Y"])
    return asm.text()


def _mlp_scratch(names: str) -> Callable[[Task, TaskConfig, NPUConfig], list[ScratchSpec]]:
    what = {"H": "X @ W1", "G": "X @ W1 (gate)", "U": "X @ W3 (up)", "A": "the activation, input of W2"}
    return lambda task, cfg, hw: [ScratchSpec(scratch_name(n), (cfg["n"], cfg["hi"]), what[n]) for n in names]


TEMPLATES: dict[str, Callable[[Task, TaskConfig, NPUConfig, MemoryLayout], str]] = {
    "rope": _rope,
    "ffn": _ffn,
    "swiglu": _swiglu,
}

SCRATCH: dict[str, Callable[[Task, TaskConfig, NPUConfig], list[ScratchSpec]]] = {
    "rope": lambda task, cfg, hw: [ScratchSpec(scratch_name("R"), (cfg["s"], cfg["d"]), "rotate_half(X) = X @ P")],
    "ffn": _mlp_scratch("HA"),
    "swiglu": _mlp_scratch("GUA"),
}
