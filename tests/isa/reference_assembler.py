"""Frozen copy of kcgym/isa/assembler.py at 395137d: the oracle the fast assembler is tested against.

Only changed: this docstring, and the key its tables are cached under on an ISA object (so the oracle and the
assembler under test never share memos). Do not edit otherwise: it defines the expected outcome.
"""

from __future__ import annotations

import re
from collections import ChainMap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from kcgym.isa.diagnostics import AssemblyError, Diagnostic, Suggester
from kcgym.isa.expr import ExprError, evaluate
from kcgym.isa.preprocess import Preprocessor, SourceLine, split_operands
from kcgym.isa.program import Program
from kcgym.isa.spec import ISA, Imm, InstrSpec, Reg
from kcgym.limits import MAX_DIAGNOSTICS

_LABEL = re.compile(r"^\s*([A-Za-z_.$][A-Za-z0-9_.$]*)\s*:")
_BUNDLE_MARK = re.compile(r"[{}]|;|\|\|")  # what splits a VLIW line: braces, ';' and '||'
_REGISTER_LIKE = re.compile(r"([a-z]+)(\d+)")
# an operand that is one numeric literal: its value cannot depend on a symbol, so its check can be memoised
_LITERAL = re.compile(r"[+-]?(?:0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")
# Memo entries per ISA object and kind (parsed pieces, checked operands, encoded rows): RL batches assemble
# thousands of kernels that share most of their lines; past this many the memo starts again (bounded memory).
ASSEMBLY_MEMO_ENTRIES = 1 << 14


@dataclass(frozen=True)
class _Tables:
    """What the assembler derives from an ISA table, computed once per ISA object (not per kernel)."""

    files: dict[str, Any]  # register-file name -> RegisterFile
    reserved: frozenset[str]  # register names and mnemonics (lower case): not symbol names
    nop_row: tuple[int, ...]  # the encoded NOP that fills a bundle's empty slots (bundled ISAs)
    # memos of pure functions of an instruction's text, kept across kernels (ASSEMBLY_MEMO_ENTRIES each):
    # parsed: (piece, start column) -> (spec, operand texts, columns, col); checked: (mnemonic, operand texts)
    # -> values (literal-only operands); rows: (mnemonic, values, hidden) -> encoded row (no float values);
    # writes: mnemonic -> positions of its written-register operands
    parsed: dict[tuple[Any, ...], tuple[Any, ...]] = field(default_factory=dict)
    checked: dict[tuple[Any, ...], tuple[Any, ...]] = field(default_factory=dict)
    rows: dict[tuple[Any, ...], tuple[Any, ...]] = field(default_factory=dict)
    writes: dict[str, tuple[int, ...]] = field(default_factory=dict)


def _tables(isa: ISA) -> _Tables:
    tables = isa.__dict__.get("_reference_assembler_tables")
    if tables is None:
        nop_row: tuple[int, ...] = ()
        if isa.bundle_slots is not None:
            nop = isa.nop_mnemonic
            nop_row = (isa.opcodes[nop], isa.class_ids[isa.by_mnemonic[nop].cls], isa.sub_ids[nop]) + (0,) * (
                isa.n_fields - 3)
        tables = _Tables(files=isa.files, reserved=frozenset(isa.register_names) | {m.lower() for m in isa.by_mnemonic},
                         nop_row=nop_row)
        isa.__dict__["_reference_assembler_tables"] = tables
    return tables


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
    col: int = 1  # 1-based column of the mnemonic


class Reporter:
    """Collects diagnostics (at most ``MAX_DIAGNOSTICS``; the rest are counted) and hands out hints."""

    def __init__(self) -> None:
        self.diags: list[Diagnostic] = []
        self.dropped_errors = 0
        self.suggest = Suggester()

    def error(self, src: SourceLine, code: str, msg: str, col: int = 1, length: int = 1,
              hint: str | None = None) -> None:
        if len(self.diags) >= MAX_DIAGNOSTICS:
            self.dropped_errors += 1
            return
        self.diags.append(Diagnostic.error(code, msg, line=src.line, col=col, length=length,
                                           source_line=src.display, hint=hint, origin=src.origin))

    def warning(self, src: SourceLine, code: str, msg: str, col: int = 1, length: int = 1,
                hint: str | None = None) -> None:
        if len(self.diags) < MAX_DIAGNOSTICS:
            self.diags.append(Diagnostic.warning(code, msg, line=src.line, col=col, length=length,
                                                 source_line=src.display, hint=hint, origin=src.origin))

    def finish(self) -> list[Diagnostic]:
        """The diagnostics sorted by position, plus one error counting those past the cap."""
        self.diags.sort(key=lambda d: (d.line, d.col))
        if self.dropped_errors:
            last = self.diags[-1].line if self.diags else 1
            self.diags.append(Diagnostic.error("E030", f"{self.dropped_errors} more error(s) not reported (only the "
                                               f"first {MAX_DIAGNOSTICS} diagnostics are kept)", line=last))
        return self.diags


