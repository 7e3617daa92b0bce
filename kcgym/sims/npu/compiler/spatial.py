"""Templates of the spatial tasks: Conv2D and ConvBlock as implicit GEMM, DepthwiseConv on the vector unit.

Convolution (channels last, same padding, stride 1): the image is laid out once in VSRAM
with its zero border, channel chunk by channel chunk (row ``c*Hp*Wp + hp*Wp + wp`` holds
channels ``64c..64c+63`` of padded pixel ``(hp, wp)``), so the BLEN pixels ``w..w+3`` of a
padded image row are BLEN adjacent VSRAM rows — exactly an M_MM operand. Output block
(4 pixels, 4 output channels) is the sum over taps ``(kh, kw)`` and channel chunks of one
M_MM each, the tap shifting the operand by ``kh*Wp + kw`` rows: im2col without copying. The
weights (k, k, cin, cout) are already the (k*k*cin, cout) GEMM matrix; a 64-channel output
strip is its k*k*cin/64 tiles.

ConvBlock is three per-operator templates composed through HBM (the convolution stores Y,
the BatchNorm pass reloads and rewrites it, then the ReLU pass does the same), with no
fusion and no prefetch-ahead, as the paper's PLENA compiler composes operators.
"""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.npu.compiler.emit import Asm, base_address, prefetch_weight_tiles
from kcgym.sims.npu.config import NPUConfig
from kcgym.tasks.base import Task, TaskConfig


def _require(ok: bool, message: str) -> None:
    if not ok:
        raise ValueError(message)


def check_conv_shape(task: Task, cfg: TaskConfig, hw: NPUConfig, channels: tuple[str, ...]) -> None:
    """The implicit-GEMM layout needs whole-row channel chunks and BLEN-aligned image rows."""
    for name in channels:
        _require(cfg[name] % hw.VLEN == 0, f"the NPU {task.name} template needs {name} to be a multiple of VLEN "
                 f"({hw.VLEN}), got {cfg[name]}")
    _require(cfg["H"] % hw.BLEN == 0, f"the NPU {task.name} template needs the image width to be a multiple "
             f"of BLEN ({hw.BLEN}), got {cfg['H']}")
    _require(cfg["k"] % 2 == 1, f"'same' padding needs an odd kernel size, got k={cfg['k']}")


