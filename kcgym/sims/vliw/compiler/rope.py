"""Template of RoPE: Y = bf16(bf16(X * cos) + bf16((X @ P) * sin)), with P the given signed permutation.

The rotation is the matrix product the reference defines (X @ P, exact in fp32 and exact after
rounding, P being a signed permutation), computed like the matmul template: per 32-column
strip, one broadcast element of X times a 32-column row of P accumulated in c0. The products
then follow the task's rounding points, one vector op each.

Rows of d < 32 elements are a fraction of a vector, so the template works on *row units* of
L = max(d, 32) elements: the flat (s*d) arrays viewed as (s*d/L, L), and P replaced by the
block diagonal diag(P, ..., P) of L/d copies (L x L), whose product with a row unit rotates
each of its rows. That block diagonal is built once, by DMA, in the EXT scratch tensor ``PB``
(zeros out of DM, which starts zeroed, then P written d rows at a time with a strided DMA).
"""

from __future__ import annotations

from collections.abc import Callable

from kcgym.sims.base import MemoryLayout
from kcgym.sims.vliw.compiler.emit import Asm, ext_bytes
from kcgym.sims.vliw.config import LANES, VECTOR_BYTES, VLIWConfig
from kcgym.tasks.base import Task, TaskConfig

CHUNK_BYTES = 4096  # each of X, cos, sin and Y streams through DM in chunks of at most this size


def _unit(d: int) -> int:
    """Elements of a row unit: whole rows, at least one vector."""
    return max(d, LANES)


def _rope_scratch(cfg: TaskConfig) -> list[tuple[str, tuple[int, ...], str]]:
    d = cfg["d"]
    L = _unit(d)
    if d == L:
        return []
    return [("PB", (L, L), f"scratch: diag(P, ..., P), {L // d} copies (the compiler kernel builds it by DMA)")]


SCRATCH: dict[str, Callable[[TaskConfig], list[tuple[str, tuple[int, ...], str]]]] = {"rope": _rope_scratch}


def _rope(task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout) -> str:
    asm = Asm(f"{task.title} {cfg.label}")
    s, d = cfg["s"], cfg["d"]
    L = _unit(d)
    if L % d or L % LANES or (s * d) % L:
        raise ValueError(f"the VLIW rope template needs d to divide or be a multiple of {LANES}, got d={d}")
    units = s * d // L
    per_chunk = max(1, min(units, CHUNK_BYTES // (2 * L)))
    while units % per_chunk:
        per_chunk -= 1
    chunk = per_chunk * 2 * L
    PBUF = 0  # L x L rotation matrix
    XBUF = PBUF + 2 * L * L
    CBUF, SBUF, YBUF = XBUF + chunk, XBUF + 2 * chunk, XBUF + 3 * chunk
    ZBUF = YBUF + chunk  # never written: zeros for the block diagonal
    if hw.dm_bytes < ZBUF + 2 * L * L or hw.dma_max_bytes < 2 * L * L:
        raise ValueError(f"rope d={d} does not fit the VLIW template's data memory")
    x, cos, sin, p, y = (ext_bytes(layout, t) for t in ("X", "cos", "sin", "P", "Y"))
    if d == L:
        asm(f"MOVI r1, {p}")
    else:
        pb = ext_bytes(layout, "PB")
        asm.comment(f"PB = diag(P x {L // d}): zeros, then P on the diagonal blocks (strided DMA out)")
        asm(f"MOVI r1, {pb}")
        asm(f"PMOVI p0, {ZBUF}")
        asm(f"DMAO p0, r1, r0, 1, {2 * L * L}", "zeros -> PB")
        asm(f"MOVI r2, {p}")
        asm(f"PMOVI p0, {XBUF}")
        asm(f"DMAI p0, r2, r0, 1, {2 * d * d}", "P -> DM")
        asm(f"MOVI r3, {2 * L}", "row stride of PB, bytes")
        asm("ADD r2, r1, r0", "diagonal block of PB")
        with asm.loop(L // d, "diagonal blocks"):
            asm(f"DMAO p0, r2, r3, {d}, {2 * d}", "P -> block")
            asm(f"ADDI r2, r2, {2 * d * L + 2 * d}")
    asm(f"PMOVI p0, {PBUF}")
    asm(f"DMAI p0, r1, r0, 1, {2 * L * L}", "rotation matrix -> DM")
    asm(f"MOVI r4, {x}")
    asm(f"MOVI r5, {cos}")
    asm(f"MOVI r6, {sin}")
    asm(f"MOVI r7, {y}")
    with asm.loop(units // per_chunk, f"chunks of {per_chunk} row units of {L} elements"):
        for reg, buf in (("r4", XBUF), ("r5", CBUF), ("r6", SBUF)):
            asm(f"PMOVI p0, {buf}")
            asm(f"DMAI p0, {reg}, r0, 1, {chunk}")
            asm(f"ADDI {reg}, {reg}, {chunk}")
        asm(f"PMOVI p1, {XBUF}", "X elements, for the broadcasts")
        asm(f"PMOVI p3, {XBUF}", "X vectors")
        asm(f"PMOVI p4, {CBUF}")
        asm(f"PMOVI p5, {SBUF}")
        asm(f"PMOVI p6, {YBUF}")
        with asm.loop(per_chunk, "row units"):
            asm(f"PMOVI p2, {PBUF}", "32-column strip of the rotation matrix")
            with asm.loop(L // LANES, "32-column strips"):
                asm("CZERO c0")
                with asm.loop(L, "k"):
                    asm("VLDB x0, p1, 2", "X[i, k] in every lane")
                    asm(f"VLD x1, p2, {2 * L}", "P[k, strip]")
                    asm("VMAC c0, x1, x0")
                asm(f"PADDI p1, p1, {-2 * L}", "back to the row unit's start")
                asm(f"PADDI p2, p2, {VECTOR_BYTES - 2 * L * L}", "next strip of P")
                asm("VCONV x2, c0", "rotate_half(X), exact")
                asm("VLD x3, p3, 64")
                asm("VLD x4, p4, 64")
                asm("VMUL x3, x3, x4", "bf16(X * cos)")
                asm("VLD x5, p5, 64")
                asm("VMUL x2, x2, x5", "bf16(rot * sin)")
                asm("VADD x3, x3, x2")
                asm("VST x3, p6, 64")
            asm(f"PADDI p1, p1, {2 * L}", "next row unit")
        asm(f"PMOVI p0, {YBUF}")
        asm(f"DMAO p0, r7, r0, 1, {chunk}", "Y chunk")
        asm(f"ADDI r7, r7, {chunk}")
    return asm.text()


TEMPLATES: dict[str, Callable[[Task, TaskConfig, VLIWConfig, MemoryLayout], str]] = {"rope": _rope}
