"""The RVV compiler: the speedup baseline, and the template compiler that was the baseline before it.

:func:`compile_task` returns clang-14's ``-O2`` code for the task's C kernel with RVV intrinsics
behind a per-config stub (:mod:`kcgym.sims.rvv.clang_baseline`): every task has one, so the
template compiler below is the baseline only for a task added without a C kernel. It stays as
:func:`compile_template` (measured side by side: ``benchmarks/bench_rvv_baseline.py``) and as the
experts' building blocks (:class:`Emitter`, :func:`requant_to_v1`).

The templates model "C with RVV intrinsics at -O2" by hand. Each operator is one straightforward
strip-mined loop nest at LMUL=1 on the int8 data (int32 accumulators take the matching m4
group): operands are streamed from external memory
element row by element row, nothing is staged in the DTCM, there is no register blocking
(one output strip at a time) and no fusion across operators — composite tasks run their
operators one after another, the intermediate tensors in the DTCM where a C compiler would
put a local array. Correct for every (task, config); deliberately not fast.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np

from kcgym.sims.base import MemoryLayout
from kcgym.sims.rvv import clang_baseline
from kcgym.sims.rvv.config import DTCM_BASE, EXT_BASE, RVVConfig
from kcgym.tasks.base import Task, TaskConfig


class Emitter:
    """Collects assembly lines; hands out unique label names."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._ids = itertools.count()

    def __call__(self, *lines: str) -> None:
        for line in lines:
            self.lines.append(line if line.endswith(":") or line.startswith(("#", ".")) else "    " + line)

    def label(self, stem: str) -> str:
        return f".L{stem}{next(self._ids)}"

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def requant_to_v1(e: Emitter, mult_reg: str, zero_point: int, relu: bool = False) -> None:
    """int32 accumulators in v8 (e32, m4, vl = t1) -> int8 in v1: mul, rounding shift 16, + zp, saturate."""
    e("vsetvli x0, t1, e32, m4, ta, ma", f"vmul.vx v8, v8, {mult_reg}", "vssra.vi v8, v8, 16")
    e(f"vadd.vi v8, v8, {zero_point}" if -16 <= zero_point <= 15 else f"li t6, {zero_point}\n    vadd.vx v8, v8, t6")
    e("vsetvli x0, t1, e16, m2, ta, ma", "vnclip.wi v12, v8, 0", "vsetvli x0, t1, e8, m1, ta, ma",
      "vnclip.wi v1, v12, 0")
    if relu:
        e("vmax.vx v1, v1, zero")


def matmul(e: Emitter, m: int, k: int, n: int, x: int, w: int, y: int, mult: int, zp: int, bias: int | None = None,
           relu: bool = False) -> None:
    """Y[m, n] = requant(X[m, k] @ W[k, n] (+ bias)): for each row, for each 16-column strip, for each k."""
    li, lj, lk = e.label("row"), e.label("col"), e.label("k")
    e(f"li s0, {m}", f"li a0, {x}", f"li a2, {y}", f"li s8, {mult}", f"li s2, {n}")
    e(f"{li}:", f"li t0, {n}", f"li a4, {w}", "mv a6, a2")
    if bias is not None:
        e(f"li a5, {bias}")
    e(f"{lj}:", "vsetvli t1, t0, e32, m4, ta, ma")
    e("vle32.v v8, (a5)" if bias is not None else "vmv.v.i v8, 0")
    e("mv a3, a0", "mv a7, a4", f"li s1, {k}")
    e(f"{lk}:", "lb t3, 0(a3)", "vle8.v v1, (a7)", "vsext.vf4 v4, v1", "vmacc.vx v8, t3, v4", "addi a3, a3, 1",
      "add a7, a7, s2", "addi s1, s1, -1", f"bnez s1, {lk}")
    requant_to_v1(e, "s8", zp, relu)
    e("vse8.v v1, (a6)", "add a6, a6, t1", "add a4, a4, t1")
    if bias is not None:
        e("slli t2, t1, 2", "add a5, a5, t2")
    e("sub t0, t0, t1", f"bnez t0, {lj}", f"li t2, {k}", "add a0, a0, t2", "add a2, a2, s2", "addi s0, s0, -1",
      f"bnez s0, {li}")


