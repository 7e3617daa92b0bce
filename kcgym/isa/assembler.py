"""Table-driven two-pass assembler with compiler-grade diagnostics.

Pass 1 preprocesses (macros, repeats, constants), splits labels and instructions and
assigns PCs; pass 2 checks every operand against the instruction table (register files,
ranges, alignment), evaluates expressions, and encodes ``int32[N, F]`` words. All errors
are collected and raised together.

Sources of plain lines (the compiler's, and RL variants of it) take a fast path first: per-line records made
once by the same functions, so an assembly does only what depends on more than one line (see the section
"the plain-line fast path" below); the general path stays the one that reports.
"""

from __future__ import annotations

import re
from array import array
from collections import ChainMap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from kcgym.isa.diagnostics import AssemblyError, Diagnostic, Suggester
from kcgym.isa.expr import ExprError, evaluate, names_symbols
from kcgym.isa.preprocess import DIRECTIVES, Preprocessor, SourceLine, split_operands, strip_comment
from kcgym.isa.program import Program
from kcgym.isa.spec import ISA, Imm, InstrSpec, Operand, Reg
from kcgym.limits import MAX_DIAGNOSTICS, MAX_EXPANDED_LINES, MAX_EXPANSION_WORK, MAX_LINE_CHARS

_LABEL = re.compile(r"^\s*([A-Za-z_.$][A-Za-z0-9_.$]*)\s*:")
_BUNDLE_MARK = re.compile(r"[{}]|;|\|\|")  # what splits a VLIW line: braces, ';' and '||'
_REGISTER_LIKE = re.compile(r"([a-z]+)(\d+)")
# an operand that is one numeric literal: its value cannot depend on a symbol, so its check can be memoised
_LITERAL = re.compile(r"[+-]?(?:0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")
# Memo entries per ISA object and kind (parsed pieces, checked operands, encoded rows): RL batches assemble
# thousands of kernels that share most of their lines; past this many the memo starts again (bounded memory).
ASSEMBLY_MEMO_ENTRIES = 1 << 14
# The fast path's line memo: at most this many line records per ISA object (a full memo starts again; a record of
# a typical compiler line with three operations is ~2 KB, so ~16 MB), and only of lines up to this many characters
# (a longer line is analysed every time).
LINE_MEMO_ENTRIES = 1 << 13
LINE_MEMO_MAX_CHARS = 512


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
    # the plain-line fast path: raw source line -> its record (_Line, _BLANK or _UNUSUAL), and for a bundled
    # ISA the slots of each unit in column order and the bytes of a NOP row
    lines: dict[str, Any] = field(default_factory=dict)
    slots_of: dict[str, tuple[int, ...]] = field(default_factory=dict)
    nop_bytes: bytes = b""
    n_slots: int = 0  # slot columns of a bundle


def _tables(isa: ISA) -> _Tables:
    tables = isa.__dict__.get("_assembler_tables")
    if tables is None:
        nop_row: tuple[int, ...] = ()
        if isa.bundle_slots is not None:
            nop = isa.nop_mnemonic
            nop_row = (isa.opcodes[nop], isa.class_ids[isa.by_mnemonic[nop].cls], isa.sub_ids[nop]) + (0,) * (
                isa.n_fields - 3)
        slots_of: dict[str, tuple[int, ...]] = {}
        for s, u in enumerate(isa.slot_units):
            slots_of[u] = (*slots_of.get(u, ()), s)
        tables = _Tables(files=isa.files, reserved=frozenset(isa.register_names) | {m.lower() for m in isa.by_mnemonic},
                         nop_row=nop_row, slots_of=slots_of, nop_bytes=np.array(nop_row, dtype=np.int32).tobytes(),
                         n_slots=len(isa.slot_units))
        isa.__dict__["_assembler_tables"] = tables
    return tables


@dataclass(slots=True)
class ParsedInstr:
    """One instruction after parsing: what ISA-specific ``finalize`` hooks work on."""

    spec: InstrSpec
    pc: int
    src: SourceLine
    operand_texts: Sequence[str]
    operand_cols: Sequence[int]
    values: Sequence[int | float] = field(default_factory=list)
    hidden: Sequence[int] = field(default_factory=list)
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
    """Assemble ``source`` for ``isa`` under hardware config ``hw``; raises AssemblyError.

    A source of plain lines (no directive, macro, diagnostic or odd bundle) takes the line-record fast path
    (:func:`_assemble_plain`); anything else, or anything it is unsure of, goes through the general path."""
    tables = _tables(isa)
    program = _assemble_plain(isa, tables, source, hw)
    return program if program is not None else _assemble_general(isa, tables, source, hw)


