"""Templates of the level-1 primitives: activations, row-wise normalisations, GEMV and GEMM.

Vectorised but naively scheduled, like compiled C++ without a good scheduler: one
operation per bundle, loops not unrolled, no software pipelining, every DMA issued right
before the data is needed and waited for (no double buffering).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from kcgym.sims.base import MemoryLayout
from kcgym.sims.templates import primitive_templates
from kcgym.sims.vliw.compiler.emit import Asm, ext_bytes
from kcgym.sims.vliw.config import LANES, VECTOR_BYTES, VLIWConfig
from kcgym.tasks.base import Task, TaskConfig

LOG2E = 1.4426950408889634
CHUNK_BYTES = 8192  # elementwise and row-wise tasks stream through DM in chunks of this size


def add_const(asm: Asm, rd: str, rs: str, value: int, tmp: str = "r15") -> None:
    """rd = rs + value, through ``tmp`` when value does not fit ADDI's immediate."""
    if -(1 << 20) <= value < (1 << 20):
        asm(f"ADDI {rd}, {rs}, {value}")
    else:
        asm(f"MOVI {tmp}, {value}")
        asm(f"ADD {rd}, {rs}, {tmp}")


# ---- elementwise activations -------------------------------------------------------------
# Each body maps x0 to x1 with x2..x4 as scratch; constants live in x8..x11.
def _relu(asm: Asm) -> None:
    asm("VMAX x1, x0, x8", "max(x, 0)")


def _silu(asm: Asm) -> None:
    asm("VMUL x2, x0, x8", "-x * log2(e)")
    asm("VEXP2 x2, x2", "exp(-x)")
    asm("VADD x2, x2, x9", "1 + exp(-x)")
    asm("VINV x2, x2", "sigmoid(x)")
    asm("VMUL x1, x0, x2", "x * sigmoid(x)")


def _gelu(asm: Asm) -> None:
    # 0.5 x (1 + tanh(k)) = x * sigmoid(2k), k = sqrt(2/pi) (x + 0.044715 x^3)
    asm("VMUL x2, x0, x0", "x^2")
    asm("VMUL x2, x2, x0", "x^3")
    asm("VMUL x2, x2, x10", "0.044715 x^3")
    asm("VADD x2, x2, x0", "x + 0.044715 x^3")
    asm("VMUL x2, x2, x8", "-2k * log2(e)")
    asm("VEXP2 x2, x2", "exp(-2k)")
    asm("VADD x2, x2, x9", "1 + exp(-2k)")
    asm("VINV x2, x2", "sigmoid(2k)")
    asm("VMUL x1, x0, x2", "gelu(x)")


ELEMENTWISE_CONSTANTS: dict[str, list[tuple[str, float]]] = {
    "relu": [("x8", 0.0)],
    "silu": [("x8", -LOG2E), ("x9", 1.0)],
    "gelu": [("x8", -2.0 * math.sqrt(2.0 / math.pi) * LOG2E), ("x9", 1.0), ("x10", 0.044715)],
}


def _stream(asm: Asm, layout: MemoryLayout, total_bytes: int, body: Callable[[Asm], None]) -> None:
    stream_stage(asm, ext_bytes(layout, "X"), ext_bytes(layout, "Y"), total_bytes, body)


