"""Expert Conv2D / ConvBlock: the template's implicit GEMM, with the memory traffic taken off the critical path.

Same arithmetic as the template (the padded image chunk-major in VSRAM, one M_MM per tap
and channel chunk, one write-out per 4x4 output block), but:

- the DMA queue is ordered by need: the image rows of the first output row, then the
  first strip's weight tiles, then the rest of the image;
- weight tiles go round a ring of MSRAM slots, and the next strip's tiles are queued while
  the current strip computes (those whose slot the current strip still reads are queued
  right after its last M_MM), so a strip boundary waits for two tiles, not nine;
- output rows alternate between two VSRAM buffers, so a store drains during the next row;
- the column-block loop is software-pipelined (``blocks.strip_times_block``);
- ConvBlock fuses BatchNorm and ReLU into the output row while it is on chip (three
  vector ops per row), where the template runs two more passes through HBM.
"""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.npu.compiler.emit import Asm, base_address
from kcgym.sims.npu.compiler.spatial import check_conv_shape
from kcgym.sims.npu.config import NPUConfig
from kcgym.sims.npu.expert.blocks import strip_times_block
from kcgym.tasks.base import Task, TaskConfig


def expert_conv(task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout) -> str:
    check_conv_shape(task, cfg, hw, ("cin", "cout"))
    fused = task.name == "conv_block"
    V, L, B, T, S = hw.VLEN, hw.MLEN, hw.BLEN, hw.MLEN * hw.MLEN, hw.msram_tiles
    H, cin, cout, k = cfg["H"], cfg["cin"], cfg["cout"], cfg["k"]
    p, cc, strips, nb = k // 2, cin // V, cout // L, H // B
    Wp, kt = H + 2 * p, k * k * cin // L
    if kt > S:
        raise ValueError(f"the weights of one output strip need {kt} MSRAM tiles; this NPU has {S}")
    IMG = 0
    OUT = [cc * Wp * Wp * V, cc * Wp * Wp * V + H * V]  # two output-row buffers
    SC = OUT[1] + H * V  # BatchNorm scale rows (one per strip), then shift rows
    SH = SC + strips * V
    DUMMY = SH + strips * V  # BLEN rows that absorb the software pipeline's first (empty) write-out
    if hw.vsram_rows < DUMMY // V + B:
        raise ValueError("VSRAM too small for the padded image and two output rows")
    taps = [(kh, kw, c) for kh in range(k) for kw in range(k) for c in range(cc)]  # = W's row order

    def slot(s: int, t: int) -> int:
        return (s * kt + t) % S

    asm = Asm(f"expert {task.title} {cfg.label}: need-ordered DMAs, ring of weight tiles, fused epilogue")
    names = ("X", "W", "Y", "scale", "shift") if fused else ("X", "W", "Y")
    for i, name in enumerate(names):
        base_address(asm, layout, name, f"a{i}")

    def load_image_rows(first: int, count: int) -> None:
        """Image rows first..first+count-1, one hardware-loop iteration per row (uses gp2, gp3, gp12)."""
        asm.li("gp1", cin)
        asm("C_SET_STRIDE_REG gp1", "pixels are cin apart")
        asm.li("gp2", first * H * cin, f"HBM offset of image row {first}")
        asm.li("gp3", IMG + ((first + p) * Wp + p) * V, "its padded row in VSRAM")
        with asm.loop("gp12", count, "image rows"):
            for c in range(cc):
                for wb in range(nb):
                    asm(f"S_ADDI_INT gp4, gp2, {wb * B * cin + c * V}")
                    asm(f"S_ADDI_INT gp5, gp3, {(c * Wp * Wp + wb * B) * V}")
                    asm(f"H_PREFETCH_V gp5, gp4, a0, 1, {B}", f"pixels {wb * B}.., chunk {c}")
            asm.li("gp1", H * cin)
            asm("S_ADD_INT gp2, gp2, gp1")
            asm(f"S_ADDI_INT gp3, gp3, {Wp * V}")

    def load_tiles(s: int, ts: list[int]) -> None:
        asm.li("gp1", cout)
        asm("C_SET_STRIDE_REG gp1", "W rows are cout apart")
        for t in ts:
            asm.li("gp2", t * L * cout + s * L)
            asm.li("gp3", slot(s, t) * T)
            asm("H_PREFETCH_M gp3, gp2, a1, 1", f"strip {s}, k-tile {t} -> MSRAM slot {slot(s, t)}")

    def emit_row(s: int, buf: int) -> None:
        """Output row (gp9: its padded image row, gp10: its HBM offset) of strip s into OUT[buf], then store."""
        offsets = [(c * Wp * Wp + kh * Wp + kw) * V for kh, kw, c in taps]
        labels = [f"tap ({kh}, {kw}), chunk {c}" for kh, kw, c in taps]
        for wb in range(nb):
            asm(f"S_ADDI_INT gp5, gp9, {wb * B * V}", "padded pixel (h, 4wb): tap (0, 0)")
            strip_times_block(asm, hw, "gp5", offsets, [slot(s, t) for t in range(kt)], OUT[buf] + wb * B * V,
                              DUMMY, labels)
        if fused:
            asm.li("gp6", OUT[buf])
            with asm.loop("gp13", H, "BatchNorm and ReLU on the row while it is on chip"):
                asm("V_MUL_VV gp6, gp6, gp8", "* scale")
                asm("V_ADD_VV gp6, gp6, gp11", "+ shift")
                asm("V_MAX_VF gp6, gp6, f0", "relu")
                asm(f"S_ADDI_INT gp6, gp6, {V}")
        for wb in range(nb):
            asm(f"S_ADDI_INT gp2, gp10, {wb * B * cout}")
            asm.li("gp3", OUT[buf] + wb * B * V)
            asm(f"H_STORE_V gp3, gp2, a2, 1, {B}", "drains while the next row computes")
        asm(f"S_ADDI_INT gp9, gp9, {Wp * V}")
        asm(f"S_ADDI_INT gp10, gp10, {H * cout}")

    asm.comment("DMAs in order of need: the first output row's image rows, strip 0's tiles, the rest")
    first = min(p + 1, H)
    load_image_rows(0, first)
    load_tiles(0, list(range(kt)))
    if fused:
        for r0 in range(0, strips, hw.v_prefetch_rows):
            n = min(hw.v_prefetch_rows, strips - r0)
            asm.li("gp2", r0 * V)
            asm.li("gp3", SC + r0 * V)
            asm(f"H_PREFETCH_V gp3, gp2, a3, 0, {n}", "BatchNorm scale, one row per strip")
            asm.li("gp3", SH + r0 * V)
            asm(f"H_PREFETCH_V gp3, gp2, a4, 0, {n}", "BatchNorm shift")
    if first < H:
        load_image_rows(first, H - first)
    asm.li("gp1", cout)
    asm("C_SET_STRIDE_REG gp1", "from here on every DMA strides by cout")

    if fused:
        asm.li("gp8", SC, "this strip's BatchNorm scale row")
        asm.li("gp11", SH, "and its shift row")
    for s in range(strips):
        late: list[int] = []
        if s + 1 < strips:
            busy = {slot(s, t) for t in range(kt)}
            early = [t for t in range(kt) if slot(s + 1, t) not in busy]
            late = [t for t in range(kt) if slot(s + 1, t) in busy]
            asm.comment(f"strip {s + 1}'s tiles in free slots, queued while strip {s} computes")
            load_tiles(s + 1, early)
        asm.li("gp9", IMG, "padded row h, pixel 0")
        asm.li("gp10", s * L, "HBM offset of Y row h, this strip")
        with asm.loop("gp14", H // 2, f"strip {s}: pairs of output rows, one per output buffer"):
            for buf in (0, 1):
                emit_row(s, buf)
        if late:
            asm.comment(f"strip {s} has read its last tile: the rest of strip {s + 1}'s tiles")
            load_tiles(s + 1, late)
        if fused:
            asm(f"S_ADDI_INT gp8, gp8, {V}")
            asm(f"S_ADDI_INT gp11, gp11, {V}")
    return asm.text()


EXPERTS = dict.fromkeys(("conv2d", "conv_block"), expert_conv)  # task name -> kernel, found by kcgym.sims.npu.expert
