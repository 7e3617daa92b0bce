"""The streaming L1 kernels by hand: unrolled word loops that keep the one load/store unit busy.

GCC -O2 emits one element per iteration (its loop overhead shares the two-wide dispatch with the
work) and a software shift-and-add multiply for ``multiply``; these kernels handle UNROLL elements an
iteration with all loads first (so cache misses overlap in the reorder buffer), one pointer update per
array and, for the products, the hardware ``mul``. The load/store unit then bounds them: 3 accesses
an element for vvadd and multiply, 2 for copy and dotprod.
"""

from __future__ import annotations

from collections.abc import Callable

from kcgym.sims.base import MemoryLayout
from kcgym.sims.cpu.compiler import arguments
from kcgym.tasks.base import Task, TaskConfig

UNROLL = 4  # elements per iteration (every config's n is a multiple of it)
# dotprod touches the line this many bytes ahead of each array with a load into x0, so that the miss is
# under way long before the loop reaches it (past the end it touches the next tensors, still mapped)
PREFETCH = 256
TEMPS = ("t0", "t1", "t2", "t3", "t4", "t5", "t6", "a5", "a6", "a7", "s0", "s1")  # 3 x UNROLL value registers


def _header(task: Task, cfg: TaskConfig) -> list[str]:
    return [f"# kcgym CPU expert kernel: {task.name} {cfg.label}", ".text", "kernel:"]


def _binary(op: str) -> Callable[[Task, TaskConfig, object, MemoryLayout], str | None]:
    """C[i] = A[i] op B[i], UNROLL at a time."""

    def emit(task: Task, cfg: TaskConfig, hw: object, layout: MemoryLayout) -> str | None:
        args = dict(arguments(task, cfg, layout))
        n = args["n"]
        if n % UNROLL:
            return None
        a, b, c = TEMPS[:UNROLL], TEMPS[UNROLL:2 * UNROLL], TEMPS[2 * UNROLL:3 * UNROLL]
        body = [f"lw {a[k]}, {4 * k}(a0)\n    lw {b[k]}, {4 * k}(a1)" for k in range(UNROLL)]
        body += [f"{op} {c[k]}, {a[k]}, {b[k]}" for k in range(UNROLL)]
        body += [f"sw {c[k]}, {4 * k}(a2)" for k in range(UNROLL)]
        lines = [*_header(task, cfg), "    addi sp, sp, -16", "    sw s0, 0(sp)", "    sw s1, 4(sp)",
                 f"    li a0, {args['A']:#x}", f"    li a1, {args['B']:#x}", f"    li a2, {args['C']:#x}",
                 f"    li a3, {args['C'] + 4 * n:#x}", "1:", *("    " + x for x in body),
                 f"    addi a0, a0, {4 * UNROLL}", f"    addi a1, a1, {4 * UNROLL}", f"    addi a2, a2, {4 * UNROLL}",
                 "    bne a2, a3, 1b", "    lw s0, 0(sp)", "    lw s1, 4(sp)", "    addi sp, sp, 16", "    ret"]
        return "\n".join(lines) + "\n"

    return emit


def copy(task: Task, cfg: TaskConfig, hw: object, layout: MemoryLayout) -> str | None:
    """Y = X, 2 x UNROLL words an iteration."""
    args = dict(arguments(task, cfg, layout))
    n, step = args["n"], 2 * UNROLL
    if n % step:
        return None
    regs = TEMPS[:step]
    body = [f"lw {regs[k]}, {4 * k}(a0)" for k in range(step)] + [f"sw {regs[k]}, {4 * k}(a1)" for k in range(step)]
    lines = [*_header(task, cfg), "    addi sp, sp, -16", "    sw s0, 0(sp)", "    sw s1, 4(sp)",
             f"    li a0, {args['X']:#x}", f"    li a1, {args['Y']:#x}", f"    li a3, {args['Y'] + 4 * n:#x}", "1:",
             *("    " + x for x in body), f"    addi a0, a0, {4 * step}", f"    addi a1, a1, {4 * step}",
             "    bne a1, a3, 1b", "    lw s0, 0(sp)", "    lw s1, 4(sp)", "    addi sp, sp, 16", "    ret"]
    return "\n".join(lines) + "\n"


def dotprod(task: Task, cfg: TaskConfig, hw: object, layout: MemoryLayout) -> str | None:
    """Y[0] = sum A[i] * B[i]: 2 x UNROLL products an iteration into UNROLL partial sums (no long add chain;
    the core renames, so reusing the operand registers costs nothing)."""
    args = dict(arguments(task, cfg, layout))
    n, step = args["n"], 2 * UNROLL
    if n % step:
        return None
    a, b, acc = TEMPS[:UNROLL], TEMPS[UNROLL:2 * UNROLL], TEMPS[2 * UNROLL:3 * UNROLL]
    body = [f"lw zero, {PREFETCH}(a0)\n    lw zero, {PREFETCH}(a1)"]  # touch lines ahead: their misses overlap
    for half in range(2):
        body += [f"lw {a[k]}, {4 * (k + half * UNROLL)}(a0)\n    lw {b[k]}, {4 * (k + half * UNROLL)}(a1)"
                 for k in range(UNROLL)]
        body += [f"mul {a[k]}, {a[k]}, {b[k]}\n    add {acc[k]}, {acc[k]}, {a[k]}" for k in range(UNROLL)]
    total = [f"add {acc[0]}, {acc[0]}, {acc[k]}" for k in range(1, UNROLL)]
    lines = [*_header(task, cfg), "    addi sp, sp, -16", "    sw s0, 0(sp)", "    sw s1, 4(sp)",
             *(f"    li {r}, 0" for r in acc), f"    li a0, {args['A']:#x}", f"    li a1, {args['B']:#x}",
             f"    li a3, {args['A'] + 4 * n:#x}", "1:", *("    " + x for x in body),
             f"    addi a0, a0, {4 * step}", f"    addi a1, a1, {4 * step}", "    bne a0, a3, 1b",
             *("    " + x for x in total), f"    li a2, {args['Y']:#x}", f"    sw {acc[0]}, 0(a2)",
             "    lw s0, 0(sp)", "    lw s1, 4(sp)", "    addi sp, sp, 16", "    ret"]
    return "\n".join(lines) + "\n"


# task name -> kernel, found by kcgym.sims.cpu.expert
EXPERTS = {"multiply": _binary("mul"), "vvadd": _binary("add"), "copy": copy, "dotprod": dotprod}
