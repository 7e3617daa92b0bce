"""The radix sort by hand: one histogram pass for all four digits, bytes read with ``lbu``, bucket pointers.

GCC -O2 runs the C's four counting passes, each with a separate histogram over the keys, a prefix sum
of counts and a scatter that turns a count into an address. Here the digits are read straight from the
keys' bytes (``lbu k(key)``, no shift or mask), one pass builds the four histograms at once (counting in
bytes, so a prefix sum turns them into destination addresses directly), and each scatter is then a key
load, a digit load, the bucket pointer's load, the key's store and the pointer's store. The four
histograms (4 KiB) live on the stack. The same kernel sorts ``qsort``'s signed keys: the top byte's
digit is taken with its sign bit flipped (``xori 0x80``), which orders negative keys first.
"""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.cpu.compiler import arguments
from kcgym.sims.layout import SCRATCH
from kcgym.tasks.base import Task, TaskConfig

DIGITS = 4  # bytes of a key: passes of the LSD sort
BUCKETS = 256
TABLE = 4 * BUCKETS  # bytes of one digit's histogram
# below this many keys the histograms' zeroing and prefix sums (4 x 256 buckets) outweigh GCC's quicksort
# (measured: qsort C1, 64 keys, 6535 vs 6251 cycles; C2, 128 keys, 8718 vs 13055)
RADIX_MIN_KEYS = 128


def radix_sort(task: Task, cfg: TaskConfig, layout: MemoryLayout, signed: bool) -> str | None:
    """The kernel for keys in X sorted into Y (``signed``: as int32, else as unsigned), tmp = ``tmp``."""
    args = dict(arguments(task, cfg, layout))
    n, x, y = args["n"], args["X"], args["Y"]
    tmp = args[SCRATCH] if SCRATCH in args else (layout.origin or 0) + layout.region(SCRATCH).offset
    if n % 2:
        return None
    hist = {k: ("s0", TABLE * k) if k < 2 else ("s1", TABLE * (k - 2)) for k in range(DIGITS)}  # (base, offset)
    flip = {DIGITS - 1: "xori {r}, {r}, 0x80"} if signed else {}  # the sign bit orders the top digit
    count = []
    for k in range(DIGITS):
        base, off = hist[k]
        count += [f"lbu t3, {k}(t1)", *([flip[k].format(r="t3")] if k in flip else []), "slli t3, t3, 2",
                  f"add t3, t3, {base}", f"lw t4, {off}(t3)", "addi t4, t4, 4",
                  f"sw t4, {off}(t3)"]
    lines = [f"# kcgym CPU expert kernel: {task.name} {cfg.label}", ".text", "kernel:",
             f"    li t0, {DIGITS * TABLE}", "    sub sp, sp, t0", "    mv s0, sp    # s0: histograms of digits 0, 1",
             f"    addi s1, s0, {TABLE}", f"    addi s1, s1, {TABLE}    # s1: digits 2, 3 (an addi reaches 2047)",
             "    mv t1, s0", "    add t2, s0, t0",
             "1:", *(f"    sw zero, {4 * j}(t1)" for j in range(8)), "    addi t1, t1, 32", "    bne t1, t2, 1b",
             f"    li t1, {x:#x}", f"    li t2, {x + 4 * n:#x}",
             "2:    # every digit of one key counted (in bytes: 4 a key)", *("    " + s for s in count),
             "    addi t1, t1, 4", "    bne t1, t2, 2b"]
    buffers = [(x, tmp), (tmp, y), (y, tmp), (tmp, y)]  # (source, destination) of each pass
    for k, (_, dst) in enumerate(buffers):  # prefix sums: each bucket's first destination address
        base, off = hist[k]
        lines += [f"    addi t1, {base}, {off}", f"    addi t2, t1, {TABLE // 2}", f"    addi t2, t2, {TABLE // 2}",
                  f"    li t5, {dst:#x}", f"3{k}:", *(f"    lw t3, {4 * j}(t1)\n    sw t5, {4 * j}(t1)\n"
                                                     "    add t5, t5, t3" for j in range(4)),
                  "    addi t1, t1, 16", f"    bne t1, t2, 3{k}b"]
    for k, (src, _) in enumerate(buffers):  # the scatters, two keys an iteration
        base, off = hist[k]
        one = ["lw t3, {o}(t1)", "lbu t4, {k}(t1)", *([flip[k].format(r="t4")] if k in flip else []),
               "slli t4, t4, 2", f"add t4, t4, {base}",
               f"lw t5, {off}(t4)", "sw t3, 0(t5)", "addi t5, t5, 4", f"sw t5, {off}(t4)"]
        body = [s.format(o=4 * j, k=4 * j + k) for j in range(2) for s in one]
        lines += [f"    li t1, {src:#x}", f"    li t2, {src + 4 * n:#x}", f"4{k}:", *("    " + s for s in body),
                  "    addi t1, t1, 8", f"    bne t1, t2, 4{k}b"]
    lines += [f"    li t0, {DIGITS * TABLE}", "    add sp, sp, t0", "    ret"]
    return "\n".join(lines) + "\n"


def rsort(task: Task, cfg: TaskConfig, hw: object, layout: MemoryLayout) -> str | None:
    return radix_sort(task, cfg, layout, signed=False)


def qsort(task: Task, cfg: TaskConfig, hw: object, layout: MemoryLayout) -> str | None:
    """qsort's answer is the sorted keys, whatever the algorithm: a radix sort has no mispredicted compares."""
    return radix_sort(task, cfg, layout, signed=True) if cfg["n"] >= RADIX_MIN_KEYS else None


EXPERTS = {"rsort": rsort, "qsort": qsort}  # task name -> kernel, found by kcgym.sims.cpu.expert
