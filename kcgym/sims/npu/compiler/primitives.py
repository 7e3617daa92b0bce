"""Templates of the level-1 primitives: activations, row-wise normalisations, GEMM/GEMV."""

from __future__ import annotations

from collections.abc import Callable

from kcgym.sims.base import MemoryLayout
from kcgym.sims.npu.compiler.emit import Asm, base_address, load_constant, prefetch_weight_tiles
from kcgym.sims.npu.config import NPUConfig
from kcgym.sims.templates import primitive_templates
from kcgym.tasks.base import Task, TaskConfig


# ---- elementwise activations -------------------------------------------------------------
# Each body maps VSRAM row x (address register) to row y using scratch rows t (and u).
def _relu(asm: Asm, x: str, y: str, t: str, u: str) -> None:
    asm(f"V_MAX_VF {y}, {x}, f0", "max(x, 0)")


def _silu(asm: Asm, x: str, y: str, t: str, u: str) -> None:
    asm(f"V_MUL_VF {t}, {x}, f1", "-x")
    asm(f"V_EXP_V {t}, {t}", "exp(-x)")
    asm(f"V_ADD_VF {t}, {t}, f2", "1 + exp(-x)")
    asm(f"V_RECI_V {t}, {t}", "sigmoid(x)")
    asm(f"V_MUL_VV {y}, {x}, {t}", "x * sigmoid(x)")


def _gelu(asm: Asm, x: str, y: str, t: str, u: str) -> None:
    # 0.5 x (1 + tanh(k)) = x * sigmoid(2k), k = sqrt(2/pi) (x + 0.044715 x^3)
    asm(f"V_MUL_VV {t}, {x}, {x}", "x^2")
    asm(f"V_MUL_VV {t}, {t}, {x}", "x^3")
    asm(f"V_MUL_VF {t}, {t}, f3", "0.044715 x^3")
    asm(f"V_ADD_VV {t}, {t}, {x}", "x + 0.044715 x^3")
    asm(f"V_MUL_VF {t}, {t}, f4", "-2k")
    asm(f"V_EXP_V {t}, {t}", "exp(-2k)")
    asm(f"V_ADD_VF {t}, {t}, f2", "1 + exp(-2k)")
    asm(f"V_RECI_V {t}, {t}", "sigmoid(2k)")
    asm(f"V_MUL_VV {y}, {x}, {t}", "gelu(x)")


