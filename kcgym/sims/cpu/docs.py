"""CPU documentation data: its guide fields and the instruction reference, generated from the shared RISC-V table.

The reference lists the scalar rows of :data:`kcgym.sims.rvv.isa.INSTRUCTIONS` (the CPU's whole ISA), the
Zicsr counters of :mod:`kcgym.sims.cpu.assembler` and the scalar pseudo-instructions, so the CPU's docs and
its assembler cannot drift apart.
"""

from __future__ import annotations

from kcgym.sims.base import DocSection
from kcgym.sims.cpu import assembler as A
from kcgym.sims.cpu.config import CALENDAR_CYCLES, PREDICTORS, RAM_BASE, TENSOR_BASE, CPUConfig
from kcgym.sims.docs import machine_docs
from kcgym.sims.rvv import isa as I
from kcgym.sims.rvv.assembler import PSEUDO_SYNTAX, PSEUDO_TABLE
from kcgym.sims.rvv.docs import ERROR_CODES as RVV_ERROR_CODES

ERROR_CODES = {code: text for code, text in RVV_ERROR_CODES.items() if code not in ("E017", "E019", "E022", "E023",
                                                                                   "W023")}
ERROR_CODES["E014"] = "program larger than the program memory (or .data larger than the data RAM)"
ERROR_CODES["E024"] = "vector instruction: the CPU has no vector unit"


def scalar_pseudos() -> list[str]:
    """The pseudo-instructions whose expansion is scalar (the CPU accepts exactly these), then the counters."""
    def scalar(expansion: tuple[tuple[str, ...], ...]) -> bool:
        return bool(expansion) and all(I.BY_MNEMONIC[m[0]].cls in A.SCALAR_CLASSES for m in expansion)

    out = [p for p, (_, expansion) in PSEUDO_TABLE.items() if p == "li" or p != "csrr" and scalar(expansion)]
    return out + list(A.COUNTER_PSEUDOS) + list(A.SYSTEM_PSEUDOS)


def instruction_reference() -> str:
    """Markdown reference of every CPU mnemonic, the readable CSRs, the pseudo-instructions and error codes."""
    out = ["## Instruction reference (generated)", "",
           "RV32IM + Zicsr in GNU `as` syntax (the RVV core's assembler without its vector unit). Directives: `.text "
           ".data .rodata .bss .section .globl .align .p2align .balign .word .half .byte .zero .space .equ .set "
           ".macro .rept .irp` and the bookkeeping GCC emits (`.file .type .size .option .attribute .ident`); "
           "comments start with `#`; labels `name:` and numeric local labels `1:` (`1b`/`1f`)."]
    groups: dict[str, list[I.RVInstr]] = {}
    for spec in I.INSTRUCTIONS:
        if spec.cls in A.SCALAR_CLASSES:
            groups.setdefault(spec.group, []).append(spec)
    for group, specs in groups.items():
        out += ["", f"### {group}", "", "| instruction | operands | meaning |", "|---|---|---|"]
        for s in specs:
            summary = "read a CSR (see below) into rd" if s.cls == "CSR" else s.summary
            out.append(f"| `{s.mnemonic}` | `{I.FORMS[s.form]}` | {summary} |")
    out += ["", "### Zicsr and machine mode", "", "| instruction | operands | meaning |", "|---|---|---|"]
    out += [f"| `{m}` | `{syntax}` | {summary} |" for m, (_, syntax, summary) in A.SYSTEM.items()]
    meaning = {A.CSR_CYCLE: "the cycle the csrr issues (CPU-T9); read-only",
               A.CSR_INSTRET: "instructions executed before it; read-only", A.CSR_ZERO: "0; read-only"}
    out += ["", "### CSRs", "", "| CSR | reads |", "|---|---|"]
    out += [f"| `{name}` | {meaning.get(kind, 'read-write machine CSR (see Machine mode and PMP)')} |"
            for name, kind in A.CSRS.items()]
    out += ["", "### Pseudo-instructions", "", "| pseudo | operands |", "|---|---|"]
    syntax = {**{p: "rd" for p in A.COUNTER_PSEUDOS}, **{p: s for p, (_, s) in A.SYSTEM_PSEUDOS.items()}}
    out += [f"| `{p}` | `{PSEUDO_SYNTAX.get(p, syntax.get(p, ''))}` |" for p in scalar_pseudos()]
    out += ["", "### Assembler error codes", "", "| code | meaning |", "|---|---|"]
    out += [f"| {k} | {v} |" for k, v in ERROR_CODES.items()]
    return "\n".join(out) + "\n"


def cpu_docs(hw: CPUConfig) -> list[DocSection]:
    from kcgym.sims.cpu.accelerator import LAYOUT  # the accelerator imports these docs

    derived = dict(imem_instructions=hw.imem_instructions, stack_top=f"{RAM_BASE + hw.ram_bytes:#x}",
                   layout_rule=LAYOUT.describe(), predictor_name=PREDICTORS[hw.predictor],
                   icache_sets=hw.sets("icache"), dcache_sets=hw.sets("dcache"), ram_base=f"{RAM_BASE:#x}",
                   tensor_base=f"{TENSOR_BASE:#x}", calendar_cycles=CALENDAR_CYCLES)
    return machine_docs("kcgym.sims.cpu", hw, derived, instruction_reference())