def stream_stage(asm: Asm, src: int, dst: int, total_bytes: int, body: Callable[[Asm], None],
                 second: int | None = None) -> None:
    """DMA ``src`` into DM chunk by chunk, run ``body`` on the chunk in place, DMA it out to ``dst``.

    With ``second``, the same chunk of that tensor comes in too, at DM[CHUNK_BYTES..] (p3 walks it).
    """
    chunk = min(total_bytes, CHUNK_BYTES)
    asm(f"MOVI r1, {src}", "EXT address of the current source chunk")
    asm(f"MOVI r2, {dst}", "EXT address of the current destination chunk")
    if second is not None:
        asm(f"MOVI r3, {second}", "EXT address of the current chunk of the second operand")
    with asm.loop(total_bytes // chunk, f"chunks of {chunk} bytes"):
        asm("PMOVI p0, 0")
        asm(f"DMAI p0, r1, r0, 1, {chunk}", "chunk -> DM[0..]")
        if second is not None:
            asm(f"PMOVI p3, {CHUNK_BYTES}")
            asm(f"DMAI p3, r3, r0, 1, {chunk}", "second operand -> DM[CHUNK_BYTES..]")
            asm(f"ADDI r3, r3, {chunk}")
        asm("PMOVI p1, 0", "read pointer")
        asm("PMOVI p2, 0", "write pointer")
        body(asm)
        asm(f"DMAO p0, r2, r0, 1, {chunk}", "DM[0..] -> Y chunk")
        asm(f"ADDI r1, r1, {chunk}")
        asm(f"ADDI r2, r2, {chunk}")


def _elementwise(task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout,
                 op: Callable[[Asm], None]) -> str:
    asm = Asm(f"{task.title} {cfg.label}")
    for reg, value in ELEMENTWISE_CONSTANTS[task.name]:
        asm(f"VBCST {reg}, {value!r}")
    total = 2 * cfg["n"]
    chunk = min(total, CHUNK_BYTES)

    def body(a: Asm) -> None:
        with a.loop(chunk // VECTOR_BYTES, "vectors of the chunk"):
            a("VLD x0, p1, 64")
            op(a)
            a("VST x1, p2, 64")

    _stream(asm, layout, total, body)
    return asm.text()


# ---- row-wise normalisations -------------------------------------------------------------
# Each body normalises the row in x0 (first 32) and x1 (last 32) in place; constants in x8..x11.
def _softmax_row(asm: Asm) -> None:
    asm("VMAX x2, x0, x1")
    asm("VRMAX x2, x2", "row max in every lane")
    asm("VSUB x3, x0, x2")
    asm("VSUB x4, x1, x2")
    asm("VMUL x3, x3, x8", "(x - max) * log2(e)")
    asm("VMUL x4, x4, x8")
    asm("VEXP2 x0, x3")
    asm("VEXP2 x1, x4")
    asm("VMPY c0, x0, x9", "fp32 copies of the exps")
    asm("VMAC c0, x1, x9")
    asm("VRADD x5, c0", "row sum")
    asm("VINV x5, x5")
    asm("VMUL x0, x0, x5")
    asm("VMUL x1, x1, x5")


def _rmsnorm_row(asm: Asm) -> None:
    asm("VMPY c0, x0, x0", "x^2 in fp32")
    asm("VMAC c0, x1, x1")
    asm("VRADD x5, c0", "sum x^2")
    asm("VMUL x5, x5, x10", "mean")
    asm("VADD x5, x5, x11", "+ eps")
    asm("VRSQRT x5, x5", "1 / rms")
    asm("VMUL x0, x0, x5")
    asm("VMUL x1, x1, x5")


def _layernorm_row(asm: Asm) -> None:
    asm("VMPY c0, x0, x9", "x in fp32")
    asm("VMAC c0, x1, x9")
    asm("VRADD x5, c0", "sum x")
    asm("VMUL x5, x5, x10", "mean")
    asm("VSUB x0, x0, x5")
    asm("VSUB x1, x1, x5")
    asm("VMPY c1, x0, x0", "(x - mean)^2 in fp32")
    asm("VMAC c1, x1, x1")
    asm("VRADD x6, c1")
    asm("VMUL x6, x6, x10", "variance")
    asm("VADD x6, x6, x11", "+ eps")
    asm("VRSQRT x6, x6")
    asm("VMUL x0, x0, x6")
    asm("VMUL x1, x1, x6")


def _rowwise(task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout, row: Callable[[Asm], None]) -> str:
    asm = Asm(f"{task.title} {cfg.label}")
    rows, hidden = task.shape(cfg)  # type: ignore[attr-defined]
    if hidden != 2 * LANES:
        raise ValueError(f"the VLIW {task.name} template needs hidden == {2 * LANES}, got {hidden}")
    asm(f"VBCST x8, {LOG2E!r}")
    asm("VBCST x9, 1.0")
    for reg, name in (("x10", "inv_hidden"), ("x11", "eps")):
        if name in task.constants(cfg):
            asm(f"VBCST x{reg[1:]}, {task.constants(cfg)[name]!r}", name)
    total = 2 * rows * hidden
    chunk = min(total, CHUNK_BYTES)

    def body(a: Asm) -> None:
        with a.loop(chunk // (2 * hidden), "rows of the chunk"):
            a("VLD x0, p1, 64")
            a("VLD x1, p1, 64")
            row(a)
            a("VST x0, p2, 64")
            a("VST x1, p2, 64")

    _stream(asm, layout, total, body)
    return asm.text()


# ---- GEMV ----------------------------------------------------------------------------------
def _gemv(task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout) -> str:
    """y = A @ x: x stays in DM; blocks of rows of A come in by DMA; one dot product per row."""
    asm = Asm(f"{task.title} {cfg.label}")
    M, N = cfg["M"], cfg["N"]
    XBUF, YBUF, ABUF = 0, 2 * N, 2 * N + 2 * M
    rows = max(1, min(M, hw.dma_max_bytes // (2 * N)))
    if ABUF + rows * 2 * N > hw.dm_bytes or M % rows:
        raise ValueError(f"GEMV M={M}, N={N} does not fit the VLIW template")
    asm(f"MOVI r1, {ext_bytes(layout, 'A')}", "next block of rows of A")
    asm(f"MOVI r2, {ext_bytes(layout, 'x')}")
    asm(f"PMOVI p0, {XBUF}")
    asm(f"DMAI p0, r2, r0, 1, {2 * N}", "x -> DM")
    asm("MOVI r4, 0", "row index")
    with asm.loop(M // rows, f"blocks of {rows} rows"):
        asm(f"PMOVI p0, {ABUF}")
        asm(f"DMAI p0, r1, r0, 1, {rows * 2 * N}", "rows of A -> DM")
        with asm.loop(rows, "rows"):
            asm("CZERO c0")
            asm(f"PMOVI p1, {XBUF}")
            with asm.loop(N // LANES, "32 columns at a time"):
                asm("VLD x0, p0, 64")
                asm("VLD x1, p1, 64")
                asm("VMAC c0, x0, x1")
            asm("VRADD x2, c0", "dot product, in every lane")
            asm("ANDI r5, r4, 31", "lane of this row")
            asm("VINS x3, x2, r5")
            asm("SHRI r6, r4, 5")
            asm("SHLI r6, r6, 6")
            asm(f"ADDI r6, r6, {YBUF}")
            asm("PMOV p3, r6", "vector of y holding this row")
            asm("VST x3, p3, 0")
            asm("ADDI r4, r4, 1")
        add_const(asm, "r1", "r1", rows * 2 * N)
    asm(f"MOVI r3, {ext_bytes(layout, 'y')}")
    asm(f"PMOVI p3, {YBUF}")
    asm(f"DMAO p3, r3, r0, 1, {2 * M}", "y -> EXT")
    return asm.text()


# ---- matrix products ------------------------------------------------------------------------------
def matmul_dims(task: Task, cfg: TaskConfig) -> tuple[int, int, int, int]:
    """(batch, M, K, N) of the GEMM-like tasks."""
    if task.name == "linear":
        return 1, cfg["n"], cfg["hin"], cfg["hout"]
    return cfg.params.get("b", 1), cfg["M"], cfg["K"], cfg["N"]


def _matmul(task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout) -> str:
    asm = Asm(f"{task.title} {cfg.label}")
    B, M, K, N = matmul_dims(task, cfg)
    bias = ext_bytes(layout, "b") if task.name == "linear" else None
    matmul_stage(asm, hw, (B, M, K, N), ext_bytes(layout, "X"), ext_bytes(layout, "W"), ext_bytes(layout, "Y"), bias)
    return asm.text()


def matmul_stage(asm: Asm, hw: VLIWConfig, dims: tuple[int, int, int, int], x: int, w: int, y: int,
                 bias: int | None = None) -> None:
    """Y = bf16(X @ W) (+ b, added after rounding) with the matrix unit (EXT byte addresses, row-major).

    Per panel of 4 rows of X: DMAIT brings it in as K/8 consecutive 4x8 A blocks; per 8-column strip
    of W, DMAIT brings the strip in as two K x 4 halves (8x4 B blocks) and two VMMULs per 8 values
    of k accumulate the 4x8 output tile, which is rounded (VCONV), biased, stored, and the panel's
    tiles go out with one DMAOT. The bias comes in once, as 4x8 tiles of its row repeated 4 times.
    """
    B, M, K, N = dims
    WBUF, XBUF = 0, 16 * K  # the W strip (two K x 4 halves), the X panel (K/8 A blocks)
    YBUF = XBUF + 8 * K  # the panel's N/8 output tiles
    BBUF = YBUF + 8 * N  # the bias as N/8 tiles
    end = BBUF + (8 * N if bias is not None else 0)
    if M % 4 or K % 8 or N % 8:
        raise ValueError(f"the VLIW matmul template needs M % 4 == K % 8 == N % 8 == 0 (4x8x4 blocks), "
                         f"got M={M}, K={K}, N={N}")
    if max(16 * K, 8 * N) > hw.dma_max_bytes or end > hw.dm_bytes:
        raise ValueError(f"matmul K={K}, N={N} does not fit the VLIW template: one DMA moves a K x 8 strip of W "
                         f"({16 * K} bytes) and a 4 x N panel of Y ({8 * N} bytes), at most {hw.dma_max_bytes}; "
                         f"the buffers need {end} of {hw.dm_bytes} bytes of DM")
    asm(f"MOVI r1, {x}", "X of this batch")
    asm(f"MOVI r2, {w}", "W of this batch")
    asm(f"MOVI r3, {y}", "Y of this batch")
    asm(f"MOVI r10, {2 * N}", "row stride of W and Y, bytes")
    asm(f"MOVI r11, {2 * K}", "row stride of X, bytes")
    if bias is not None:
        asm(f"MOVI r4, {bias}")
        asm(f"PMOVI p5, {BBUF}")
        asm(f"DMAIT p5, r4, r0, 4, {2 * N}, 16", "bias -> N/8 tiles, each its 8 values in 4 rows")
    with asm.loop(B, "batches"):
        asm("ADD r7, r1, r0", "panel of X")
        asm("ADD r9, r3, r0", "panel of Y")
        with asm.loop(M // 4, "panels of 4 rows"):
            asm(f"PMOVI p5, {XBUF}")
            asm(f"DMAIT p5, r7, r11, 4, {2 * K}, 16", "X panel -> K/8 4x8 blocks")
            asm("ADD r5, r2, r0", "strip of W")
            asm(f"PMOVI p3, {YBUF}", "next output tile")
            if bias is not None:
                asm(f"PMOVI p4, {BBUF}", "next bias tile")
            with asm.loop(N // 8, "8-column strips"):
                asm(f"PMOVI p5, {WBUF}")
                asm(f"DMAIT p5, r5, r10, {K}, 16, 8", "W strip -> two K x 4 halves of 8x4 blocks")
                asm(f"PMOVI p0, {XBUF}", "A blocks")
                asm(f"PMOVI p1, {WBUF}", "B blocks, columns 0-3 of the strip")
                asm(f"PMOVI p2, {WBUF + 8 * K}", "B blocks, columns 4-7")
                asm("CZERO c0")
                with asm.loop(K // 8, "8 values of k"):
                    asm("VLD x0, p0, 64", "A block")
                    asm("VLD x1, p1, 64")
                    asm("VMMUL c0, x0, x1, 0", "left half of the tile")
                    asm("VLD x2, p2, 64")
                    asm("VMMUL c0, x0, x2, 1", "right half")
                asm("VCONV x3, c0", "round the 4x8 tile to bf16")
                if bias is not None:
                    asm("VLD x4, p4, 64")
                    asm("VADD x3, x3, x4", "+ bias")
                asm("VST x3, p3, 64")
                asm("ADDI r5, r5, 16")
            asm(f"PMOVI p5, {YBUF}")
            asm(f"DMAOT p5, r9, r10, 4, {2 * N}, 16", "the panel's tiles -> 4 rows of Y")
            add_const(asm, "r7", "r7", 8 * K)
            add_const(asm, "r9", "r9", 8 * N)
        add_const(asm, "r1", "r1", 2 * M * K)
        add_const(asm, "r2", "r2", 2 * K * N)
        add_const(asm, "r3", "r3", 2 * M * N)


TEMPLATES = primitive_templates(
    _elementwise, _rowwise,
    {"relu": _relu, "silu": _silu, "gelu": _gelu, "softmax": _softmax_row, "rmsnorm": _rmsnorm_row,
     "layernorm": _layernorm_row},
    matmul=_matmul, gemv=_gemv,
)