def _elementwise(
    task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout, body: Callable[[Asm, str, str, str, str], None]
) -> str:
    asm = Asm(f"{task.title} {cfg.label}")
    n, R, V = cfg["n"], hw.v_prefetch_rows, hw.VLEN
    chunk = R * V
    base_address(asm, layout, "X", "a0")
    base_address(asm, layout, "Y", "a1")
    asm("S_LI_FP f1, -1.0")
    asm("S_LI_FP f2, 1.0")
    if task.name == "gelu":
        load_constant(asm, layout, "gelu_coeff", "f3")
        load_constant(asm, layout, "sqrt_2_over_pi", "f4")
        asm("S_LI_FP f5, -2.0")
        asm("S_MUL_FP f4, f4, f5", "-2 sqrt(2/pi)")
    asm.li("gp2", 0, "HBM offset of the current chunk")
    asm.li("gp3", chunk, "elements per chunk")
    asm.li("gp10", R * V, "VSRAM scratch row t")
    asm.li("gp11", (R + 1) * V, "VSRAM scratch row u")
    full, rest = divmod(n, chunk)
    for count, rows in ((full, R), (1 if rest else 0, rest // V)):
        if not count:
            continue
        with asm.loop("gp15", count, f"chunks of {rows} rows"):
            asm(f"H_PREFETCH_V gp0, gp2, a0, 0, {rows}", "load the chunk (consumed right away)")
            for r in range(rows):
                asm.li("gp4", r * V, f"row {r}")
                body(asm, "gp4", "gp4", "gp10", "gp11")
            asm(f"H_STORE_V gp0, gp2, a1, 0, {rows}", "write the chunk back")
            asm("S_ADD_INT gp2, gp2, gp3")
    return asm.text()


# ---- row-wise normalisations -------------------------------------------------------------
def _softmax_row(asm: Asm, x: str, t: str) -> None:
    asm("S_LI_FP f1, -3.0e38")
    asm(f"V_RED_MAX f1, {x}", "row max")
    asm(f"V_SUB_VF {t}, {x}, f1", "x - max")
    asm(f"V_EXP_V {t}, {t}")
    asm("S_ADD_FP f2, f0, f0")
    asm(f"V_RED_SUM f2, {t}", "row sum")
    asm("S_RECI_FP f2, f2")
    asm(f"V_MUL_VF {x}, {t}, f2", "normalise")


def _rmsnorm_row(asm: Asm, x: str, t: str) -> None:
    asm(f"V_MUL_VV {t}, {x}, {x}", "x^2")
    asm("S_ADD_FP f1, f0, f0")
    asm(f"V_RED_SUM f1, {t}", "sum x^2")
    asm("S_MUL_FP f1, f1, f6", "mean")
    asm("S_ADD_FP f1, f1, f7", "+ eps")
    asm("S_SQRT_FP f1, f1")
    asm("S_RECI_FP f1, f1", "1 / rms")
    asm(f"V_MUL_VF {x}, {x}, f1")


def _layernorm_row(asm: Asm, x: str, t: str) -> None:
    asm("S_ADD_FP f1, f0, f0")
    asm(f"V_RED_SUM f1, {x}", "sum x")
    asm("S_MUL_FP f1, f1, f6", "mean")
    asm(f"V_SUB_VF {x}, {x}, f1", "x - mean")
    asm(f"V_MUL_VV {t}, {x}, {x}")
    asm("S_ADD_FP f2, f0, f0")
    asm(f"V_RED_SUM f2, {t}", "sum (x - mean)^2")
    asm("S_MUL_FP f2, f2, f6", "variance")
    asm("S_ADD_FP f2, f2, f7", "+ eps")
    asm("S_SQRT_FP f2, f2")
    asm("S_RECI_FP f2, f2")
    asm(f"V_MUL_VF {x}, {x}, f2")


def _rowwise(
    task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout, body: Callable[[Asm, str, str], None]
) -> str:
    asm = Asm(f"{task.title} {cfg.label}")
    rows, hidden = task.shape(cfg)  # type: ignore[attr-defined]
    R, V = hw.v_prefetch_rows, hw.VLEN
    if hidden != V:
        raise ValueError(f"the NPU {task.name} template needs hidden == VLEN ({V}), got {hidden}")
    base_address(asm, layout, "X", "a0")
    base_address(asm, layout, "Y", "a1")
    if task.name != "softmax":
        load_constant(asm, layout, "inv_hidden", "f6")
        load_constant(asm, layout, "eps", "f7")
    asm.li("gp2", 0, "HBM offset of the current rows")
    asm.li("gp3", R * V)
    asm.li("gp10", R * V, "VSRAM scratch row")
    with asm.loop("gp15", rows // R, f"blocks of {R} rows"):
        asm(f"H_PREFETCH_V gp0, gp2, a0, 0, {R}")
        for r in range(R):
            asm.li("gp4", r * V, f"row {r}")
            body(asm, "gp4", "gp10")
        asm(f"H_STORE_V gp0, gp2, a1, 0, {R}")
        asm("S_ADD_INT gp2, gp2, gp3")
    return asm.text()


# ---- matrix products --------------------------------------------------------------------------
X_TILE_REGS = ("gp0", "gp5", "gp6", "gp7")  # VSRAM addresses of the X block's k-tiles (gp0 = 0: k-tile 0)


def _matmul_core(asm: Asm, hw: NPUConfig, M: int, K: int, N: int, bias: bool) -> None:
    """Y[M,N] = X[M,K] @ W[K,N] (+ b) with a0=&X, a1=&W, a2=&Y (a3=&b) of the current batch.

    For each MLEN-column strip of W: load its K/MLEN tiles; for each block of BLEN rows of X: load
    the rows, compute the BLEN x MLEN output strip block by block, write it back. Up to
    ``len(X_TILE_REGS)`` k-tiles keep their X address in a register; more (a small MLEN) set the
    scratch register gp3 before each use.
    """
    B, L = hw.BLEN, hw.MLEN
    kt = K // L
    XBUF = 0  # VSRAM rows 0 .. kt*B-1 hold the X block, k-tile by k-tile
    OBUF = kt * B * L  # then BLEN output rows
    BBUF = OBUF + B * L  # then BLEN copies of the bias chunk
    held = kt <= len(X_TILE_REGS)
    for k in range(1, kt if held else 0):
        asm.li(X_TILE_REGS[k], XBUF + k * B * L, f"X block, k-tile {k}")

    def xreg(k: int) -> str:
        """The register holding the VSRAM address of k-tile k of the X block (set here when not held)."""
        if held or k == 0:
            return X_TILE_REGS[k]
        asm.li("gp3", XBUF + k * B * L, f"X block, k-tile {k}")
        return "gp3"
    asm.li("gp8", 0, "column offset of the W strip / Y strip")
    with asm.loop("gp14", N // L, f"{L}-column strips of W and Y"):
        prefetch_weight_tiles(asm, L, N, kt, "W rows are N apart", lambda k: f"W tile k={k} -> MSRAM tile {k}")
        if bias:
            asm("C_SET_STRIDE_REG gp0", "stride 0: broadcast one bias row")
            asm.li("gp3", BBUF)
            asm(f"H_PREFETCH_V gp3, gp8, a3, 1, {B}", "bias chunk into BLEN rows")
        asm.li("gp9", 0, "row offset of the X block (elements)")
        asm.li("gp10", 0, "row offset of the Y block (elements)")
        with asm.loop("gp13", M // B, f"blocks of {B} rows of X"):
            asm.li("gp1", K)
            asm("C_SET_STRIDE_REG gp1", "X rows are K apart")
            for k in range(kt):
                asm(f"S_ADDI_INT gp2, gp9, {k * L}")
                asm(f"H_PREFETCH_V {xreg(k)}, gp2, a0, 1, {B}", f"X block, k-tile {k}")
            asm.li("gp4", 0, "column offset inside the tile")
            asm.li("gp11", OBUF, "output block address")
            with asm.loop("gp12", L // B, f"{B}-column blocks of the strip"):
                for k in range(kt):
                    asm(f"S_ADDI_INT gp2, gp4, {k * L * L}")
                    asm(f"M_MM gp2, {xreg(k)}", f"k-tile {k}")
                asm("M_MM_WO gp11, 0")
                asm(f"S_ADDI_INT gp4, gp4, {B}")
                asm(f"S_ADDI_INT gp11, gp11, {B}")
            if bias:
                for r in range(B):
                    asm.li("gp2", OBUF + r * L)
                    asm.li("gp3", BBUF + r * L)
                    asm("V_ADD_VV gp2, gp2, gp3", "+ bias")
            asm.li("gp1", N)
            asm("C_SET_STRIDE_REG gp1", "Y rows are N apart")
            asm("S_ADD_INT gp2, gp10, gp8")
            asm.li("gp3", OBUF)
            asm(f"H_STORE_V gp3, gp2, a2, 1, {B}")
            asm.li("gp1", B * K)
            asm("S_ADD_INT gp9, gp9, gp1")
            asm.li("gp1", B * N)
            asm("S_ADD_INT gp10, gp10, gp1")
        asm(f"S_ADDI_INT gp8, gp8, {L}")


def _check_fits(hw: NPUConfig, K: int, M: int) -> None:
    if hw.msram_tiles < K // hw.MLEN:
        raise ValueError(f"K={K} needs {K // hw.MLEN} MSRAM tiles; this NPU has {hw.msram_tiles}")
    if hw.vsram_rows < (K // hw.MLEN + 2) * hw.BLEN:
        raise ValueError("VSRAM too small for the matmul template")


def _matmul(task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout) -> str:
    asm = Asm(f"{task.title} {cfg.label}")
    if task.name == "linear":
        M, K, N, batch = cfg["n"], cfg["hin"], cfg["hout"], 1
    elif task.name == "batch_matmul":
        M, K, N, batch = cfg["M"], cfg["K"], cfg["N"], cfg["b"]
    else:
        M, K, N, batch = cfg["M"], cfg["K"], cfg["N"], 1
    _check_fits(hw, K, M)
    for k in range(batch):
        if batch > 1:
            asm.comment(f"batch {k}")
        for name, areg, per_batch in (("X", "a0", M * K), ("W", "a1", K * N), ("Y", "a2", M * N)):
            asm.li("gp1", layout.region(name).offset + k * per_batch, f"&{name}[{k}]" if batch > 1 else f"&{name}")
            asm(f"C_SET_ADDR_REG {areg}, gp1, gp0")
        if task.name == "linear":
            base_address(asm, layout, "b", "a3")
        _matmul_core(asm, hw, M, K, N, task.name == "linear")
    return asm.text()


def _gemv(task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout) -> str:
    """y = A @ x: for each 64-row block of A, M_TMV over its tiles against the chunks of x."""
    asm = Asm(f"{task.title} {cfg.label}")
    M, N, L, R = cfg["M"], cfg["N"], hw.MLEN, hw.v_prefetch_rows
    nt = N // L
    if nt + 1 > hw.vsram_rows:
        raise ValueError("VSRAM too small for x")
    base_address(asm, layout, "A", "a0")
    base_address(asm, layout, "x", "a1")
    base_address(asm, layout, "y", "a2")
    XROWS, OUT = 0, nt * L
    for c in range(0, nt, R):  # x into VSRAM rows 0..nt-1
        rows = min(R, nt - c)
        asm.li("gp2", c * L)
        asm(f"H_PREFETCH_V gp2, gp2, a1, 0, {rows}", "x chunk")
    asm.li("gp1", N)
    asm("C_SET_STRIDE_REG gp1", "A rows are N apart")
    asm.li("gp5", 0, "offset of the current A row block")
    asm.li("gp6", 0, "offset of the current y chunk")
    asm.li("gp7", OUT, "VSRAM output row")
    with asm.loop("gp15", M // L, "64-row blocks of A"):
        asm("S_ADD_INT gp2, gp5, gp0")
        asm.li("gp3", XROWS)
        with asm.loop("gp14", nt, "tiles along N"):
            asm("H_PREFETCH_M gp0, gp2, a0, 1", "A tile -> MSRAM tile 0 (consumed right away)")
            asm("M_TMV gp0, gp3", "y block += A_tile @ x chunk")
            asm(f"S_ADDI_INT gp2, gp2, {L}")
            asm(f"S_ADDI_INT gp3, gp3, {L}")
        asm("M_MV_WO gp7, 0")
        asm("H_STORE_V gp7, gp6, a2, 0, 1")
        asm.li("gp1", L * N)
        asm("S_ADD_INT gp5, gp5, gp1")
        asm(f"S_ADDI_INT gp6, gp6, {L}")
    return asm.text()


TEMPLATES = primitive_templates(
    _elementwise, _rowwise,
    {"relu": _relu, "silu": _silu, "gelu": _gelu, "softmax": _softmax_row, "rmsnorm": _rmsnorm_row,
     "layernorm": _layernorm_row},
    matmul=_matmul, gemv=_gemv,
)
