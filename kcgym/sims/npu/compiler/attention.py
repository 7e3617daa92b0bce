"""Templates of the attention tasks: per head, Q @ K^T to HBM, a three-pass softmax to HBM,
then P @ V; the projected forms add the Q/K/V projections before and Wo after.

SDPA and FlashAttention share the template: the baseline materialises the scores, which is
exactly what a FlashAttention kernel avoids.
"""

from __future__ import annotations

from collections.abc import Callable

from kcgym.sims.base import MemoryLayout
from kcgym.sims.npu.compiler import stages
from kcgym.sims.npu.compiler.emit import Asm
from kcgym.sims.npu.compiler.scratch import ScratchSpec, attention_scratch, padded, scratch_name
from kcgym.sims.npu.compiler.stages import NEG_LARGE, View
from kcgym.sims.npu.config import NPUConfig
from kcgym.tasks.base import Task, TaskConfig


def zero_row(hw: NPUConfig) -> int:
    """A VSRAM row no stage writes, so it stays zero (VSRAM starts zeroed)."""
    return hw.vsram_rows - 1


def attention_heads(asm: Asm, hw: NPUConfig, layout: MemoryLayout, q: View, k: View, v: View, o: View,
                    nh: int, nkv: int) -> None:
    """o[:, head i] = softmax(q_i @ k_g^T * scale) @ v_g, g = i // (nh / nkv).

    ``q`` and ``o`` have s rows; ``k`` and ``v`` have s valid rows, and ``v`` is padded to whole
    tiles with finite rows when s < MLEN (P's padding columns are 0, but 0 * NaN is NaN).
    """
    s, d = q.rows, q.cols // nh
    sv, pv = View.of(layout, scratch_name("S")), View.of(layout, scratch_name("P"))
    for i in range(nh):
        g = i // (nh // nkv)
        asm.comment(f"---- head {i} (K/V head {g})")
        stages.gemm(asm, hw, q.columns(i * d, d), k.columns(g * d, d).top(s), sv, transpose_w=True,
                    pad_fill=NEG_LARGE)
        stages.softmax(asm, hw, layout, sv, pv)
        stages.gemm(asm, hw, pv, v.columns(g * d, d).top(pv.cols), o.columns(i * d, d))


def projected_attention(asm: Asm, hw: NPUConfig, layout: MemoryLayout, x: View, ctx: View, nh: int, nkv: int,
                        suffix: str, out: View) -> None:
    """out = attention(x @ Wq, ctx @ Wk, ctx @ Wv) @ Wo through the tmp_ scratch regions."""
    s = x.rows
    q, k, v, o = (View.of(layout, scratch_name(n)) for n in ("Q", "K", "V", "O"))
    stages.gemm(asm, hw, x, View.of(layout, "Wq" + suffix), q)
    stages.gemm(asm, hw, ctx, View.of(layout, "Wk" + suffix), k.top(s))
    stages.gemm(asm, hw, ctx, View.of(layout, "Wv" + suffix), v.top(s))
    stages.zero_rows(asm, hw, v, s, zero_row(hw))
    attention_heads(asm, hw, layout, q, k, v, o, nh, nkv)
    stages.gemm(asm, hw, o, View.of(layout, "Wo" + suffix), out)


def projection_scratch(s: int, h: int, kv: int, hw: NPUConfig) -> list[ScratchSpec]:
    sp = padded(s, hw)
    return [
        ScratchSpec(scratch_name("Q"), (s, h), "queries, all heads side by side"),
        ScratchSpec(scratch_name("K"), (sp, kv), "keys (rows past s: zero)"),
        ScratchSpec(scratch_name("V"), (sp, kv), "values (rows past s: zero)"),
        *attention_scratch(s, hw),
        ScratchSpec(scratch_name("O"), (s, h), "attention output, heads side by side"),
    ]


def _core(task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout) -> str:
    asm = Asm(f"{task.title} {cfg.label}")
    s = cfg["s"]
    q, k, v, o = (View.of(layout, n) for n in ("Q", "K", "V", "O"))
    if s % hw.MLEN:
        vp = View.of(layout, scratch_name("V"))
        stages.copy_rows(asm, hw, v, vp)
        stages.zero_rows(asm, hw, vp, s, zero_row(hw))
        v = vp
    attention_heads(asm, hw, layout, q, k, v, o, 1, 1)
    return asm.text()


def _core_scratch(task: Task, cfg: TaskConfig, hw: NPUConfig) -> list[ScratchSpec]:
    s, h = cfg["s"], cfg["h"]
    pad = [ScratchSpec(scratch_name("V"), (padded(s, hw), h), "V padded with zero rows")] if s % hw.MLEN else []
    return [*attention_scratch(s, hw), *pad]


def _projected(task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout) -> str:
    asm = Asm(f"{task.title} {cfg.label}")
    x = View.of(layout, "X")
    projected_attention(asm, hw, layout, x, x, cfg["nh"], task.kv_heads(cfg), "", View.of(layout, "Y"))  # type: ignore[attr-defined]
    return asm.text()


def _projected_scratch(task: Task, cfg: TaskConfig, hw: NPUConfig) -> list[ScratchSpec]:
    s, h, nh = cfg["s"], cfg["h"], cfg["nh"]
    return projection_scratch(s, h, task.kv_heads(cfg) * (h // nh), hw)  # type: ignore[attr-defined]


TEMPLATES: dict[str, Callable[[Task, TaskConfig, NPUConfig, MemoryLayout], str]] = {
    "sdpa": _core,
    "flash_attention": _core,
    "mha": _projected,
    "gqa": _projected,
    "mqa": _projected,
}

SCRATCH: dict[str, Callable[[Task, TaskConfig, NPUConfig], list[ScratchSpec]]] = {
    "sdpa": _core_scratch,
    "flash_attention": _core_scratch,
    "mha": _projected_scratch,
    "gqa": _projected_scratch,
    "mqa": _projected_scratch,
}
