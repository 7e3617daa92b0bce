"""Expert GEMM / Linear / BatchMatMul: an 8 x 16 output block per pass, one VMMUL per cycle.

Per 16-column slab of W (two 8-column strips, resident in DM as four K x 4 halves of 8x4 B
blocks) and per block of 8 rows of X (one DMAIT into 4x8 A blocks of both 4-row panels,
interleaved; double-buffered: the next block comes in while this one is computed), four
accumulators hold the 2 x 2 grid of 4x8 output tiles. Each step of 8 values of k is 2 A loads,
4 B loads and 8 VMMULs; the loop body is two steps with the registers of one step loading
while the other's multiply (software pipelining by register sets), list-scheduled so the
vector slot issues every cycle. Loads are kept one per bundle, so they never hit a bank
together. One DMAOT writes the four rounded tiles back as 8 rows x 16 columns of Y.
"""

from __future__ import annotations

from collections.abc import Callable

from kcgym.sims.base import MemoryLayout
from kcgym.sims.vliw.compiler.emit import Asm, ext_bytes
from kcgym.sims.vliw.compiler.primitives import add_const, matmul_dims
from kcgym.sims.vliw.config import VLIWConfig
from kcgym.sims.vliw.schedule import emit
from kcgym.tasks.base import Task, TaskConfig

ROWS, COLS = 8, 16  # output block per pass: two 4-row panels x two 8-column strips
PAD = 128  # the pipelined loop loads one step past each buffer; the pad keeps those reads off a DMA's lines
ONE_LOAD = {"LD": 1}
# register sets of the two pipelined steps: A blocks (panel 0, panel 1), then B halves (strip, half)
SETS = (("x0", "x1", "x2", "x3", "x4", "x5"), ("x6", "x7", "x8", "x9", "x10", "x11"))
B_POINTERS = ("p1", "p2", "p3", "p4")  # (strip 0, h 0), (strip 0, h 1), (strip 1, h 0), (strip 1, h 1)


def _loads(regs: tuple[str, ...]) -> list[str]:
    a0, a1, b00, b01, b10, b11 = regs
    return [f"VLD {a0}, p0, 64", f"VLD {b00}, p1, 64", f"VLD {a1}, p0, 64", f"VLD {b10}, p3, 64",
            f"VLD {b01}, p2, 64", f"VLD {b11}, p4, 64"]


def _mmuls(regs: tuple[str, ...]) -> list[str]:
    """Accumulator c(2*strip + panel) += A(panel) @ B(strip, h); each accumulator's two halves 4 apart."""
    a0, a1, b00, b01, b10, b11 = regs
    b = {(0, 0): b00, (0, 1): b01, (1, 0): b10, (1, 1): b11}
    a = (a0, a1)
    return [f"VMMUL c{2 * s + p}, {a[p]}, {b[s, h]}, {h}" for h in (0, 1) for s in (0, 1) for p in (0, 1)]


def buffers(hw: VLIWConfig, dims: tuple[int, int, int, int], bias: bool, side: bool = False) -> dict[str, int] | None:
    """DM addresses of the GEMM's buffers, or None where the shape does not fit the kernel.

    Two W slabs and two X blocks (double buffering) where they fit in DM; else one of each, the
    next one loaded after the current one is used (K = 1024: a slab alone is 32 KB)."""
    B, M, K, N = dims
    strip = 16 * K  # one 8-column strip of W in DM: two K x 4 halves
    xblock = ROWS * 2 * K  # one block of 8 rows of X, in DM and in EXT
    if M % ROWS or K % 16 or N % COLS or max(strip, xblock, 8 * N) > hw.dma_max_bytes:
        return None
    for double in (1, 0):
        buf = {"double": double, "strip": strip, "xblock": xblock, "w0": 0, "w1": double * (2 * strip + PAD)}
        buf["x0"] = (1 + double) * (2 * strip + PAD)
        buf["x1"] = buf["x0"] + double * (xblock + PAD)
        buf["y"] = buf["x1"] + xblock + PAD
        buf["b"] = buf["y"] + ROWS * COLS * 2
        buf["s"] = buf["b"] + (8 * N if bias else 0)
        if buf["s"] + (ROWS * COLS * 2 if side else 0) <= hw.dm_bytes:
            return buf
    return None