def _assemble_general(isa: ISA, tables: _Tables, source: str, hw: Any) -> Program:
    """The careful two-pass assembly: every diagnostic, in source order."""
    rep = Reporter()
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


def _memo_put(memo: dict[Any, Any], key: Any, value: Any, entries: int | None = None) -> None:
    if len(memo) >= (ASSEMBLY_MEMO_ENTRIES if entries is None else entries):
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
        pi.values = list(hit)
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
    pi.values = [_operand_value(isa, tables, spec, op, text, col, sl, labels, rep)
                 for op, text, col in zip(spec.operands, pi.operand_texts, pi.operand_cols, strict=True)]


def _operand_value(isa: ISA, tables: _Tables, spec: InstrSpec, op: Operand, text: str, col: int, sl: SourceLine,
                   labels: dict[str, int], rep: Reporter, scope: Mapping[str, int | float] | None = None
                   ) -> int | float:
    """One operand's value (0 after an error, which goes to ``rep``). ``scope``: the names an expression sees, if
    not ``labels`` over the line's symbols (the fast path passes them merged into one dict: same lookups)."""
    if text == "":
        rep.error(sl, "E016", f"empty operand '{op.name}'", col, hint=f"syntax: {spec.syntax}")
        return 0
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
            return idx
        m = _REGISTER_LIKE.fullmatch(low)
        if m and m.group(1) == rf.prefix.lower():
            rep.error(sl, "E004", f"register '{text}' does not exist: {rf.doc}s are "
                      f"{rf.prefix}0..{rf.prefix}{rf.count - 1}", col, len(text))
        else:
            sug = rep.suggest(low, rf.names())
            hint: str | None = f"did you mean '{sug}'?" if sug else f"syntax: {spec.syntax}"
            rep.error(sl, "E003", f"operand '{op.name}' of {spec.mnemonic} must be a {rf.doc} "
                      f"({rf.prefix}0..{rf.prefix}{rf.count - 1}), got '{text}'", col, len(text), hint)
        return 0
    assert isinstance(op.kind, Imm)
    imm = op.kind
    if low in isa.register_names:
        rep.error(sl, "E003", f"operand '{op.name}' of {spec.mnemonic} must be an immediate, "
                  f"got register '{text}'", col, len(text), hint=f"syntax: {spec.syntax}")
        return 0
    symbols: Mapping[str, int | float] = scope if scope is not None else ChainMap(
        cast(dict[str, int | float], labels), sl.symbols) if labels else sl.symbols
    try:
        v = evaluate(text, symbols, allow_float=imm.is_float)
    except ExprError as e:
        hint = e.hint
        if e.message.startswith("unknown symbol"):
            name = e.message.split("'")[1]
            sug = rep.suggest(name, symbols)
            hint = f"did you mean '{sug}'?" if sug else "define it with '.equ NAME, value'"
        rep.error(sl, "E007", e.message, col + e.offset, e.length, hint)
        return 0
    if not imm.is_float and isinstance(v, float):
        rep.error(sl, "E007", f"operand '{op.name}' must be an integer, got {v}", col, len(text))
        v = 0
    if not (imm.lo <= v <= imm.hi):
        rep.error(sl, "E005", f"operand '{op.name}' of {spec.mnemonic} is {v}, outside {imm.lo}..{imm.hi}",
                  col, len(text), hint=_range_hint(spec, op.name))
    elif imm.align > 1 and int(v) % imm.align:
        rep.error(sl, "E006", f"operand '{op.name}' of {spec.mnemonic} must be a multiple of {imm.align}, "
                  f"got {v}", col, len(text))
    return v


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


# -- the plain-line fast path ------------------------------------------------------------------------------------
# Most sources (compiler output, RL variants of it) are plain lines: instructions, labels, comments and, on a
# bundled ISA, '||' bundles, with no directive or macro and nothing to report. Each distinct line is analysed once,
# by the general functions above, into a record: its parsed and checked instructions and their encoded words;
# what depends on more than the line (label and symbol operands, bundle boundaries across lines, loop pairing in
# ``finalize``) is still done per assembly. At the first thing out of the ordinary (a directive, any diagnostic,
# a budget) the fast path gives up and the general path assembles the source from the start, so every
# diagnostic (and every warning) comes from the general path alone.


