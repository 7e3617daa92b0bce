"""Table-driven two-pass assembler with compiler-grade diagnostics.

Pass 1 preprocesses (macros, repeats, constants), splits labels and instructions and
assigns PCs; pass 2 checks every operand against the instruction table (register files,
ranges, alignment), evaluates expressions, and encodes ``int32[N, F]`` words. All errors
are collected and raised together.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kcgym.isa.diagnostics import AssemblyError, Diagnostic
from kcgym.isa.expr import ExprError, evaluate
from kcgym.isa.preprocess import Preprocessor, SourceLine
from kcgym.isa.program import Program
from kcgym.isa.spec import ISA, Imm, InstrSpec, Reg

_LABEL = re.compile(r"^\s*([A-Za-z_.$][A-Za-z0-9_.$]*)\s*:")


@dataclass
class ParsedInstr:
    """One instruction after parsing: what ISA-specific ``finalize`` hooks work on."""

    spec: InstrSpec
    pc: int
    src: SourceLine
    operand_texts: list[str]
    operand_cols: list[int]
    values: list[int | float] = field(default_factory=list)
    hidden: list[int] = field(default_factory=list)


class Reporter:
    def __init__(self) -> None:
        self.diags: list[Diagnostic] = []

    def error(self, src: SourceLine, code: str, msg: str, col: int = 1, length: int = 1,
              hint: str | None = None) -> None:
        self.diags.append(Diagnostic.error(code, msg, line=src.line, col=col, length=length,
                                           source_line=src.display, hint=hint, origin=src.origin))

    def warning(self, src: SourceLine, code: str, msg: str, col: int = 1, length: int = 1,
                hint: str | None = None) -> None:
        self.diags.append(Diagnostic.warning(code, msg, line=src.line, col=col, length=length,
                                             source_line=src.display, hint=hint, origin=src.origin))


def _operand_spans(text: str, start: int) -> list[tuple[str, int]]:
    """Split ``a, b, (c, d)`` at top-level commas, with 1-based columns into the line."""
    spans, depth, cur_start = [], 0, start
    for i in range(start, len(text) + 1):
        ch = text[i] if i < len(text) else ","
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth <= 0:
            raw = text[cur_start:i]
            lead = len(raw) - len(raw.lstrip())
            spans.append((raw.strip(), cur_start + lead + 1))
            cur_start = i + 1
    return spans


def _suggest(word: str, options: list[str]) -> str | None:
    close = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    return close[0] if close else None


def assemble(isa: ISA, source: str, hw: Any = None) -> Program:
    """Assemble ``source`` for ``isa`` under hardware config ``hw``; raises AssemblyError."""
    rep = Reporter()
    reserved = set(isa.register_names) | {m.lower() for m in isa.by_mnemonic}
    pre = Preprocessor(isa.comment_prefixes, isa.symbols(hw), reserved)
    lines = pre.run(source)
    rep.diags.extend(pre.diags)

    # pass 1: labels and instruction slots
    labels: dict[str, int] = {}
    parsed: list[ParsedInstr] = []
    for sl in lines:
        text = sl.text
        pos = 0
        while (m := _LABEL.match(text[pos:])) is not None:
            name = m.group(1)
            lcol = pos + m.start(1) + 1
            if not isa.has_labels:
                rep.error(sl, "E008", f"labels are not supported on {isa.name} ('{name}:')", lcol,
                          len(name) + 1, hint=isa.label_hint or None)
            elif name in labels:
                rep.error(sl, "E009", f"label '{name}' is defined twice", lcol, len(name))
            else:
                labels[name] = len(parsed)
            pos += m.end()
        body = text[pos:]
        if not body.strip():
            continue
        lead = len(body) - len(body.lstrip())
        mcol = pos + lead  # 0-based column of mnemonic
        word = body.split()[0]
        mnemonic = word.upper()
        spec = isa.by_mnemonic.get(mnemonic)
        if spec is None:
            sug = _suggest(mnemonic, list(isa.by_mnemonic))
            hint = f"did you mean '{sug}'?" if sug else f"see the {isa.name} instruction reference"
            if word.lower() in isa.register_names:
                hint = "a line must start with an instruction mnemonic"
            rep.error(sl, "E001", f"unknown instruction '{word}'", mcol + 1, len(word), hint)
            continue
        after = mcol + len(word)
        ops = _operand_spans(text, after) if text[after:].strip() else []
        parsed.append(ParsedInstr(spec, len(parsed), sl, [o for o, _ in ops], [c for _, c in ops]))

    if len(parsed) > isa.max_program:
        rep.error(lines[-1] if lines else SourceLine("", 1, ""), "E014",
                  f"program has {len(parsed)} instructions; instruction memory holds {isa.max_program}",
                  hint="use hardware loops instead of unrolling")

    # pass 2: operands
    for pi in parsed:
        _check_operands(isa, pi, labels, rep)
    if isa.finalize is not None and not any(d.severity == "error" for d in rep.diags):
        isa.finalize(parsed, hw, rep)
    rep.diags.sort(key=lambda d: (d.line, d.col))
    errors = [d for d in rep.diags if d.severity == "error"]
    if errors:
        raise AssemblyError(rep.diags)
    return encode(isa, parsed, source, [d for d in rep.diags if d.severity == "warning"])


def _check_operands(isa: ISA, pi: ParsedInstr, labels: dict[str, int], rep: Reporter) -> None:
    spec, sl = pi.spec, pi.src
    want, got = len(spec.operands), len(pi.operand_texts)
    if got != want:
        col = pi.operand_cols[want] if got > want else (pi.operand_cols[-1] if pi.operand_cols else 1)
        rep.error(sl, "E002", f"{spec.mnemonic} takes {want} operand(s), got {got}", col,
                  hint=f"syntax: {spec.syntax}")
        return
    for op, text, col in zip(spec.operands, pi.operand_texts, pi.operand_cols, strict=True):
        if text == "":
            rep.error(sl, "E016", f"empty operand '{op.name}'", col, hint=f"syntax: {spec.syntax}")
            pi.values.append(0)
            continue
        low = text.lower()
        if isinstance(op.kind, Reg):
            rf = isa.files[op.kind.file]
            if low in isa.register_names:
                other, idx = isa.register_names[low]
                if other.name != rf.name:
                    rep.error(sl, "E003", f"operand '{op.name}' of {spec.mnemonic} must be a {rf.doc} "
                              f"({rf.prefix}0..{rf.prefix}{rf.count - 1}), got '{text}'", col, len(text),
                              hint=f"syntax: {spec.syntax}")
                elif op.kind.write and rf.zero == idx:
                    rep.warning(sl, "W001", f"write to '{text}' is discarded ({text} is hardwired to zero)",
                                col, len(text))
                pi.values.append(idx)
                continue
            m = re.fullmatch(r"([a-z]+)(\d+)", low)
            if m and m.group(1) == rf.prefix.lower():
                rep.error(sl, "E004", f"register '{text}' does not exist: {rf.doc}s are "
                          f"{rf.prefix}0..{rf.prefix}{rf.count - 1}", col, len(text))
            else:
                sug = _suggest(low, rf.names())
                hint = f"did you mean '{sug}'?" if sug else f"syntax: {spec.syntax}"
                rep.error(sl, "E003", f"operand '{op.name}' of {spec.mnemonic} must be a {rf.doc} "
                          f"({rf.prefix}0..{rf.prefix}{rf.count - 1}), got '{text}'", col, len(text), hint)
            pi.values.append(0)
            continue
        assert isinstance(op.kind, Imm)
        imm = op.kind
        if low in isa.register_names:
            rep.error(sl, "E003", f"operand '{op.name}' of {spec.mnemonic} must be an immediate, "
                      f"got register '{text}'", col, len(text), hint=f"syntax: {spec.syntax}")
            pi.values.append(0)
            continue
        symbols = {**sl.symbols, **labels} if labels else sl.symbols
        try:
            v = evaluate(text, symbols, allow_float=imm.is_float)
        except ExprError as e:
            hint = e.hint
            if e.message.startswith("unknown symbol"):
                name = e.message.split("'")[1]
                sug = _suggest(name, list(symbols))
                hint = f"did you mean '{sug}'?" if sug else "define it with '.equ NAME, value'"
            rep.error(sl, "E007", e.message, col + e.offset, e.length, hint)
            pi.values.append(0)
            continue
        if not imm.is_float and isinstance(v, float):
            rep.error(sl, "E007", f"operand '{op.name}' must be an integer, got {v}", col, len(text))
            v = 0
        if not (imm.lo <= v <= imm.hi):
            rep.error(sl, "E005", f"operand '{op.name}' of {spec.mnemonic} is {v}, outside {imm.lo}..{imm.hi}",
                      col, len(text), hint=_range_hint(spec, op.name))
        elif imm.align > 1 and int(v) % imm.align:
            rep.error(sl, "E006", f"operand '{op.name}' of {spec.mnemonic} must be a multiple of {imm.align}, "
                      f"got {v}", col, len(text))
        pi.values.append(v)


def _range_hint(spec: InstrSpec, name: str) -> str | None:
    if spec.mnemonic == "S_ADDI_INT":
        return "load large constants with S_LUI_INT (upper bits) then S_ADDI_INT (low 12 bits)"
    return f"syntax: {spec.syntax}"


def encode(isa: ISA, parsed: list[ParsedInstr], source: str, warnings: list[Diagnostic]) -> Program:
    words = np.zeros((len(parsed), isa.n_fields), dtype=np.int32)
    for pi in parsed:
        row = [isa.opcodes[pi.spec.mnemonic], isa.class_ids[pi.spec.cls], isa.sub_ids[pi.spec.mnemonic]]
        for op, v in zip(pi.spec.operands, pi.values, strict=True):
            if isinstance(op.kind, Imm) and op.kind.is_float:
                row.append(int(np.array(v, dtype=np.float32).view(np.int32)))
            else:
                row.append(int(v))
        row.extend(pi.hidden)
        words[pi.pc, : len(row)] = row
    return Program(
        isa_name=isa.name,
        words=words,
        lines=[pi.src.line for pi in parsed],
        origins=[pi.src.origin for pi in parsed],
        source=source,
        warnings=warnings,
    )
