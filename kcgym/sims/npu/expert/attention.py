"""Expert ScaledDotProduct attention: scores and probabilities never leave VSRAM.

The template is three operators through HBM: Q @ K^T to a scratch matrix, a three-pass
softmax that reloads and rewrites it, then P @ V reloading P a few rows at a time (each
load right before its use). Every configuration's K and V fit the MSRAM together (at most
2 x 2 x 4 tiles), and its scores fit VSRAM, so here Q, K and V are each loaded once, up
front, in order of need; the scores are written out straight into the row layout P @ V
reads as its operand (key chunk c of query i is row c*s + i); the softmax runs in place on
two queries at a time; and P @ V stores each output block while the next one computes. The
arithmetic is the template's, op for op.

Short sequences (s < 64) fill only part of a 64-key tile. Instead of padding K and V in
HBM, the kernel loads both tiles from 64 - s rows *before* the tensor (the rows of the
tensor in front, finite values), puts the keys in the tile's last s rows, fills the
unused score columns with -3e38 (their probabilities come out as exact zeros) and skips
their column blocks.
"""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.npu.compiler.emit import Asm, base_address, load_constant
from kcgym.sims.npu.compiler.stages import NEG_LARGE
from kcgym.sims.npu.config import NPUConfig
from kcgym.sims.npu.expert.blocks import strip_times_block
from kcgym.tasks.base import Task, TaskConfig


