"""Towers of Hanoi by hand: the recursion stops at four discs, whose fifteen moves are one block of stores.

GCC -O2 recurses down to single discs (a call, a return and register shuffling per move). Here a
tower of four is 45 stores from registers that hold the three labels and the disc numbers 1..4, so 15
of every 16 moves cost their three stores and nothing else; the rest of the recursion (one node per 16
moves) saves its arguments, calls, writes its move and tail-calls. The one load/store unit then bounds
it: a little over 3 cycles a move.
"""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.cpu.compiler import arguments
from kcgym.tasks.base import Task, TaskConfig
from kcgym.tasks.cpu import hanoi_moves

BASE_DISCS = 4  # the recursion's leaf: a tower of this many discs, written out
PEG_REGISTERS = ("a2", "a3", "a4")  # from, to, via of the current call
# the leaf's moves (disc, from register, to register): the task's own recursion over the three registers
LEAF = tuple((disc, PEG_REGISTERS[a], PEG_REGISTERS[b]) for disc, a, b in hanoi_moves(BASE_DISCS, 0, 1, 2))
DISC_REGISTERS = {d: f"s{d}" for d in range(1, BASE_DISCS + 1)}  # s1..s4 hold the disc numbers 1..4


def towers(task: Task, cfg: TaskConfig, hw: object, layout: MemoryLayout) -> str | None:
    args = dict(arguments(task, cfg, layout))
    if args["discs"] < BASE_DISCS:
        return None
    leaf = []
    for k, (disc, src, dst) in enumerate(LEAF):
        leaf += [f"sw {DISC_REGISTERS[disc]}, {12 * k}(a0)", f"sw {src}, {12 * k + 4}(a0)",
                 f"sw {dst}, {12 * k + 8}(a0)"]
    lines = [
        f"# kcgym CPU expert kernel: {task.name} {cfg.label}", ".text", "kernel:",
        f"    li a0, {args['moves']:#x}    # a0: where the next move goes", f"    li t0, {args['P']:#x}",
        "    lw a2, 0(t0)    # from = P[0]", "    lw a4, 4(t0)    # via = P[1]", "    lw a3, 8(t0)    # to = P[2]",
        f"    li a1, {args['discs']}", *(f"    li {r}, {d}" for d, r in DISC_REGISTERS.items()),
        "    tail hanoi    # hanoi's ret ends the run",
        f"# hanoi(a1 = n >= {BASE_DISCS}, a2 = from, a3 = to, a4 = via): appends the 2^n - 1 moves at a0",
        "hanoi:", f"    li t0, {BASE_DISCS}", "    beq a1, t0, .Lleaf",
        "    addi sp, sp, -32", "    sw ra, 16(sp)", "    sw a1, 12(sp)", "    sw a2, 8(sp)", "    sw a3, 4(sp)",
        "    sw a4, 0(sp)",
        "    addi a1, a1, -1    # hanoi(n-1, from, via, to)", "    mv a3, a4", "    lw a4, 4(sp)", "    call hanoi",
        "    lw a1, 12(sp)", "    lw a2, 8(sp)", "    lw a3, 4(sp)", "    lw a4, 0(sp)", "    lw ra, 16(sp)",
        "    addi sp, sp, 32",
        "    sw a1, 0(a0)    # move disc n from -> to", "    sw a2, 4(a0)", "    sw a3, 8(a0)", "    addi a0, a0, 12",
        "    addi a1, a1, -1    # hanoi(n-1, via, to, from), as a tail call", "    mv t1, a2", "    mv a2, a4",
        "    mv a4, t1", "    j hanoi",
        ".Lleaf:", *("    " + s for s in leaf), f"    addi a0, a0, {12 * len(LEAF)}", "    ret",
    ]
    return "\n".join(lines) + "\n"


EXPERTS = {"towers": towers}  # task name -> kernel, found by kcgym.sims.cpu.expert