def conv(e: Emitter, h: int, cin: int, cout: int, ksize: int, x: int, w: int, bias: int, y: int, mult: int, zp: int,
         relu: bool = False) -> None:
    """'Same' convolution, NHWC: for each pixel, each 16-channel output strip, each in-bounds tap, each cin."""
    p = ksize // 2
    ly, lx, lj, lky, lkx, lc, skip = (e.label(s) for s in ("y", "x", "co", "ky", "kx", "ci", "skip"))
    e(f"li s8, {mult}", "li s0, 0", f"li a2, {y}")
    e(f"{ly}:", "li s1, 0")
    e(f"{lx}:", f"li t0, {cout}", "li s5, 0")  # s5: first output channel of the strip
    e(f"{lj}:", "vsetvli t1, t0, e32, m4, ta, ma", f"li t2, {bias}", "slli t3, s5, 2", "add t2, t2, t3",
      "vle32.v v8, (t2)", "li s2, 0")
    e(f"{lky}:", f"addi t4, s0, {-p}", "add t4, t4, s2", "li s3, 0")  # t4 = iy
    e(f"{lkx}:", f"addi t5, s1, {-p}", "add t5, t5, s3")  # t5 = ix
    e(f"bltz t4, {skip}", f"li t6, {h}", f"bge t4, t6, {skip}", f"bltz t5, {skip}", f"bge t5, t6, {skip}")
    # a3 = &X[iy, ix, 0]; a4 = &W[ky, kx, 0, s5]
    e(f"li t6, {h}", "mul t6, t4, t6", "add t6, t6, t5", f"li a3, {cin}", "mul a3, t6, a3", f"li t6, {x}",
      "add a3, a3, t6")
    e(f"li t6, {ksize}", "mul t6, s2, t6", "add t6, t6, s3", f"li a4, {cin * cout}", "mul a4, t6, a4",
      "add a4, a4, s5", f"li t6, {w}", "add a4, a4, t6", f"li s4, {cin}", f"li s6, {cout}")
    e(f"{lc}:", "lb t3, 0(a3)", "vle8.v v1, (a4)", "vsext.vf4 v4, v1", "vmacc.vx v8, t3, v4", "addi a3, a3, 1",
      "add a4, a4, s6", "addi s4, s4, -1", f"bnez s4, {lc}")
    e(f"{skip}:", "addi s3, s3, 1", f"li t6, {ksize}", f"blt s3, t6, {lkx}", "addi s2, s2, 1", f"blt s2, t6, {lky}")
    requant_to_v1(e, "s8", zp, relu)
    e("add t2, a2, s5", "vse8.v v1, (t2)", "add s5, s5, t1", "sub t0, t0, t1", f"bnez t0, {lj}")
    e(f"addi a2, a2, {cout}", "addi s1, s1, 1", f"li t6, {h}", f"blt s1, t6, {lx}", "addi s0, s0, 1",
      f"blt s0, t6, {ly}")


