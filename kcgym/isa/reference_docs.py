"""The Markdown instruction reference, generated from the instruction table."""

from __future__ import annotations

from typing import Any

from kcgym.isa.spec import ISA, Imm, Reg

ERROR_CODES = {
    "E001": "unknown instruction (with a 'did you mean')",
    "E002": "wrong number of operands",
    "E003": "operand of the wrong kind (e.g. an FP register where a gp register is needed)",
    "E004": "register does not exist",
    "E005": "immediate out of range",
    "E006": "immediate not a multiple of the required alignment",
    "E007": "bad constant expression or unknown symbol",
    "E008": "label used on an ISA without branches",
    "E009": "label defined twice",
    "E011": "bad or unknown directive",
    "E012": "macro error (unterminated, wrong arguments, recursion)",
    "E013": "repeat-block error (.rept/.irp/.endr) or expansion too large",
    "E014": "program larger than instruction memory",
    "E016": "empty operand",
    "E020": "slot rule: more operations of one unit in a bundle than it has slots (VLIW)",
    "E021": "slot rule: two operations of one bundle write the same register (VLIW)",
    "E022": "bundle braces '{' '}' unbalanced or nested, or a label inside a bundle (VLIW)",
}


def instruction_reference(isa: ISA, hw: Any, extra_codes: dict[str, str] | None = None) -> str:
    out = [f"# {isa.name} instruction reference", ""]
    out.append("Generated from the instruction table used by the assembler and the simulator.")
    out.append("Syntax: `MNEMONIC op1, op2, ...`; mnemonics and registers are case-insensitive; comments start "
               f"with {' or '.join(repr(p) for p in isa.comment_prefixes)}. Operands may be constant expressions "
               "(`+ - * / % << >> & | ^ ~`, parentheses) over `.equ` symbols and the predefined constants.")
    out.append("")
    if isa.bundle_slots:
        slots = ", ".join(f"{n} {u}" for u, n in isa.bundle_slots.items())
        out.append(f"Bundles (VLIW): one line is one bundle; separate its operations with `||` or `;`, or put them "
                   f"on several lines inside `{{` ... `}}`. A bundle holds at most {slots} operation(s) (each "
                   "instruction's unit is given below) and no register may be written twice in one bundle. All "
                   "operations of a bundle read the state before the bundle; their writes take effect at its end.")
        out.append("")
    out.append("## Registers")
    out.append("")
    for rf in isa.register_files:
        z = f"; {rf.prefix}{rf.zero} always reads 0 and writes to it are discarded" if rf.zero is not None else ""
        out.append(f"- `{rf.prefix}0`..`{rf.prefix}{rf.count - 1}`: {rf.doc}{z}")
    syms = isa.symbols(hw)
    if syms:
        out.append("")
        out.append("Predefined constants: " + ", ".join(f"`{k}`={v}" for k, v in syms.items()) + ".")
    for cls in isa.classes:
        members = isa.class_members(cls)
        if not members:
            continue
        out.append("")
        out.append(f"## {cls} instructions (unit {members[0].unit})")
        out.append("")
        out.append("| syntax | operation | occupancy | latency |")
        out.append("|---|---|---|---|")
        for s in members:
            out.append(f"| `{s.syntax}` | {s.summary} | {s.cost('occupancy', hw)} | {s.cost('latency', hw)} |")
        for s in members:
            details = []
            for o in s.operands:
                if isinstance(o.kind, Reg):
                    kind = isa.files[o.kind.file].doc
                else:
                    assert isinstance(o.kind, Imm)
                    kind = f"{'float' if o.kind.is_float else 'integer'} {o.kind.lo}..{o.kind.hi}"
                    if o.kind.align > 1:
                        kind += f", multiple of {o.kind.align}"
                details.append(f"`{o.name}`: {kind}" + (f" ({o.doc})" if o.doc else ""))
            if s.semantics or details:
                out.append("")
                out.append(f"### {s.mnemonic}")
                out.append(f"Format: `{s.syntax}`. {s.summary}")
                if s.semantics:
                    out.append(s.semantics)
                if details:
                    out.append("Operands: " + "; ".join(details) + ".")
    out.append("")
    out.append("## Assembler directives")
    out.append("")
    out.append("- `.equ NAME, expr` / `.set NAME, expr`: define a constant (re-definable with .set).")
    out.append("- `.macro NAME a, b=default` ... `.endm`: a macro; `\\a` substitutes an argument, `\\@` a "
               "counter unique per expansion.")
    out.append("- `.rept N` ... `.endr`: repeat a block N times. `.irp sym, v1, v2` ... `.endr`: once per value, "
               "with `\\sym` substituted.")
    out.append("")
    out.append("## Diagnostic codes")
    out.append("")
    for code, text in {**ERROR_CODES, **(extra_codes or {})}.items():
        out.append(f"- `{code}`: {text}")
    return "\n".join(out) + "\n"