class _Op:
    """One instruction of a plain line, parsed and checked once: what its ParsedInstr starts with."""

    __slots__ = ("spec", "texts", "cols", "col", "values", "deferred", "row")

    def __init__(self, spec: InstrSpec, texts: tuple[str, ...], cols: tuple[int, ...], col: int,
                 values: tuple[int | float, ...], deferred: tuple[int, ...], row: bytes | None):
        self.spec, self.texts, self.cols, self.col = spec, texts, cols, col
        self.values = values  # operand values; 0 in place of a deferred one
        self.deferred = deferred  # operands whose value names a label or symbol: evaluated per assembly
        self.row = row  # the encoded word (int32 bytes), when no operand is deferred and nothing is hidden


class _Line:
    """What one plain source line contributes, whatever its line number."""

    __slots__ = ("code", "labels", "pieces", "ops", "braces", "solo", "solo_slots")

    def __init__(self, code: str, labels: tuple[str, ...], pieces: tuple[Any, ...], ops: tuple[_Op, ...],
                 braces: bool, solo: bytes | None, solo_slots: tuple[int, ...]):
        self.code, self.labels, self.pieces, self.ops, self.braces = code, labels, pieces, ops, braces
        # bundled ISA, a line without braces: the slot of each op, and the bundle's words when its ops all have rows
        self.solo, self.solo_slots = solo, solo_slots


_BLANK = object()  # a line with no code
_UNUSUAL = object()  # a line only the general path handles


def _line_record(isa: ISA, tables: _Tables, raw: str, rep: Reporter) -> Any:
    """The record of source line ``raw``: a :class:`_Line`, ``_BLANK`` or ``_UNUSUAL`` (which is all that a
    diagnostic in ``rep`` means: the caller gives up at the first)."""
    code = strip_comment(raw, isa.comment_prefixes)
    if len(code) > MAX_LINE_CHARS:
        return _UNUSUAL
    parts = code.split(None, 1)
    if not parts:
        return _BLANK
    low = parts[0].lower()  # the preprocessor's head: directives and macros are the general path's
    if low in DIRECTIVES or (low.startswith(".") and not low.endswith(":") and low not in tables.reserved):
        return _UNUSUAL
    labels = []
    pos = 0
    while (m := _LABEL.match(code[pos:])) is not None:
        labels.append(m.group(1))
        pos += m.end()
    if labels and not isa.has_labels:
        return _UNUSUAL
    bundled = isa.bundle_slots is not None
    sl = SourceLine(code, 1, raw)
    spans = _bundle_pieces(code, pos) if bundled else ([("op", pos, len(code))] if code[pos:].strip() else [])
    pieces: list[Any] = []
    ops: list[_Op] = []
    parsed: list[ParsedInstr] = []
    for kind, start, end in spans:
        if kind != "op":
            pieces.append(kind)
            continue
        pi = _parse_instruction(isa, sl, code, start, end, 0, rep)
        op = _op_record(isa, tables, pi, rep) if pi is not None else None
        if op is None:
            return _UNUSUAL
        pieces.append(op)
        ops.append(op)
        parsed.append(pi)  # type: ignore[arg-type]
    braces = len(pieces) != len(ops)
    solo: bytes | None = None
    solo_slots: tuple[int, ...] = ()
    if bundled and not braces and ops:
        # the line's ops share one bundle (a clash here is a clash in any bundle holding them): the slot rules of
        # _check_bundles as a yes/no, its diagnostics left to the general path
        taken: dict[str, int] = {}
        slots = []
        written: set[str] = set()
        for op, pi in zip(ops, parsed, strict=True):
            n = taken.get(op.spec.unit, 0)
            units = tables.slots_of.get(op.spec.unit, ())
            if n >= len(units):
                return _UNUSUAL
            taken[op.spec.unit] = n + 1
            slots.append(units[n])
            for reg, _, _ in _written_registers(isa, pi):
                if reg in written:
                    return _UNUSUAL
                written.add(reg)
        solo_slots = tuple(slots)
        rows = [op.row for op in ops]
        if all(r is not None for r in rows):
            words = [tables.nop_bytes] * tables.n_slots
            for row, slot in zip(rows, solo_slots, strict=True):
                words[slot] = cast(bytes, row)
            solo = b"".join(words)
    return _Line(code, tuple(labels), tuple(pieces), tuple(ops), braces, solo, solo_slots)