def depthwise(e: Emitter, h: int, c: int, ksize: int, x: int, w: int, bias: int, y: int, mult: int, zp: int) -> None:
    """Per pixel and 16-channel strip: for each in-bounds tap, widen both int8 vectors and multiply-accumulate."""
    p = ksize // 2
    ly, lx, lj, lky, lkx, skip, skiprow = (e.label(s) for s in ("y", "x", "c", "ky", "kx", "skip", "skiprow"))
    e(f"li s8, {mult}", "li s0, 0", f"li a2, {y}", f"li s9, {h}", f"li s10, {ksize}", f"li s11, {c}")
    e(f"{ly}:", "li s1, 0")
    e(f"{lx}:", f"li t0, {c}", "li s5, 0")
    e(f"{lj}:", "vsetvli t1, t0, e32, m4, ta, ma", f"li t2, {bias}", "slli t3, s5, 2", "add t2, t2, t3",
      "vle32.v v8, (t2)", "li s2, 0", f"li a4, {w}", "add a4, a4, s5")  # a4 = &W[ky, 0, s5]
    e(f"{lky}:", f"addi t4, s0, {-p}", "add t4, t4, s2", f"bltz t4, {skiprow}", f"bge t4, s9, {skiprow}")
    # a3 = &X[iy, x - p, s5]; t5 = x - p
    e(f"addi t5, s1, {-p}", "mul t6, t4, s9", "add t6, t6, t5", "mul a3, t6, s11", "add a3, a3, s5", f"li t6, {x}",
      "add a3, a3, t6", "mv a5, a4", "li s3, 0")
    e(f"{lkx}:", f"bltz t5, {skip}", f"bge t5, s9, {skip}", "vle8.v v1, (a3)", "vle8.v v2, (a5)", "vsext.vf4 v4, v1",
      "vsext.vf4 v12, v2", "vmacc.vv v8, v4, v12")
    e(f"{skip}:", "add a3, a3, s11", "add a5, a5, s11", "addi t5, t5, 1", "addi s3, s3, 1", f"blt s3, s10, {lkx}")
    e(f"{skiprow}:", f"li t6, {ksize * c}", "add a4, a4, t6", "addi s2, s2, 1", f"blt s2, s10, {lky}")
    requant_to_v1(e, "s8", zp)
    e("add t2, a2, s5", "vse8.v v1, (t2)", "add s5, s5, t1", "sub t0, t0, t1", f"bnez t0, {lj}")
    e(f"addi a2, a2, {c}", "addi s1, s1, 1", f"blt s1, s9, {lx}", "addi s0, s0, 1", f"blt s0, s9, {ly}")


def gemv(e: Emitter, m: int, n: int, a: int, x: int, y: int, mult: int, zp: int) -> None:
    """y[i] = requant(sum_j A[i, j] x[j]): per row, widening products reduced strip by strip, scalar requant."""
    li, lj, c1, c2 = e.label("row"), e.label("strip"), e.label("lo"), e.label("hi")
    e(f"li s0, {m}", f"li a0, {a}", f"li a2, {y}", f"li s8, {mult}", "li s9, 32768", "li s10, 127", "li s11, -128")
    e(f"{li}:", "vsetivli x0, 1, e32, m1, ta, ma", "vmv.s.x v12, zero", f"li a1, {x}", f"li t0, {n}")
    e(f"{lj}:", "vsetvli t1, t0, e8, m1, ta, ma", "vle8.v v1, (a0)", "vle8.v v2, (a1)", "vwmul.vv v4, v1, v2",
      "vsetvli x0, t1, e16, m2, ta, ma", "vwredsum.vs v12, v4, v12", "add a0, a0, t1", "add a1, a1, t1",
      "sub t0, t0, t1", f"bnez t0, {lj}")
    e("vsetivli x0, 1, e32, m1, ta, ma", "vmv.x.s t3, v12", "mul t3, t3, s8", "add t3, t3, s9", "srai t3, t3, 16",
      f"addi t3, t3, {zp}", f"blt t3, s10, {c1}", "mv t3, s10", f"{c1}:", f"bge t3, s11, {c2}", "mv t3, s11",
      f"{c2}:", "sb t3, 0(a2)", "addi a2, a2, 1", "addi s0, s0, -1", f"bnez s0, {li}")


def elementwise(e: Emitter, n: int, x: int, y: int, table: int | None) -> None:
    """ReLU (vmax with zero) or a table activation (indexed load at X xor 0x80)."""
    lp = e.label("strip")
    e(f"li t0, {n}", f"li a0, {x}", f"li a1, {y}")
    if table is not None:
        e(f"li a2, {table}", "li t2, 128")
    e(f"{lp}:", "vsetvli t1, t0, e8, m1, ta, ma", "vle8.v v1, (a0)")
    if table is None:
        e("vmax.vx v1, v1, zero")
    else:
        e("vxor.vx v1, v1, t2", "vluxei8.v v1, (a2), v1")
    e("vse8.v v1, (a1)", "add a0, a0, t1", "add a1, a1, t1", "sub t0, t0, t1", f"bnez t0, {lp}")


