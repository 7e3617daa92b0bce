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


def _attention_block(asm: Asm, hw: NPUConfig, layout: MemoryLayout, x: View, kv: View | None, suffix: str,
                     out: View, nh: int) -> None:
    """out = x + attention(RMSNorm(x)) (kv None: self-attention, else cross-attention over kv), through Z and A."""
    z, a = _views(layout, "Z A")
    stages.rmsnorm(asm, hw, layout, x, z)
    projected_attention(asm, hw, layout, z, z if kv is None else kv, nh, nh, suffix, a)
    stages.binary(asm, hw, "add", x, a, out)


def _normed_up(asm: Asm, hw: NPUConfig, layout: MemoryLayout, h: View, g: View) -> None:
    """The MLP's first step: Z = RMSNorm(h), g = Z @ W1 (Z stays for a gated MLP's second projection)."""
    (z,) = _views(layout, "Z")
    stages.rmsnorm(asm, hw, layout, h, z)
    stages.gemm(asm, hw, z, View.of(layout, "W1"), g)


def _down_residual(asm: Asm, hw: NPUConfig, layout: MemoryLayout, act: View, h: View, out: View) -> None:
    """The MLP's last step: out = h + act @ W2, through F."""
    (f,) = _views(layout, "F")
    stages.gemm(asm, hw, act, View.of(layout, "W2"), f)
    stages.binary(asm, hw, "add", h, f, out)


def _llama(task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout) -> str:
    asm = Asm(f"{task.title} {cfg.label}")
    x, y = View.of(layout, "X"), View.of(layout, "Y")
    z, h1, g, u, m = _views(layout, "Z H1 G U M")
    nh = cfg["nh"]
    asm.comment("==== H1 = X + attention(RMSNorm(X))")
    _attention_block(asm, hw, layout, x, None, "", h1, nh)
    asm.comment("==== Y = H1 + SwiGLU(RMSNorm(H1))")
    _normed_up(asm, hw, layout, h1, g)
    stages.unary(asm, hw, "silu", g, m)
    stages.gemm(asm, hw, z, View.of(layout, "W3"), u)
    stages.binary(asm, hw, "mul", m, u, m)
    _down_residual(asm, hw, layout, m, h1, y)
    return asm.text()


def _t5(task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout) -> str:
    asm = Asm(f"{task.title} {cfg.label}")
    x, e, y = View.of(layout, "X"), View.of(layout, "E"), View.of(layout, "Y")
    h1, h2, g = _views(layout, "H1 H2 G")
    nh = cfg["nh"]
    asm.comment("==== H1 = X + self-attention(RMSNorm(X))")
    _attention_block(asm, hw, layout, x, None, "", h1, nh)
    asm.comment("==== H2 = H1 + cross-attention(RMSNorm(H1), E)")
    _attention_block(asm, hw, layout, h1, e, "_cross", h2, nh)
    asm.comment("==== Y = H2 + ReLU(RMSNorm(H2) @ W1) @ W2")
    _normed_up(asm, hw, layout, h2, g)
    stages.unary(asm, hw, "relu", g, g)
    _down_residual(asm, hw, layout, g, h2, y)
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