def assemble(isa: ISA, source: str, hw: Any = None) -> Program:
    """Assemble ``source`` for ``isa`` under hardware config ``hw``; raises AssemblyError."""
    rep = Reporter()
    tables = _tables(isa)
    pre = Preprocessor(isa.comment_prefixes, isa.symbols(hw), tables.reserved)
    lines = pre.run(source)
    rep.diags.extend(pre.diags)

    # pass 1: labels and instructions (a VLIW ISA groups instructions into bundles: pc = bundle index)
    labels: dict[str, int] = {}
    parsed: list[ParsedInstr] = []
    bundled = isa.bundle_slots is not None
    n_words = 0  # instruction words (bundles) so far
    brace: SourceLine | None = None  # the line of an open '{'
    open_ops = 0  # instructions in the bundle being built
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
            elif brace is not None:
                rep.error(sl, "E022", f"label '{name}' inside a bundle", lcol, len(name),
                          hint=f"the bundle opened with '{{' at line {brace.line} is not closed yet")
            else:
                labels[name] = n_words
            pos += m.end()
        if not bundled:
            if text[pos:].strip():
                pi = _parse_instruction(isa, sl, text, pos, len(text), n_words, rep)
                if pi is not None:
                    parsed.append(pi)
                    n_words += 1
            continue
        for kind, start, end in _bundle_pieces(text, pos):
            if kind == "{":
                if brace is not None:
                    rep.error(sl, "E022", "'{' inside an open bundle", start + 1,
                              hint=f"close the bundle opened at line {brace.line} with '}}' first")
                else:
                    if open_ops:  # ops before '{' on the same line form their own bundle
                        n_words, open_ops = n_words + 1, 0
                    brace = sl
            elif kind == "}":
                if brace is None:
                    rep.error(sl, "E022", "'}' without a matching '{'", start + 1)
                else:
                    brace = None
                    if open_ops:
                        n_words, open_ops = n_words + 1, 0
            else:
                pi = _parse_instruction(isa, sl, text, start, end, n_words, rep)
                if pi is not None:
                    parsed.append(pi)
                    open_ops += 1
        if brace is None and open_ops:
            n_words, open_ops = n_words + 1, 0
    if brace is not None:
        rep.error(brace, "E022", "'{' without a matching '}'", brace.text.find("{") + 1,
                  hint="a bundle in braces ends with '}'")
        if open_ops:
            n_words += 1

    if n_words > isa.max_program:
        what = "bundles" if bundled else "instructions"
        rep.error(lines[-1] if lines else SourceLine("", 1, ""), "E014",
                  f"program has {n_words} {what}; instruction memory holds {isa.max_program}",
                  hint="use hardware loops instead of unrolling")

    # pass 2: operands
    for pi in parsed:
        _check_operands(isa, tables, pi, labels, rep)
    if bundled:
        _check_bundles(isa, parsed, rep)
    if isa.finalize is not None and not any(d.severity == "error" for d in rep.diags):
        isa.finalize(parsed, hw, rep)
    rep.finish()
    errors = [d for d in rep.diags if d.severity == "error"]
    if errors:
        raise AssemblyError(rep.diags)
    warnings = [d for d in rep.diags if d.severity == "warning"]
    if bundled:
        return encode_bundles(isa, parsed, n_words, source, warnings)
    return encode(isa, parsed, source, warnings)


def _bundle_pieces(text: str, start: int) -> list[tuple[str, int, int]]:
    """Split a line of a VLIW ISA into ``{``, ``}`` and instruction pieces ``(kind, start, end)``.

    Instructions are separated by ``||`` or ``;``; braces group lines into one bundle.
    """
    pieces: list[tuple[str, int, int]] = []
    seg = start
    for m in _BUNDLE_MARK.finditer(text, start):  # left to right, as a scan would: '|||' is '||' then '|'
        if text[seg : m.start()].strip():
            pieces.append(("op", seg, m.start()))
        mark = m.group()
        if mark in "{}":
            pieces.append((mark, m.start(), m.end()))
        seg = m.end()
    if text[seg:].strip():
        pieces.append(("op", seg, len(text)))
    return pieces


def _memo_put(memo: dict[Any, Any], key: Any, value: Any) -> None:
    if len(memo) >= ASSEMBLY_MEMO_ENTRIES:
        memo.clear()
    memo[key] = value


