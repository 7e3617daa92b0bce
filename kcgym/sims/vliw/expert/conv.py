"""Expert Conv2D / ConvBlock: a whole output row in eight accumulators, one VMACL per cycle.

The compiler's kernel computes one (pixel, 32-channel strip) at a time, three bundles and a
load latency per 32 MACs. Here the eight pixels of an output row accumulate together in
c0-c7: a 32-channel block of each pixel's input is loaded once into x0-x7, then every lane
ci of it meets its row of W (one load, alternating x8/x9) in eight ``VMACL c_g, w, x_g, ci``,
so the vector slot is busy nearly every cycle and each weight row is loaded once per output
row instead of once per pixel. The whole 32-channel strip of W stays in DM; the k padded
image rows an output row needs are one contiguous DMA from the same padded scratch ``Xp``
the compiler kernel builds (X itself for k = 1). ConvBlock's BatchNorm and ReLU follow
the single rounding, as in the reference.

Where the W strip does not fit DM (cin = 256 at k = 3: 147 KB), it streams in one tap (cin
rows) at a time, once per output row, with the kh loop unrolled; each tap's DMA is waited
for. Declines (None) where a row is not eight pixels or a tap of W does not fit one DMA.
"""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.vliw.compiler.emit import Asm, ext_bytes
from kcgym.sims.vliw.compiler.primitives import add_const
from kcgym.sims.vliw.compiler.spatial import build_padded_image
from kcgym.sims.vliw.config import LANES, VECTOR_BYTES, VLIWConfig
from kcgym.sims.vliw.schedule import emit
from kcgym.tasks.base import Task, TaskConfig

PIXELS = 8  # one output row: c0-c7, inputs x0-x7


def _block(cin: int) -> list[str]:
    """One 32-channel block of the current tap for all eight pixels: 32 lanes x 8 VMACL."""
    ops = ["MOVI r9, 0"]
    for g in range(PIXELS):
        inc = 2 * cin if g < PIXELS - 1 else VECTOR_BYTES - (PIXELS - 1) * 2 * cin  # back to pixel 0, next block
        ops.append(f"VLD x{g}, p0, {inc}")
    for lane in range(LANES):
        w = f"x{8 + lane % 2}"
        ops.append(f"VLD {w}, p4, 64")
        ops += [f"VMACL c{g}, {w}, x{g}, r9" for g in range(PIXELS)]
        ops.append("ADDI r9, r9, 1")
    return ops


def _epilogue(block: bool, ybuf: int) -> list[str]:
    ops = [f"VCONV x{g}, c{g}" for g in range(PIXELS)]
    if block:
        ops.append("VBCST x9, 0.0")
        for g in range(PIXELS):
            ops += [f"VMUL x{g}, x{g}, x10", f"VADD x{g}, x{g}, x11", f"VMAX x{g}, x{g}, x9"]
    ops.append(f"PMOVI p6, {ybuf}")
    ops += [f"VST x{g}, p6, 64" for g in range(PIXELS)]
    return ops


