"""Templates of the decoder blocks: RMSNorm, projected attention, residual adds and the MLP,
each stage through HBM."""

from __future__ import annotations

from collections.abc import Callable

from kcgym.sims.base import MemoryLayout
from kcgym.sims.npu.compiler import stages
from kcgym.sims.npu.compiler.attention import projected_attention, projection_scratch
from kcgym.sims.npu.compiler.emit import Asm
from kcgym.sims.npu.compiler.scratch import ScratchSpec, scratch_name
from kcgym.sims.npu.compiler.stages import View
from kcgym.sims.npu.config import NPUConfig
from kcgym.tasks.base import Task, TaskConfig


def _views(layout: MemoryLayout, names: str) -> list[View]:
    return [View.of(layout, scratch_name(n)) for n in names.split()]


def _llama(task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout) -> str:
    asm = Asm(f"{task.title} {cfg.label}")
    x, y = View.of(layout, "X"), View.of(layout, "Y")
    z, a, h1, g, u, m, f = _views(layout, "Z A H1 G U M F")
    nh = cfg["nh"]
    asm.comment("==== H1 = X + attention(RMSNorm(X))")
    stages.rmsnorm(asm, hw, layout, x, z)
    projected_attention(asm, hw, layout, z, z, nh, nh, "", a)
    stages.binary(asm, hw, "add", x, a, h1)
    asm.comment("==== Y = H1 + SwiGLU(RMSNorm(H1))")
    stages.rmsnorm(asm, hw, layout, h1, z)
    stages.gemm(asm, hw, z, View.of(layout, "W1"), g)
    stages.unary(asm, hw, "silu", g, m)
    stages.gemm(asm, hw, z, View.of(layout, "W3"), u)
    stages.binary(asm, hw, "mul", m, u, m)
    stages.gemm(asm, hw, m, View.of(layout, "W2"), f)
    stages.binary(asm, hw, "add", h1, f, y)
    return asm.text()


def _t5(task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout) -> str:
    asm = Asm(f"{task.title} {cfg.label}")
    x, e, y = View.of(layout, "X"), View.of(layout, "E"), View.of(layout, "Y")
    z, a, h1, h2, g, f = _views(layout, "Z A H1 H2 G F")
    nh = cfg["nh"]
    asm.comment("==== H1 = X + self-attention(RMSNorm(X))")
    stages.rmsnorm(asm, hw, layout, x, z)
    projected_attention(asm, hw, layout, z, z, nh, nh, "", a)
    stages.binary(asm, hw, "add", x, a, h1)
    asm.comment("==== H2 = H1 + cross-attention(RMSNorm(H1), E)")
    stages.rmsnorm(asm, hw, layout, h1, z)
    projected_attention(asm, hw, layout, z, e, nh, nh, "_cross", a)
    stages.binary(asm, hw, "add", h1, a, h2)
    asm.comment("==== Y = H2 + ReLU(RMSNorm(H2) @ W1) @ W2")
    stages.rmsnorm(asm, hw, layout, h2, z)
    stages.gemm(asm, hw, z, View.of(layout, "W1"), g)
    stages.unary(asm, hw, "relu", g, g)
    stages.gemm(asm, hw, g, View.of(layout, "W2"), f)
    stages.binary(asm, hw, "add", h2, f, y)
    return asm.text()


def _scratch(mlp: dict[str, str]) -> Callable[[Task, TaskConfig, NPUConfig], list[ScratchSpec]]:
    def specs(task: Task, cfg: TaskConfig, hw: NPUConfig) -> list[ScratchSpec]:
        s, h, hi = cfg["s"], cfg["h"], cfg["hi"]
        return [
            ScratchSpec(scratch_name("Z"), (s, h), "RMSNorm output, input of the next sub-block"),
            *projection_scratch(s, h, h, hw),
            ScratchSpec(scratch_name("A"), (s, h), "attention sub-block output (after Wo)"),
            *[ScratchSpec(scratch_name(n), (s, h), "residual stream") for n in ("H1", "H2") if n in mlp["residual"]],
            *[ScratchSpec(scratch_name(n), (s, hi), what) for n, what in mlp.items() if n != "residual"],
            ScratchSpec(scratch_name("F"), (s, h), "MLP output (after W2)"),
        ]

    return specs


TEMPLATES: dict[str, Callable[[Task, TaskConfig, NPUConfig, MemoryLayout], str]] = {
    "decoder_llama": _llama,
    "decoder_t5": _t5,
}

SCRATCH: dict[str, Callable[[Task, TaskConfig, NPUConfig], list[ScratchSpec]]] = {
    "decoder_llama": _scratch({"residual": "H1", "G": "gate Z @ W1", "U": "up Z @ W3", "M": "SiLU(gate) * up"}),
    "decoder_t5": _scratch({"residual": "H1 H2", "G": "ReLU(Z @ W1)"}),
}