def _strips(e: Emitter, hidden: int, body: list[str]) -> None:
    """Run ``body`` over one row (a0 = row start) in strips of 16 int8: v1 holds the strip, t1 its length."""
    lp = e.label("strip")
    e("mv a3, a0", f"li t0, {hidden}")
    e(f"{lp}:", "vsetvli t1, t0, e8, m1, ta, ma", "vle8.v v1, (a3)", *body, "add a3, a3, t1", "sub t0, t0, t1",
      f"bnez t0, {lp}")


def isqrt(e: Emitter, value: str, out: str) -> None:
    """``out = floor(sqrt(value))`` for value < 2^16, bit by bit (uses t5, t6)."""
    lp, no = e.label("sqrt"), e.label("nobit")
    e(f"li {out}, 0", "li t5, 128")
    e(f"{lp}:", f"add t6, {out}, t5", "mul t6, t6, t6", f"bgtu t6, {value}, {no}", f"add {out}, {out}, t5")
    e(f"{no}:", "srli t5, t5, 1", f"bnez t5, {lp}")


def rowwise(e: Emitter, task: str, rows: int, hidden: int, x: int, y: int, table: int | None) -> None:
    lg = int(math.log2(hidden))
    lr = e.label("row")
    e(f"li s0, {rows}", f"li a0, {x}", f"li a1, {y}")
    if table is not None:
        e(f"li a2, {table}", "li s6, 127")
    e(f"{lr}:", "vsetivli x0, 1, e32, m1, ta, ma", "vmv.s.x v12, zero")
    sext = ["vsetvli x0, t1, e32, m4, ta, ma", "vsext.vf4 v4, v1"]
    if task == "softmax":
        e("li t3, -128", "vsetivli x0, 1, e8, m1, ta, ma", "vmv.s.x v13, t3")
        _strips(e, hidden, ["vredmax.vs v13, v1, v13"])
        e("vsetivli x0, 1, e8, m1, ta, ma", "vmv.x.s s4, v13")
        exp = [*sext, "vrsub.vx v4, v4, s4", "vsll.vi v4, v4, 2", "vluxei32.v v8, (a2), v4"]
        _strips(e, hidden, [*exp, "vredsum.vs v12, v8, v12"])
        e("vsetivli x0, 1, e32, m1, ta, ma", "vmv.x.s s5, v12", "mv a3, a1")
        _strips_out(e, hidden, [*exp, "vmul.vx v8, v8, s6", "vdivu.vx v8, v8, s5", "vsetvli x0, t1, e16, m2, ta, ma",
                                "vnsrl.wi v16, v8, 0", "vsetvli x0, t1, e8, m1, ta, ma", "vnsrl.wi v1, v16, 0"])
    else:
        if task == "layernorm":
            _strips(e, hidden, [*sext, "vredsum.vs v12, v4, v12"])
            e("vsetivli x0, 1, e32, m1, ta, ma", "vmv.x.s s4, v12", f"srai s4, s4, {lg}", "vmv.s.x v12, zero")
            center = ["vsub.vx v4, v4, s4"]
        else:
            center = []
        _strips(e, hidden, [*sext, *center, "vmul.vv v4, v4, v4", "vredsum.vs v12, v4, v12"])
        e("vsetivli x0, 1, e32, m1, ta, ma", "vmv.x.s s5, v12", f"srai s5, s5, {lg}")
        isqrt(e, "s5", "s7")
        e("addi s7, s7, 1")
        _strips_out(e, hidden, [*sext, *center, "vsll.vi v4, v4, 5", "vdiv.vx v4, v4, s7",
                                "vsetvli x0, t1, e16, m2, ta, ma", "vnclip.wi v16, v4, 0",
                                "vsetvli x0, t1, e8, m1, ta, ma", "vnclip.wi v1, v16, 0"])
    e(f"addi a0, a0, {hidden}", f"addi a1, a1, {hidden}", "addi s0, s0, -1", f"bnez s0, {lr}")