def _int32_bytes(row: list[int]) -> bytes:
    """``np.array(row, dtype=np.int32).tobytes()``, cheaper; OverflowError where a value is not an int32."""
    return array("i", row).tobytes()


assert array("i").itemsize == 4 and np.dtype(np.int32).itemsize == 4  # the fast path's words are int32 bytes


def _op_record(isa: ISA, tables: _Tables, pi: ParsedInstr, rep: Reporter) -> _Op | None:
    """``pi`` checked as far as its text decides (None where that reports anything)."""
    spec = pi.spec
    if len(pi.operand_texts) != len(spec.operands):
        return None
    deferred = []
    values: list[int | float] = []
    for i, (op, text, col) in enumerate(zip(spec.operands, pi.operand_texts, pi.operand_cols, strict=True)):
        if isinstance(op.kind, Imm) and text and text.lower() not in isa.register_names and names_symbols(text):
            deferred.append(i)
            values.append(0)
        else:
            values.append(_operand_value(isa, tables, spec, op, text, col, pi.src, {}, rep))
    pi.values = values
    if rep.diags or rep.dropped_errors:
        return None
    row = None
    if not deferred and not spec.hidden:
        try:
            row = _int32_bytes(_encode_row(isa, pi))
        except (ValueError, OverflowError):  # an encoding the general path must be the one to meet
            return None
    return _Op(spec, tuple(pi.operand_texts), tuple(pi.operand_cols), pi.col, tuple(pi.values), tuple(deferred),
               row)


def _instr(op: _Op, pc: int, sl: SourceLine, late: list[tuple[ParsedInstr, list[int | float], _Op]]) -> ParsedInstr:
    """The instruction a record's ``op`` makes at ``pc``; one with deferred operands (labels, symbols) gets its own
    value list, filled in once every label is known, and joins ``late``."""
    if op.deferred:
        vals = list(op.values)
        pi = ParsedInstr(op.spec, pc, sl, op.texts, op.cols, vals, (), op.col)
        late.append((pi, vals, op))
        return pi
    return ParsedInstr(op.spec, pc, sl, op.texts, op.cols, op.values, (), op.col)


