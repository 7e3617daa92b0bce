"""Expert GEMV: blocks of rows of A double-buffered by DMA, four dot products in flight.

GEMV reads every element of A once, so it is bound by the DMA bandwidth: the expert keeps the
in-engine busy (the next block of rows streams into a second buffer while this one is
computed) and computes each block faster than it arrives (four rows at a time sharing each
load of x, four accumulators).
"""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.vliw.compiler.emit import Asm, ext_bytes
from kcgym.sims.vliw.config import LANES, VLIWConfig
from kcgym.sims.vliw.schedule import emit
from kcgym.tasks.base import Task, TaskConfig

BUFFERS = (0, 16384)
XBUF, YBUF = 32768, 36864


def _block(rows: int, n: int) -> list[str]:
    """Dot products of the ``rows`` rows at p1 with x at XBUF; results into lanes r9 + r of x11.

    Rows go four at a time, each with its own pointer (p1 p2 p6 p7) and accumulator (c0-c3):
    one load of a chunk of x serves four VMACs, and registers alternate by chunk parity so the
    next chunk loads while this one multiplies.
    """
    ptrs = ("p1", "p2", "p6", "p7")
    ops = []
    for g in range(rows // 4):
        ops.append(f"PMOVI p3, {XBUF}")
        for k, p in enumerate(ptrs):
            ops.append(f"PADDI {p}, p0, {(4 * g + k) * 2 * n}")
        for j in range(n // LANES):
            xv = f"x{8 + j % 2}"
            ops.append(f"VLD {xv}, p3, 64")
            for k, p in enumerate(ptrs):
                a = f"x{4 * (j % 2) + k}"
                ops += [f"VLD {a}, {p}, 64", f"{'VMPY' if j == 0 else 'VMAC'} c{k}, {a}, {xv}"]
        for k in range(4):
            ops += [f"VRADD x10, c{k}", f"ADDI r{12 + k}, r9, {4 * g + k}", f"VINS x11, x10, r{12 + k}"]
    return ops


def expert_gemv(task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout) -> str | None:
    M, N = cfg["M"], cfg["N"]
    rows = min(LANES, 8192 // (2 * N), M)  # rows per block: divides 32, a multiple of 4
    if LANES % rows or rows % 4 or M % rows or 2 * N > YBUF - XBUF or hw.dm_bytes - YBUF < 2 * M:
        return None
    chunk = rows * 2 * N
    asm = Asm(f"{task.title} {cfg.label}", author="kcgym's expert kernels (double-buffered, list-scheduled)")
    b0, b1 = BUFFERS
    asm(f"MOVI r2, {ext_bytes(layout, 'x')}")
    asm(f"PMOVI p0, {XBUF}")
    asm(f"DMAI p0, r2, r0, 1, {2 * N}", "x stays in DM")
    asm(f"MOVI r1, {ext_bytes(layout, 'A')}", "A rows of the current block")
    asm(f"MOVI r4, {b0}", "current buffer")
    asm(f"MOVI r8, {b0 + b1}")
    asm(f"MOVI r6, {M // rows}", "blocks left")
    asm("MOVI r10, 0", "rows done")
    asm(f"PMOVI p0, {b0}")
    asm(f"DMAI p0, r1, r0, 1, {chunk}", "first block")
    with asm.loop(M // rows, f"blocks of {rows} rows"):
        asm("ADDI r6, r6, -1")
        asm("SUB r5, r8, r4")
        skip = asm.fresh("last")
        asm(f"BEQZ r6, {skip} || PMOV p0, r5")
        asm(f"ADDI r7, r1, {chunk}")
        asm(f"DMAI p0, r7, r0, 1, {chunk}", "prefetch the next block")
        asm.lines.append(f"{skip}:")
        asm("PMOV p0, r4", "this block")
        asm("ANDI r9, r10, 31", "lane of the block's first row")
        emit(asm, _block(rows, N), hw)
        asm("SHRI r7, r10, 5")
        asm("SHLI r7, r7, 6")
        asm(f"ADDI r7, r7, {YBUF}")
        asm("PMOV p5, r7", "the y vector holding these rows")
        asm(f"VST x11, p5, 0 || ADDI r1, r1, {chunk}")
        asm(f"ADDI r10, r10, {rows}")
        asm("SUB r4, r8, r4", "swap buffers")
    asm(f"MOVI r3, {ext_bytes(layout, 'y')}")
    asm(f"PMOVI p5, {YBUF}")
    asm(f"DMAO p5, r3, r0, 1, {2 * M}", "y -> EXT")
    return asm.text()


EXPERTS = {"gemv": expert_gemv}  # task name -> kernel, found by kcgym.sims.vliw.expert