def _strips_out(e: Emitter, hidden: int, body: list[str]) -> None:
    """Like :func:`_strips`, then store v1 to the output row (a1)."""
    lp = e.label("strip")
    e("mv a3, a0", "mv a4, a1", f"li t0, {hidden}")
    e(f"{lp}:", "vsetvli t1, t0, e8, m1, ta, ma", "vle8.v v1, (a3)", *body, "vse8.v v1, (a4)", "add a3, a3, t1",
      "add a4, a4, t1", "sub t0, t0, t1", f"bnez t0, {lp}")


def gate(e: Emitter, count: int, g: int, u: int, table: int, h: int) -> None:
    """SwiGLU's middle: h = clip((S[g + 128] * u + 32) >> 6) over ``count`` int8 elements."""
    lp = e.label("gate")
    e(f"li t0, {count}", f"li a0, {g}", f"li a1, {u}", f"li a2, {table}", f"li a3, {h}", "li t2, 128")
    e(f"{lp}:", "vsetvli t1, t0, e8, m1, ta, ma", "vle8.v v1, (a0)", "vxor.vx v1, v1, t2", "vluxei8.v v1, (a2), v1",
      "vle8.v v2, (a1)", "vwmul.vv v4, v1, v2", "vsetvli x0, t1, e16, m2, ta, ma", "vssra.vi v4, v4, 6",
      "vsetvli x0, t1, e8, m1, ta, ma", "vnclip.wi v1, v4, 0", "vse8.v v1, (a3)", "add a0, a0, t1", "add a1, a1, t1",
      "add a3, a3, t1", "sub t0, t0, t1", f"bnez t0, {lp}")


Params = dict[str, int]
Addrs = dict[str, int]
# a template emits the kernel body from the config's params, the tensors' byte addresses and the task's constants
Template = Callable[[Emitter, Params, Addrs, Params], None]


def _batch_matmul(e: Emitter, p: Params, a: Addrs, c: Params) -> None:
    m, k, n = p["M"], p["K"], p["N"]
    for i in range(p["B"]):
        matmul(e, m, k, n, a["X"] + i * m * k, a["W"] + i * k * n, a["Y"] + i * m * n, c["mult"], c["zero_point"])


def _conv_block(e: Emitter, p: Params, a: Addrs, c: Params) -> None:
    h1, zp = DTCM_BASE, c["zero_point"]
    conv(e, p["H"], p["cin"], p["cout"], p["k"], a["X"], a["W1"], a["b1"], h1, c["mult1"], zp, relu=True)
    conv(e, p["H"], p["cout"], p["cout"], p["k"], h1, a["W2"], a["b2"], a["Y"], c["mult2"], zp, relu=True)


def _ffn(e: Emitter, p: Params, a: Addrs, c: Params) -> None:
    t, d, f, h, zp = p["T"], p["d"], p["f"], DTCM_BASE, c["zero_point"]
    matmul(e, t, d, f, a["X"], a["W1"], h, c["mult1"], zp, bias=a["b1"], relu=True)
    matmul(e, t, f, d, h, a["W2"], a["Y"], c["mult2"], zp, bias=a["b2"])


def _swiglu(e: Emitter, p: Params, a: Addrs, c: Params) -> None:
    t, d, f, zp = p["T"], p["d"], p["f"], c["zero_point"]
    g, u, h = DTCM_BASE, DTCM_BASE + t * f, DTCM_BASE + 2 * t * f
    matmul(e, t, d, f, a["X"], a["Wg"], g, c["mult_g"], zp)
    matmul(e, t, d, f, a["X"], a["Wu"], u, c["mult_u"], zp)
    gate(e, t * f, g, u, a["S"], h)
    matmul(e, t, f, d, h, a["Wd"], a["Y"], c["mult_d"], zp)


def _elementwise(e: Emitter, p: Params, a: Addrs, c: Params) -> None:
    elementwise(e, p["n"], a["X"], a["Y"], a.get("T"))


