"""Template of the embedding lookup: one-hot rows on the vector unit, then one GEMM with the table.

The NPU cannot turn a loaded value into an address, so the baseline computes the gather. For
each token, the mask of its lane (``relu(1 - |positions - lane|)``) picks its id out of the
ids row (V_RED_SUM); its one-hot row ``relu(1 - |positions - id|)`` (exact for integer ids)
goes to HBM scratch; then ``Y = onehot @ table`` is the GEMM stage, exact as well (one
product ``1 * w`` per output). Like every template: naive, one token at a time, no overlap.
"""

from __future__ import annotations

from collections.abc import Callable

from kcgym.sims.base import MemoryLayout
from kcgym.sims.npu.compiler import stages
from kcgym.sims.npu.compiler.emit import Asm, base_address
from kcgym.sims.npu.compiler.scratch import ScratchSpec, scratch_name
from kcgym.sims.npu.compiler.stages import View
from kcgym.sims.npu.config import NPUConfig
from kcgym.tasks.base import Task, TaskConfig

ONEHOT = scratch_name("O")


def _onehot_of(asm: Asm, pos: str, value: str, out: str, t: str, u: str) -> None:
    """Row ``out`` = relu(1 - |row ``pos`` - ``value``|): 1 where a position equals the value, else 0."""
    asm(f"V_SUB_VF {t}, {pos}, {value}", "positions - value")
    asm(f"V_RSUB_VF {u}, {t}, f0", "value - positions")
    asm(f"V_MAX_VV {t}, {t}, {u}", "|positions - value|")
    asm(f"V_RSUB_VF {t}, {t}, f2", "1 - |.|")
    asm(f"V_MAX_VF {out}, {t}, f0", "relu: the one-hot row")


def _onehot_stage(asm: Asm, hw: NPUConfig, layout: MemoryLayout, n: int, vocab: int) -> None:
    """HBM scratch O (n, V) = onehot(ids), one token at a time."""
    VL, R = hw.VLEN, hw.v_prefetch_rows
    if vocab % VL:
        raise ValueError(f"the NPU embedding template needs V % VLEN == 0 (V={vocab}, VLEN={VL})")
    chunks = vocab // VL  # VSRAM rows per one-hot row
    pos, ids, t, u, row = 0, chunks * VL, (chunks + 1) * VL, (chunks + 2) * VL, (chunks + 3) * VL
    if row // VL + chunks > hw.vsram_rows:
        raise ValueError("VSRAM too small for the embedding template")
    asm.comment(f"one-hot rows of {n} ids over {vocab} positions")
    base_address(asm, layout, "ids", "a0")
    base_address(asm, layout, "positions", "a1")
    base_address(asm, layout, ONEHOT, "a2")
    asm("S_LI_FP f2, 1.0")
    for first in range(0, chunks, R):
        asm.li("gp5", pos + first * VL)
        asm.li("gp6", first * VL)
        asm(f"H_PREFETCH_V gp5, gp6, a1, 0, {min(R, chunks - first)}", "the positions")
    asm.li("gp2", ids, "VSRAM row of the ids chunk")
    asm.li("gp3", t, "scratch row t")
    asm.li("gp4", u, "scratch row u")
    asm.li("gp7", 0, "HBM offset of the token's one-hot row")
    for start in range(0, n, VL):
        asm.li("gp8", start)
        asm("H_PREFETCH_V gp2, gp8, a0, 0, 1", f"ids {start} ..")
        asm("S_ADD_FP f3, f0, f0", "lane = 0")
        with asm.loop("gp15", min(VL, n - start), "tokens of the chunk"):
            asm.li("gp5", pos)
            _onehot_of(asm, "gp5", "f3", "gp3", "gp3", "gp4")  # the mask of this token's lane
            asm("V_MUL_VV gp3, gp3, gp2", "the ids row, masked to the lane")
            asm("S_ADD_FP f1, f0, f0")
            asm("V_RED_SUM f1, gp3", "f1 = the token's id")
            for c in range(chunks):
                asm.li("gp5", pos + c * VL, f"positions {c * VL} ..")
                asm.li("gp6", row + c * VL)
                _onehot_of(asm, "gp5", "f1", "gp6", "gp3", "gp4")
            for first in range(0, chunks, R):
                asm.li("gp6", row + first * VL)
                asm(f"S_ADDI_INT gp9, gp7, {first * VL}")
                asm(f"H_STORE_V gp6, gp9, a2, 0, {min(R, chunks - first)}", "the one-hot row -> HBM")
            asm(f"S_ADDI_INT gp7, gp7, {vocab}")
            asm("S_ADD_FP f3, f3, f2", "next lane")


def _embedding(task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout) -> str:
    asm = Asm(f"{task.title} {cfg.label}")
    _onehot_stage(asm, hw, layout, cfg["n"], cfg["V"])
    stages.gemm(asm, hw, View.of(layout, ONEHOT), View.of(layout, "table"), View.of(layout, "Y"))
    return asm.text()


TEMPLATES: dict[str, Callable[[Task, TaskConfig, NPUConfig, MemoryLayout], str]] = {"embedding": _embedding}

SCRATCH: dict[str, Callable[[Task, TaskConfig, NPUConfig], list[ScratchSpec]]] = {
    "embedding": lambda task, cfg, hw: [ScratchSpec(ONEHOT, (cfg["n"], cfg["V"]), "onehot(ids), the left operand")],
}
