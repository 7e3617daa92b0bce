"""The 3-element median filter without branches: min/max by compare-and-mask, two outputs an iteration.

GCC -O2 compiles the C's comparisons to branches, and on random data the predictor misses about
half of them, each costing the misprediction penalty. Here ``min(a, b) = b ^ ((a ^ b) & -(a < b))``
(and ``max`` alike) makes the median ``max(min(a, b), min(max(a, b), c))`` 15 ALU instructions with no
branch but the loop's, and the window slides through registers (each input word is loaded once).
"""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.cpu.compiler import arguments
from kcgym.tasks.base import Task, TaskConfig


def median3(p: str, q: str, c: str, out: str) -> list[str]:
    """``out = median(p, q, c)`` (signed), through t3-t6 and a4."""
    return [
        f"slt t3, {p}, {q}", "neg t3, t3", f"xor t4, {p}, {q}", "and t4, t4, t3",
        f"xor t5, {q}, t4",  # lo = min(p, q)
        f"xor t6, {p}, t4",  # hi = max(p, q)
        f"slt t3, t6, {c}", "neg t3, t3", f"xor t4, t6, {c}", "and t4, t4, t3",
        f"xor t4, {c}, t4",  # m = min(hi, c)
        "slt t3, t5, t4", "neg t3, t3", "xor a4, t5, t4", "and a4, a4, t3",
        f"xor {out}, t5, a4",  # max(lo, m)
    ]


def median(task: Task, cfg: TaskConfig, hw: object, layout: MemoryLayout) -> str | None:
    args = dict(arguments(task, cfg, layout))
    n, x, y = args["n"], args["X"], args["Y"]
    if n < 4 or (n - 2) % 2:
        return None
    body = ["lw t2, 8(a0)", *median3("t0", "t1", "t2", "a5"), "sw a5, 0(a1)",
            "lw t0, 12(a0)", *median3("t1", "t2", "t0", "a5"), "sw a5, 4(a1)",
            "mv t1, t0", "mv t0, t2",  # the window (X[i+1], X[i+2]) for the next pair
            "addi a0, a0, 8", "addi a1, a1, 8", "bne a1, a3, 1b"]
    lines = [f"# kcgym CPU expert kernel: {task.name} {cfg.label}", ".text", "kernel:",
             f"    li a0, {x:#x}", f"    li a1, {y:#x}", f"    li a3, {y + 4 * (n - 1):#x}",
             "    lw t0, 0(a0)", "    sw t0, 0(a1)", "    lw t1, 4(a0)", "    addi a1, a1, 4", "1:",
             *("    " + s for s in body), f"    li a0, {x + 4 * (n - 1):#x}", "    lw t0, 0(a0)", "    sw t0, 0(a3)",
             "    ret"]
    return "\n".join(lines) + "\n"


EXPERTS = {"median": median}  # task name -> kernel, found by kcgym.sims.cpu.expert
