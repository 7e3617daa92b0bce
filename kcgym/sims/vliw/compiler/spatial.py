"""Templates of the spatial tasks (Conv2D, DepthwiseConv, ConvBlock): channels last, 32 channels a vector.

With channels last, the channels ``32j .. 32j + 31`` of one pixel are one aligned vector, so
no data is rearranged in memory:

- **Conv2D / ConvBlock** are an implicit GEMM, Y = im2col(X) @ W.reshape(k*k*cin, cout). The
  zero "same" padding is built once, by DMA, in the EXT scratch tensor ``Xp`` (the image with
  k // 2 zero pixels on every side; absent for k = 1, where the patch is the pixel itself).
  Then a pixel's patch, in (kh, kw, ci) order, is k padded-row segments of k*cin contiguous
  elements: one strided DMA brings it into DM, already in the row order of W. Each output
  (pixel, 32-channel strip) accumulates all k*k*cin products in one fp32 accumulator (VLDB
  broadcast of a patch element, VMAC with a 32-column row of W) and rounds once, as the
  reference does. The W strip stays in DM when it fits (k*k*cin*64 bytes), else it streams
  in per-tap chunks for every pixel. ConvBlock applies bf16(c * scale), bf16(. + shift) and
  max(., 0) to the rounded vector before it is stored.
- **DepthwiseConv** works on one 32-channel block at a time: the block of the image goes into
  a zero-padded DM buffer ((H + 2p)^2 pixels, borders zero because DM starts zeroed and only
  the interior is ever written), and each output vector is acc = bf16(acc + bf16(x * w)) over
  the taps in row-major (kh, kw) order from acc = 0, the task's fixed rounding order (a
  padding tap adds an exact zero).

Naive like the rest of the compiler: one operation per bundle, no software pipelining, each
DMA issued right before its data is needed. Only the innermost tap loop (kw of depthwise)
and the per-tap W chunks of a streamed conv strip are unrolled, where a loop would nest
deeper than the hardware's four levels.
"""

from __future__ import annotations

from collections.abc import Callable

from kcgym.sims.base import MemoryLayout
from kcgym.sims.vliw.compiler.emit import Asm, ext_bytes
from kcgym.sims.vliw.compiler.primitives import add_const
from kcgym.sims.vliw.config import LANES, VECTOR_BYTES, VLIWConfig
from kcgym.tasks.base import Task, TaskConfig


