"""Per-operator templates that read their operands from HBM and write their result back to HBM.

The composite templates (MLPs, attention, decoder blocks) are sequences of these stages, as
PLENA's compiler composes its per-op templates: each stage prefetches what it needs right
before using it, computes, stores its result, and the next stage prefetches that result
again. Nothing is kept on chip across stages and nothing is fused; that is the baseline the
agent is meant to beat.

A stage addresses a 2-D window of an HBM tensor through a :class:`View` (row stride ``ld``),
so a head's columns of Q, or a padded scratch matrix, need no copies. Every stage sets the
address registers, STRIDE and gp registers it uses; none survives a stage.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kcgym.sims.base import MemoryLayout
from kcgym.sims.npu.compiler.emit import Asm
from kcgym.sims.npu.compiler.primitives import _relu, _silu
from kcgym.sims.npu.config import NPUConfig

NEG_LARGE = -3.0e38  # fills the padding columns of a score matrix: exp() of it is 0 after scaling


@dataclass(frozen=True)
class View:
    """Rows ``0..rows-1``, columns ``0..cols-1`` of a row-major HBM matrix: element [i, j] is at
    ``offset + i * ld + j``."""

    offset: int
    rows: int
    cols: int
    ld: int

    @staticmethod
    def of(layout: MemoryLayout, name: str) -> View:
        r = layout.region(name)
        rows, cols = (1, r.shape[0]) if len(r.shape) == 1 else (r.size // r.shape[-1], r.shape[-1])
        return View(r.offset, rows, cols, cols)

    def columns(self, start: int, count: int) -> View:
        if start + count > self.cols:
            raise ValueError(f"columns {start}..{start + count - 1} outside a view of {self.cols} columns")
        return View(self.offset + start, self.rows, count, self.ld)

    def top(self, rows: int) -> View:
        """The first ``rows`` rows (a padded scratch matrix's valid part)."""
        return View(self.offset, rows, self.cols, self.ld)

    @property
    def contiguous(self) -> bool:
        return self.ld == self.cols


def _set_base(asm: Asm, areg: str, offset: int, what: str) -> None:
    asm.li("gp1", offset, f"&{what}")
    asm(f"C_SET_ADDR_REG {areg}, gp1, gp0")


def _set_stride(asm: Asm, value: int, what: str) -> None:
    asm.li("gp1", value)
    asm("C_SET_STRIDE_REG gp1", what)


# ---- matrix products -----------------------------------------------------------------------------
def gemm(asm: Asm, hw: NPUConfig, x: View, w: View, y: View, *, transpose_w: bool = False,
         pad_fill: float | None = None) -> None:
    """y = x @ w (or x @ w^T), fp32 accumulation over all of K, one bf16 write-out per block.

    Loop nest: 64-column strips of y; the strip's K/64 weight tiles go to MSRAM; then per BLEN
    rows of x: prefetch them, M_MM (M_TMM) over the k-tiles for each BLEN x BLEN block, write
    out, store the BLEN x 64 strip. With ``transpose_w`` the weight view is (N, K) and tiles
    hold N rows, read by M_TMM. A strip narrower than 64 columns (N < 64) leaves the other
    columns of the stored rows at ``pad_fill`` (y's ``ld`` must cover them).
    """
    L, B, V = hw.MLEN, hw.BLEN, hw.VLEN
    M, K = x.rows, x.cols
    N = w.rows if transpose_w else w.cols
    if (w.cols if transpose_w else w.rows) != K:
        raise ValueError(f"gemm: inner dimensions differ ({K} vs {w.cols if transpose_w else w.rows})")
    if K % L or M % B or N % B or y.rows != M:
        raise ValueError(f"gemm: needs K % {L} == 0, M and N % {B} == 0 and y of {M} rows (M={M}, K={K}, N={N})")
    kt = K // L
    if kt > hw.msram_tiles:
        raise ValueError(f"gemm: K={K} needs {kt} MSRAM tiles; this NPU has {hw.msram_tiles}")
    if kt * B + B > hw.vsram_rows - B:
        raise ValueError("gemm: VSRAM too small for the x block and the output strip")
    if N < L and (pad_fill is None or y.ld < L):
        raise ValueError("gemm: a strip narrower than MLEN needs pad_fill and a padded y")
    out = kt * B * V  # VSRAM: x block rows 0..kt*B-1, then the BLEN output rows
    mm = "M_TMM" if transpose_w else "M_MM"
    block_step = B * L if transpose_w else B  # MSRAM address step from one output column block to the next
    asm.comment(f"gemm: ({M}x{K}) @ ({'w^T' if transpose_w else 'w'}: {N} outputs), {kt} k-tiles")
    _set_base(asm, "a0", x.offset, "x")
    _set_base(asm, "a1", w.offset, "w")
    _set_base(asm, "a2", y.offset, "y")
    if pad_fill is not None and N < L:
        asm(f"S_LI_FP f1, {pad_fill}")
        for r in range(B):
            asm.li("gp3", out + r * V)
            asm("V_MUL_VF gp3, gp3, f0", "clear the output strip ...")
            asm("V_ADD_VF gp3, gp3, f1", "... and fill its padding columns")
    # VSRAM addresses of k-tiles 1.. of the x block live in registers inside the column-block loop, so
    # that most M_MMs cost one address add; the strip and row-block offsets (gp4-gp7) wait in INT SRAM
    rv_regs = ["gp1", "gp2", "gp11", "gp12", "gp9"] + (["gp4", "gp5", "gp6", "gp7"] if kt > 6 else [])
    spilled = rv_regs[5:]

    def strip(width: int) -> None:
        _set_stride(asm, w.ld, "w rows")
        for k in range(kt):
            asm.li("gp2", k * L if transpose_w else k * L * w.ld)
            asm("S_ADD_INT gp2, gp2, gp4")
            asm.li("gp3", k * L * L)
            asm("H_PREFETCH_M gp3, gp2, a1, 1", f"w tile k={k} -> MSRAM tile {k}")
        asm.li("gp6", 0, "x offset of the row block")
        asm.li("gp7", 0, "y offset of the row block")
        with asm.loop("gp14", M // B, f"blocks of {B} rows"):
            _set_stride(asm, x.ld, "x rows")
            for k in range(kt):
                asm(f"S_ADDI_INT gp2, gp6, {k * L}")
                asm.li("gp3", k * B * V)
                asm(f"H_PREFETCH_V gp3, gp2, a0, 1, {B}", f"x block, k-tile {k}")
            for i, reg in enumerate(spilled):
                asm(f"S_ST_INT {reg}, gp0, {i}", "spill")
            for k in range(1, min(kt, len(rv_regs) + 1)):
                asm.li(rv_regs[k - 1], k * B * V)
            asm.li("gp8", 0, "MSRAM address of the column block")
            asm.li("gp10", out, "write-out address")
            with asm.loop("gp13", width // B, f"{B}-column blocks"):
                asm(f"{mm} gp8, gp0", "k-tile 0")
                moved = 0  # gp8 = the block's MSRAM address + moved (stepped for k-tiles without a register)
                for k in range(1, kt):
                    if k <= len(rv_regs):
                        asm(f"S_ADDI_INT gp3, gp8, {k * L * L - moved}")
                        asm(f"{mm} gp3, {rv_regs[k - 1]}", f"k-tile {k}")
                    else:
                        asm(f"S_ADDI_INT gp8, gp8, {k * L * L - moved}")
                        moved = k * L * L
                        asm.li("gp3", k * B * V)
                        asm(f"{mm} gp8, gp3", f"k-tile {k}")
                asm("M_MM_WO gp10, 0")
                asm(f"S_ADDI_INT gp8, gp8, {block_step - moved}")
                asm(f"S_ADDI_INT gp10, gp10, {B}")
            for i, reg in enumerate(spilled):
                asm(f"S_LD_INT {reg}, gp0, {i}", "restore")
            _set_stride(asm, y.ld, "y rows")
            asm("S_ADD_INT gp2, gp7, gp5")
            asm.li("gp3", out)
            asm(f"H_STORE_V gp3, gp2, a2, 1, {B}", "store the strip")
            asm.li("gp1", B * x.ld)
            asm("S_ADD_INT gp6, gp6, gp1")
            asm.li("gp1", B * y.ld)
            asm("S_ADD_INT gp7, gp7, gp1")
        asm.li("gp1", L * w.ld if transpose_w else L)
        asm("S_ADD_INT gp4, gp4, gp1", "next strip of w")
        asm(f"S_ADDI_INT gp5, gp5, {L}", "next strip of y")

    asm.li("gp4", 0, "w offset of the strip")
    asm.li("gp5", 0, "y offset of the strip")
    full, rest = divmod(N, L)
    if full:
        with asm.loop("gp15", full, f"{L}-column strips"):
            strip(L)
    if rest:
        strip(rest)


# ---- elementwise stages on contiguous tensors ----------------------------------------------------
def _flat_chunks(asm: Asm, hw: NPUConfig, size: int, body: Callable[[int], None]) -> None:
    """Run ``body(rows)`` per chunk of V_PREFETCH_ROWS rows (gp2 = the chunk's element offset)."""
    R, V = hw.v_prefetch_rows, hw.VLEN
    if size % V:
        raise ValueError(f"elementwise stage: {size} elements is not a multiple of VLEN={V}")
    full, rest = divmod(size // V, R)
    asm.li("gp2", 0, "element offset of the chunk")
    for count, rows in ((full, R), (1 if rest else 0, rest)):
        if count:
            with asm.loop("gp15", count, f"chunks of {rows} rows"):
                body(rows)
                asm.li("gp1", rows * V)
                asm("S_ADD_INT gp2, gp2, gp1")


def _contiguous(*views: View) -> None:
    for v in views:
        if not v.contiguous:
            raise ValueError("elementwise stages need contiguous views")


def unary(asm: Asm, hw: NPUConfig, op: str, x: View, y: View) -> None:
    """y = op(x) elementwise, op in {"silu", "relu"} (the level-1 activation bodies)."""
    _contiguous(x, y)
    R, V = hw.v_prefetch_rows, hw.VLEN
    body = {"silu": _silu, "relu": _relu}[op]
    asm.comment(f"{op}: {x.rows}x{x.cols}")
    _set_base(asm, "a0", x.offset, "x")
    _set_base(asm, "a1", y.offset, "y")
    asm("S_LI_FP f1, -1.0")
    asm("S_LI_FP f2, 1.0")
    asm.li("gp10", R * V, "scratch row t")
    asm.li("gp11", (R + 1) * V, "scratch row u")

    def chunk(rows: int) -> None:
        asm(f"H_PREFETCH_V gp0, gp2, a0, 0, {rows}")
        for r in range(rows):
            asm.li("gp4", r * V)
            body(asm, "gp4", "gp4", "gp10", "gp11")
        asm(f"H_STORE_V gp0, gp2, a1, 0, {rows}")

    _flat_chunks(asm, hw, x.rows * x.cols, chunk)


def binary(asm: Asm, hw: NPUConfig, op: str, a: View, b: View, y: View) -> None:
    """y = a op b elementwise, op in {"add", "mul"}; one bf16 rounding."""
    _contiguous(a, b, y)
    R, V = hw.v_prefetch_rows, hw.VLEN
    mnemonic = {"add": "V_ADD_VV", "mul": "V_MUL_VV"}[op]
    asm.comment(f"{op}: {a.rows}x{a.cols}")
    _set_base(asm, "a0", a.offset, "a")
    _set_base(asm, "a1", b.offset, "b")
    _set_base(asm, "a2", y.offset, "y")
    asm.li("gp10", R * V, "VSRAM chunk of b")

    def chunk(rows: int) -> None:
        asm(f"H_PREFETCH_V gp0, gp2, a0, 0, {rows}")
        asm(f"H_PREFETCH_V gp10, gp2, a1, 0, {rows}")
        for r in range(rows):
            asm.li("gp4", r * V)
            asm.li("gp5", (R + r) * V)
            asm(f"{mnemonic} gp4, gp4, gp5")
        asm(f"H_STORE_V gp0, gp2, a2, 0, {rows}")

    _flat_chunks(asm, hw, a.rows * a.cols, chunk)


def rope_combine(asm: Asm, hw: NPUConfig, x: View, cos: View, sin: View, rot: View, y: View) -> None:
    """y = x * cos + rot * sin elementwise (three vector ops, each rounded)."""
    _contiguous(x, cos, sin, rot, y)
    R, V = hw.v_prefetch_rows, hw.VLEN
    asm.comment(f"rope: x * cos + rotate_half(x) * sin, {x.rows}x{x.cols}")
    for areg, view, what in (("a0", x, "x"), ("a1", cos, "cos"), ("a2", sin, "sin"), ("a3", rot, "rot"),
                             ("a4", y, "y")):
        _set_base(asm, areg, view.offset, what)
    for i, reg in enumerate(("gp10", "gp11", "gp12")):
        asm.li(reg, (i + 1) * R * V)

    def chunk(rows: int) -> None:
        asm(f"H_PREFETCH_V gp0, gp2, a0, 0, {rows}")
        asm(f"H_PREFETCH_V gp10, gp2, a1, 0, {rows}")
        asm(f"H_PREFETCH_V gp11, gp2, a2, 0, {rows}")
        asm(f"H_PREFETCH_V gp12, gp2, a3, 0, {rows}")
        for r in range(rows):
            asm.li("gp4", r * V)
            asm.li("gp5", (R + r) * V)
            asm.li("gp6", (2 * R + r) * V)
            asm.li("gp7", (3 * R + r) * V)
            asm("V_MUL_VV gp5, gp4, gp5", "x * cos")
            asm("V_MUL_VV gp6, gp7, gp6", "rot * sin")
            asm("V_ADD_VV gp4, gp5, gp6")
        asm(f"H_STORE_V gp0, gp2, a4, 0, {rows}")

    _flat_chunks(asm, hw, x.rows * x.cols, chunk)


# ---- row-wise stages -----------------------------------------------------------------------------
def _row_stage(asm: Asm, hw: NPUConfig, x: View, y: View, what: str, body: Callable[[list[int]], None]) -> None:
    """For each row of x (cols/VLEN VSRAM rows): load it, ``body(row addresses)``, store it to y."""
    R, V = hw.v_prefetch_rows, hw.VLEN
    if x.cols % V or x.cols != y.cols or x.rows != y.rows:
        raise ValueError(f"{what}: rows must be whole VSRAM rows and x, y alike ({x} vs {y})")
    chunks = x.cols // V
    asm.comment(f"{what}: {x.rows} rows of {x.cols}")
    _set_base(asm, "a0", x.offset, "x")
    _set_base(asm, "a1", y.offset, "y")
    asm.li("gp6", 0, "x offset of the row")
    asm.li("gp7", 0, "y offset of the row")
    rows = [c * V for c in range(chunks)]
    with asm.loop("gp15", x.rows, "rows"):
        for c in range(0, chunks, R):
            n = min(R, chunks - c)
            asm(f"S_ADDI_INT gp2, gp6, {c * V}")
            asm.li("gp3", c * V)
            asm(f"H_PREFETCH_V gp3, gp2, a0, 0, {n}")
        body(rows)
        for c in range(0, chunks, R):
            n = min(R, chunks - c)
            asm(f"S_ADDI_INT gp2, gp7, {c * V}")
            asm.li("gp3", c * V)
            asm(f"H_STORE_V gp3, gp2, a1, 0, {n}")
        asm.li("gp1", x.ld)
        asm("S_ADD_INT gp6, gp6, gp1")
        asm.li("gp1", y.ld)
        asm("S_ADD_INT gp7, gp7, gp1")


def _each(asm: Asm, rows: list[int], text: str) -> None:
    """Emit ``text`` once per VSRAM row of the current row, {r} the row's address (in gp4)."""
    for addr in rows:
        asm.li("gp4", addr)
        asm(text.format(r="gp4"))


def rmsnorm(asm: Asm, hw: NPUConfig, layout: MemoryLayout, x: View, y: View) -> None:
    """y = x / sqrt(mean(x^2) + eps) per row: fp32 sum of squares, fp32 scalar rsqrt, bf16 scale."""
    R, V = hw.v_prefetch_rows, hw.VLEN
    tmp = ((x.cols // V + R - 1) // R) * R * V  # a VSRAM row after the row's chunks

    def body(rows: list[int]) -> None:
        asm.li("gp5", tmp)
        asm("S_ADD_FP f1, f0, f0")
        for addr in rows:
            asm.li("gp4", addr)
            asm("V_MUL_VV gp5, gp4, gp4", "x^2")
            asm("V_RED_SUM f1, gp5", "sum x^2 (fp32)")
        asm("S_MUL_FP f1, f1, f6", "mean")
        asm("S_ADD_FP f1, f1, f7", "+ eps")
        asm("S_SQRT_FP f1, f1")
        asm("S_RECI_FP f1, f1", "1 / rms")
        _each(asm, rows, "V_MUL_VF {r}, {r}, f1")

    asm(f"S_LD_FP f6, gp0, {layout.region('inv_hidden').offset}", "f6 = inv_hidden")
    asm(f"S_LD_FP f7, gp0, {layout.region('eps').offset}", "f7 = eps")
    _row_stage(asm, hw, x, y, "rmsnorm", body)


def softmax(asm: Asm, hw: NPUConfig, layout: MemoryLayout, s: View, p: View) -> None:
    """p = softmax(s * scale) per row, three passes over the row held in VSRAM: max, exp and
    sum, normalise. Padding columns holding NEG_LARGE come out as 0."""

    def body(rows: list[int]) -> None:
        _each(asm, rows, "V_MUL_VF {r}, {r}, f5")
        asm(f"S_LI_FP f1, {NEG_LARGE}")
        _each(asm, rows, "V_RED_MAX f1, {r}")
        asm("S_ADD_FP f2, f0, f0")
        for addr in rows:
            asm.li("gp4", addr)
            asm("V_SUB_VF gp4, gp4, f1", "x - max")
            asm("V_EXP_V gp4, gp4")
            asm("V_RED_SUM f2, gp4", "row sum (fp32)")
        asm("S_RECI_FP f2, f2")
        _each(asm, rows, "V_MUL_VF {r}, {r}, f2")

    asm(f"S_LD_FP f5, gp0, {layout.region('scale').offset}", "f5 = scale")
    _row_stage(asm, hw, s, p, "softmax", body)


def copy_rows(asm: Asm, hw: NPUConfig, x: View, y: View) -> None:
    """y[:x.rows] = x, for padding an input into a scratch matrix (rows of whole VSRAM rows)."""
    _row_stage(asm, hw, x, y.top(x.rows), "copy", lambda rows: None)


def zero_rows(asm: Asm, hw: NPUConfig, y: View, first: int, zero_row: int) -> None:
    """y[first:] = 0, storing the never-written (zero) VSRAM rows from ``zero_row``: the padding
    rows of a K or V matrix must be finite, since 0 * NaN poisons a product."""
    V = hw.VLEN
    if first >= y.rows:
        return
    asm.comment(f"zero rows {first}..{y.rows - 1}")
    _set_base(asm, "a0", y.offset, "y")
    asm.li("gp3", zero_row * V, "zero VSRAM rows")
    for r in range(first, y.rows):
        for c in range(0, y.cols, V):
            asm.li("gp2", r * y.ld + c)
            asm("H_STORE_V gp3, gp2, a0, 0, 1")
