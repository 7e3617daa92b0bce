"""Expert GEMM / Linear / BatchMatMul: four output rows at once, one VMACL per cycle.

For each 32-column strip of W (resident in DM) and each block of four rows of X: the block's
X rows come in by DMA into one of two buffers while the previous block is computed (double
buffering); the inner loop over 32-element chunks of K is one list-scheduled block in which
each row of the W strip is loaded once and used by four VMACLs (one per output row, four
accumulators, so the multiply latency is hidden), with a lane register selecting X[i, k].
"""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.vliw.compiler.emit import Asm, ext_bytes
from kcgym.sims.vliw.compiler.primitives import add_const, matmul_dims
from kcgym.sims.vliw.config import LANES, VECTOR_BYTES, VLIWConfig
from kcgym.sims.vliw.expert.schedule import emit
from kcgym.tasks.base import Task, TaskConfig

ROWS = 4  # output rows computed together (one accumulator each)


def _k_block() -> list[str]:
    """32 values of k for the four rows: X chunks in x0-x3, W rows rotate through x4-x7."""
    ops = [f"VLD x{r}, p{r}, 64" for r in range(ROWS)]
    for k in range(LANES):
        lane, w = f"r{12 + k % 4}", f"x{4 + k % 4}"
        ops += [f"MOVI {lane}, {k}", f"VLD {w}, p4, 64"]
        ops += [f"VMACL c{r}, {w}, x{r}, {lane}" for r in range(ROWS)]
    return ops


def expert_matmul(task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout) -> str | None:
    B, M, K, N = matmul_dims(task, cfg)
    wbuf, xbufs = 0, (K * VECTOR_BYTES, K * VECTOR_BYTES + ROWS * 2 * K)
    ybuf = xbufs[1] + ROWS * 2 * K
    bbuf = ybuf + ROWS * VECTOR_BYTES
    if bbuf + VECTOR_BYTES > hw.dm_bytes or M % ROWS or K % LANES or N % LANES:
        return None  # the W strip does not fit in DM (Linear C5: K = 1024)
    bias = task.name == "linear"
    asm = Asm(f"{task.title} {cfg.label}", author="kcgym's expert kernels (4 rows x 32 columns, list-scheduled)")
    xblock = ROWS * 2 * K  # bytes of one block of X rows
    asm(f"MOVI r1, {ext_bytes(layout, 'X')}", "X of this batch")
    asm(f"MOVI r2, {ext_bytes(layout, 'W')}", "W of this batch")
    asm(f"MOVI r3, {ext_bytes(layout, 'Y')}", "Y of this batch")
    asm(f"MOVI r10, {2 * N}", "row stride of W and Y, bytes")
    asm(f"MOVI r8, {xbufs[0] + xbufs[1]}", "sum of the two X buffers")
    with asm.loop(B, "batches"):
        asm("PMOVI p6, 0", "byte offset of the strip in a row of W / Y")
        with asm.loop(N // LANES, "32-column strips"):
            asm("MOVP r7, p6")
            asm("ADD r7, r2, r7", "W strip")
            rows_per_dma = hw.dma_max_bytes // VECTOR_BYTES
            for k0 in range(0, K, rows_per_dma):
                asm(f"PMOVI p7, {wbuf + k0 * VECTOR_BYTES}")
                asm(f"DMAI p7, r7, r10, {min(rows_per_dma, K - k0)}, {VECTOR_BYTES}", "W strip -> DM")
                if k0 + rows_per_dma < K:
                    add_const(asm, "r7", "r7", rows_per_dma * 2 * N, tmp="r9")
            if bias:
                asm("MOVP r7, p6")
                add_const(asm, "r7", "r7", ext_bytes(layout, "b"), tmp="r9")
                asm(f"PMOVI p7, {bbuf}")
                asm(f"DMAI p7, r7, r0, 1, {VECTOR_BYTES}", "bias chunk")
                asm(f"PMOVI p7, {bbuf}")
                asm("VLD x9, p7, 0")
            asm("ADD r9, r1, r0", "X block")
            asm("MOVP r11, p6")
            asm("ADD r11, r3, r11", "Y block")
            asm(f"MOVI r4, {xbufs[0]}", "current X buffer")
            asm("PMOV p7, r4")
            asm(f"DMAI p7, r9, r0, 1, {xblock}", "first X block")
            asm(f"MOVI r6, {M // ROWS}", "blocks left")
            with asm.loop(M // ROWS, f"blocks of {ROWS} rows"):
                asm("ADDI r6, r6, -1")
                asm("SUB r5, r8, r4")
                skip = asm.fresh("last")
                asm(f"BEQZ r6, {skip} || PMOV p7, r5")
                asm(f"ADDI r7, r9, {xblock}")
                asm(f"DMAI p7, r7, r0, 1, {xblock}", "prefetch the next X block")
                asm.lines.append(f"{skip}:")
                asm("PMOV p0, r4 || CZERO c0")
                asm(f"PADDI p1, p0, {2 * K} || CZERO c1")
                asm(f"PADDI p2, p1, {2 * K} || CZERO c2")
                asm(f"PADDI p3, p2, {2 * K} || CZERO c3")
                asm(f"PMOVI p4, {wbuf}")
                with asm.loop(K // LANES, "chunks of 32 k"):
                    emit(asm, _k_block(), hw)
                tail = [f"PMOVI p5, {ybuf}"]
                for r in range(ROWS):
                    tail.append(f"VCONV x{r}, c{r}")
                    if bias:
                        tail.append(f"VADD x{r}, x{r}, x9")
                    tail.append(f"VST x{r}, p5, 64")
                emit(asm, tail, hw)
                asm(f"PMOVI p5, {ybuf}")
                asm(f"DMAO p5, r11, r10, {ROWS}, {VECTOR_BYTES} || ADDI r9, r9, {xblock}", "4 x 32 outputs -> Y")
                add_const(asm, "r11", "r11", ROWS * 2 * N, tmp="r7")
                asm("SUB r4, r8, r4", "swap X buffers")
            asm(f"PADDI p6, p6, {VECTOR_BYTES}")
        add_const(asm, "r1", "r1", 2 * M * K, tmp="r7")
        add_const(asm, "r2", "r2", 2 * K * N, tmp="r7")
        add_const(asm, "r3", "r3", 2 * M * N, tmp="r7")
    return asm.text()
