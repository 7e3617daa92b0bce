"""Expert Softmax / LayerNorm / RMSNorm: all rows prefetched at once, four rows interleaved per stage.

The template loads four rows, waits for them, and runs each row's dependent chain (vector
op, reduction, scalar rsqrt, scale) to the end before starting the next, so every
reduction and scalar latency stalls the single issue slot and every block pays the full
DMA latency. Here the whole input (at most 256 rows) is queued into VSRAM up front, and
each group of four rows goes through the chain stage by stage — one instruction per row
per stage, each row with its own FP register — so a result is ready by the time its row
comes round again. The arithmetic is the template's, op for op, so the bits are the same.
"""

from __future__ import annotations

from collections.abc import Callable

from kcgym.sims.base import MemoryLayout
from kcgym.sims.npu.compiler.emit import Asm, load_constant, prefetch_all_rows
from kcgym.sims.npu.config import NPUConfig
from kcgym.tasks.base import Task, TaskConfig

GROUP = 4  # rows in flight: f1..f4 hold one scalar each (f0 = 0, f6/f7 = constants)

# One stage = one instruction for one row: (x row register, scratch row register, f register) -> text.
Stage = Callable[[str, str, str], str]

STAGES: dict[str, list[Stage]] = {
    "rmsnorm": [
        lambda x, t, f: f"S_ADD_FP {f}, f0, f0",
        lambda x, t, f: f"V_MUL_VV {t}, {x}, {x}",
        lambda x, t, f: f"V_RED_SUM {f}, {t}",
        lambda x, t, f: f"S_MUL_FP {f}, {f}, f6",
        lambda x, t, f: f"S_ADD_FP {f}, {f}, f7",
        lambda x, t, f: f"S_SQRT_FP {f}, {f}",
        lambda x, t, f: f"S_RECI_FP {f}, {f}",
        lambda x, t, f: f"V_MUL_VF {x}, {x}, {f}",
    ],
    "softmax": [
        lambda x, t, f: f"S_LI_FP {f}, -3.0e38",
        lambda x, t, f: f"V_RED_MAX {f}, {x}",
        lambda x, t, f: f"V_SUB_VF {t}, {x}, {f}",
        lambda x, t, f: f"V_EXP_V {t}, {t}",
        lambda x, t, f: f"S_ADD_FP {f}, f0, f0",
        lambda x, t, f: f"V_RED_SUM {f}, {t}",
        lambda x, t, f: f"S_RECI_FP {f}, {f}",
        lambda x, t, f: f"V_MUL_VF {x}, {t}, {f}",
    ],
    "layernorm": [
        lambda x, t, f: f"S_ADD_FP {f}, f0, f0",
        lambda x, t, f: f"V_RED_SUM {f}, {x}",
        lambda x, t, f: f"S_MUL_FP {f}, {f}, f6",
        lambda x, t, f: f"V_SUB_VF {x}, {x}, {f}",
        lambda x, t, f: f"V_MUL_VV {t}, {x}, {x}",
        lambda x, t, f: f"S_ADD_FP {f}, f0, f0",
        lambda x, t, f: f"V_RED_SUM {f}, {t}",
        lambda x, t, f: f"S_MUL_FP {f}, {f}, f6",
        lambda x, t, f: f"S_ADD_FP {f}, {f}, f7",
        lambda x, t, f: f"S_SQRT_FP {f}, {f}",
        lambda x, t, f: f"S_RECI_FP {f}, {f}",
        lambda x, t, f: f"V_MUL_VF {x}, {x}, {f}",
    ],
}


def expert_rowwise(task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout) -> str:
    rows, hidden = task.shape(cfg)  # type: ignore[attr-defined]
    V, G = hw.VLEN, GROUP
    if hidden != V or rows % G or hw.v_prefetch_rows < G:
        raise ValueError(f"the expert {task.name} needs hidden == VLEN, rows a multiple of {G} and DMAs of {G} rows")
    if rows + G > hw.vsram_rows:
        raise ValueError("the expert keeps every row in VSRAM; this VSRAM is too small")
    asm = Asm(f"expert {task.title} {cfg.label}: everything prefetched, {GROUP} rows interleaved per stage")
    prefetch_all_rows(asm, layout, rows, G, V)
    if task.name != "softmax":
        load_constant(asm, layout, "inv_hidden", "f6")
        load_constant(asm, layout, "eps", "f7")
    xs = [f"gp{4 + r}" for r in range(GROUP)]
    ts = [f"gp{8 + r}" for r in range(GROUP)]
    fs = [f"f{1 + r}" for r in range(GROUP)]
    for r in range(GROUP):
        asm.li(xs[r], r * V, f"row {r} of the group")
        asm.li(ts[r], (rows + r) * V, f"scratch row of group row {r}")
    with asm.loop("gp15", rows // G, f"groups of {G} rows"):
        for stage in STAGES[task.name]:
            for x, t, f in zip(xs, ts, fs, strict=True):
                asm(stage(x, t, f))
        asm(f"H_STORE_V {xs[0]}, {xs[0]}, a1, 0, {G}", "the group's rows, in place, back to HBM")
        for x in xs:
            asm(f"S_ADDI_INT {x}, {x}, {G * V}")
    return asm.text()


# task name -> kernel, found by kcgym.sims.npu.expert
EXPERTS = dict.fromkeys(("softmax", "layernorm", "rmsnorm"), expert_rowwise)
