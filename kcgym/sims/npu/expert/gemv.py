"""Expert GEMV: the matrix streamed through a ring of MSRAM slots, sixteen tiles in flight.

GEMV reads every element of A once and does one multiply-add with it, so it is bound by
HBM bandwidth. The template loads each 64x64 tile into the same MSRAM tile right before its
M_TMV, so every tile pays the full DMA latency and the matrix unit and the DMA unit take
turns. Here the first sixteen tiles are queued at once, one per MSRAM slot, and after each
M_TMV the tile sixteen places ahead is queued into the slot it just freed: the DMA unit
never idles, and the kernel runs at close to the bandwidth bound. Same M_TMV order per
output block as the template, so the same bits.
"""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.npu.compiler.emit import Asm, base_address
from kcgym.sims.npu.config import NPUConfig
from kcgym.tasks.base import Task, TaskConfig


def expert_gemv(task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout) -> str:
    M, N = cfg["M"], cfg["N"]
    V, L, S, T = hw.VLEN, hw.MLEN, hw.msram_tiles, hw.MLEN * hw.MLEN
    if M % L or N % L:
        raise ValueError(f"the expert gemv needs M and N multiples of {L}")
    nt, blocks = N // L, M // L
    tiles = [(rb, c) for rb in range(blocks) for c in range(nt)]  # the template's order
    XR, OUT = 0, nt * V  # x in VSRAM rows 0..nt-1, then one row of y per row block
    if OUT // V + blocks > hw.vsram_rows:
        raise ValueError("VSRAM too small for x and y")
    asm = Asm(f"expert {task.title} {cfg.label}: A streamed through {S} MSRAM slots, {S} tiles in flight")
    for i, name in enumerate(("A", "x", "y")):
        base_address(asm, layout, name, f"a{i}")
    for c in range(0, nt, hw.v_prefetch_rows):
        rows = min(hw.v_prefetch_rows, nt - c)
        asm.li("gp2", c * V)
        asm(f"H_PREFETCH_V gp2, gp2, a1, 0, {rows}", "x chunk (VSRAM row = HBM row)")
    asm.li("gp1", N)
    asm("C_SET_STRIDE_REG gp1", "A rows are N apart")

    def roff(i: int) -> int:
        rb, c = tiles[i]
        return rb * L * N + c * L

    asm.li("gp4", 0, "HBM offset of the next tile to queue")
    queued = 0

    def queue_next(slot_reg: str) -> None:
        nonlocal queued
        if queued >= len(tiles):
            return
        if queued:
            step = roff(queued) - roff(queued - 1)
            if step < (1 << 18):
                asm(f"S_ADDI_INT gp4, gp4, {step}")
            else:
                asm.li("gp5", step)
                asm("S_ADD_INT gp4, gp4, gp5")
        asm(f"H_PREFETCH_M {slot_reg}, gp4, a0, 1", f"tile {queued} (block {tiles[queued][0]}, "
            f"column tile {tiles[queued][1]}) -> slot {queued % S}")
        queued += 1

    for s in range(min(S, len(tiles))):
        asm.li("gp2", s * T)
        queue_next("gp2")
    for i, (rb, c) in enumerate(tiles):
        asm.li("gp2", (i % S) * T, f"slot {i % S}")
        asm.li("gp3", XR + c * V)
        asm("M_TMV gp2, gp3", f"y block {rb} += A tile ({rb}, {c}) @ x chunk {c}")
        queue_next("gp2")  # into the slot this M_TMV reads: the DMA waits only for that read
        if c == nt - 1:
            asm.li("gp6", OUT + rb * V)
            asm("M_MV_WO gp6, 0", f"y block {rb}")
    for b0 in range(0, blocks, hw.v_prefetch_rows):
        rows = min(hw.v_prefetch_rows, blocks - b0)
        asm.li("gp6", OUT + b0 * V)
        asm.li("gp7", b0 * V)
        asm(f"H_STORE_V gp6, gp7, a2, 0, {rows}", "y")
    return asm.text()


EXPERTS = {"gemv": expert_gemv}  # task name -> kernel, found by kcgym.sims.npu.expert
