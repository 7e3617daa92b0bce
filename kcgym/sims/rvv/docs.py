"""RVV documentation data: its error codes, its guide fields and the instruction reference generated from its table."""

from __future__ import annotations

from kcgym.sims.base import DocSection
from kcgym.sims.docs import machine_docs
from kcgym.sims.rvv import isa as I
from kcgym.sims.rvv.assembler import PSEUDO_SYNTAX, PSEUDOS
from kcgym.sims.rvv.config import DTCM_BASE, RVVConfig

ERROR_CODES = {
    "E001": "unknown instruction", "E002": "wrong number of operands", "E003": "wrong register kind or name",
    "E005": "immediate out of range", "E007": "bad expression or unknown symbol", "E009": "label defined twice",
    "E010": "unknown label (or a data label used as a branch target)", "E011": "unknown directive",
    "E014": "program larger than the ITCM (or .data larger than the DTCM)", "E015": "malformed memory operand",
    "E017": "bad mask operand (only v0.t / v0)", "E018": "unsupported CSR", "E019": "bad vtype (SEW, LMUL, policy)",
    "E020": "instruction in .data or data in .text", "E021": "unknown section",
    "E022": "masked instruction writes v0", "E023": "register group misaligned or larger than 8 registers",
    "W023": "as E023, but a label lies between the vsetvli and the instruction (the run-time vtype may differ)",
    "W002": "the program has no instructions",
}


def instruction_reference() -> str:
    """Markdown reference of every mnemonic, grouped as in the table, plus pseudo-instructions and error codes."""
    out = ["## Instruction reference (generated)", "",
           "Syntax is GNU `as` (RISC-V). `[, v0.t]` marks the optional mask operand. Directives: `.text .data "
           ".rodata .bss .section .globl .align .p2align .balign .word .half .byte .zero .space .equ .set .macro "
           ".rept .irp`; comments start with `#`; labels `name:` and numeric local labels `1:` (`1b`/`1f`)."]
    groups: dict[str, list[I.RVInstr]] = {}
    for spec in I.INSTRUCTIONS:
        groups.setdefault(spec.group, []).append(spec)
    for group, specs in groups.items():
        out += ["", f"### {group}", "", "| instruction | operands | meaning |", "|---|---|---|"]
        for s in specs:
            out.append(f"| `{s.mnemonic}` | `{I.FORMS[s.form]}` | {s.summary} |")
    out += ["", "### Pseudo-instructions", "", "| pseudo | operands |", "|---|---|"]
    out += [f"| `{p}` | `{PSEUDO_SYNTAX.get(p, '')}` |" for p in PSEUDOS]
    out += ["", "### Assembler error codes", "", "| code | meaning |", "|---|---|"]
    out += [f"| {k} | {v} |" for k, v in ERROR_CODES.items()]
    return "\n".join(out) + "\n"


def rvv_docs(hw: RVVConfig) -> list[DocSection]:
    from kcgym.sims.rvv.accelerator import LAYOUT  # the accelerator imports these docs

    derived = dict(itcm_instructions=hw.itcm_instructions, stack_top=f"{DTCM_BASE + hw.dtcm_bytes:#x}",
                   layout_rule=LAYOUT.describe())
    return machine_docs("kcgym.sims.rvv", hw, derived, instruction_reference())