def _parse_instruction(isa: ISA, sl: SourceLine, text: str, start: int, end: int, pc: int,
                       rep: Reporter) -> ParsedInstr | None:
    """The instruction in ``text[start:end]`` (columns stay those of the whole line), or None after an error."""
    memo = _tables(isa).parsed
    key = (text[start:end], start)
    hit = memo.get(key)
    if hit is not None:
        spec, texts, cols, col = hit
        return ParsedInstr(spec, pc, sl, list(texts), list(cols), col=col)
    masked = " " * start + text[start:end]
    body = masked[start:]
    lead = len(body) - len(body.lstrip())
    mcol = start + lead  # 0-based column of mnemonic
    word = body.split(None, 1)[0]
    mnemonic = word.upper()
    spec = isa.by_mnemonic.get(mnemonic)
    if spec is None:
        sug = rep.suggest(mnemonic, isa.by_mnemonic)
        hint = f"did you mean '{sug}'?" if sug else f"see the {isa.name} instruction reference"
        if word.lower() in isa.register_names:
            hint = "a line must start with an instruction mnemonic"
        rep.error(sl, "E001", f"unknown instruction '{word}'", mcol + 1, len(word), hint)
        return None
    after = mcol + len(word)
    ops = split_operands(masked, after) if masked[after:].strip() else []
    texts, cols = tuple(o for o, _ in ops), tuple(c for _, c in ops)
    _memo_put(memo, key, (spec, texts, cols, mcol + 1))
    return ParsedInstr(spec, pc, sl, list(texts), list(cols), col=mcol + 1)


def _written_registers(isa: ISA, pi: ParsedInstr) -> list[tuple[str, int, int]]:
    """(register name, operand column, operand length) of each register ``pi`` writes."""
    out = []
    tables = _tables(isa)
    files = tables.files
    writes = tables.writes.get(pi.spec.mnemonic)
    if writes is None:
        writes = tables.writes[pi.spec.mnemonic] = tuple(
            i for i, op in enumerate(pi.spec.operands) if isinstance(op.kind, Reg) and op.kind.write)
    for i in writes:
        if i < len(pi.values):
            kind = pi.spec.operands[i].kind
            assert isinstance(kind, Reg)  # a written operand is a register
            rf = files[kind.file]
            if rf.zero != pi.values[i]:
                out.append((f"{rf.prefix}{pi.values[i]}", pi.operand_cols[i], len(pi.operand_texts[i])))
    return out



def _check_bundles(isa: ISA, parsed: list[ParsedInstr], rep: Reporter) -> None:
    """Slot limits per unit and one writer per register within each bundle."""
    assert isa.bundle_slots is not None
    by_bundle: dict[int, list[ParsedInstr]] = {}
    for pi in parsed:
        by_bundle.setdefault(pi.pc, []).append(pi)
    limits = ", ".join(f"{n} {u}" for u, n in isa.bundle_slots.items())
    for ops in by_bundle.values():
        used: dict[str, int] = {}
        writers: dict[str, ParsedInstr] = {}
        for pi in ops:
            unit = pi.spec.unit
            used[unit] = used.get(unit, 0) + 1
            cap = isa.bundle_slots.get(unit, 0)
            if used[unit] > cap:
                rep.error(pi.src, "E020", f"slot rule: a bundle holds at most {cap} {unit} operation(s); "
                          f"{pi.spec.mnemonic} is {unit} operation number {used[unit]}",
                          pi.col, len(pi.spec.mnemonic), hint=f"a bundle holds {limits}; move it to another bundle")
            for reg, col, length in _written_registers(isa, pi):
                first = writers.get(reg)
                if first is not None:
                    rep.error(pi.src, "E021", f"slot rule: two operations of one bundle write {reg} "
                              f"({first.spec.mnemonic} and {pi.spec.mnemonic})", col, length,
                              hint="at most one write per register per bundle; put one of them in another bundle")
                else:
                    writers[reg] = pi


def encode_bundles(isa: ISA, parsed: list[ParsedInstr], n_bundles: int, source: str,
                   warnings: list[Diagnostic]) -> Program:
    """VLIW words: one row per bundle, one ``n_fields`` group per slot (``isa.slot_units``), NOP-filled."""
    units = isa.slot_units
    S, F = len(units), isa.n_fields
    rows: list[Sequence[int]] = [_tables(isa).nop_row] * (n_bundles * S)  # bundle-major: row pc * S + slot
    lines = [0] * n_bundles
    slot_lines = [[0] * S for _ in range(n_bundles)]
    origins: list[str | None] = [None] * n_bundles
    slots_of: dict[str, list[int]] = {}  # unit -> its slots, in order: a bundle's ops of a unit take them in turn
    for s, u in enumerate(units):
        slots_of.setdefault(u, []).append(s)
    taken: dict[tuple[int, str], int] = {}  # (bundle, unit) -> slots of that unit taken so far
    for pi in parsed:
        k = (pi.pc, pi.spec.unit)
        n = taken.get(k, 0)
        slot = slots_of[pi.spec.unit][n]
        taken[k] = n + 1
        rows[pi.pc * S + slot] = _row(isa, pi)
        slot_lines[pi.pc][slot] = pi.src.line
        if not lines[pi.pc]:
            lines[pi.pc], origins[pi.pc] = pi.src.line, pi.src.origin
    words = np.array(rows, dtype=np.int32).reshape(n_bundles, S * F)
    return Program(isa_name=isa.name, words=words, lines=lines, origins=origins, source=source, warnings=warnings,
                   slot_lines=slot_lines)


