"""Expert RoPE: four-token blocks streamed through a ring of four VSRAM slots, rotate and combine on chip.

The template runs two operators through HBM: rotate_half(X) = X @ P into a scratch matrix,
then a combine pass that reloads X, cos, sin and the rotated rows a chunk at a time, each
load right before its use. Here P stays in MSRAM, and each block of four tokens (its X, cos
and sin rows) is prefetched three blocks ahead into a ring of four VSRAM slots; the block's
rotation is written out next to its rows, combined with them in place (the template's
three vector ops), and stored while the next block computes. The loop runs over four
blocks at a time (one per slot); its last iterations prefetch up to three blocks past the
end, which lands inside the tensors that follow and is never used. The arithmetic is the
template's, op for op.
"""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.npu.compiler.emit import Asm, base_address
from kcgym.sims.npu.config import NPUConfig
from kcgym.sims.npu.expert.blocks import strip_times_block
from kcgym.tasks.base import Task, TaskConfig

RING = 4  # VSRAM slots, one token block each; prefetch distance RING - 1


def expert_rope(task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout) -> str:
    s, d = cfg["s"], cfg["d"]
    V, L, B, T = hw.VLEN, hw.MLEN, hw.BLEN, hw.MLEN * hw.MLEN
    if d % L or s % (B * RING) or hw.v_prefetch_rows < B:
        raise ValueError(f"the expert rope needs d a multiple of {L} and s of {B * RING}")
    dc = d // L
    if dc * dc > hw.msram_tiles:
        raise ValueError(f"P needs {dc * dc} MSRAM tiles; this NPU has {hw.msram_tiles}")
    names = [r.name for r in layout.regions if r.space == "HBM"]
    if names[:5] != ["X", "cos", "sin", "P", "Y"] or layout.region("P").size < (RING - 1) * B * d:
        raise ValueError("the prefetch overshoot needs X, cos, sin, P, Y back to back")
    rows = dc * B  # VSRAM rows per tensor and block: chunk c of token i is row c*B + i
    XO, CO, SO, RO = 0, rows * V, 2 * rows * V, 3 * rows * V  # X, cos, sin, rotated X within a slot
    SLOT = 4 * rows * V
    DUMMY = RING * SLOT
    if hw.vsram_rows < DUMMY // V + B:
        raise ValueError("VSRAM too small for the ring of token blocks")

    asm = Asm(f"expert {task.title} {cfg.label}: token blocks streamed through a ring, rotation on chip")
    for i, name in enumerate(("X", "cos", "sin", "P", "Y")):
        base_address(asm, layout, name, f"a{i}")
    asm.li("gp1", d)
    asm("C_SET_STRIDE_REG gp1", "rows of X, cos, sin, P and Y are d apart")
    for kc in range(dc):
        for jc in range(dc):
            asm.li("gp2", kc * L * d + jc * L)
            asm.li("gp3", (kc * dc + jc) * T)
            asm("H_PREFETCH_M gp3, gp2, a3, 1", f"P rows {kc * L}.., columns {jc * L}.. -> tile {kc * dc + jc}")

    def prefetch_block(slot: int) -> None:
        """The token block at HBM offset gp12 (X, cos, sin) into ``slot``."""
        for off, areg in ((XO, "a0"), (CO, "a1"), (SO, "a2")):
            for c in range(dc):
                asm(f"S_ADDI_INT gp2, gp12, {c * L}")
                asm.li("gp3", slot * SLOT + off + c * B * V)
                asm(f"H_PREFETCH_V gp3, gp2, {areg}, 1, {B}")
        asm.li("gp1", B * d)
        asm("S_ADD_INT gp12, gp12, gp1")

    asm.li("gp12", 0, "HBM offset of the next token block to prefetch")
    for slot in range(RING - 1):
        prefetch_block(slot)
    asm.li("gp13", 0, "HBM offset of the token block being computed")
    with asm.loop("gp14", s // (B * RING), f"{RING} token blocks, one per slot"):
        for slot in range(RING):
            base = slot * SLOT
            asm.comment(f"slot {slot}: prefetch three blocks ahead, rotate, combine, store")
            prefetch_block((slot + RING - 1) % RING)
            asm.li("gp5", base + XO, "X rows of the block, chunk 0")
            for jc in range(dc):
                strip_times_block(asm, hw, "gp5", [c * B * V for c in range(dc)], [c * dc + jc for c in range(dc)],
                                  base + RO + jc * B * V, DUMMY)
            for r in range(rows):
                asm.li("gp8", base + XO + r * V)
                asm.li("gp9", base + CO + r * V)
                asm.li("gp10", base + SO + r * V)
                asm.li("gp11", base + RO + r * V)
                asm("V_MUL_VV gp9, gp8, gp9", "x * cos")
                asm("V_MUL_VV gp10, gp11, gp10", "rot * sin")
                asm("V_ADD_VV gp8, gp9, gp10")
            for c in range(dc):
                asm(f"S_ADDI_INT gp2, gp13, {c * L}")
                asm.li("gp3", base + XO + c * B * V)
                asm(f"H_STORE_V gp3, gp2, a4, 1, {B}", f"Y rows of the block, chunk {c}")
            asm.li("gp1", B * d)
            asm("S_ADD_INT gp13, gp13, gp1")
    return asm.text()


EXPERTS = {"rope": expert_rope}  # task name -> kernel, found by kcgym.sims.npu.expert
