"""Expert GEMM / Linear: prefetch-ahead with double-buffered X blocks, W strips and outputs.

Same arithmetic as the template compiler (16 column blocks per strip, K/64 M_MMs per
block), but every DMA is issued one block (or one strip) ahead of its consumer into the
other half of a double buffer, so HBM latency hides behind matrix work and the kernel
runs close to the matrix unit's bound.
"""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.npu.compiler.emit import Asm
from kcgym.sims.npu.config import NPUConfig
from kcgym.tasks.base import Task, TaskConfig


def expert_matmul(task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout) -> str:
    linear = task.name == "linear"
    M, K, N = (cfg["n"], cfg["hin"], cfg["hout"]) if linear else (cfg["M"], cfg["K"], cfg["N"])
    B, L = hw.BLEN, hw.MLEN
    kt, strips, blocks = K // L, N // L, M // B
    if 2 * kt > hw.msram_tiles:
        raise ValueError("the expert matmul double-buffers W strips and needs 2*K/MLEN MSRAM tiles")
    xbuf = [0, kt * B * L]  # VSRAM: two X blocks ...
    obuf = [2 * kt * B * L, 2 * kt * B * L + B * L]  # ... two output blocks ...
    bbuf = [obuf[1] + B * L, obuf[1] + 2 * B * L]  # ... and two broadcast bias chunks
    mset = [0, kt * L * L]  # MSRAM: two sets of K/64 tiles (one W strip each)
    asm = Asm(f"expert {task.title} {cfg.label}: double-buffered, prefetch one block ahead")
    asm.li("gp1", layout.region("X").offset)
    asm("C_SET_ADDR_REG a0, gp1, gp0", "a0 = &X")
    asm.li("gp1", layout.region("W").offset)
    asm("C_SET_ADDR_REG a1, gp1, gp0", "a1 = &W")
    asm.li("gp1", layout.region("Y").offset)
    asm("C_SET_ADDR_REG a2, gp1, gp0", "a2 = &Y")
    if linear:
        asm.li("gp1", layout.region("b").offset)
        asm("C_SET_ADDR_REG a3, gp1, gp0", "a3 = &b")

    def load_strip(s: int) -> None:
        asm.li("gp1", N)
        asm("C_SET_STRIDE_REG gp1", "W rows are N apart")
        for k in range(kt):
            asm.li("gp2", k * L * N + s * L)
            asm.li("gp3", mset[s % 2] + k * L * L)
            asm("H_PREFETCH_M gp3, gp2, a1, 1", f"W strip {s}, k-tile {k} -> MSRAM set {s % 2}")
        if linear:
            asm("C_SET_STRIDE_REG gp0", "stride 0 broadcasts the bias chunk to BLEN rows")
            asm.li("gp2", s * L)
            asm.li("gp3", bbuf[s % 2])
            asm(f"H_PREFETCH_V gp3, gp2, a3, 1, {B}", f"bias chunk of strip {s}")

    def load_x(m: int, buf: int) -> None:
        asm.li("gp1", K)
        asm("C_SET_STRIDE_REG gp1", "X rows are K apart")
        for k in range(kt):
            asm.li("gp2", m * B * K + k * L)
            asm.li("gp3", xbuf[buf] + k * B * L)
            asm(f"H_PREFETCH_V gp3, gp2, a0, 1, {B}", f"X block {m}, k-tile {k} -> buffer {buf}")

    order = [(s, m) for s in range(strips) for m in range(blocks)]
    load_x(0, 0)
    load_strip(0)
    for i, (s, m) in enumerate(order):
        buf = i % 2
        asm.comment(f"---- strip {s}, row block {m} (X buffer {buf}, output buffer {buf})")
        if i + 1 < len(order):
            load_x(order[i + 1][1], 1 - buf)  # next block's X, into the other buffer
        if m == 0 and s + 1 < strips:
            load_strip(s + 1)  # next strip's W tiles, into the other MSRAM set
        for k in range(kt):
            asm.li(f"gp{5 + k}", xbuf[buf] + k * B * L, f"X k-tile {k}")
        asm.li("gp4", mset[s % 2], "MSRAM column pointer (k-tile 0)")
        asm.li("gp11", obuf[buf] - B, "output block pointer, pre-decremented")
        with asm.loop("gp12", L // B, "column blocks of the strip"):
            asm("M_MM gp4, gp5", "k-tile 0")
            for k in range(1, kt):
                asm(f"S_ADDI_INT gp2, gp4, {k * L * L}", "scalar work hides under the matrix op")
                asm(f"M_MM gp2, gp{5 + k}", f"k-tile {k}")
            asm(f"S_ADDI_INT gp4, gp4, {B}", "advance pointers before the write-out")
            asm(f"S_ADDI_INT gp11, gp11, {B}")
            asm("M_MM_WO gp11, 0")
        if linear:
            for r in range(B):
                asm.li("gp2", obuf[buf] + r * L)
                asm.li("gp3", bbuf[s % 2] + r * L)
                asm("V_ADD_VV gp2, gp2, gp3", "+ bias")
        asm.li("gp1", N)
        asm("C_SET_STRIDE_REG gp1", "Y rows are N apart")
        asm.li("gp2", m * B * N + s * L)
        asm.li("gp3", obuf[buf])
        asm(f"H_STORE_V gp3, gp2, a2, 1, {B}", "store while the next block computes")
    return asm.text()


EXPERTS = dict.fromkeys(("matmul", "linear"), expert_matmul)  # task name -> kernel, found by kcgym.sims.npu.expert