def gemm(asm: Asm, hw: VLIWConfig, dims: tuple[int, int, int, int], x: int, w: int, y: int,
         bias: int | None = None, epilogue: Callable[[], list[str]] | None = None, side: int | None = None) -> None:
    """Y = bf16(X @ W) (+ b after rounding) at EXT byte addresses.

    ``epilogue()`` returns operations applied to the four rounded tiles in x0-x3 before they are
    stored (c4-c7 and x4-x11 are free); with ``side`` (the EXT address of a tensor shaped like Y),
    the same tiles of it come in by DMAIT at each block's start and are in x4-x7 by then.
    """
    B, M, K, N = dims
    buf = buffers(hw, dims, bias is not None, side is not None)
    if buf is None:
        raise ValueError(f"GEMM M={M}, K={K}, N={N} does not fit the VLIW expert kernel")
    strip, xblock, wbufs, xbufs, ybuf, bbuf = (buf["strip"], buf["xblock"], (buf["w0"], buf["w1"]),
                                               (buf["x0"], buf["x1"]), buf["y"], buf["b"])
    double = buf["double"]
    blocks, slabs = M // ROWS, N // COLS
    asm.comment("r1 / r2: EXT address of the current X block / W slab; r3: Y block; r4 / r9: DM buffer of the")
    asm.comment("current X block / W slab (r8 / r12: the two buffers' sum, to swap); r6 / r7: blocks / slabs left")
    asm.comment("in this slab / batch after the current one; r13 / r14: blocks / slabs left in the whole run")
    asm(f"MOVI r1, {x}")
    asm(f"MOVI r2, {w}")
    asm(f"MOVI r3, {y}")
    asm(f"MOVI r10, {2 * N}", "row stride of W and Y, bytes")
    asm(f"MOVI r11, {2 * K}", "row stride of X, bytes")
    asm(f"MOVI r4, {xbufs[0]}")
    asm(f"MOVI r8, {xbufs[0] + xbufs[1]}")
    asm(f"MOVI r9, {wbufs[0]}")
    asm(f"MOVI r12, {wbufs[0] + wbufs[1]}")
    asm(f"MOVI r13, {B * slabs * blocks}")
    asm(f"MOVI r14, {B * slabs - 1}")
    asm(f"PMOVI p7, {xbufs[0]}")
    asm(f"DMAIT p7, r1, r11, {ROWS}, {2 * K}, 16", "the first X block -> interleaved 4x8 A blocks")
    asm(f"PMOVI p7, {wbufs[0]}")
    asm(f"DMAIT p7, r2, r10, {K}, 16, 8", "the first W slab: strip 0 -> two K x 4 halves (8x4 B blocks)")
    asm("ADDI r15, r2, 16")
    asm(f"PMOVI p7, {wbufs[0] + strip}")
    asm(f"DMAIT p7, r15, r10, {K}, 16, 8", "strip 1")
    if bias is not None:
        asm(f"MOVI r15, {bias}")
        asm(f"PMOVI p7, {bbuf}")
        asm(f"DMAIT p7, r15, r0, 4, {2 * N}, 16", "bias -> N/8 tiles (its 8 values in 4 rows)")

    def prefetch() -> None:
        """DMAIT the next X block, and at one block of each slab the next W slab, into the other buffers."""
        asm("SUB r5, r8, r4", "the other X buffer")
        add_const(asm, "r15", "r1", xblock)
        skip_x, go_x = asm.fresh("no_x"), asm.fresh("x")
        asm(f"BEQZ r13, {skip_x} || PMOV p7, r5", "no block follows")
        asm(f"BNEZ r6, {go_x}", "the next block of this slab follows")
        asm(f"BEQZ r7, {go_x}", "the next batch's first block follows (contiguous in EXT)")
        add_const(asm, "r15", "r15", -2 * M * K, tmp="r5")
        asm.lines.append(f"{go_x}:")
        asm(f"DMAIT p7, r15, r11, {ROWS}, {2 * K}, 16", "prefetch the next X block")
        asm.lines.append(f"{skip_x}:")
        asm("ADD r1, r15, r0")
        skip_w, go_w = asm.fresh("no_w"), asm.fresh("w")
        if double:
            asm(f"ADDI r15, r6, {-(blocks - 1)}")
            asm(f"BNEZ r15, {skip_w}", "W prefetch: at the first block of a slab only")
        else:
            asm(f"BNEZ r6, {skip_w}", "W prefetch: after the last block of a slab only (one buffer)")
        asm(f"BEQZ r14, {skip_w} || ADDI r2, r2, {2 * COLS}", "no slab follows")
        asm(f"BNEZ r7, {go_w} || ADDI r14, r14, -1")
        add_const(asm, "r2", "r2", 2 * K * N - 2 * N, tmp="r5")
        asm.lines.append(f"{go_w}:")
        asm("SUB r5, r12, r9", "the other W buffer")
        asm("PMOV p7, r5")
        asm(f"DMAIT p7, r2, r10, {K}, 16, 8 || ADDI r15, r2, 16", "prefetch the next W slab")
        asm(f"PADDI p7, p7, {strip}")
        asm(f"DMAIT p7, r15, r10, {K}, 16, 8")
        asm.lines.append(f"{skip_w}:")

    with asm.loop(B, "batches"):
        asm(f"MOVI r7, {slabs}")
        if bias is not None:
            asm(f"PMOVI p5, {bbuf}", "bias tiles of the slab")
        with asm.loop(slabs, f"slabs of {COLS} columns of W and Y"):
            asm("ADDI r7, r7, -1")
            asm(f"MOVI r6, {blocks}")
            with asm.loop(blocks, f"blocks of {ROWS} rows of X and Y"):
                asm("ADDI r6, r6, -1")
                asm("ADDI r13, r13, -1")
                if side is not None:
                    add_const(asm, "r15", "r3", side - y)
                    asm(f"PMOVI p7, {buf['s']}")
                    asm(f"DMAIT p7, r15, r10, {ROWS}, {2 * COLS}, 16", "this block's tiles of the side input")
                if double:
                    prefetch()
                setup = ["PMOV p0, r4", "PMOV p1, r9", f"PADDI p2, p1, {8 * K}", f"PADDI p3, p1, {strip}",
                         f"PADDI p4, p1, {strip + 8 * K}"]
                setup += [f"CZERO c{i}" for i in range(4)] + _loads(SETS[0])
                emit(asm, setup, hw, ONE_LOAD)
                with asm.loop(K // 16, "two steps of 8 k: one set of registers loads while the other multiplies"):
                    emit(asm, _loads(SETS[1]) + _mmuls(SETS[0]) + _loads(SETS[0]) + _mmuls(SETS[1]), hw, ONE_LOAD)
                if not double:
                    prefetch()
                tail = [f"PMOVI p6, {ybuf}"] + [f"VCONV x{i}, c{i}" for i in range(4)]
                if bias is not None:
                    tail += ["VLD x4, p5, 64", "VLD x5, p5, -64"]
                    tail += [f"VADD x{i}, x{i}, x{4 + i // 2}" for i in range(4)]
                if side is not None:
                    tail += [f"PMOVI p0, {buf['s']}"] + [f"VLD x{4 + i}, p0, 64" for i in range(4)]
                tail += epilogue() if epilogue else []
                tail += [f"VST x{i}, p6, 64" for i in range(4)]
                emit(asm, tail, hw)
                asm(f"PMOVI p6, {ybuf}")
                asm(f"DMAOT p6, r3, r10, {ROWS}, {2 * COLS}, 16 || SUB r4, r8, r4",
                    "the 2 x 2 tiles -> 8 rows x 16 columns of Y; swap X buffers")
                add_const(asm, "r3", "r3", ROWS * 2 * N)
            asm("SUB r9, r12, r9", "swap W buffers")
            add_const(asm, "r3", "r3", 2 * COLS - 2 * M * N)
            if bias is not None:
                asm(f"PADDI p5, p5, {2 * 64}")
        add_const(asm, "r3", "r3", 2 * M * N - 2 * N)


def expert_matmul(task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout) -> str | None:
    dims = matmul_dims(task, cfg)
    bias = ext_bytes(layout, "b") if task.name == "linear" else None
    if buffers(hw, dims, bias is not None) is None:
        return None
    asm = Asm(f"{task.title} {cfg.label}", author="kcgym's expert kernels (VMMUL, 8 x 16 blocks, pipelined)")
    gemm(asm, hw, dims, ext_bytes(layout, "X"), ext_bytes(layout, "W"), ext_bytes(layout, "Y"), bias)
    return asm.text()


# task name -> kernel, found by kcgym.sims.vliw.expert
EXPERTS = dict.fromkeys(("matmul", "linear", "batch_matmul"), expert_matmul)
