"""Expert DepthwiseConv: input-stationary sweeps that spend the issue slot on vector work.

Depthwise convolution is pure vector work (two ops per tap and pixel), so the single issue
slot is the bottleneck and every address update costs a cycle. The template computes one
output pixel at a time and sets two addresses per tap. Here a padded input pixel is the
unit of work: for filter row kh, the sweep along a padded image row visits input pixel u
once and applies it to the k outputs u - kw it feeds (kw = 0..k-1). The k filter rows of
kh sit in k registers, the k live output rows in a ring of k registers that rotates with
u, so each step costs one address update for the input, one for the newest output, and
2k vector ops. Each output still receives its taps in row-major (kh, kw) order — the
order the task's rounding fixes — so the bits are the template's. Channel chunks run in a
hardware loop (their offsets kept in INT SRAM, every register being taken), which keeps the
program small; a second image buffer would hide each chunk's ~600-cycle load (about 3%) but
doubles the program.
"""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.npu.compiler.emit import Asm, base_address
from kcgym.sims.npu.compiler.spatial import check_conv_shape
from kcgym.sims.npu.config import NPUConfig
from kcgym.tasks.base import Task, TaskConfig


def expert_depthwise(task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout) -> str:
    check_conv_shape(task, cfg, hw, ("c",))
    V, B = hw.VLEN, hw.BLEN
    H, C, k = cfg["H"], cfg["c"], cfg["k"]
    if k > 5:
        raise ValueError(f"the expert depthwise_conv keeps k filter rows and k outputs in registers: k <= 5, got {k}")
    p, cc = k // 2, C // V
    Wp = H + 2 * p
    IMG = 0  # the padded channel chunk (borders stay zero)
    WT = Wp * Wp * V  # its k*k filter rows
    ACC = WT + k * k * V  # one output row (H rows), then the product row
    TMP = ACC + H * V
    if hw.vsram_rows < TMP // V + 1:
        raise ValueError("VSRAM too small for a padded channel chunk")
    wreg = [f"gp{3 + j}" for j in range(k)]  # filter rows (kh, 0..k-1)
    ring = [f"gp{8 + j}" for j in range(k)]  # output w lives in ring[w % k] while it is being fed
    CHUNK, YROW = 0, 1  # INT SRAM: HBM offset of the chunk's channels, HBM offset of Y row h

    asm = Asm(f"expert {task.title} {cfg.label}: input-stationary sweeps, filter and output rows in registers")
    for i, name in enumerate(("X", "W", "Y")):
        base_address(asm, layout, name, f"a{i}")
    asm.li("gp1", C)
    asm("C_SET_STRIDE_REG gp1", "pixels and filter taps are c elements apart: every DMA strides by c")
    asm.li("gp2", TMP, "product row")
    asm(f"S_ST_INT gp0, gp0, {CHUNK}", "chunk 0")
    with asm.loop("gp14", cc, "64-channel chunks"):
        asm(f"S_LD_INT gp3, gp0, {CHUNK}", "HBM offset of image row 0, this chunk")
        asm(f"S_ST_INT gp3, gp0, {YROW}", "Y row 0 of the chunk")
        asm.li("gp4", IMG + (p * Wp + p) * V)
        with asm.loop("gp15", H, "image rows of the chunk"):
            for wb in range(H // B):
                asm(f"S_ADDI_INT gp5, gp3, {wb * B * C}")
                asm(f"S_ADDI_INT gp6, gp4, {wb * B * V}")
                asm(f"H_PREFETCH_V gp6, gp5, a0, 1, {B}")
            asm.li("gp7", H * C)
            asm("S_ADD_INT gp3, gp3, gp7")
            asm(f"S_ADDI_INT gp4, gp4, {Wp * V}")
        asm(f"S_LD_INT gp3, gp0, {CHUNK}")
        for t0 in range(0, k * k, hw.v_prefetch_rows):
            rows = min(hw.v_prefetch_rows, k * k - t0)
            asm(f"S_ADDI_INT gp5, gp3, {t0 * C}")
            asm.li("gp6", WT + t0 * V)
            asm(f"H_PREFETCH_V gp6, gp5, a1, 1, {rows}", f"filter taps {t0}..")
        asm.li("gp13", IMG, "padded row h")
        with asm.loop("gp15", H, "output rows"):
            for kh in range(k):
                for j in range(k):
                    asm.li(wreg[j], WT + (kh * k + j) * V, f"filter row ({kh}, {j})")
                asm.li(ring[k - 1], ACC - V, "output -1 (never touched): the ring's seed")
                x_at = None  # the input pixel gp1 points at (the pointer moves only when it is used)
                for u in range(Wp):
                    if u < H:
                        asm(f"S_ADDI_INT {ring[u % k]}, {ring[(u - 1) % k]}, {V}", f"output {u} enters the ring")
                    ops = [kw for kw in range(k) if 0 <= u - kw < H and (p <= u < H + p or (kh, kw) == (0, 0))]
                    if not ops:
                        continue  # no output, or a zero padding column (it would add exact zeros)
                    if x_at is None:
                        asm(f"S_ADDI_INT gp1, gp13, {(kh * Wp + u) * V}", f"input pixel {u} of padded row h + {kh}")
                    else:
                        asm(f"S_ADDI_INT gp1, gp1, {(u - x_at) * V}")
                    x_at = u
                    for kw in ops:
                        w = u - kw
                        if (kh, kw) == (0, 0):
                            asm(f"V_MUL_VV {ring[w % k]}, gp1, {wreg[kw]}", f"out {w} = x * w(0, 0)")
                        else:
                            asm(f"V_MUL_VV gp2, gp1, {wreg[kw]}", f"x * w({kh}, {kw})")
                            asm(f"V_ADD_VV {ring[w % k]}, {ring[w % k]}, gp2", f"out {w} += it")
            asm(f"S_LD_INT gp3, gp0, {YROW}")
            for wb in range(H // B):
                asm(f"S_ADDI_INT gp4, gp3, {wb * B * C}")
                asm.li("gp5", ACC + wb * B * V)
                asm(f"H_STORE_V gp5, gp4, a2, 1, {B}", f"pixels {wb * B}.. of the row")
            asm.li("gp4", H * C)
            asm("S_ADD_INT gp3, gp3, gp4")
            asm(f"S_ST_INT gp3, gp0, {YROW}")
            asm(f"S_ADDI_INT gp13, gp13, {Wp * V}")
        asm(f"S_LD_INT gp3, gp0, {CHUNK}")
        asm(f"S_ADDI_INT gp3, gp3, {V}")
        asm(f"S_ST_INT gp3, gp0, {CHUNK}", "next chunk")
    return asm.text()


EXPERTS = {"depthwise_conv": expert_depthwise}  # task name -> kernel, found by kcgym.sims.npu.expert