def load_padded_image(asm: Asm, hw: NPUConfig, H: int, C: int, p: int, base: int, areg: str) -> None:
    """DMA the (H, H, C) channels-last image at ``areg`` into VSRAM at ``base``, chunk-major with a zero border.

    Padded pixel (hp, wp) of chunk c is VSRAM row base/VLEN + c*Hp*Hp + hp*Hp + wp; the border
    rows are never written, so they keep VSRAM's initial zeros. One DMA moves BLEN pixels of
    one chunk (STRIDE = C steps from pixel to pixel). Uses gp1..gp5 and loop counter gp15.
    """
    V, B = hw.VLEN, hw.BLEN
    Wp = H + 2 * p
    asm.li("gp1", C)
    asm("C_SET_STRIDE_REG gp1", "pixels are C elements apart")
    asm.li("gp2", 0, "HBM offset of image row h")
    asm.li("gp3", base + (p * Wp + p) * V, "VSRAM address of padded pixel (h + p, p)")
    with asm.loop("gp15", H, "image rows"):
        for c in range(C // V):
            for wb in range(H // B):
                asm(f"S_ADDI_INT gp4, gp2, {wb * B * C + c * V}")
                asm(f"S_ADDI_INT gp5, gp3, {(c * Wp * Wp + wb * B) * V}")
                asm(f"H_PREFETCH_V gp5, gp4, {areg}, 1, {B}", f"pixels {wb * B}..{wb * B + B - 1}, chunk {c}")
        asm.li("gp1", H * C)
        asm("S_ADD_INT gp2, gp2, gp1")
        asm(f"S_ADDI_INT gp3, gp3, {Wp * V}")


def _conv(asm: Asm, cfg: TaskConfig, hw: NPUConfig) -> None:
    """Y = conv2d(X, W) with a0 = &X, a1 = &W, a2 = &Y: strips of 64 output channels, one image row at a time."""
    V, L, B, T = hw.VLEN, hw.MLEN, hw.BLEN, hw.MLEN * hw.MLEN
    H, cin, cout, k = cfg["H"], cfg["cin"], cfg["cout"], cfg["k"]
    p, cc = k // 2, cin // V
    Wp, kt = H + 2 * p, k * k * cin // L
    _require(kt <= hw.msram_tiles, f"the weights of one output strip need {kt} MSRAM tiles; this NPU has "
             f"{hw.msram_tiles}")
    IMG = 0
    OUT = cc * Wp * Wp * V  # one output image row: H rows of 64 output channels
    _require(hw.vsram_rows >= OUT // V + H, "VSRAM too small for the padded image and an output row")
    taps = [(kh, kw, c) for kh in range(k) for kw in range(k) for c in range(cc)]  # = W's row order
    asm.comment("the padded image, once, chunk-major")
    load_padded_image(asm, hw, H, cin, p, IMG, "a0")
    asm.li("gp8", 0, "column offset of the output strip")
    with asm.loop("gp14", cout // L, "64-channel output strips"):
        prefetch_weight_tiles(asm, L, cout, kt, "W and Y rows are cout apart",
                              lambda t: f"W rows {t * L}.. of the strip -> MSRAM tile {t}")
        asm.li("gp9", IMG, "VSRAM address of padded row h, pixel 0")
        asm.li("gp10", 0, "HBM offset of Y row h")
        with asm.loop("gp13", H, "output image rows"):
            asm("S_ADD_INT gp5, gp9, gp0", "pixel block base")
            asm.li("gp11", OUT, "output block address")
            with asm.loop("gp12", H // B, f"blocks of {B} pixels"):
                asm.li("gp4", 0, "column block offset inside the tiles")
                asm("S_ADD_INT gp7, gp11, gp0")
                with asm.loop("gp15", L // B, f"{B}-channel column blocks"):
                    for t, (kh, kw, c) in enumerate(taps):
                        asm(f"S_ADDI_INT gp2, gp4, {t * T}")
                        asm(f"S_ADDI_INT gp3, gp5, {(c * Wp * Wp + kh * Wp + kw) * V}")
                        asm("M_MM gp2, gp3", f"tap ({kh}, {kw}), chunk {c}")
                    asm("M_MM_WO gp7, 0")
                    asm(f"S_ADDI_INT gp4, gp4, {B}")
                    asm(f"S_ADDI_INT gp7, gp7, {B}")
                asm(f"S_ADDI_INT gp5, gp5, {B * V}")
                asm(f"S_ADDI_INT gp11, gp11, {B * V}")
            asm("S_ADD_INT gp2, gp10, gp8")
            for wb in range(H // B):
                asm(f"S_ADDI_INT gp3, gp2, {wb * B * cout}")
                asm.li("gp6", OUT + wb * B * V)
                asm(f"H_STORE_V gp6, gp3, a2, 1, {B}", f"pixels {wb * B}.. of the row")
            asm(f"S_ADDI_INT gp9, gp9, {Wp * V}")
            asm.li("gp1", H * cout)
            asm("S_ADD_INT gp10, gp10, gp1")
        asm(f"S_ADDI_INT gp8, gp8, {L}")


def _conv2d(task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout) -> str:
    check_conv_shape(task, cfg, hw, ("cin", "cout"))
    asm = Asm(f"{task.title} {cfg.label}")
    for name, areg in (("X", "a0"), ("W", "a1"), ("Y", "a2")):
        base_address(asm, layout, name, areg)
    _conv(asm, cfg, hw)
    return asm.text()


def _batchnorm_pass(asm: Asm, cfg: TaskConfig, hw: NPUConfig) -> None:
    """Y = Y * scale + shift per channel (a2 = &Y, a3 = &scale, a4 = &shift): reload, compute, store."""
    V, B = hw.VLEN, hw.BLEN
    H, cout = cfg["H"], cfg["cout"]
    X0, SC, SH = 0, B * V, (B + 1) * V
    asm.li("gp1", cout)
    asm("C_SET_STRIDE_REG gp1", "Y rows (pixels) are cout apart")
    asm.li("gp8", 0, "channel chunk offset")
    with asm.loop("gp14", cout // V, "64-channel chunks"):
        asm.li("gp3", SC)
        asm("H_PREFETCH_V gp3, gp8, a3, 0, 1", "scale chunk")
        asm.li("gp3", SH)
        asm("H_PREFETCH_V gp3, gp8, a4, 0, 1", "shift chunk")
        asm("S_ADD_INT gp2, gp8, gp0", "HBM offset of pixel block, this chunk")
        with asm.loop("gp13", H * H // B, f"blocks of {B} pixels"):
            asm(f"H_PREFETCH_V gp0, gp2, a2, 1, {B}", "conv output (consumed right away)")
            for r in range(B):
                asm.li("gp4", X0 + r * V)
                asm.li("gp5", SC)
                asm("V_MUL_VV gp4, gp4, gp5", "* scale")
                asm.li("gp5", SH)
                asm("V_ADD_VV gp4, gp4, gp5", "+ shift")
            asm(f"H_STORE_V gp0, gp2, a2, 1, {B}")
            asm.li("gp1", B * cout)
            asm("S_ADD_INT gp2, gp2, gp1")
        asm(f"S_ADDI_INT gp8, gp8, {V}")


def _relu_pass(asm: Asm, size: int, hw: NPUConfig) -> None:
    """Y = max(Y, 0) in place over the flat output (a2 = &Y), chunk by chunk."""
    V, R = hw.VLEN, hw.v_prefetch_rows
    asm.li("gp2", 0)
    asm.li("gp3", R * V)
    with asm.loop("gp15", size // (R * V), f"chunks of {R} rows"):
        asm(f"H_PREFETCH_V gp0, gp2, a2, 0, {R}", "normalised output (consumed right away)")
        for r in range(R):
            asm.li("gp4", r * V)
            asm("V_MAX_VF gp4, gp4, f0", "relu")
        asm(f"H_STORE_V gp0, gp2, a2, 0, {R}")
        asm("S_ADD_INT gp2, gp2, gp3")


def _conv_block(task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout) -> str:
    check_conv_shape(task, cfg, hw, ("cin", "cout"))
    size = cfg["H"] ** 2 * cfg["cout"]
    _require(size % (hw.v_prefetch_rows * hw.VLEN) == 0, "the output must be a whole number of DMA chunks")
    asm = Asm(f"{task.title} {cfg.label}")
    for name, areg in (("X", "a0"), ("W", "a1"), ("Y", "a2"), ("scale", "a3"), ("shift", "a4")):
        base_address(asm, layout, name, areg)
    asm.comment("operator 1: convolution, Y = conv2d(X, W)")
    _conv(asm, cfg, hw)
    asm.comment("operator 2: BatchNorm, Y = Y * scale + shift (through HBM)")
    _batchnorm_pass(asm, cfg, hw)
    asm.comment("operator 3: ReLU, Y = max(Y, 0) (through HBM)")
    _relu_pass(asm, size, hw)
    return asm.text()


def _depthwise(task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout) -> str:
    """One channel chunk at a time: the padded chunk in VSRAM, k*k multiply-adds per output row."""
    check_conv_shape(task, cfg, hw, ("c",))
    V, B = hw.VLEN, hw.BLEN
    H, C, k = cfg["H"], cfg["c"], cfg["k"]
    p = k // 2
    Wp = H + 2 * p
    IMG, WT = 0, Wp * Wp * V  # padded chunk, then k*k filter rows
    OUT = WT + k * k * V  # one output image row (H rows), then a product row
    TMP = OUT + H * V
    _require(hw.vsram_rows >= TMP // V + 1, "VSRAM too small for a padded channel chunk")
    asm = Asm(f"{task.title} {cfg.label}")
    for name, areg in (("X", "a0"), ("W", "a1"), ("Y", "a2")):
        base_address(asm, layout, name, areg)
    asm.li("gp9", 0, "channel offset of the chunk")
    asm.li("gp10", TMP, "product row")
    with asm.loop("gp14", C // V, "64-channel chunks"):
        asm.comment("the padded chunk (its border rows stay zero)")
        asm.li("gp1", C)
        asm("C_SET_STRIDE_REG gp1", "pixels are c elements apart")
        asm("S_ADD_INT gp2, gp9, gp0")
        asm.li("gp3", IMG + (p * Wp + p) * V)
        with asm.loop("gp13", H, "image rows"):
            for wb in range(H // B):
                asm(f"S_ADDI_INT gp4, gp2, {wb * B * C}")
                asm(f"S_ADDI_INT gp5, gp3, {wb * B * V}")
                asm(f"H_PREFETCH_V gp5, gp4, a0, 1, {B}")
            asm.li("gp1", H * C)
            asm("S_ADD_INT gp2, gp2, gp1")
            asm(f"S_ADDI_INT gp3, gp3, {Wp * V}")
        for t0 in range(0, k * k, hw.v_prefetch_rows):
            rows = min(hw.v_prefetch_rows, k * k - t0)
            asm.li("gp2", t0 * C)
            asm("S_ADD_INT gp2, gp2, gp9")
            asm.li("gp3", WT + t0 * V)
            asm(f"H_PREFETCH_V gp3, gp2, a1, 1, {rows}", f"filter taps {t0}..{t0 + rows - 1}")
        asm.li("gp5", IMG, "padded row h, pixel 0")
        asm("S_ADD_INT gp11, gp9, gp0", "HBM offset of Y row h, this chunk")
        with asm.loop("gp13", H, "output rows"):
            asm.li("gp7", OUT, "accumulator row of pixel w")
            asm("S_ADD_INT gp6, gp5, gp0", "padded pixel (h, w)")
            with asm.loop("gp12", H, "pixels of the row"):
                for t in range(k * k):
                    kh, kw = divmod(t, k)
                    asm(f"S_ADDI_INT gp3, gp6, {(kh * Wp + kw) * V}")
                    asm.li("gp4", WT + t * V)
                    if t == 0:
                        asm("V_MUL_VV gp7, gp3, gp4", "tap (0, 0)")
                    else:
                        asm("V_MUL_VV gp10, gp3, gp4", f"tap ({kh}, {kw})")
                        asm("V_ADD_VV gp7, gp7, gp10")
                asm(f"S_ADDI_INT gp6, gp6, {V}")
                asm(f"S_ADDI_INT gp7, gp7, {V}")
            for wb in range(H // B):
                asm(f"S_ADDI_INT gp3, gp11, {wb * B * C}")
                asm.li("gp4", OUT + wb * B * V)
                asm(f"H_STORE_V gp4, gp3, a2, 1, {B}")
            asm(f"S_ADDI_INT gp5, gp5, {Wp * V}")
            asm.li("gp1", H * C)
            asm("S_ADD_INT gp11, gp11, gp1")
        asm(f"S_ADDI_INT gp9, gp9, {V}")
    return asm.text()


TEMPLATES = {
    "conv2d": _conv2d,
    "depthwise_conv": _depthwise,
    "conv_block": _conv_block,
}
