"""Expert SiLU / ReLU / GELU: the whole input queued at once, four rows interleaved op by op.

The template loads four rows, waits out the DMA latency, runs each row's chain of vector ops
(exp has a 7-cycle latency, reciprocal 2) one row after the other, and stores. Here every
input DMA is queued up front (at most 256 rows, a quarter of VSRAM), and each group of four
rows runs the same chain interleaved — op k of row 0, of row 1, ... — so a result is ready
by the time its row's next op issues. The ops are the template's own activation bodies
(``compiler.primitives``), so the bits are the same.
"""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.npu.compiler.emit import Asm, load_constant, prefetch_all_rows
from kcgym.sims.npu.compiler.primitives import _gelu, _relu, _silu
from kcgym.sims.npu.config import NPUConfig
from kcgym.tasks.base import Task, TaskConfig

GROUP = 4
BODIES = {"silu": _silu, "relu": _relu, "gelu": _gelu}


def _interleaved(task_name: str, xs: list[str], ts: list[str], us: list[str]) -> list[str]:
    """The activation body of each row, emitted separately, then zipped op by op."""
    per_row = []
    for x, t, u in zip(xs, ts, us, strict=True):
        row = Asm("")
        row.lines = []
        BODIES[task_name](row, x, x, t, u)
        per_row.append(row.lines)
    return [line for ops in zip(*per_row, strict=True) for line in ops]


def expert_elementwise(task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout) -> str:
    n, V, G = cfg["n"], hw.VLEN, GROUP
    rows = n // V
    if n % (G * V) or hw.v_prefetch_rows < G:
        raise ValueError(f"the expert {task.name} needs n a multiple of {G * V} and DMAs of {G} rows")
    if rows + 2 * G > hw.vsram_rows:
        raise ValueError("the expert keeps every row in VSRAM; this VSRAM is too small")
    asm = Asm(f"expert {task.title} {cfg.label}: everything prefetched, {G} rows interleaved op by op")
    prefetch_all_rows(asm, layout, rows, G, V)
    asm("S_LI_FP f1, -1.0")
    asm("S_LI_FP f2, 1.0")
    if task.name == "gelu":  # the template's constants
        load_constant(asm, layout, "gelu_coeff", "f3")
        load_constant(asm, layout, "sqrt_2_over_pi", "f4")
        asm("S_LI_FP f5, -2.0")
        asm("S_MUL_FP f4, f4, f5", "-2 sqrt(2/pi)")
    xs = [f"gp{4 + r}" for r in range(G)]
    ts = [f"gp{8 + r}" for r in range(G)]
    us = [f"gp{12 + r}" for r in range(G - 1)] + ["gp3"]
    for r in range(G):
        asm.li(xs[r], r * V, f"row {r} of the group")
        asm.li(ts[r], (rows + r) * V, f"scratch row t of group row {r}")
        asm.li(us[r], (rows + G + r) * V, f"scratch row u of group row {r}")
    with asm.loop("gp15", rows // G, f"groups of {G} rows"):
        for line in _interleaved(task.name, xs, ts, us):
            asm.lines.append("    " * asm.indent + line.strip())
        asm(f"H_STORE_V {xs[0]}, {xs[0]}, a1, 0, {G}", "the group's rows, in place, back to HBM")
        for x in xs:
            asm(f"S_ADDI_INT {x}, {x}, {G * V}")
    return asm.text()


# task name -> kernel, found by kcgym.sims.npu.expert
EXPERTS = dict.fromkeys(("silu", "relu", "gelu"), expert_elementwise)