def _rowwise(task: str) -> Template:
    def emit(e: Emitter, p: Params, a: Addrs, c: Params) -> None:
        rowwise(e, task, p["n"] // p["hidden"], p["hidden"], a["X"], a["Y"], a.get("E"))

    return emit


# task name -> template: a new task adds its template and one row here
TEMPLATES: dict[str, Template] = {
    "relu": _elementwise,
    "silu": _elementwise,
    "gelu": _elementwise,
    "softmax": _rowwise("softmax"),
    "layernorm": _rowwise("layernorm"),
    "rmsnorm": _rowwise("rmsnorm"),
    "gemv": lambda e, p, a, c: gemv(e, p["M"], p["N"], a["A"], a["x"], a["y"], c["mult"], c["zero_point"]),
    "matmul": lambda e, p, a, c: matmul(e, p["M"], p["K"], p["N"], a["X"], a["W"], a["Y"], c["mult"],
                                        c["zero_point"]),
    "batch_matmul": _batch_matmul,
    "linear": lambda e, p, a, c: matmul(e, p["batch"], p["hin"], p["hout"], a["X"], a["W"], a["Y"], c["mult"],
                                        c["zero_point"], bias=a["bias"]),
    "conv2d": lambda e, p, a, c: conv(e, p["H"], p["cin"], p["cout"], p["k"], a["X"], a["W"], a["bias"], a["Y"],
                                      c["mult"], c["zero_point"]),
    "depthwise_conv": lambda e, p, a, c: depthwise(e, p["H"], p["c"], p["k"], a["X"], a["W"], a["bias"], a["Y"],
                                                   c["mult"], c["zero_point"]),
    "conv_block": _conv_block,
    "ffn": _ffn,
    "swiglu": _swiglu,
}


def kernel_operands(task: Task, cfg: TaskConfig, layout: MemoryLayout) -> tuple[Params, Addrs, Params]:
    """(params, external byte address of each tensor, integer constants with ``zero_point`` defaulting to 0)."""
    addr = {r.name: EXT_BASE + r.offset for r in layout.regions if r.space == "EXT"}
    consts = {"zero_point": 0} | {k: int(v) for k, v in task.constants(cfg).items()}
    return dict(cfg.params), addr, consts


def _check_element_widths(task: Task, layout: MemoryLayout) -> None:
    """The templates move int8 tensors and int32 biases only: any other width would be misread."""
    dtype_of = getattr(task, "dtype_of", None)
    if dtype_of is None:
        raise TypeError(f"the RVV compiler handles the int8 tasks only; {task.name!r} declares no dtype_of")
    bad = [r.name for r in layout.regions
           if r.space == "EXT" and r.role != "constant" and np.dtype(dtype_of(r.name)).itemsize not in (1, 4)]
    if bad:
        raise TypeError(f"the RVV compiler reads int8 and int32 tensors only; {task.name!r} has {bad}")


def compile_task(task: Task, cfg: TaskConfig, hw: RVVConfig, layout: MemoryLayout) -> str:
    """The baseline kernel for ``task`` at ``cfg``: clang's C kernel where the task has one, else the template.

    Raises KeyError for a task with neither.
    """
    if task.name not in clang_baseline.KERNELS:
        return compile_template(task, cfg, hw, layout)
    _check_element_widths(task, layout)
    return str(clang_baseline.program(task.name, *kernel_operands(task, cfg, layout)))


def compile_template(task: Task, cfg: TaskConfig, hw: RVVConfig, layout: MemoryLayout) -> str:
    """The template compiler's kernel for ``task`` at ``cfg`` (the baseline before clang's); KeyError without one."""
    template = TEMPLATES.get(task.name)
    if template is None:
        raise KeyError(f"the RVV compiler has no template for task {task.name!r}")
    _check_element_widths(task, layout)
    e = Emitter()
    e(f"# kcgym RVV template compiler: {task.name} {cfg.label}", ".text", ".globl kernel", "kernel:")
    template(e, *kernel_operands(task, cfg, layout))
    e("ret")
    return e.text()