def _assemble_plain(isa: ISA, tables: _Tables, source: str, hw: Any) -> Program | None:
    """The program of a source of plain lines, exactly as the general path makes it; None for any other source.

    An instruction's ParsedInstr shares its record's operand tuples (nothing after parsing changes them; a
    deferred operand gets a fresh list of values)."""
    memo = tables.lines
    symbols = dict(isa.symbols(hw))  # what the preprocessor gives every line of a source without directives
    bundled = isa.bundle_slots is not None
    budget = min(MAX_EXPANDED_LINES, MAX_EXPANSION_WORK)  # lines the preprocessor would emit before a budget error
    rep = Reporter()
    labels: dict[str, int] = {}
    parsed: list[ParsedInstr] = []
    rows: list[bytes | None] = []  # not bundled: each instruction's word, None where it is encoded late
    late: list[tuple[ParsedInstr, list[int | float], _Op]] = []  # instructions with deferred operands
    # per bundle: its first index into parsed, and its line where it is a solo line's (else None); parallel lists
    # of ints and shared records, as an assembly's allocations are what the garbage collector counts
    starts: list[int] = []
    solos: list[_Line | None] = []
    n_words = 0
    brace = False
    open_at = 0  # index into parsed where the open bundle starts
    emitted = 0
    append = parsed.append
    raws = source.splitlines()
    recs: list[Any] = [memo.get(raw) for raw in raws]  # _Line, _BLANK, _UNUSUAL or None (not analysed yet)
    if _UNUSUAL in recs:  # a line known to be unusual ends the fast path before it does any work
        return None
    for k, rec in enumerate(recs):
        if rec is None:
            raw = raws[k]
            rec = recs[k] = _line_record(isa, tables, raw, rep)
            if len(raw) <= LINE_MEMO_MAX_CHARS:
                _memo_put(memo, raw, rec, LINE_MEMO_ENTRIES)
            if rec is _UNUSUAL:
                return None
        if rec is not _BLANK:
            emitted += 1
            if emitted > budget:  # a source of a million lines costs its first lines' analysis, not all
                return None
    for i, (raw, rec) in enumerate(zip(raws, recs, strict=True), 1):
        if rec is _BLANK:
            continue
        sl = SourceLine(rec.code, i, raw, None, symbols)
        if rec.labels:
            for name in rec.labels:
                if brace or name in labels:
                    return None
                labels[name] = n_words
        if not bundled:
            for op in rec.ops:
                append(_instr(op, n_words, sl, late))
                rows.append(op.row)
                n_words += 1
            continue
        if not (brace or rec.braces):  # the line is one bundle
            if rec.ops:
                for op in rec.ops:
                    append(_instr(op, n_words, sl, late))
                starts.append(open_at)
                solos.append(rec)
                n_words += 1
                open_at = len(parsed)
            continue
        for item in rec.pieces:  # braces: the general path's bundle rules, minus its errors
            if item == "{" or item == "}":
                if brace == (item == "{"):
                    return None
                brace = item == "{"
                if len(parsed) > open_at:
                    starts.append(open_at)
                    solos.append(None)
                    n_words, open_at = n_words + 1, len(parsed)
            else:
                append(_instr(item, n_words, sl, late))
        if not brace and len(parsed) > open_at:
            starts.append(open_at)
            solos.append(None)
            n_words, open_at = n_words + 1, len(parsed)
    if brace or n_words > isa.max_program:
        return None

    scope = {**symbols, **labels}  # = ChainMap(labels, symbols) for lookups, which are all a success needs
    for pi, vals, op in late:
        for j in op.deferred:
            vals[j] = _operand_value(isa, tables, pi.spec, pi.spec.operands[j], pi.operand_texts[j],
                                     pi.operand_cols[j], pi.src, labels, rep, scope)
    starts.append(len(parsed))  # the end of the last bundle
    for pc, line in enumerate(solos):
        if line is None:
            _check_bundles(isa, parsed[starts[pc] : starts[pc + 1]], rep)
    if rep.diags or rep.dropped_errors:
        return None
    if isa.finalize is not None:
        isa.finalize(parsed, hw, rep)
        if rep.diags or rep.dropped_errors:
            return None
    hidden = {pi.pc for pi in parsed if pi.hidden}  # words finalize completed: encoded here, not from the record
    if not bundled:
        chunks = [row if row is not None and k not in hidden else np.array(_row(isa, parsed[k]), dtype=np.int32)
                  .tobytes() for k, row in enumerate(rows)]
        words = np.frombuffer(b"".join(chunks), dtype=np.int32).reshape(len(parsed), isa.n_fields).copy()
        return Program(isa_name=isa.name, words=words, lines=[pi.src.line for pi in parsed],
                       origins=[None] * len(parsed), source=source, warnings=[])
    return _encode_plain_bundles(isa, tables, parsed, starts, solos, hidden, source)


def _encode_plain_bundles(isa: ISA, tables: _Tables, parsed: list[ParsedInstr], starts: list[int],
                          solos: list[_Line | None], hidden: set[int], source: str) -> Program:
    """:func:`encode_bundles` for the fast path: a solo line's bundle from its record's bytes (bundle ``pc`` is
    ``parsed[starts[pc] : starts[pc + 1]]``)."""
    n_slots = tables.n_slots
    chunks: list[bytes] = []
    lines: list[int] = []
    slot_lines: list[list[int]] = []
    for pc, line in enumerate(solos):
        a, b = starts[pc], starts[pc + 1]
        first = parsed[a].src.line
        lines.append(first)
        occupied = [0] * n_slots
        if line is not None:
            for s in line.solo_slots:
                occupied[s] = first
            slot_lines.append(occupied)
            if line.solo is not None and pc not in hidden:
                chunks.append(line.solo)
                continue
            rows: list[Sequence[int]] = [tables.nop_row] * n_slots
            for pi, s in zip(parsed[a:b], line.solo_slots, strict=True):
                rows[s] = _row(isa, pi)
        else:
            rows = [tables.nop_row] * n_slots
            taken: dict[str, int] = {}
            for pi in parsed[a:b]:
                n = taken.get(pi.spec.unit, 0)
                taken[pi.spec.unit] = n + 1
                s = tables.slots_of[pi.spec.unit][n]
                rows[s] = _row(isa, pi)
                occupied[s] = pi.src.line
            slot_lines.append(occupied)
        chunks.append(np.array(rows, dtype=np.int32).tobytes())
    words = np.frombuffer(b"".join(chunks), dtype=np.int32).reshape(len(solos), n_slots * isa.n_fields).copy()
    return Program(isa_name=isa.name, words=words, lines=lines, origins=[None] * len(solos), source=source,
                   warnings=[], slot_lines=slot_lines)
