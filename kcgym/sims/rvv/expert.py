"""Hand-optimised RVV kernels: they prove the headroom over the template compiler.

The tricks are the ones the guide teaches: stage reused operands in the DTCM with wide (m8)
transfers, widen weights once instead of in every inner loop, block registers so one loaded
weight row serves several outputs, keep loads in flight ahead of their use, and requantise
whole vectors instead of scalars.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from kcgym.sims.base import MemoryLayout
from kcgym.sims.rvv.compiler import Emitter, Params, Template, kernel_operands, requant_to_v1
from kcgym.sims.rvv.config import DTCM_BASE, RVVConfig
from kcgym.tasks.base import Task, TaskConfig


def copy_to_dtcm(e: Emitter, src: int, dst: int, nbytes: int) -> None:
    """Bulk copy with three m8 transfers in flight (128 bytes each)."""
    lp = e.label("copy")
    e(f"li t0, {nbytes}", f"li a0, {src}", f"li a1, {dst}")
    e(f"{lp}:", "vsetvli t1, t0, e8, m8, ta, ma", "vle8.v v8, (a0)", "add a0, a0, t1", "sub t0, t0, t1",
      "vsetvli t2, t0, e8, m8, ta, ma", "vle8.v v16, (a0)", "add a0, a0, t2", "sub t0, t0, t2",
      "vsetvli t3, t0, e8, m8, ta, ma", "vle8.v v24, (a0)", "add a0, a0, t3", "sub t0, t0, t3",
      "vsetvli x0, t1, e8, m8, ta, ma", "vse8.v v8, (a1)", "add a1, a1, t1",
      "vsetvli x0, t2, e8, m8, ta, ma", "vse8.v v16, (a1)", "add a1, a1, t2",
      "vsetvli x0, t3, e8, m8, ta, ma", "vse8.v v24, (a1)", "add a1, a1, t3", f"bnez t0, {lp}")


def widen_to_dtcm(e: Emitter, src: int, dst: int, count: int) -> None:
    """int8 (external) -> int16 (DTCM), 64 elements per pass."""
    lp = e.label("widen")
    e(f"li t0, {count}", f"li a0, {src}", f"li a1, {dst}")
    e(f"{lp}:", "vsetvli t1, t0, e16, m8, ta, ma", "vle8.v v8, (a0)", "vsext.vf2 v16, v8", "vse16.v v16, (a1)",
      "add a0, a0, t1", "slli t2, t1, 1", "add a1, a1, t2", "sub t0, t0, t1", f"bnez t0, {lp}")


def matmul(e: Emitter, m: int, k: int, n: int, x: int, w: int, y: int, mult: int, zp: int) -> None:
    """X and W staged in the DTCM; 4 output rows x 16 columns per block, one widened W row feeding 4 MACs."""
    xs, ws = DTCM_BASE, DTCM_BASE + m * k
    copy_to_dtcm(e, x, xs, m * k)
    copy_to_dtcm(e, w, ws, k * n)
    lr, lc, lk = e.label("rows"), e.label("cols"), e.label("k")
    e(f"li s8, {mult}", f"li s2, {n}", f"li s5, {k}", f"li s6, {2 * k}", f"li s7, {3 * k}", f"li a0, {xs}",
      f"li a2, {y}", f"li s0, {m // 4}")
    e(f"{lr}:", "li s4, 0")  # s4: first column of the strip
    e(f"{lc}:", f"li t0, {n}", "sub t0, t0, s4", "vsetvli t1, t0, e32, m4, ta, ma", "vmv.v.i v16, 0",
      "vmv.v.i v20, 0", "vmv.v.i v24, 0", "vmv.v.i v28, 0", "mv a3, a0", f"li a4, {ws}", "add a4, a4, s4",
      f"li s1, {k}")
    e(f"{lk}:", "lb t3, 0(a3)", "add t4, a3, s5", "lb t4, 0(t4)", "add t5, a3, s6", "lb t5, 0(t5)",
      "add t6, a3, s7", "lb t6, 0(t6)", "vle8.v v1, (a4)", "vsext.vf4 v4, v1", "vmacc.vx v16, t3, v4",
      "vmacc.vx v20, t4, v4", "vmacc.vx v24, t5, v4", "vmacc.vx v28, t6, v4", "addi a3, a3, 1", "add a4, a4, s2",
      "addi s1, s1, -1", f"bnez s1, {lk}")
    for r, acc in enumerate(("v16", "v20", "v24", "v28")):
        e("vsetvli x0, t1, e32, m4, ta, ma", f"vmv.v.v v8, {acc}")
        requant_to_v1(e, "s8", zp)
        e(f"li t6, {r * n}", "add t6, t6, a2", "add t6, t6, s4", "vse8.v v1, (t6)")
    e("add s4, s4, t1", f"blt s4, s2, {lc}", f"li t6, {4 * k}", "add a0, a0, t6", f"li t6, {4 * n}",
      "add a2, a2, t6", "addi s0, s0, -1", f"bnez s0, {lr}")


def gemv(e: Emitter, m: int, n: int, a: int, x: int, y: int, mult: int, zp: int) -> None:
    """x staged in the DTCM; all chunk loads of a row (two rows when they fit) issued before the compute,
    products widened and reduced per chunk of 64; the int32 sums parked in the DTCM and requantised 16
    at a time with vector instructions."""
    chunk = min(n, 64)
    nchunks = n // chunk
    rows = 2 if nchunks <= 2 and m % 2 == 0 else 1
    xs, sums = DTCM_BASE, DTCM_BASE + n
    copy_to_dtcm(e, x, xs, n)
    lr, lq = e.label("row"), e.label("requant")
    e(f"li a0, {a}", f"li a2, {sums}", f"li s0, {m // rows}", f"li t0, {chunk}", f"li a1, {xs}")
    e(f"{lr}:", "vsetvli x0, t0, e8, m4, ta, ma")
    groups = ("v8", "v20", "v24", "v28")
    for r in range(rows):
        for c in range(nchunks):
            e(f"addi t1, a0, {r * n + c * chunk}", f"vle8.v {groups[r * nchunks + c]}, (t1)")
    for r in range(rows):
        e("vsetivli x0, 1, e32, m1, ta, ma", "vmv.s.x v16, zero")
        for c in range(nchunks):
            e("vsetvli x0, t0, e8, m4, ta, ma", f"addi t1, a1, {c * chunk}", "vle8.v v12, (t1)",
              f"vwmul.vv v0, {groups[r * nchunks + c]}, v12", "vsetvli x0, t0, e16, m8, ta, ma",
              "vwredsum.vs v16, v0, v16")
        e("vsetivli x0, 1, e32, m1, ta, ma", "vse32.v v16, (a2)", "addi a2, a2, 4")
    e(f"addi a0, a0, {rows * n}", "addi s0, s0, -1", f"bnez s0, {lr}")
    e(f"li t0, {m}", f"li a2, {sums}", f"li a3, {y}", f"li s8, {mult}")
    e(f"{lq}:", "vsetvli t1, t0, e32, m4, ta, ma", "vle32.v v8, (a2)")
    requant_to_v1(e, "s8", zp)
    e("vse8.v v1, (a3)", "slli t2, t1, 2", "add a2, a2, t2", "add a3, a3, t1", "sub t0, t0, t1", f"bnez t0, {lq}")


def stage_padded_image(e: Emitter, x: int, dst: int, h: int, c: int, pad: int) -> None:
    """Copy an (h, h, c) NHWC image into a zero (h + 2 pad)^2 frame in the DTCM (which starts zeroed)."""
    side = h + 2 * pad
    for row in range(h):
        copy_to_dtcm(e, x + row * h * c, dst + ((row + pad) * side + pad) * c, h * c)


def requant_wide(e: Emitter, mult_reg: str, zp: int, out: str) -> None:
    """int32 accumulators in v8 (e32, m8, vl = t1 <= 32) -> int8 stored at ``out``."""
    e("vsetvli x0, t1, e32, m8, ta, ma", f"vmul.vx v8, v8, {mult_reg}", "vssra.vi v8, v8, 16",
      f"vadd.vi v8, v8, {zp}", "vsetvli x0, t1, e16, m4, ta, ma", "vnclip.wi v24, v8, 0",
      "vsetvli x0, t1, e8, m2, ta, ma", "vnclip.wi v2, v24, 0", f"vse8.v v2, ({out})")


def conv2d(e: Emitter, h: int, cin: int, cout: int, k: int, x: int, w: int, bias: int, y: int, mult: int,
           zp: int) -> None:
    """Padded image and int16 weights in the DTCM, bias kept in registers; per pixel, each kernel row is one
    flat loop over (kx, cin), two taps per iteration, each a scalar x times a widened weight row."""
    p = k // 2
    side = h + 2 * p
    xs = DTCM_BASE
    ws = (xs + side * side * cin + 15) // 16 * 16
    stage_padded_image(e, x, xs, h, cin, p)
    widen_to_dtcm(e, w, ws, k * k * cin * cout)
    ly, lx, lky, lc = e.label("y"), e.label("x"), e.label("ky"), e.label("c")
    e(f"li t1, {cout}", "vsetvli x0, t1, e32, m8, ta, ma", f"li t2, {bias}", "vle32.v v16, (t2)")
    e(f"li s8, {mult}", f"li s6, {2 * cout}", f"li a2, {y}", "li s0, 0")
    e(f"{ly}:", "li s1, 0")
    e(f"{lx}:", "vsetvli x0, t1, e32, m8, ta, ma", "vmv.v.v v8, v16", f"li t2, {side}", "mul t2, s0, t2",
      "add t2, t2, s1", f"li t3, {cin}", "mul t2, t2, t3", f"li a3, {xs}", "add a3, a3, t2", f"li a4, {ws}",
      "li s2, 0", "vsetvli x0, t1, e16, m4, ta, ma")
    e(f"{lky}:", "mv a5, a3", f"li s3, {k * cin // 2}")
    e(f"{lc}:", "lb t3, 0(a5)", "lb t4, 1(a5)", "vle16.v v24, (a4)", "add a4, a4, s6", "vle16.v v28, (a4)",
      "add a4, a4, s6", "vwmacc.vx v8, t3, v24", "vwmacc.vx v8, t4, v28", "addi a5, a5, 2", "addi s3, s3, -1",
      f"bnez s3, {lc}")
    e(f"li t2, {side * cin}", "add a3, a3, t2", "addi s2, s2, 1", f"li t2, {k}", f"blt s2, t2, {lky}")
    requant_wide(e, "s8", zp, "a2")
    e(f"addi a2, a2, {cout}", "addi s1, s1, 1", f"li t2, {h}", f"blt s1, t2, {lx}", "addi s0, s0, 1",
      f"blt s0, t2, {ly}")


def depthwise(e: Emitter, h: int, c: int, k: int, x: int, w: int, bias: int, y: int, mult: int, zp: int) -> None:
    """Padded image and int16 weights in the DTCM, bias in registers, all c channels (<= 32) in one group:
    per tap, load, widen and widening-multiply-accumulate whole pixels."""
    p = k // 2
    side = h + 2 * p
    xs = DTCM_BASE
    ws = (xs + side * side * c + 15) // 16 * 16
    stage_padded_image(e, x, xs, h, c, p)
    widen_to_dtcm(e, w, ws, k * k * c)
    ly, lx, lky, lkx = e.label("y"), e.label("x"), e.label("ky"), e.label("kx")
    e(f"li t1, {c}", "vsetvli x0, t1, e32, m8, ta, ma", f"li t2, {bias}", "vle32.v v16, (t2)")
    e(f"li s8, {mult}", f"li s6, {2 * c}", f"li s7, {c}", f"li a2, {y}", "li s0, 0")
    e(f"{ly}:", "li s1, 0")
    e(f"{lx}:", "vsetvli x0, t1, e32, m8, ta, ma", "vmv.v.v v8, v16", f"li t2, {side}", "mul t2, s0, t2",
      "add t2, t2, s1", "mul t2, t2, s7", f"li a3, {xs}", "add a3, a3, t2", f"li a4, {ws}", "li s2, 0",
      "vsetvli x0, t1, e16, m4, ta, ma")
    e(f"{lky}:", "mv a5, a3", f"li s3, {k}")
    e(f"{lkx}:", "vle8.v v4, (a5)", "vle16.v v28, (a4)", "vsext.vf2 v24, v4", "vwmacc.vv v8, v24, v28",
      "add a5, a5, s7", "add a4, a4, s6", "addi s3, s3, -1", f"bnez s3, {lkx}")
    e(f"li t2, {side * c}", "add a3, a3, t2", "addi s2, s2, 1", f"li t2, {k}", f"blt s2, t2, {lky}")
    requant_wide(e, "s8", zp, "a2")
    e(f"addi a2, a2, {c}", "addi s1, s1, 1", f"li t2, {h}", f"blt s1, t2, {lx}", "addi s0, s0, 1",
      f"blt s0, t2, {ly}")


class Expert(NamedTuple):
    """One registered expert: the configs it covers, and its template (the compiler's signature)."""

    applies: Callable[[Params], bool]
    emit: Template


# task name -> expert; configs its ``applies`` rejects fall back to the compiler (no expert)
EXPERTS: dict[str, Expert] = {
    "matmul": Expert(lambda p: p["M"] % 4 == 0,
                     lambda e, p, a, c: matmul(e, p["M"], p["K"], p["N"], a["X"], a["W"], a["Y"], c["mult"],
                                               c["zero_point"])),
    "gemv": Expert(lambda p: p["N"] % min(p["N"], 64) == 0 and p["N"] <= 256,
                   lambda e, p, a, c: gemv(e, p["M"], p["N"], a["A"], a["x"], a["y"], c["mult"], c["zero_point"])),
    "conv2d": Expert(lambda p: p["cout"] <= 32 and (p["k"] ** 2 * p["cin"]) % 2 == 0,
                     lambda e, p, a, c: conv2d(e, p["H"], p["cin"], p["cout"], p["k"], a["X"], a["W"], a["bias"],
                                               a["Y"], c["mult"], c["zero_point"])),
    "depthwise_conv": Expert(lambda p: p["c"] <= 32,
                             lambda e, p, a, c: depthwise(e, p["H"], p["c"], p["k"], a["X"], a["W"], a["bias"],
                                                          a["Y"], c["mult"], c["zero_point"])),
}


def expert_kernel(task: Task, cfg: TaskConfig, hw: RVVConfig, layout: MemoryLayout) -> str | None:
    """The expert kernel for ``task`` at ``cfg``, or None where no expert covers it."""
    expert = EXPERTS.get(task.name)
    params, addr, consts = kernel_operands(task, cfg, layout)
    if expert is None or not expert.applies(params):
        return None
    e = Emitter()
    e(f"# kcgym RVV expert kernel: {task.name} {cfg.label}", ".text", "kernel:")
    expert.emit(e, params, addr, consts)
    e("ret")
    return e.text()
