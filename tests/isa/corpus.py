"""Sources to assemble: every compiler and expert kernel of NPU and VLIW, the hostile sources of issue 14, and
seeded mutations of kernels (deleted, duplicated, swapped and garbled lines, bad operands, unknown mnemonics,
overlong lines, stray braces, bad labels, huge immediates, directives). Shared by the assembler's differential
test and ``benchmarks/bench_assemble.py``."""

from __future__ import annotations

import random
import re

from kcgym.registry import ACCELERATORS, SUPPORTED, task_for
from tests.isa.hostile import HUGE, hostile_sources

MACHINES = ("NPU", "VLIW")


def kernels(machine: str, configs: tuple[int, ...]) -> dict[str, str]:
    """``"task C<n> compiler|expert"`` -> source, for every registered task of ``machine`` at ``configs``."""
    acc = ACCELERATORS[machine]
    hw = acc.make_hw()
    out = {}
    for name in SUPPORTED[machine]:
        task = task_for(machine, name)
        for cfg in task.configs(machine):
            if cfg.index not in configs:
                continue
            out[f"{name} C{cfg.index} compiler"] = acc.compile(task, cfg, hw)
            expert = acc.expert(task, cfg, hw)
            if expert is not None:
                out[f"{name} C{cfg.index} expert"] = expert
    return out


# what one mutation does to a list of lines (rng, lines, machine) -> lines
def _delete(rng, lines, machine):
    del lines[rng.randrange(len(lines))]


def _duplicate(rng, lines, machine):
    i = rng.randrange(len(lines))
    lines.insert(i, lines[i])


def _swap(rng, lines, machine):
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]


def _garble(rng, lines, machine):
    i = rng.randrange(len(lines))
    s = list(lines[i])
    if s:
        k = rng.randrange(len(s))
        s[k] = rng.choice("xX0(){}|;,:.#$-+ \t\\'\"")
    lines[i] = "".join(s)


def _operand(rng, lines, machine):
    i = rng.randrange(len(lines))
    bad = rng.choice(["r99", "gp16", "p9", "x40", "a7", "f99", "zz", "", "1.5", "-1", "3 +", "(1", "MLEN", "LANES",
                      "nolabel", "end_1", HUGE[:30], "0x" + "f" * 20, "1 << 70", "1/0", "-0.0", "gp0", "r0"])
    lines[i] = re.sub(r"(?<=[ ,])[A-Za-z0-9_.+-]+(?=\s*(,|$|\|\||;|//|#))", bad, lines[i], count=1)


def _mnemonic(rng, lines, machine):
    i = rng.randrange(len(lines))
    lines[i] = re.sub(r"[A-Z_]{2,}", rng.choice(["FOO", "ADDD", "S_ADD_INTT", "nop", "VLDD", "halt", "C_NOP"]),
                      lines[i], count=1)


def _insert(rng, lines, machine):
    i = rng.randrange(len(lines) + 1)
    lines.insert(i, rng.choice([
        "{", "}", "{ NOP", "NOP }", "NOP || NOP || NOP", "lbl:", "lbl: lbl:", "end_1:", "1bad: NOP", ".equ Q, 3",
        ".equ Q, nolabel", ".set MLEN, 1", ".foo", ".rept 2", ".endr", ".macro m\nNOP\n.endm\nm", ".if 0\nFOO\n.endif",
        "x" * 10_050, "NOP " + "y" * 600, "HALT", "C_HALT", "S_ADDI_INT gp0, gp0, 1", "MOVI r0, 1",
        "MOVI r1, 1 || MOVI r1, 2", "J nowhere", "LOOPI 1, end_1", "S_ADDI_INT gp1, gp0, " + HUGE[:40],
        "   ", "// only a comment", "; only a comment", "MOVI r1, Q", "S_ADDI_INT gp1, gp0, Q",
    ]))


MUTATIONS = (_delete, _duplicate, _swap, _garble, _operand, _mnemonic, _insert)


def mutants(source: str, machine: str, n: int, seed: int) -> list[str]:
    """``n`` mutants of ``source``, each with one to three seeded mutations."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        lines = source.split("\n")
        for _ in range(rng.randint(1, 3)):
            if not lines:
                lines.append("")
            rng.choice(MUTATIONS)(rng, lines, machine)
        out.append("\n".join(lines))
    return out


def hostile(machine: str) -> dict[str, str]:
    return hostile_sources(machine)