def _padded_size(cfg: TaskConfig) -> int:
    return cfg["H"] + 2 * (cfg["k"] // 2)


def _conv_scratch(cfg: TaskConfig) -> list[tuple[str, tuple[int, ...], str]]:
    if cfg["k"] == 1:
        return []
    hp = _padded_size(cfg)
    return [("Xp", (hp, hp, cfg["cin"]),
             f"scratch: X zero-padded by k // 2 = {cfg['k'] // 2} pixels on every side (the compiler kernel "
             "builds it by DMA)")]


SCRATCH: dict[str, Callable[[TaskConfig], list[tuple[str, tuple[int, ...], str]]]] = {
    "conv2d": _conv_scratch,
    "conv_block": _conv_scratch,
}


def _align(nbytes: int) -> int:
    return -(-nbytes // VECTOR_BYTES) * VECTOR_BYTES


def _check_channels(task: Task, **channels: int) -> None:
    for name, value in channels.items():
        if value % LANES:
            raise ValueError(f"the VLIW {task.name} template needs {name} to be a multiple of {LANES}, got {value}")


# ---- Conv2D and ConvBlock: implicit GEMM over padded patches ------------------------------
def build_padded_image(asm: Asm, hw: VLIWConfig, cfg: TaskConfig, x: int, xp: int) -> None:
    """Xp = X with zero borders: zero padded rows out of DM (which starts zeroed), then each image row
    DMAed into the interior of that row buffer and out again to its padded row."""
    h, cin, p = cfg["H"], cfg["cin"], cfg["k"] // 2
    hp = _padded_size(cfg)
    row_bytes, prow_bytes = 2 * h * cin, 2 * hp * cin
    if prow_bytes > hw.dma_max_bytes:
        raise ValueError(f"a padded image row ({prow_bytes} bytes) does not fit one VLIW DMA")
    asm.comment(f"build Xp: X zero-padded by {p} pixels (one padded row of {prow_bytes} bytes at DM[0..])")
    asm(f"MOVI r1, {xp}", "row of Xp")
    asm("PMOVI p0, 0", "padded row buffer: zeros")
    with asm.loop(hp, "zero every padded row"):
        asm(f"DMAO p0, r1, r0, 1, {prow_bytes}")
        add_const(asm, "r1", "r1", prow_bytes)
    asm(f"MOVI r1, {xp + p * prow_bytes}", "first interior row of Xp")
    asm(f"MOVI r2, {x}", "row of X")
    asm(f"PMOVI p1, {2 * p * cin}", "interior of the padded row buffer")
    with asm.loop(h, "image rows"):
        asm(f"DMAI p1, r2, r0, 1, {row_bytes}", "X row -> interior of the buffer")
        asm(f"DMAO p0, r1, r0, 1, {prow_bytes}", "padded row -> Xp")
        add_const(asm, "r1", "r1", prow_bytes)
        add_const(asm, "r2", "r2", row_bytes)


def _taps_per_chunk(cfg: TaskConfig, hw: VLIWConfig) -> int:
    """The most taps (a divisor of k*k) whose W-strip rows fit one DMA."""
    k, cin = cfg["k"], cfg["cin"]
    fits = [t for t in range(1, k * k + 1) if (k * k) % t == 0 and t * cin * VECTOR_BYTES <= hw.dma_max_bytes]
    if not fits:
        raise ValueError(f"one tap of W (cin={cin} rows of a 32-column strip) does not fit one VLIW DMA")
    return max(fits)


def _conv(task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout) -> str:
    asm = Asm(f"{task.title} {cfg.label}")
    h, cin, cout, k = cfg["H"], cfg["cin"], cfg["cout"], cfg["k"]
    _check_channels(task, cin=cin, cout=cout)
    block = task.name == "conv_block"
    hp, kk = _padded_size(cfg), k * k
    K = kk * cin  # rows of the im2col GEMM
    x, w, y = (ext_bytes(layout, t) for t in ("X", "W", "Y"))
    src = x
    if k > 1:
        src = ext_bytes(layout, "Xp")
        build_padded_image(asm, hw, cfg, x, src)
    taps = _taps_per_chunk(cfg, hw)
    kc = taps * cin  # rows of W per DMA
    patch_bytes = 2 * K
    if patch_bytes > hw.dma_max_bytes:
        raise ValueError(f"a {k}x{k}x{cin} patch ({patch_bytes} bytes) does not fit one VLIW DMA")
    tail = _align(patch_bytes) + 3 * VECTOR_BYTES  # patch, output vector, scale, shift
    resident = K * VECTOR_BYTES + tail <= hw.dm_bytes
    WBUF = 0
    PATCH = (K if resident else kc) * VECTOR_BYTES
    YBUF = PATCH + _align(patch_bytes)
    SBUF, TBUF = YBUF + VECTOR_BYTES, YBUF + 2 * VECTOR_BYTES
    if hw.dm_bytes < TBUF + VECTOR_BYTES:
        raise ValueError(f"conv cin={cin}, k={k} does not fit the VLIW template's data memory")

    asm.comment(f"implicit GEMM: {h * h} pixels x {K} patch rows x {cout} channels, one 32-channel strip at a time"
                + ("; the W strip stays in DM" if resident else f"; W streams in chunks of {kc} rows per pixel"))
    asm(f"MOVI r1, {src}", "padded image" if k > 1 else "image")
    asm(f"MOVI r2, {w}", "W[0, 0, 0, strip]")
    asm(f"MOVI r3, {y}", "Y[0, 0, strip]")
    asm(f"MOVI r10, {2 * cout}", "row stride of W.reshape(K, cout) and pixel stride of Y, bytes")
    asm(f"MOVI r11, {2 * hp * cin}", "row stride of the padded image, bytes")
    if block:
        asm(f"MOVI r12, {ext_bytes(layout, 'scale')}", "scale[strip]")
        asm(f"MOVI r13, {ext_bytes(layout, 'shift')}", "shift[strip]")
        asm("VBCST x10, 0.0", "for the ReLU")
    with asm.loop(cout // LANES, "32-channel output strips"):
        if resident:
            asm(f"PMOVI p0, {WBUF}")
            asm("ADD r4, r2, r0")
            with asm.loop(kk // taps, f"W strip -> DM, {kc} rows per DMA"):
                asm(f"DMAI p0, r4, r10, {kc}, {VECTOR_BYTES}")
                asm(f"PADDI p0, p0, {kc * VECTOR_BYTES}")
                add_const(asm, "r4", "r4", kc * 2 * cout)
        if block:
            for reg, ptr, buf in (("x8", "r12", SBUF), ("x9", "r13", TBUF)):
                asm(f"PMOVI p4, {buf}")
                asm(f"DMAI p4, {ptr}, r0, 1, {VECTOR_BYTES}", "scale" if reg == "x8" else "shift")
                asm(f"VLD {reg}, p4, 0")
                asm(f"ADDI {ptr}, {ptr}, {VECTOR_BYTES}")
        asm("ADD r5, r1, r0", "patch origin of the output row")
        asm("ADD r6, r3, r0", "Y[pixel, strip]")
        with asm.loop(h, "output rows"):
            asm("ADD r7, r5, r0", "patch origin of the pixel")
            with asm.loop(h, "output pixels of the row"):
                asm(f"PMOVI p1, {PATCH}")
                asm(f"DMAI p1, r7, r11, {k}, {2 * k * cin}", "patch (kh, kw, ci) -> DM")
                asm("CZERO c0")
                if resident:
                    asm(f"PMOVI p0, {WBUF}")
                    _k_loop(asm, K)
                else:  # unrolled: a loop over the chunks would nest five deep
                    asm("ADD r8, r2, r0")
                    for c in range(kk // taps):
                        asm(f"PMOVI p0, {WBUF}")
                        asm(f"DMAI p0, r8, r10, {kc}, {VECTOR_BYTES}", f"W rows {c * kc}.. of the strip -> DM")
                        _k_loop(asm, kc)
                        if c + 1 < kk // taps:
                            add_const(asm, "r8", "r8", kc * 2 * cout)
                asm("VCONV x2, c0", "round to bf16 once")
                if block:
                    asm("VMUL x2, x2, x8", "* scale")
                    asm("VADD x2, x2, x9", "+ shift")
                    asm("VMAX x2, x2, x10", "relu")
                asm(f"PMOVI p2, {YBUF}")
                asm("VST x2, p2, 0")
                asm(f"DMAO p2, r6, r0, 1, {VECTOR_BYTES}", "32 outputs -> Y")
                asm("ADD r6, r6, r10")
                asm(f"ADDI r7, r7, {2 * cin}")
            asm("ADD r5, r5, r11")
        asm(f"ADDI r2, r2, {VECTOR_BYTES}")
        asm(f"ADDI r3, r3, {VECTOR_BYTES}")
    return asm.text()


def _k_loop(asm: Asm, count: int) -> None:
    with asm.loop(count, "patch rows"):
        asm("VLDB x0, p1, 2", "patch element in every lane")
        asm("VLD x1, p0, 64", "W row, 32 output channels")
        asm("VMAC c0, x1, x0")


# ---- DepthwiseConv: per-channel taps on a zero-padded DM copy -----------------------------
def _depthwise(task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout) -> str:
    asm = Asm(f"{task.title} {cfg.label}")
    h, c, k = cfg["H"], cfg["c"], cfg["k"]
    _check_channels(task, c=c)
    p, hp = k // 2, _padded_size(cfg)
    PAD = 0  # hp x hp pixels of one 32-channel block, zero borders
    WBUF = PAD + hp * hp * VECTOR_BYTES
    YBUF = WBUF + k * k * VECTOR_BYTES
    if YBUF + h * h * VECTOR_BYTES > hw.dm_bytes:
        raise ValueError(f"depthwise H={h}, k={k} does not fit the VLIW template's data memory")
    x, w, y = (ext_bytes(layout, t) for t in ("X", "W", "Y"))
    asm.comment(f"one 32-channel block at a time: image block in a {hp}x{hp} zero-padded DM buffer (DM starts "
                "zeroed; only the interior is written)")
    asm(f"MOVI r1, {x}", "X[0, 0, block]")
    asm(f"MOVI r2, {w}", "W[0, 0, block]")
    asm(f"MOVI r3, {y}", "Y[0, 0, block]")
    asm(f"MOVI r10, {2 * c}", "pixel stride of X, W and Y, bytes")
    with asm.loop(c // LANES, "32-channel blocks"):
        asm(f"PMOVI p0, {PAD + (p * hp + p) * VECTOR_BYTES}", "interior of the padded buffer")
        asm("ADD r4, r1, r0")
        with asm.loop(h, "image rows -> padded buffer"):
            asm(f"DMAI p0, r4, r10, {h}, {VECTOR_BYTES}")
            asm(f"PADDI p0, p0, {hp * VECTOR_BYTES}")
            add_const(asm, "r4", "r4", 2 * h * c)
        asm(f"PMOVI p0, {WBUF}")
        asm(f"DMAI p0, r2, r10, {k * k}, {VECTOR_BYTES}", "the block's k*k tap weights")
        asm(f"PMOVI p1, {PAD}", "top-left tap of the output pixel")
        asm(f"PMOVI p3, {YBUF}", "output vector")
        asm(f"PMOVI p4, {YBUF}", "output row, for its DMA")
        asm("ADD r5, r3, r0", "Y row")
        with asm.loop(h, "output rows"):
            with asm.loop(h, "output pixels of the row"):
                asm("VBCST x2, 0.0", "acc")
                asm("PADDI p2, p1, 0", "tap pointer")
                asm(f"PMOVI p5, {WBUF}", "tap weight pointer")
                with asm.loop(k, "kh"):
                    for kw in range(k):  # unrolled: a kw loop would nest five deep
                        asm("VLD x0, p2, 64", f"x at tap kw={kw}")
                        asm("VLD x1, p5, 64", "its weights")
                        asm("VMUL x0, x0, x1")
                        asm("VADD x2, x2, x0", "acc = bf16(acc + bf16(x * w))")
                    asm(f"PADDI p2, p2, {(hp - k) * VECTOR_BYTES}", "next padded row")
                asm("VST x2, p3, 64")
                asm(f"PADDI p1, p1, {VECTOR_BYTES}")
            asm(f"PADDI p1, p1, {2 * p * VECTOR_BYTES}", "skip the padding to the next row")
            asm(f"DMAO p4, r5, r10, {h}, {VECTOR_BYTES}", "output row -> Y")
            asm(f"PADDI p4, p4, {h * VECTOR_BYTES}")
            add_const(asm, "r5", "r5", 2 * h * c)
        asm(f"ADDI r1, r1, {VECTOR_BYTES}")
        asm(f"ADDI r2, r2, {VECTOR_BYTES}")
        asm(f"ADDI r3, r3, {VECTOR_BYTES}")
    return asm.text()


TEMPLATES: dict[str, Callable[[Task, TaskConfig, VLIWConfig, MemoryLayout], str]] = {
    "conv2d": _conv,
    "conv_block": _conv,
    "depthwise_conv": _depthwise,
}