def expert_conv(task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout) -> str | None:
    h, cin, cout, k = cfg["H"], cfg["cin"], cfg["cout"], cfg["k"]
    p = k // 2
    wp = h + 2 * p
    block = task.name == "conv_block"
    rows_bytes = k * wp * cin * 2  # the k padded rows of one output row
    bank = hw.bank_bytes
    ybuf, sbuf = 6 * bank, 7 * bank
    resident = k * k * cin * VECTOR_BYTES <= 5 * bank  # else W streams in one tap (cin rows) at a time
    wbuf_bytes = (k * k if resident else 1) * cin * VECTOR_BYTES
    wbuf, rows = 0, -(-wbuf_bytes // bank) * bank
    if (h != PIXELS or cin % LANES or cout % LANES or rows + rows_bytes > ybuf or rows_bytes > hw.dma_max_bytes
            or cin * VECTOR_BYTES > hw.dma_max_bytes or sbuf + 2 * VECTOR_BYTES > hw.dm_bytes):
        return None
    taps = max(t for t in range(1, k * k + 1) if (k * k) % t == 0 and t * cin * VECTOR_BYTES <= hw.dma_max_bytes)
    kc = taps * cin
    asm = Asm(f"{task.title} {cfg.label}", author="kcgym's expert kernels (list-scheduled, a row per accumulator set)")
    src = ext_bytes(layout, "X")
    if k > 1:
        xp = ext_bytes(layout, "Xp")
        build_padded_image(asm, hw, cfg, src, xp)
        src = xp
    asm(f"MOVI r1, {src}", "padded image" if k > 1 else "image")
    asm(f"MOVI r2, {ext_bytes(layout, 'W')}", "W[0, 0, 0, strip]")
    asm(f"MOVI r3, {ext_bytes(layout, 'Y')}", "Y[0, 0, strip]")
    asm(f"MOVI r10, {2 * cout}", "row stride of W.reshape(K, cout), pixel stride of Y")
    if block:
        asm(f"MOVI r12, {ext_bytes(layout, 'scale')}")
        asm(f"MOVI r13, {ext_bytes(layout, 'shift')}")
    with asm.loop(cout // LANES, "32-channel output strips"):
        if resident:
            asm(f"PMOVI p5, {wbuf}")
            asm("ADD r4, r2, r0")
            with asm.loop(k * k // taps, f"W strip -> DM, {kc} rows per DMA"):
                asm(f"DMAI p5, r4, r10, {kc}, {VECTOR_BYTES} || PADDI p5, p5, {kc * VECTOR_BYTES}")
                add_const(asm, "r4", "r4", kc * 2 * cout)
        if block:
            for reg, ptr, buf in (("x10", "r12", sbuf), ("x11", "r13", sbuf + VECTOR_BYTES)):
                asm(f"PMOVI p5, {buf}")
                asm(f"DMAI p5, {ptr}, r0, 1, {VECTOR_BYTES} || ADDI {ptr}, {ptr}, {VECTOR_BYTES}")
                asm(f"VLD {reg}, p5, 0")
        asm("ADD r5, r1, r0", "first padded row of the output row")
        asm("ADD r6, r3, r0", "Y[row, 0, strip]")
        with asm.loop(h, "output rows"):
            asm(f"PMOVI p5, {rows}")
            asm(f"DMAI p5, r5, r0, 1, {rows_bytes}", f"the {k} padded rows -> DM")
            emit(asm, [f"CZERO c{g}" for g in range(PIXELS)] + [f"PMOVI p4, {wbuf}", f"PMOVI p0, {rows}"], hw)
            if resident:
                with asm.loop(k, "kh"):
                    with asm.loop(k * cin // LANES, "(kw, 32-channel block)"):
                        emit(asm, _block(cin), hw)
                    asm(f"PADDI p0, p0, {(wp - k) * 2 * cin}", "next padded row")
            else:
                asm("ADD r7, r2, r0", "W rows of the tap, this strip")
                for kh in range(k):  # unrolled: with a kh loop the block loop would nest five deep
                    with asm.loop(k, f"kw (kh = {kh})"):
                        asm(f"PMOVI p4, {wbuf}")
                        asm(f"DMAI p4, r7, r10, {cin}, {VECTOR_BYTES}", "the tap's W rows -> DM")
                        with asm.loop(cin // LANES, "32-channel blocks"):
                            emit(asm, _block(cin), hw)
                        add_const(asm, "r7", "r7", cin * 2 * cout)  # also keeps the two loops' ends apart
                    asm(f"PADDI p0, p0, {(wp - k) * 2 * cin}", "next padded row")
            emit(asm, _epilogue(block, ybuf), hw)
            asm(f"PMOVI p7, {ybuf}")
            asm(f"DMAO p7, r6, r10, {PIXELS}, {VECTOR_BYTES} || ADDI r5, r5, {wp * 2 * cin}", "row -> Y")
            add_const(asm, "r6", "r6", h * 2 * cout)
        asm(f"ADDI r2, r2, {VECTOR_BYTES}")
        asm(f"ADDI r3, r3, {VECTOR_BYTES}")
    return asm.text()


EXPERTS = dict.fromkeys(("conv2d", "conv_block"), expert_conv)  # task name -> kernel, found by kcgym.sims.vliw.expert