def _check_operands(isa: ISA, tables: _Tables, pi: ParsedInstr, labels: dict[str, int], rep: Reporter) -> None:
    """Check and evaluate ``pi``'s operands into ``pi.values``, memoised where the outcome depends on the
    text alone: no diagnostic, and every immediate a numeric literal (registers never depend on symbols)."""
    key = (pi.spec.mnemonic, tuple(pi.operand_texts))
    hit = tables.checked.get(key)
    if hit is not None:
        pi.values.extend(hit)
        return
    before = (len(rep.diags), rep.dropped_errors)
    _check_operands_of(isa, tables, pi, labels, rep)
    if (len(rep.diags), rep.dropped_errors) == before and all(
            isinstance(op.kind, Reg) or _LITERAL.fullmatch(text) for op, text in zip(pi.spec.operands,
                                                                                     pi.operand_texts, strict=True)):
        _memo_put(tables.checked, key, tuple(pi.values))


def _check_operands_of(isa: ISA, tables: _Tables, pi: ParsedInstr, labels: dict[str, int], rep: Reporter) -> None:
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
            rf = tables.files[op.kind.file]
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
            m = _REGISTER_LIKE.fullmatch(low)
            if m and m.group(1) == rf.prefix.lower():
                rep.error(sl, "E004", f"register '{text}' does not exist: {rf.doc}s are "
                          f"{rf.prefix}0..{rf.prefix}{rf.count - 1}", col, len(text))
            else:
                sug = rep.suggest(low, rf.names())
                hint: str | None = f"did you mean '{sug}'?" if sug else f"syntax: {spec.syntax}"
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
        symbols: Mapping[str, int | float] = ChainMap(cast(dict[str, int | float], labels), sl.symbols) if labels \
            else sl.symbols
        try:
            v = evaluate(text, symbols, allow_float=imm.is_float)
        except ExprError as e:
            hint = e.hint
            if e.message.startswith("unknown symbol"):
                name = e.message.split("'")[1]
                sug = rep.suggest(name, symbols)
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


def _row(isa: ISA, pi: ParsedInstr) -> list[int]:
    """One instruction's ``n_fields`` integers: ``[opcode, class, sub, operands..., hidden..., 0...]``
    (memoised by mnemonic and values, except where a value is a float: -0.0 == 0.0 as a key)."""
    memo = _tables(isa).rows
    key = None if any(isinstance(v, float) for v in pi.values) else (pi.spec.mnemonic, tuple(pi.values),
                                                                       tuple(pi.hidden))
    hit = memo.get(key) if key is not None else None
    if hit is not None:
        return list(hit)
    row = _encode_row(isa, pi)
    if key is not None:
        _memo_put(memo, key, tuple(row))
    return row


def _encode_row(isa: ISA, pi: ParsedInstr) -> list[int]:
    row = [isa.opcodes[pi.spec.mnemonic], isa.class_ids[pi.spec.cls], isa.sub_ids[pi.spec.mnemonic]]
    for op, v in zip(pi.spec.operands, pi.values, strict=True):
        if isinstance(op.kind, Imm) and op.kind.is_float:
            row.append(int(np.array(v, dtype=np.float32).view(np.int32)))
        else:
            row.append(int(v))
    row.extend(pi.hidden)
    if len(row) > isa.n_fields:
        raise ValueError(f"{pi.spec.mnemonic}: {len(row)} encoded fields, the ISA has {isa.n_fields}")
    row.extend([0] * (isa.n_fields - len(row)))
    return row


def encode_one(isa: ISA, pi: ParsedInstr) -> np.ndarray:
    """One instruction as ``n_fields`` int32: ``[opcode, class, sub, operands..., hidden...]``."""
    return np.array(_row(isa, pi), dtype=np.int32)


def encode(isa: ISA, parsed: list[ParsedInstr], source: str, warnings: list[Diagnostic]) -> Program:
    words = np.array([_row(isa, pi) for pi in parsed], dtype=np.int32).reshape(len(parsed), isa.n_fields)
    return Program(
        isa_name=isa.name,
        words=words,
        lines=[pi.src.line for pi in parsed],
        origins=[pi.src.origin for pi in parsed],
        source=source,
        warnings=warnings,
    )
