"""Expert DepthwiseConv: four output pixels in flight, every tap list-scheduled, buffers in separate banks.

The task fixes the rounding order (acc = bf16(acc + bf16(x * w)) over the taps in row-major
order), so each tap of each pixel costs two vector operations, VMUL and VADD, and the vector
slot is the bound. The compiler's kernel waits out each tap's load -> multiply -> add chain;
this one computes four neighbouring output pixels at once with all k*k taps unrolled and
list-scheduled: the four accumulators (x8-x11) are independent chains, the input vectors
rotate through six registers and the tap weights through two, so the loads of the next tap
run while this tap multiplies. The first tap multiplies straight into the accumulator
(bf16(0 + p) = p). The zero-padded image block, the weights and the outputs lie in different
DM banks, so a weight load pairs with an image load or a store without a bank conflict; the
output rows leave by DMA while the next rows are computed.
"""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.vliw.compiler.emit import Asm, ext_bytes
from kcgym.sims.vliw.compiler.primitives import add_const
from kcgym.sims.vliw.config import LANES, VECTOR_BYTES, VLIWConfig
from kcgym.sims.vliw.schedule import emit
from kcgym.tasks.base import Task, TaskConfig

PIXELS = 4  # output pixels computed together
ACCS = ("x8", "x9", "x10", "x11")
INPUTS = ("x0", "x1", "x2", "x3", "x6", "x7")  # rotated across taps
WEIGHTS = ("x4", "x5")
POINTERS = ("p0", "p1", "p2", "p3")  # one per pixel of the group


def _group(k: int, hp: int, wbuf: int) -> list[str]:
    """Four outputs at the group base p6 into YBUF at p7; p6 then moves to the next four pixels."""
    ops = [f"PADDI {p}, p6, {g * VECTOR_BYTES}" for g, p in enumerate(POINTERS)]
    ops.append(f"PMOVI p4, {wbuf}")
    for t in range(k * k):
        kw = t % k
        inc = VECTOR_BYTES if kw < k - 1 else (hp - k + 1) * VECTOR_BYTES  # last kw: on to the next padded row
        w = WEIGHTS[t % 2]
        ops.append(f"VLD {w}, p4, 64")
        regs = [INPUTS[(t * PIXELS + g) % len(INPUTS)] for g in range(PIXELS)]
        ops += [f"VLD {r}, {p}, {inc}" for r, p in zip(regs, POINTERS, strict=True)]
        if t == 0:
            ops += [f"VMUL {a}, {r}, {w}" for a, r in zip(ACCS, regs, strict=True)]
        else:
            ops += [f"VMUL {r}, {r}, {w}" for r in regs]
            ops += [f"VADD {a}, {a}, {r}" for a, r in zip(ACCS, regs, strict=True)]
    ops += [f"VST {a}, p7, 64" for a in ACCS]
    ops.append(f"PADDI p6, p6, {PIXELS * VECTOR_BYTES}")
    return ops


def expert_depthwise(task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout) -> str | None:
    h, c, k = cfg["H"], cfg["c"], cfg["k"]
    p, hp = k // 2, cfg["H"] + 2 * (k // 2)
    bank = hw.bank_bytes
    pad, ybuf, wbuf = 0, 4 * bank, 7 * bank
    if (h % PIXELS or c % LANES or hp * hp * VECTOR_BYTES > ybuf or ybuf + h * h * VECTOR_BYTES > wbuf
            or wbuf + k * k * VECTOR_BYTES > hw.dm_bytes):
        return None
    asm = Asm(f"{task.title} {cfg.label}", author="kcgym's expert kernels (list-scheduled, four pixels in flight)")
    asm(f"MOVI r1, {ext_bytes(layout, 'X')}", "X[0, 0, block]")
    asm(f"MOVI r2, {ext_bytes(layout, 'W')}", "W[0, 0, block]")
    asm(f"MOVI r3, {ext_bytes(layout, 'Y')}", "Y[0, 0, block]")
    asm(f"MOVI r10, {2 * c}", "pixel stride, bytes")
    with asm.loop(c // LANES, "32-channel blocks"):
        asm(f"PMOVI p5, {pad + (p * hp + p) * VECTOR_BYTES}", "interior of the zero-padded block")
        asm("ADD r4, r1, r0")
        with asm.loop(h, "image rows -> padded block"):
            asm(f"DMAI p5, r4, r10, {h}, {VECTOR_BYTES} || PADDI p5, p5, {hp * VECTOR_BYTES}")
            add_const(asm, "r4", "r4", 2 * h * c)
        asm(f"PMOVI p5, {wbuf}")
        asm(f"DMAI p5, r2, r10, {k * k}, {VECTOR_BYTES}", "tap weights of the block")
        asm(f"PMOVI p6, {pad}")
        asm(f"PMOVI p7, {ybuf}")
        asm(f"PMOVI p5, {ybuf}", "output row")
        asm("ADD r5, r3, r0", "its place in Y")
        with asm.loop(h, "output rows"):
            with asm.loop(h // PIXELS, f"groups of {PIXELS} pixels"):
                emit(asm, _group(k, hp, wbuf), hw)
            asm(f"DMAO p5, r5, r10, {h}, {VECTOR_BYTES} || PADDI p6, p6, {2 * p * VECTOR_BYTES}", "row -> Y")
            asm(f"PADDI p5, p5, {h * VECTOR_BYTES}")
            add_const(asm, "r5", "r5", 2 * h * c)
        asm(f"ADDI r1, r1, {VECTOR_BYTES}")
        asm(f"ADDI r2, r2, {VECTOR_BYTES}")
        asm(f"ADDI r3, r3, {VECTOR_BYTES}")
    return asm.text()


EXPERTS = {"depthwise_conv": expert_depthwise}  # task name -> kernel, found by kcgym.sims.vliw.expert