def expert_sdpa(task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout) -> str:
    s, h = cfg["s"], cfg["h"]
    V, L, B, T = hw.VLEN, hw.MLEN, hw.BLEN, hw.MLEN * hw.MLEN
    if h % L or s % (2 * B):
        raise ValueError(f"the expert sdpa needs h a multiple of {L} and s of {2 * B}")
    sc, hc = -(-s // L), h // L  # 64-key chunks, 64-wide head chunks
    kpad = sc * L - s  # unused leading keys of chunk 0
    names = [r.name for r in layout.regions if r.space == "HBM"]
    if kpad and (names[:3] != ["Q", "K", "V"] or layout.region("Q").size < kpad * h):
        raise ValueError("short sequences need Q, K, V back to back (the tiles start inside the tensor before)")
    if 2 * sc * hc > hw.msram_tiles:
        raise ValueError(f"K and V need {2 * sc * hc} MSRAM tiles; this NPU has {hw.msram_tiles}")
    QB = 0  # Q, head-chunk-major: row c*s + i
    PB = QB + hc * s * V  # scores / probabilities, key-chunk-major: row c*s + i
    OUT = [PB + sc * s * V, PB + sc * s * V + B * V]
    DUMMY = OUT[1] + B * V
    if hw.vsram_rows < DUMMY // V + B:
        raise ValueError("VSRAM too small for Q and the scores")
    k_tile = {(kc, c): kc * hc + c for kc in range(sc) for c in range(hc)}  # MSRAM slot of K chunk (kc, c)
    v_tile = {(kc, c): sc * hc + kc * hc + c for kc in range(sc) for c in range(hc)}

    asm = Asm(f"expert {task.title} {cfg.label}: scores and probabilities kept on chip")
    for i, name in enumerate(("Q", "K", "V", "O")):
        base_address(asm, layout, name, f"a{i}")
    asm.li("gp1", h)
    asm("C_SET_STRIDE_REG gp1", "rows of Q, K, V and O are h apart")
    asm.comment("Q, then the K tiles, then the V tiles: all queued at once, in order of need")
    for c in range(hc):
        for i0 in range(0, s, hw.v_prefetch_rows):
            asm.li("gp2", i0 * h + c * L)
            asm.li("gp3", QB + (c * s + i0) * V)
            asm(f"H_PREFETCH_V gp3, gp2, a0, 1, {hw.v_prefetch_rows}", f"Q rows {i0}.., head chunk {c}")
    for areg, tiles in (("a1", k_tile), ("a2", v_tile)):
        for (kc, c), t in tiles.items():
            asm.li("gp2", (kc * L - kpad) * h + c * L)
            asm.li("gp3", t * T)
            asm(f"H_PREFETCH_M gp3, gp2, {areg}, 1", f"keys {kc * L - kpad}.., head chunk {c} -> tile {t}")
    load_constant(asm, layout, "scale", "f5")
    if kpad:
        asm(f"S_LI_FP f6, {NEG_LARGE}")
        asm.li("gp5", PB)
        with asm.loop("gp15", s, "unused score columns of key chunk 0 -> -3e38 (written blocks overwrite)"):
            asm("V_ADD_VF gp5, gp5, f6")
            asm(f"S_ADDI_INT gp5, gp5, {V}")

    asm.comment("S = Q @ K^T, written out in P's row layout")
    asm.li("gp5", QB, "Q rows of the query block, head chunk 0")
    asm.li("gp8", PB, "its score rows, key chunk 0")
    with asm.loop("gp14", s // B, "query blocks"):
        for kc in range(sc):
            asm(f"S_ADDI_INT gp9, gp8, {kc * s * V}")
            strip_times_block(asm, hw, "gp5", [c * s * V for c in range(hc)], [k_tile[kc, c] for c in range(hc)],
                              "gp9", DUMMY, transposed=True, first_block=kpad // B if kc == 0 else 0)
        asm(f"S_ADDI_INT gp5, gp5, {B * V}")
        asm(f"S_ADDI_INT gp8, gp8, {B * V}")

    asm.comment("P = softmax(S * scale) in place, two queries at a time (the template's ops)")
    qs = [("gp5", "f1", "f2"), ("gp6", "f3", "f4")]
    asm.li("gp5", PB)
    asm.li("gp6", PB + V)
    chunks = [kc * s * V for kc in range(sc)]
    with asm.loop("gp14", s // 2, "pairs of queries"):
        for q, (row, _, _) in enumerate(qs):  # one register per chunk row: gp7.. query 0, gp9.. query 1
            for kc, off in enumerate(chunks):
                asm(f"S_ADDI_INT gp{7 + 2 * q + kc}, {row}, {off}")
        regs = [[f"gp{7 + 2 * q + kc}" for kc in range(sc)] for q in range(2)]
        for _, fmax, fsum in qs:
            asm(f"S_LI_FP {fmax}, {NEG_LARGE}")
            asm(f"S_ADD_FP {fsum}, f0, f0")
        for kc in range(sc):
            for q in range(2):
                asm(f"V_MUL_VF {regs[q][kc]}, {regs[q][kc]}, f5", "* scale")
        for kc in range(sc):
            for q, (_, fmax, _) in enumerate(qs):
                asm(f"V_RED_MAX {fmax}, {regs[q][kc]}")
        for kc in range(sc):
            for q, (_, fmax, _) in enumerate(qs):
                asm(f"V_SUB_VF {regs[q][kc]}, {regs[q][kc]}, {fmax}", "x - max")
            for q in range(2):
                asm(f"V_EXP_V {regs[q][kc]}, {regs[q][kc]}")
            for q, (_, _, fsum) in enumerate(qs):
                asm(f"V_RED_SUM {fsum}, {regs[q][kc]}", "row sum (fp32)")
        for _, _, fsum in qs:
            asm(f"S_RECI_FP {fsum}, {fsum}")
        for kc in range(sc):
            for q, (_, _, fsum) in enumerate(qs):
                asm(f"V_MUL_VF {regs[q][kc]}, {regs[q][kc]}, {fsum}")
        asm(f"S_ADDI_INT gp5, gp5, {2 * V}")
        asm(f"S_ADDI_INT gp6, gp6, {2 * V}")

    asm.comment("O = P @ V, output blocks double-buffered")

    def o_block(buf: int) -> None:
        for c in range(hc):
            strip_times_block(asm, hw, "gp5", chunks, [v_tile[kc, c] for kc in range(sc)], OUT[buf], DUMMY)
            asm(f"S_ADDI_INT gp2, gp9, {c * L}")
            asm.li("gp3", OUT[buf])
            asm(f"H_STORE_V gp3, gp2, a3, 1, {B}", f"O rows of the block, head chunk {c}")
            buf = 1 - buf
        asm(f"S_ADDI_INT gp5, gp5, {B * V}")
        asm.li("gp1", B * h)
        asm("S_ADD_INT gp9, gp9, gp1")

    asm.li("gp5", PB, "P rows of the query block, key chunk 0")
    asm.li("gp9", 0, "HBM offset of its O rows")
    if hc % 2:
        with asm.loop("gp14", s // (2 * B), "pairs of query blocks (buffers alternate)"):
            o_block(0)
            o_block(1)
    else:
        with asm.loop("gp14", s // B, "query blocks"):
            o_block(0)
    return asm.text()


# FlashAttention: the same function and shapes; at s <= 128 every score fits VSRAM, so no online
# softmax is needed to keep the scores out of HBM
EXPERTS = dict.fromkeys(("sdpa", "flash_attention"), expert_sdpa)  # task name -> kernel, found by kcgym.sims.npu.expert
