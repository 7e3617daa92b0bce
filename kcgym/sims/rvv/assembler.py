"""A GNU-``as``-compatible assembler for the RV32IM + Zve32x subset, with kcgym diagnostics.

RISC-V syntax does not fit the shared table-driven parser (one operand list per mnemonic):
operands like ``8(a0)``, an optional trailing ``v0.t``, a ``vtype`` spread over several
comma-separated words, pseudo-instructions that expand to two instructions, sections and
numeric local labels. This module keeps the shared pieces (the preprocessor for ``.equ`` and
macros, the expression evaluator, :class:`Diagnostic`, :class:`Program`) and adds a RISC-V
operand parser driven by the forms of :mod:`kcgym.sims.rvv.isa`.

Two passes: pass 1 lays out sections (text slots, data bytes) and labels, expanding
pseudo-instructions into real ones whose operands may use ``%hi``/``%lo``/``%pcrel``
functions; pass 2 parses and checks every operand and encodes ``int32[N, 11]`` words.
"""

from __future__ import annotations

import bisect
import re
from collections import ChainMap
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from kcgym.isa.assembler import Reporter, _memo_put
from kcgym.isa.diagnostics import AssemblyError
from kcgym.isa.expr import ExprError, evaluate
from kcgym.isa.preprocess import Preprocessor, SourceLine, split_operands
from kcgym.isa.program import Program
from kcgym.isa.spec import Imm, Reg
from kcgym.limits import MAX_DIAGNOSTICS, MAX_EXPR_DEPTH
from kcgym.sims.rvv import isa as I
from kcgym.sims.rvv import sections
from kcgym.sims.rvv.config import DTCM_BASE, ITCM_BASE, RVVConfig
from kcgym.sims.rvv.sections import DataSection, DataSections

DIRECTIVES = (".text", ".data", ".rodata", ".bss", ".section", ".pushsection", ".popsection", ".previous",
              ".globl", ".global", ".align", ".p2align", ".balign", ".word", ".4byte", ".long", ".half", ".short",
              ".2byte", ".byte", ".dword", ".8byte", ".quad", ".zero", ".space", ".skip", ".ascii", ".asciz",
              ".string", ".comm", ".lcomm", ".set", ".equ", ".type", ".size", ".option", ".attribute", ".file",
              ".ident", ".local", ".weak", ".hidden", ".protected", ".internal", ".addrsig", ".addrsig_sym")
# Directives that only annotate symbols or the object file for a linker or debugger: no bytes, no effect here.
_BOOKKEEPING = (".globl", ".global", ".type", ".size", ".file", ".ident", ".local", ".weak", ".hidden", ".protected",
                ".internal", ".attribute", ".addrsig", ".addrsig_sym")
_OPTIONS = ("push", "pop", "nopic", "pic", "relax", "norelax", "rvc", "norvc", "arch")  # .option words GNU as knows
_DATA_SIZES = {".word": 4, ".4byte": 4, ".long": 4, ".half": 2, ".short": 2, ".2byte": 2, ".byte": 1, ".dword": 8,
               ".8byte": 8, ".quad": 8}
# Pseudo-instructions: syntax (for hints and the reference) and expansion. An expansion operand is a
# template over the written operands ({0}, {1}, ...; its column is the first one it names) and "*"
# passes the optional trailing operands (v0.t) through. ``li`` picks its expansion by the value.
PSEUDO_TABLE: dict[str, tuple[str, tuple[tuple[str, ...], ...]]] = {
    "li": ("rd, imm", ()), "la": ("rd, symbol", (("auipc", "{0}", "%pcrel_hi({1})"),
                                                 ("addi", "{0}", "{0}", "%pclo_prev({1})"))),
    "mv": ("rd, rs", (("addi", "{0}", "{1}", "0"),)), "not": ("rd, rs", (("xori", "{0}", "{1}", "-1"),)),
    "neg": ("rd, rs", (("sub", "{0}", "x0", "{1}"),)), "seqz": ("rd, rs", (("sltiu", "{0}", "{1}", "1"),)),
    "snez": ("rd, rs", (("sltu", "{0}", "x0", "{1}"),)), "sltz": ("rd, rs", (("slt", "{0}", "{1}", "x0"),)),
    "sgtz": ("rd, rs", (("slt", "{0}", "x0", "{1}"),)),
    "beqz": ("rs, label", (("beq", "{0}", "x0", "{1}"),)), "bnez": ("rs, label", (("bne", "{0}", "x0", "{1}"),)),
    "blez": ("rs, label", (("bge", "x0", "{0}", "{1}"),)), "bgez": ("rs, label", (("bge", "{0}", "x0", "{1}"),)),
    "bltz": ("rs, label", (("blt", "{0}", "x0", "{1}"),)), "bgtz": ("rs, label", (("blt", "x0", "{0}", "{1}"),)),
    "bgt": ("rs, rt, label", (("blt", "{1}", "{0}", "{2}"),)),
    "ble": ("rs, rt, label", (("bge", "{1}", "{0}", "{2}"),)),
    "bgtu": ("rs, rt, label", (("bltu", "{1}", "{0}", "{2}"),)),
    "bleu": ("rs, rt, label", (("bgeu", "{1}", "{0}", "{2}"),)),
    "j": ("label", (("jal", "x0", "{0}"),)), "jr": ("rs", (("jalr", "x0", "0({0})"),)),
    "ret": ("", (("jalr", "x0", "0(ra)"),)),
    "call": ("label", (("auipc", "ra", "%pcrel_hi({0})"), ("jalr", "ra", "%pclo_prev({0})(ra)"))),
    "tail": ("label", (("auipc", "t1", "%pcrel_hi({0})"), ("jalr", "x0", "%pclo_prev({0})(t1)"))),
    "nop": ("", (("addi", "x0", "x0", "0"),)),
    "lla": ("rd, symbol", (("auipc", "{0}", "%pcrel_hi({1})"), ("addi", "{0}", "{0}", "%pclo_prev({1})"))),
    "sgt": ("rd, rs, rt", (("slt", "{0}", "{2}", "{1}"),)), "sgtu": ("rd, rs, rt", (("sltu", "{0}", "{2}", "{1}"),)),
    "zext.b": ("rd, rs", (("andi", "{0}", "{1}", "255"),)),
    "sext.b": ("rd, rs", (("slli", "{0}", "{1}", "24"), ("srai", "{0}", "{0}", "24"))),
    "sext.h": ("rd, rs", (("slli", "{0}", "{1}", "16"), ("srai", "{0}", "{0}", "16"))),
    "zext.h": ("rd, rs", (("slli", "{0}", "{1}", "16"), ("srli", "{0}", "{0}", "16"))),
    "vneg.v": ("vd, vs[, v0.t]", (("vrsub.vx", "{0}", "{1}", "x0", "*"),)),
    "vnot.v": ("vd, vs[, v0.t]", (("vxor.vi", "{0}", "{1}", "-1", "*"),)),
    "vmnot.m": ("vd, vs", (("vmnand.mm", "{0}", "{1}", "{1}"),)),
    "vmmv.m": ("vd, vs", (("vmand.mm", "{0}", "{1}", "{1}"),)),
    "vmclr.m": ("vd", (("vmxor.mm", "{0}", "{0}", "{0}"),)), "vmset.m": ("vd", (("vmxnor.mm", "{0}", "{0}", "{0}"),)),
    "vncvt.x.x.w": ("vd, vs[, v0.t]", (("vnsrl.wx", "{0}", "{1}", "x0", "*"),)),
    "vwcvt.x.x.v": ("vd, vs[, v0.t]", (("vwadd.vx", "{0}", "{1}", "x0", "*"),)),
    "vwcvtu.x.x.v": ("vd, vs[, v0.t]", (("vwaddu.vx", "{0}", "{1}", "x0", "*"),)),
    "vmsgt.vv": ("vd, vs2, vs1[, v0.t]", (("vmslt.vv", "{0}", "{2}", "{1}", "*"),)),
    "vmsgtu.vv": ("vd, vs2, vs1[, v0.t]", (("vmsltu.vv", "{0}", "{2}", "{1}", "*"),)),
    "vmsge.vv": ("vd, vs2, vs1[, v0.t]", (("vmsle.vv", "{0}", "{2}", "{1}", "*"),)),
    "vmsgeu.vv": ("vd, vs2, vs1[, v0.t]", (("vmsleu.vv", "{0}", "{2}", "{1}", "*"),)),
    "csrr": ("rd, vl|vtype|vlenb", (("csrr", "{0}", "{1}"),)),
}
PSEUDO_SYNTAX: dict[str, str] = {p: syntax for p, (syntax, _) in PSEUDO_TABLE.items()}
PSEUDOS = tuple(PSEUDO_TABLE)
_REF = re.compile(r"\{(\d)\}")
_LABEL = re.compile(r"^\s*([A-Za-z_.$][A-Za-z0-9_.$]*|\d+)\s*:")
_LOCAL_REF = re.compile(r"(?<![A-Za-z0-9_.])(\d+)([bf])(?![A-Za-z0-9_.])")
_MEM = re.compile(r"^(.*?)\(\s*([A-Za-z0-9]+)\s*\)\s*$")
# a symbol GNU as allows but the shared evaluator does not spell (".LANCHOR0", "a$b"), or "." (here)
_ASM_SYMBOL = re.compile(r"(?<![\w.$])(\.(?![\w.$])|[.$A-Za-z_][\w.$]*)")
_FUNC = re.compile(r"%(hi|lo|pcrel_hi|pcrel_lo|pclo_prev)\s*\(")
# Memos kept across kernels (an RL batch assembles thousands of kernels that share most lines), each of at most
# MEMO_ENTRIES entries (a full memo starts again: bounded memory; every committed RVV kernel's lines measured
# ~200 bytes an entry besides the line text, so under ~15 MB in all) and lines of at most
# MEMO_MAX_CHARS characters. ``_HEADS``: an unlabelled line's text -> (mnemonic column, word, operands), a pure
# function of the text; ``_ROWS``: a slot whose operands are all context-free (see :func:`_context_free`) ->
# its encoded row, stored only when encoding it reported nothing. Plain dict get/set/clear: safe across threads.
MEMO_ENTRIES = 1 << 14
MEMO_MAX_CHARS = 512
_HEADS: dict[str, tuple[int, str, tuple[tuple[str, int], ...]]] = {}
_ROWS: dict[tuple[object, ...], tuple[int, ...]] = {}
# an immediate or memory offset whose value is its text alone (no symbol, '.', local label or %function)
_DECIMAL = re.compile(r"-?[0-9]+")
HALT_WORD = np.array([I.HALT_OPCODE, I.CLASS_ID["HALT"]] + [0] * (I.N_FIELDS - 2), np.int32)


@dataclass
class RVVProgram(Program):
    """A :class:`Program` plus the initial DTCM image of its ``.data`` section."""

    data: bytes = b""
    symbols: dict[str, int] = field(default_factory=dict)  # label -> byte address


@dataclass
class Slot:
    """One real instruction after pseudo-instruction expansion (pass 1)."""

    spec: I.RVInstr
    src: SourceLine
    ops: list[tuple[str, int]]  # operand text and 1-based column
    mcol: int  # column of the mnemonic
    vtype: tuple[int, int] | None  # (SEW, LMUL) statically in force, if known
    vtype_exact: bool = True  # False once a label lies between the vsetvli and this instruction


def _sext(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


class _Asm:
    def __init__(self, source: str, hw: RVVConfig, memo: bool = True):
        self.hw = hw
        self.memo = memo  # use and fill the memos (False: everything computed afresh, as the tests compare)
        self.rep = Reporter()
        self.source = source
        self.slots: list[Slot] = []
        self.data = b""  # the DTCM image, once pass 1 has laid the data sections out
        self.dsec = DataSections()
        self.cur: DataSection = self.dsec.get(".data")  # the data section being assembled into
        self.text_name = ".text"  # the code section being assembled into, and the order code sections got code
        self.text_order: list[str] = []
        self.stack: list[str] = []  # .pushsection
        self.previous = ".text"  # .previous
        self.data_labels: dict[str, tuple[str, int]] = {}  # name -> (section, offset) until the layout
        self.fixups: list[tuple[DataSection, int, int, str, int, SourceLine]] = []  # .word sym: after the layout
        self.sets: list[tuple[str, str, int, str, int, SourceLine]] = []  # .set NAME, expr with '.' or labels
        self.labels: dict[str, int] = {}  # name -> byte address
        self.text_labels: dict[str, int] = {}  # name -> instruction index
        self.local_defs: dict[str, tuple[list[int], list[str]]] = {}  # "1" -> (text slot indices, internal names)
        self.n_local = 0
        self.full: set[str] = set()  # sections already reported full (one error each, no allocation)
        self.section = "text"
        self.vtype: tuple[int, int] | None = None
        self.vtype_exact = True

    # ---- helpers -------------------------------------------------------------------------
    def err(self, sl: SourceLine, code: str, msg: str, col: int = 1, length: int = 1, hint: str | None = None):
        self.rep.error(sl, code, msg, col, length, hint)

    def _pos_key(self) -> int:
        return len(self.slots) * 2 if self.section == "text" else 1 << 30

    def define_label(self, sl: SourceLine, name: str, col: int) -> None:
        if name.isdigit():
            internal = f"__L{name}_{self.n_local}"
            self.n_local += 1
            if self.section == "text":  # numeric labels in .data are not branch targets
                pos, names = self.local_defs.setdefault(name, ([], []))
                pos.append(len(self.slots))
                names.append(internal)
            name = internal
        elif name in self.labels or name in self.data_labels:
            self.err(sl, "E009", f"label '{name}' is defined twice", col, len(name))
            return
        if self.section == "discard":
            return  # a label in a note or debug section: no address in the image
        if self.section == "text":
            self.text_labels[name] = len(self.slots)
            self.labels[name] = ITCM_BASE + 4 * len(self.slots)
            self.vtype_exact = False  # a jump may arrive here with another vtype
            if self.slots and self.slots[-1].spec.mnemonic in ("jal", "jalr") and self.slots[-1].ops and \
                    self.slots[-1].ops[0][0] in ("x0", "zero"):
                self.vtype = None  # reached only by jumps: the textual vtype may not hold
        else:
            self.data_labels[name] = (self.cur.name, len(self.cur.data))

    def resolve_locals(self, text: str, slot_index: int, data_pos: int | None = None) -> str:
        """``1b``/``1f`` -> the internal name of the nearest numeric label ``1`` before/after."""

        def sub(m: re.Match) -> str:
            pos, names = self.local_defs.get(m.group(1), ([], []))
            k = bisect.bisect_right(pos, slot_index)  # definitions at or before slot_index: pos[:k]
            if m.group(2) == "b":
                return names[k - 1] if k else m.group(0)
            return names[k] if k < len(names) else m.group(0)

        return _LOCAL_REF.sub(sub, text)

    # ---- pass 1 ----------------------------------------------------------------------------
    def pass1(self, lines: list[SourceLine]) -> None:
        for sl in lines:
            text = sl.text
            head = _HEADS.get(text) if self.memo else None
            if head is None:
                pos = 0
                while (m := _LABEL.match(text[pos:])) is not None:
                    self.define_label(sl, m.group(1), pos + m.start(1) + 1)
                    pos += m.end()
                body = text[pos:]
                if not body.strip():
                    continue
                mcol = pos + len(body) - len(body.lstrip())
                word = body.split()[0]
                after = mcol + len(word)
                ops = split_operands(text, after) if text[after:].strip() else []
                if self.memo and pos == 0 and len(text) <= MEMO_MAX_CHARS:  # no label: the head is the text's alone
                    _memo_put(_HEADS, text, (mcol, word, tuple(ops)), MEMO_ENTRIES)
            else:
                mcol, word, ops = head[0], head[1], list(head[2])
            low = word.lower()
            if low.startswith("."):
                self.directive(sl, low, ops, mcol + 1)
            elif self.section != "text":
                where = self.cur.name if self.section == "data" else "non-loaded"
                self.err(sl, "E020", f"instruction '{word}' in the {where} section", mcol + 1, len(word),
                         hint="put instructions after '.text'")
            else:
                self.instruction(sl, low, word, ops, mcol + 1)

    def switch(self, sl: SourceLine, name: str, col: int) -> None:
        """Make ``name`` the current section (GNU as: each section continues where it left off)."""
        k = sections.kind(name)
        if k is None:
            self.err(sl, "E021", f"unknown section '{name[:40]}'", col, hint="code goes in .text (or .text.*), data "
                     "in .data .rodata .sdata .srodata .bss .sbss (or their .* subsections)")
            return
        self.previous = self.current_section()
        self.section = k
        if k == "text":
            self.text_name = name
        elif k == "data":
            self.cur = self.dsec.get(name)

    def current_section(self) -> str:
        return self.text_name if self.section == "text" else self.cur.name if self.section == "data" else ".note"

    def directive(self, sl: SourceLine, d: str, ops: list[tuple[str, int]], col: int) -> None:
        if d in (".text", ".data", ".rodata", ".bss"):
            self.switch(sl, d, col)
        elif d in (".section", ".pushsection"):
            if not ops or not ops[0][0]:
                self.err(sl, "E021", f"'{d}' needs a section name", col, len(d))
                return
            if d == ".pushsection":
                self.stack.append(self.current_section())
            self.switch(sl, ops[0][0].strip('"'), ops[0][1])
        elif d == ".popsection":
            if not self.stack:
                self.err(sl, "E021", "'.popsection' without a '.pushsection'", col, len(d))
                return
            self.switch(sl, self.stack.pop(), col)
        elif d == ".previous":
            self.switch(sl, self.previous, col)
        elif d in (".set", ".equ"):  # what the preprocessor left: a value that needs '.' or labels
            if len(ops) != 2 or not ops[0][0]:
                self.err(sl, "E011", f"expected '{d} NAME, expression'", col, len(d))
                return
            loc = self.text_name if self.section == "text" else self.cur.name if self.section == "data" else ""
            here = len(self.slots) if self.section == "text" else len(self.cur.data)
            self.sets.append((ops[0][0], loc, here, ops[1][0], ops[1][1], sl))
        elif d == ".option":
            word = ops[0][0].lower() if ops else ""
            if word not in _OPTIONS:
                self.err(sl, "E011", f"unknown option '{word[:40]}'", ops[0][1] if ops else col,
                         hint="GNU as options: " + " ".join(_OPTIONS))
        elif d in _BOOKKEEPING:
            pass  # symbol bookkeeping for the linker: nothing to do in a flat image
        elif d in (".align", ".p2align", ".balign"):
            n = self.const(sl, ops[0] if ops else ("", col), 0, 4096)
            if n is None:
                return
            size = max(1, n if d == ".balign" else 1 << min(n, 12))
            if self.section == "data":
                fill = self.const(sl, ops[1], 0, 255) if len(ops) > 1 and ops[1][0] else 0
                limit = self.const(sl, ops[2], 0, 1 << 30) if len(ops) > 2 else None
                pad = (-len(self.cur.data)) % size
                if fill is None or limit is None and len(ops) > 2 or limit is not None and pad > limit:
                    return  # GNU as: no alignment when it would skip more than the limit
                self.cur.align = max(self.cur.align, size)
                if self.add_data(sl, pad, col):
                    self.cur.data[len(self.cur.data) - pad:] = bytes([fill]) * pad
                    self.nobits_check(sl, fill, col)
            elif self.section == "text":
                pad = (-4 * len(self.slots)) % size // 4
                if len(self.slots) + pad > self.hw.itcm_instructions:
                    self.section_full(sl, "text", col, f"'{d} {n}' pads the program past the ITCM's "
                                      f"{self.hw.itcm_instructions} instructions")
                    return
                nop = [("x0", col), ("x0", col), ("0", col)]
                for _ in range(pad):
                    self.emit(sl, "addi", nop, col)
        elif d in _DATA_SIZES or d in (".ascii", ".asciz", ".string"):
            if self.section == "text":
                self.err(sl, "E020", f"'{d}' in the .text section: data must go in '.data'", col, len(d),
                         hint="the ITCM holds instructions only; put tables in .data (they load into the DTCM)")
                return
            if d in _DATA_SIZES:
                self.data_values(sl, _DATA_SIZES[d], ops)
            else:
                self.data_strings(sl, d, col)
        elif d in (".zero", ".space", ".skip"):
            if self.section == "text":
                self.err(sl, "E020", f"'{d}' in the .text section", col, len(d), hint="use it in '.data'")
                return
            n = self.const(sl, ops[0] if ops else ("", col), 0, self.hw.dtcm_bytes)
            fill = self.const(sl, ops[1], -128, 255) if len(ops) > 1 else 0
            if n is not None and fill is not None and self.add_data(sl, n, col):
                self.cur.data[len(self.cur.data) - n:] = bytes([fill & 0xFF]) * n
                self.nobits_check(sl, fill, col)
        elif d in (".comm", ".lcomm"):
            self.common(sl, d, ops, col)
        else:
            close = self.rep.suggest(d, DIRECTIVES)
            self.err(sl, "E011", f"unknown directive '{d[:40]}'", col, len(d),
                     hint=f"did you mean '{close}'?" if close else "supported: " + " ".join(DIRECTIVES))

    def data_values(self, sl: SourceLine, size: int, ops: list[tuple[str, int]]) -> None:
        """``.word``/``.half``/``.byte`` ...: room now, the value after the layout (it may name any label)."""
        for text, c in ops:
            if self.add_data(sl, size, c):
                self.fixups.append((self.cur, len(self.cur.data) - size, size, text, c, sl))

    def data_strings(self, sl: SourceLine, d: str, col: int) -> None:
        start = col - 1 + len(d)
        try:
            strings = sections.parse_strings(sl.text[start:])
        except sections.StringError as e:
            self.err(sl, "E007", f"{d}: {e.message}", start + e.offset + 1, hint=f'syntax: {d} "text"[, "more"]')
            return
        for b in strings:
            b += b"\0" if d != ".ascii" else b""
            if self.add_data(sl, len(b), col):
                self.cur.data[len(self.cur.data) - len(b):] = b
                self.nobits_check(sl, any(b), col)

    def common(self, sl: SourceLine, d: str, ops: list[tuple[str, int]], col: int) -> None:
        """``.comm``/``.lcomm NAME, size[, align]``: zeroed storage in COMMON / .bss (align in bytes, ELF)."""
        if len(ops) not in (2, 3) or not ops[0][0]:
            self.err(sl, "E011", f"expected '{d} NAME, size[, alignment]'", col, len(d))
            return
        size = self.const(sl, ops[1], 0, self.hw.dtcm_bytes)
        align = self.const(sl, ops[2], 1, 4096) if len(ops) == 3 else 1
        if size is None or align is None:
            return
        if align & (align - 1):
            self.err(sl, "E005", f"alignment {align} is not a power of two", ops[2][1], len(ops[2][0]))
            return
        saved, self.cur = self.cur, self.dsec.get("COMMON" if d == ".comm" else ".bss")
        self.cur.align = max(self.cur.align, align)
        if self.add_data(sl, (-len(self.cur.data)) % align, col):
            section = self.section
            self.section = "data"
            self.define_label(sl, ops[0][0], ops[0][1])
            self.section = section
            self.add_data(sl, size, col)
        self.cur = saved

    def nobits_check(self, sl: SourceLine, value: int, col: int) -> None:
        if value and sections.is_nobits(self.cur.name):
            self.err(sl, "E020", f"a non-zero value in the zero-filled section '{self.cur.name}'", col,
                     hint="initialized data goes in .data, .sdata or .rodata; .bss and .sbss hold zeros only")

    def add_data(self, sl: SourceLine, n: int, col: int) -> bool:
        """Append ``n`` zero bytes to the current data section if all of them fit in the DTCM (checked first)."""
        if self.section == "discard":
            return False
        if self.dsec.total + n > self.hw.dtcm_bytes:
            self.section_full(sl, "data", col, f"the data sections need more than {self.hw.dtcm_bytes} bytes, the "
                              "size of the DTCM")
            return False
        self.cur.data += bytes(n)
        return True

    def layout(self) -> None:
        """After pass 1: place the data sections as the linker would, then give every data label, ``.set``
        symbol and ``.word`` value its address (GNU as + ld: relocations resolved at link time)."""
        if (why := sections.text_order_error(self.text_order)) is not None:
            self.err(self.slots[-1].src, "E021", why, 1, hint="keep each code section in one piece, '.text' first")
        image, offsets = self.dsec.layout()
        if len(image) > self.hw.dtcm_bytes:
            self.section_full(SourceLine("", 1, ""), "data", 1, f"the data sections need {len(image)} bytes with "
                              f"their alignment; the DTCM holds {self.hw.dtcm_bytes}")
        for name, (sec, off) in self.data_labels.items():
            self.labels[name] = DTCM_BASE + offsets[sec] + off
        for name, sec, here, expr, c, sl in self.sets:
            if name in self.labels:
                self.err(sl, "E009", f"symbol '{name}' is defined twice", c)
                continue
            in_text = sec.startswith(".text")
            dot = ITCM_BASE + 4 * here if in_text else DTCM_BASE + offsets.get(sec, 0) + here if sec else 0
            try:
                v = int(evaluate(self.substitute(expr, dot), self.symbols(sl)))
            except ExprError as e:
                self.err(sl, "E007", e.message, c + e.offset, e.length, e.hint)
                continue
            self.labels[name] = v
            if in_text and _ASM_SYMBOL.search(expr) and (v - ITCM_BASE) % 4 == 0 and \
                    0 <= (v - ITCM_BASE) // 4 <= len(self.slots):
                self.text_labels[name] = (v - ITCM_BASE) // 4
        data = bytearray(image)
        for sec_obj, off, size, text, c, sl in self.fixups:
            at = offsets[sec_obj.name] + off
            value = self.fixup_value(sl, (text, c), size, DTCM_BASE + at)
            if value is not None:
                data[at: at + size] = (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
                if value and sections.is_nobits(sec_obj.name):
                    self.err(sl, "E020", f"a non-zero value in the zero-filled section '{sec_obj.name}'", c,
                             hint="initialized data goes in .data, .sdata or .rodata; .bss and .sbss hold zeros only")
        self.data = bytes(data)

    def fixup_value(self, sl: SourceLine, op: tuple[str, int], size: int, here: int) -> int | None:
        text, col = op
        lo, hi = -(1 << (8 * size - 1)), (1 << (8 * size)) - 1
        try:
            v = int(evaluate(self.substitute(self.resolve_locals(text, len(self.slots)), here),
                             self.symbols(sl)))
        except ExprError as e:
            self.err(sl, "E007", e.message, col + e.offset, e.length, e.hint)
            return None
        if not lo <= v <= hi:
            self.err(sl, "E005", f"value {v} is outside {lo}..{hi}", col, len(text))
            return None
        return v

    def substitute(self, text: str, dot: int) -> str:
        """Replace ``.`` (the location) and symbols the shared evaluator cannot spell by their values."""
        if "." not in text and "$" not in text:
            return text

        def sub(m: re.Match) -> str:
            name = m.group(1)
            if name == ".":
                return f"({dot})"
            if "." not in name and "$" not in name:
                return name
            if name in self.labels:
                return f"({self.labels[name]})"
            raise ExprError(f"unknown symbol '{name}'", m.start(), len(name),
                            "define it as a label or with '.set NAME, value'")

        return _ASM_SYMBOL.sub(sub, text)

    def section_full(self, sl: SourceLine, section: str, col: int, message: str) -> None:
        """One E014 per section that overflows its memory; later overflows add nothing."""
        if section not in self.full:
            self.full.add(section)
            self.err(sl, "E014", message, col, hint="shrink the tables or alignment, or move data to external "
                     "memory" if section == "data" else "use loops instead of unrolling, or shorten the kernel")

    def symbols(self, sl: SourceLine) -> ChainMap[str, int | float]:
        """Labels (byte addresses), then the line's ``.equ`` symbols: what an expression may name."""
        return ChainMap(cast(dict[str, int | float], self.labels), sl.symbols)

    def const(self, sl: SourceLine, op: tuple[str, int], lo: int, hi: int) -> int | None:
        text, col = op
        try:
            v = evaluate(text, self.symbols(sl))
        except ExprError as e:
            self.err(sl, "E007", e.message, col + e.offset, e.length, e.hint)
            return None
        if not lo <= v <= hi:
            self.err(sl, "E005", f"value {v} is outside {lo}..{hi}", col, len(text))
            return None
        return int(v)

    def emit(self, sl: SourceLine, mnemonic: str, ops: list[tuple[str, int]], mcol: int) -> None:
        spec = I.BY_MNEMONIC[mnemonic]
        if not self.text_order or self.text_order[-1] != self.text_name:
            self.text_order.append(self.text_name)
        self.slots.append(Slot(spec, sl, ops, mcol, self.vtype, self.vtype_exact))
        if spec.cls == "VSET" and spec.form != "VSETVL":
            self.vtype = _static_vtype(ops[2:])
            self.vtype_exact = True
        elif spec.cls == "VSET":
            self.vtype = None

    def instruction(self, sl: SourceLine, low: str, word: str, ops: list[tuple[str, int]], col: int) -> None:
        if low == "jal" and len(ops) == 1:  # GNU as: 'jal label' links through ra
            ops = [("ra", ops[0][1]), ops[0]]
        if low in I.BY_MNEMONIC:
            self.emit(sl, low, ops, col)
            return
        if low in PSEUDOS:
            self.pseudo(sl, low, ops, col)
            return
        sug = self.rep.suggest(low, [*I.BY_MNEMONIC, *PSEUDOS])
        hint = f"did you mean '{sug}'?" if sug else "see the RVV instruction reference (read_docs)"
        if low.startswith(("vf", "vfw", "vfn")) or "cvt" in low and low not in PSEUDOS:
            hint = "there are no vector floating-point or conversion instructions on this core (Zve32x, int only)"
        elif low in I.XREGS or low in I.VREGS:
            hint = "a line must start with an instruction mnemonic"
        self.err(sl, "E001", f"unknown instruction '{word}'", col, len(word), hint)

    def pseudo(self, sl: SourceLine, p: str, ops: list[tuple[str, int]], col: int) -> None:
        syntax, expansion = PSEUDO_TABLE[p]
        fixed = len(syntax.split("[")[0].split(",")) if syntax.split("[")[0] else 0
        if "[" in syntax and len(ops) not in (fixed, fixed + 1):
            self.err(sl, "E002", f"{p} takes {fixed} operands (and an optional v0.t), got {len(ops)}", col, len(p))
            return
        if "[" not in syntax and len(ops) != fixed:
            self.err(sl, "E002", f"{p} takes {fixed} operand(s), got {len(ops)}", col, len(p),
                     hint=f"syntax: {p} {syntax}")
            return
        if p == "li":
            expansion = self.li_expansion(sl, ops[1][0])
        for mnemonic, *templates in expansion:
            args: list[tuple[str, int]] = []
            for t in templates:
                if t == "*":
                    args += ops[fixed:]
                    continue
                refs = [int(k) for k in _REF.findall(t)]
                args.append((_REF.sub(lambda m: ops[int(m.group(1))][0], t), ops[refs[0]][1] if refs else col))
            self.emit(sl, mnemonic, args, col)

    @staticmethod
    def li_expansion(sl: SourceLine, value: str) -> tuple[tuple[str, ...], ...]:
        """addi for a 12-bit constant; else lui %hi + addi %lo (also for labels and later symbols)."""
        try:
            v = evaluate(value, sl.symbols)
        except ExprError:
            v = None
        if v is not None and -2048 <= v <= 2047:
            return (("addi", "{0}", "x0", "{1}"),)
        return ("lui", "{0}", "%hi({1})"), ("addi", "{0}", "{0}", "%lo({1})")

    # ---- pass 2 ----------------------------------------------------------------------------
    def xreg(self, sl: SourceLine, op: tuple[str, int], what: str) -> int:
        text, col = op
        low = text.strip().lower()
        if low in I.XREGS:
            return I.XREGS[low]
        if low in I.VREGS:
            hint = f"'{text}' is a vector register; {what} must be an integer register"
        elif low == "t7" or re.fullmatch(r"t\d+", low):
            hint = "there is no t7 (or higher): the temporaries are t0-t6; use s0-s11 or a0-a7 for more"
        elif re.fullmatch(r"x\d+", low):
            hint = "integer registers are x0..x31"
        else:
            sug = self.rep.suggest(low, I.XREGS)
            hint = f"did you mean '{sug}'?" if sug else "integer registers: x0-x31 or zero ra sp gp tp t0-t6 " \
                                                          "s0-s11 a0-a7"
        self.err(sl, "E003", f"{what} must be an integer register, got '{text}'", col, max(1, len(text)), hint)
        return 0

    def vreg(self, sl: SourceLine, op: tuple[str, int], what: str) -> int:
        text, col = op
        low = text.strip().lower()
        if low in I.VREGS:
            return I.VREGS[low]
        hint = "vector registers are v0..v31"
        if low in I.XREGS:
            hint = f"'{text}' is an integer register; this operand takes a vector register (v0..v31)"
        self.err(sl, "E003", f"{what} must be a vector register, got '{text}'", col, max(1, len(text)), hint)
        return 0

    def imm(self, sl: SourceLine, op: tuple[str, int], lo: int, hi: int, what: str, pc: int,
            hint: str | None = None) -> int:
        text, col = op
        if text.strip().lower() in I.XREGS or text.strip().lower() in I.VREGS:
            self.err(sl, "E003", f"{what} must be an immediate, got register '{text}'", col, len(text), hint)
            return 0
        try:
            v = self.evaluate(text, sl, pc)
        except ExprError as e:
            h = e.hint
            if e.message.startswith("unknown symbol"):
                name = e.message.split("'")[1]
                sug = self.rep.suggest(name, self.symbols(sl))
                h = f"did you mean '{sug}'?" if sug else "define it with '.equ NAME, value' or as a label"
            self.err(sl, "E007", e.message, col + e.offset, e.length, h)
            return 0
        if not lo <= v <= hi:
            self.err(sl, "E005", f"{what} is {v}, outside {lo}..{hi}", col, len(text), hint)
            return 0
        return int(v)

    def evaluate(self, text: str, sl: SourceLine, pc: int, depth: int = 0) -> int:
        """Evaluate an immediate with ``%hi %lo %pcrel_hi %pcrel_lo`` relocation functions (pc in bytes)."""
        if depth > MAX_EXPR_DEPTH:
            raise ExprError(f"relocation functions nest deeper than {MAX_EXPR_DEPTH} levels", 0, 1)
        text = self.resolve_locals(text, pc // 4)
        while (m := _FUNC.search(text)) is not None:
            open_parens, j = 1, m.end()
            while j < len(text) and open_parens:
                open_parens += {"(": 1, ")": -1}.get(text[j], 0)
                j += 1
            if open_parens:
                raise ExprError("missing ')'", m.start(), 1)
            fn = m.group(1)
            if fn == "pcrel_lo":
                inner = self.pcrel_lo(text[m.end(): j - 1], m.end())
            else:
                try:
                    inner = int(self.evaluate(text[m.end(): j - 1], sl, pc, depth + 1))
                except ExprError as e:  # point into the operand, not into the function's argument
                    raise ExprError(e.message, e.offset + m.end(), e.length, e.hint) from None
            if fn == "hi":
                v = ((inner + 0x800) >> 12) & 0xFFFFF
            elif fn == "lo":
                v = _sext(inner, 12)
            elif fn == "pcrel_hi":
                v = ((inner - pc + 0x800) >> 12) & 0xFFFFF
            elif fn == "pcrel_lo":  # inner: the offset from the auipc to its %pcrel_hi symbol
                v = _sext(inner, 12)
            else:  # pclo_prev (the la/call expansions): low part relative to the auipc just before
                v = _sext(inner - (pc - 4), 12)
            text = text[: m.start()] + f"({v})" + text[j:]
        return int(evaluate(self.substitute(text, pc), self.symbols(sl)))

    def pcrel_lo(self, label: str, offset: int) -> int:
        """``%pcrel_lo(L)``: L labels an ``auipc rd, %pcrel_hi(sym)``; the value is ``sym - L`` (GNU as)."""
        name = label.strip()
        k = self.text_labels.get(name)
        if k is None or k >= len(self.slots) or self.slots[k].spec.mnemonic != "auipc" or \
                not (m := re.fullmatch(r"\s*%pcrel_hi\s*\((.*)\)\s*", self.slots[k].ops[1][0]
                                       if len(self.slots[k].ops) > 1 else "")):
            raise ExprError(f"%pcrel_lo({name}): '{name}' must label an 'auipc rd, %pcrel_hi(symbol)'", offset,
                            max(1, len(label)), "write '.Lpcrel_hi0: auipc a0, %pcrel_hi(sym)' and then "
                            "'addi a0, a0, %pcrel_lo(.Lpcrel_hi0)'")
        auipc = self.slots[k]
        pc = ITCM_BASE + 4 * k
        return int(self.evaluate(m.group(1), auipc.src, pc, 1)) - pc

    def target(self, sl: SourceLine, op: tuple[str, int], index: int) -> int:
        text, col = op
        name = self.resolve_locals(text.strip(), index)
        if name in self.text_labels:
            return self.text_labels[name]
        if name in self.labels:
            self.err(sl, "E010", f"'{text}' is a data label; branches and jumps need a code label", col, len(text))
            return 0
        sug = self.rep.suggest(name, self.text_labels)
        hint = f"did you mean '{sug}'?" if sug else "branch targets are labels ('loop:'), or 1b/1f for local '1:'"
        self.err(sl, "E010", f"unknown label '{text}'", col, max(1, len(text)), hint)
        return 0

    def mem(self, sl: SourceLine, op: tuple[str, int], pc: int, allow_offset: bool) -> tuple[int, int]:
        text, col = op
        m = _MEM.match(text)
        if not m:
            form = "offset(rs1), e.g. 8(a0)" if allow_offset else "(rs1), e.g. (a0)"
            self.err(sl, "E015", f"expected a memory operand {form}, got '{text}'", col, max(1, len(text)))
            return 0, 0
        base = self.xreg(sl, (m.group(2), col + text.index("(") + 1), "the base address")
        off_text = m.group(1).strip()
        if off_text and not allow_offset:
            self.err(sl, "E015", f"vector loads and stores take no offset: '({m.group(2)})', not '{text}'", col,
                     len(text), hint="add the offset to the base register first (addi)")
            return 0, base
        off = self.imm(sl, (off_text, col), -2048, 2047, "the offset", pc) if off_text else 0
        return off, base

    def vm(self, sl: SourceLine, ops: list[tuple[str, int]], n: int, spec: I.RVInstr) -> int:
        """1 = unmasked; 0 = masked by v0.t (the optional operand after the ``n`` fixed ones)."""
        if len(ops) == n + 1:
            text, col = ops[n]
            if text.replace(" ", "").lower() != "v0.t":
                self.err(sl, "E017", f"expected 'v0.t' (mask) as the last operand, got '{text}'", col, len(text),
                         hint=f"syntax: {spec.mnemonic} {I.FORMS[spec.form]}")
            return 0
        return 1

    def encode_slot(self, idx: int, s: Slot) -> list[int]:
        """:meth:`encode_row`, from the memo where the slot's row is a function of its text alone."""
        key = _row_key(s) if self.memo else None
        if key is None:
            return self.encode_row(idx, s)
        key = (type(self), *key)  # a subclass (the CPU's assembler) checks operands its own way: CSR names
        row = _ROWS.get(key)
        if row is not None:
            return list(row)
        rep = self.rep
        n, dropped = len(rep.diags), rep.dropped_errors
        f = self.encode_row(idx, s)
        if len(rep.diags) == n < MAX_DIAGNOSTICS and rep.dropped_errors == dropped:  # it reported nothing
            _memo_put(_ROWS, key, tuple(f), MEMO_ENTRIES)
        return f

    def encode_row(self, idx: int, s: Slot) -> list[int]:
        """Parse and check each operand as its form in the table says, into the field the table names."""
        spec, sl, ops = s.spec, s.src, s.ops
        pc = ITCM_BASE + 4 * idx
        f = [0] * I.N_FIELDS
        f[I.F_OP], f[I.F_CLS] = I.OPCODE[spec.mnemonic], I.CLASS_ID[spec.cls]
        f[I.F_SUB] = I.RVV_ISA.sub_ids[spec.mnemonic]
        f[I.F_SRC], f[I.F_W], f[I.F_SGN], f[I.F_VM] = spec.src, spec.w, spec.sgn, 1
        operands: tuple[I.RVOperand, ...] = spec.operands  # type: ignore[assignment]
        syntax = f"{spec.mnemonic} {I.FORMS[spec.form]}"
        kinds = [o.kind for o in operands]
        fixed = sum(k not in (I.MASK, I.VTYPE) for k in kinds)
        maskable = I.MASK in kinds
        if I.VTYPE in kinds:
            if not fixed + 1 <= len(ops) <= fixed + 4:
                self.err(sl, "E002", f"{spec.mnemonic} takes rd, {operands[1].name}, and a vtype (eSEW, mLMUL[, ta|tu]"
                         f"[, ma|mu]); got {len(ops)} operand(s)", s.mcol, len(spec.mnemonic),
                         hint=f"syntax: {syntax}, e.g. vsetvli t0, a0, e8, m1, ta, ma")
                return f
        elif I.JMEM in kinds and len(ops) == 1:
            ops = [("ra", ops[0][1]), ops[0]]  # jalr rs1 = jalr ra, 0(rs1)
        elif not (len(ops) == fixed or (maskable and len(ops) == fixed + 1)):
            col = ops[min(len(ops), fixed) - 1][1] if ops else s.mcol
            self.err(sl, "E002", f"{spec.mnemonic} takes {fixed} operand(s){' (+ optional v0.t)' if maskable else ''}"
                     f", got {len(ops)}", col, hint=f"syntax: {syntax}")
            return f
        for k, o in enumerate(operands):
            kind = o.kind
            if isinstance(kind, Reg):
                f[o.field] = (self.xreg if kind.file == "x" else self.vreg)(sl, ops[k], o.what)
            elif isinstance(kind, Imm):
                f[o.field] = self.imm(sl, ops[k], int(kind.lo), int(kind.hi), o.what, pc, o.hint)
            elif kind in (I.MEM, I.VMEM):
                off, f[I.F_RS1] = self.mem(sl, ops[k], pc, kind == I.MEM)
                if kind == I.MEM:
                    f[I.F_IMM] = off
            elif kind == I.JMEM:
                if _MEM.match(ops[k][0]):
                    f[I.F_IMM], f[I.F_RS1] = self.mem(sl, ops[k], pc, True)
                else:
                    f[I.F_RS1] = self.xreg(sl, ops[k], "rs1")
            elif kind == I.LABEL:
                f[I.F_IMM] = self.target(sl, ops[k], idx)
            elif kind == I.CSR:
                f[I.F_IMM] = self.csr(sl, ops[k])
            elif kind == I.VTYPE:
                f[I.F_IMM] = self.vtypei(sl, ops[k:], s.mcol)
            elif kind == I.MASK:
                f[I.F_VM] = self.vm(sl, ops, k, spec)
            elif kind == I.V0:
                if ops[k][0].strip().lower() != "v0":
                    self.err(sl, "E017", f"the mask operand of {spec.mnemonic} must be v0, got '{ops[k][0]}'",
                             ops[k][1], len(ops[k][0]))
                f[I.F_VM] = 0
        self.static_checks(s, f)
        return f

    def csr(self, sl: SourceLine, op: tuple[str, int]) -> int:
        name = op[0].strip().lower()
        if name not in I.CSR_NAMES:
            self.err(sl, "E018", f"unsupported CSR '{op[0]}'", op[1], len(op[0]),
                     hint="readable CSRs: " + ", ".join(I.CSR_NAMES))
            return 0
        return list(I.CSR_NAMES).index(name)

    def vtypei(self, sl: SourceLine, ops: list[tuple[str, int]], col: int) -> int:
        sew, lmul_code, ta, ma, seen = None, 0, 0, 0, set()
        for text, c in ops:
            t = text.strip().lower()
            if re.fullmatch(r"e\d+", t):
                v = int(t[1:])
                if v not in (8, 16, 32):
                    self.err(sl, "E019", f"SEW {t} is not supported: ELEN is 32 on Zve32x", c, len(t),
                             hint="use e8, e16 or e32")
                else:
                    sew = v
            elif re.fullmatch(r"mf?\d+", t):
                if t.startswith("mf"):
                    self.err(sl, "E019", f"fractional LMUL '{t}' is not supported by this core", c, len(t),
                             hint="use m1 (and a wider SEW's natural EMUL) instead")
                elif t not in ("m1", "m2", "m4", "m8"):
                    self.err(sl, "E019", f"LMUL '{t}' is invalid", c, len(t), hint="LMUL is m1, m2, m4 or m8")
                else:
                    lmul_code = I.LMUL_CODE[int(t[1:])]
            elif t in ("ta", "tu"):
                ta = int(t == "ta")
            elif t in ("ma", "mu"):
                ma = int(t == "ma")
            else:
                self.err(sl, "E019", f"unexpected '{text}' in the vtype", c, max(1, len(text)),
                         hint="vtype is eSEW, mLMUL[, ta|tu][, ma|mu], e.g. e8, m1, ta, ma")
            seen.add(t[:1])
        if sew is None and "e" not in seen:
            self.err(sl, "E019", "the vtype needs an element width (e8, e16 or e32)", col,
                     hint="e.g. vsetvli t0, a0, e8, m1, ta, ma")
        if sew is None:
            return 0
        return (ma << 7) | (ta << 6) | (I.SEW_CODE[sew] << 3) | lmul_code

    def static_checks(self, s: Slot, f: list[int]) -> None:
        """Register-group alignment under the vtype set by the textually preceding vsetvli, and v0 overlap."""
        spec, sl = s.spec, s.src
        if spec.cls in ("VARITH", "VLOAD", "VPERM", "VRED") and f[I.F_VM] == 0 and f[I.F_RD] == 0 and \
                spec.form not in ("VVM", "VXM", "VIM") and not (spec.cls == "VARITH" and spec.w == I.W_MASK):
            self.err(sl, "E022", f"{spec.mnemonic}: the destination v0 overlaps the mask register v0 of 'v0.t'",
                     s.ops[0][1], 2, hint="masked instructions must not write v0; pick another destination")
        if s.vtype is None or spec.cls not in ("VARITH", "VLOAD", "VSTORE", "VPERM"):
            return
        sew, lmul = s.vtype
        emul_d, emul_2, emul_1 = lmul, lmul, lmul
        if spec.cls in ("VLOAD", "VSTORE"):
            emul_d = max(1, spec.w * lmul // sew)
            if spec.src == I.MODE_INDEXED:
                emul_d, emul_2 = lmul, max(1, spec.w * lmul // sew)
        elif spec.w in (I.W_WIDEN, I.W_WIDEN_W):
            emul_d = 2 * lmul
            emul_2 = 2 * lmul if spec.w == I.W_WIDEN_W else lmul
        elif spec.w == I.W_NARROW:
            emul_2 = 2 * lmul
        elif spec.w == I.W_MASK:
            emul_d = 1
        elif spec.w in (I.W_EXT2, I.W_EXT4):
            emul_2 = max(1, lmul // (2 if spec.w == I.W_EXT2 else 4))
        for which, reg, emul in (("vd", f[I.F_RD], emul_d), ("vs2", f[I.F_RS2], emul_2),
                                 ("vs1", f[I.F_RS1], emul_1)):
            if which == "vs2" and spec.form in ("MVV", "MVX", "MVI", "V0", "VXS"):
                continue
            if which == "vs1" and spec.src != I.SRC_V:
                continue
            if which == "vs2" and spec.cls in ("VLOAD", "VSTORE") and spec.src != I.MODE_INDEXED:
                continue
            if which == "vs1" and spec.form in ("V2", "V0") or which == "vs1" and spec.cls in ("VLOAD", "VSTORE"):
                continue
            report = self.err if s.vtype_exact else self.rep.warning
            code = "E023" if s.vtype_exact else "W023"
            if emul > 8:
                report(sl, code, f"{spec.mnemonic} needs a register group of {emul} registers for {which} under "
                       f"e{sew}, m{lmul}; the maximum is 8", s.mcol, len(spec.mnemonic),
                       hint="lower LMUL in the preceding vsetvli")
                return
            if reg % emul:
                k = next(i for i, (t, _) in enumerate(s.ops) if t.strip().lower() == f"v{reg}") if any(
                    t.strip().lower() == f"v{reg}" for t, _ in s.ops) else 0
                # across a label the vtype may differ at run time (the simulator checks again): warn only
                report(sl, code, f"{which} = v{reg} is not aligned to its register "
                       f"group: under e{sew}, m{lmul} {spec.mnemonic} uses groups of {emul} registers, so {which} "
                       f"must be a multiple of {emul}", s.ops[k][1] if s.ops else s.mcol, len(f"v{reg}"),
                       hint=f"use v0, v{emul}, v{2 * emul}, ... (the vtype comes from the preceding vsetvli)")

    def run(self) -> RVVProgram:
        pre = Preprocessor(("#",), {}, set(I.XREGS) | set(I.VREGS) | set(I.BY_MNEMONIC) | set(PSEUDOS)
                           | set(DIRECTIVES), defer_sets=True)
        lines = pre.run(self.source)
        self.rep.diags.extend(pre.diags)
        self.pass1(lines)
        self.layout()
        n, limit = len(self.slots), self.hw.itcm_instructions
        if 4 * n > self.hw.itcm_bytes:
            last = self.slots[-1].src
            self.err(last, "E014", f"program needs {4 * n} bytes ({n} instructions) but the ITCM (instruction "
                     f"memory) holds {self.hw.itcm_bytes} bytes = {limit} instructions", 1,
                     hint="use loops instead of unrolling, or shorten the kernel")
        words = np.zeros((n, I.N_FIELDS), np.int32)
        for k, s in enumerate(self.slots):
            words[k] = self.encode_slot(k, s)
        self.rep.finish()
        if any(d.severity == "error" for d in self.rep.diags):
            raise AssemblyError(self.rep.diags)
        if n == 0:
            self.rep.warning(SourceLine("", 1, ""), "W002", "the program has no instructions")
        return RVVProgram(isa_name="RVV", words=words, lines=[s.src.line for s in self.slots],
                          origins=[s.src.origin for s in self.slots], source=self.source,
                          warnings=[d for d in self.rep.diags if d.severity == "warning"], data=bytes(self.data),
                          symbols={k: v for k, v in self.labels.items() if not k.startswith("__L")})


def _context_operands(spec: I.RVInstr) -> tuple[tuple[int, str], ...]:
    """(position, "label" | "imm" | "mem") of the operands whose value may depend on the program."""
    tags = []
    for k, o in enumerate(spec.operands):
        if o.kind == I.LABEL:
            tags.append((k, "label"))
        elif isinstance(o.kind, Imm):
            tags.append((k, "imm"))
        elif o.kind in (I.MEM, I.VMEM, I.JMEM):
            tags.append((k, "mem"))
    return tuple(tags)


_CONTEXT_OPERANDS = {m: _context_operands(spec) for m, spec in I.BY_MNEMONIC.items()}


def _row_key(s: Slot) -> tuple[object, ...] | None:
    """The memo key of a slot whose encoded row and diagnostics depend only on its mnemonic, operand texts and
    static vtype: no label operand, and every immediate and memory offset a decimal literal (no symbol, ``.``,
    ``1b`` or ``%hi``, whose values depend on the program); None otherwise. A row is memoized only when encoding
    it reported nothing, so what only shapes a diagnostic (columns, whether the vtype is exact) is no part of it."""
    ops = s.ops
    for k, tag in _CONTEXT_OPERANDS[s.spec.mnemonic]:
        if k >= len(ops):
            break
        text = ops[k][0]
        if tag == "label" or tag == "imm" and not _DECIMAL.fullmatch(text):
            return None
        if tag == "mem" and (m := _MEM.match(text)) and (off := m.group(1).strip()) and not _DECIMAL.fullmatch(off):
            return None
    return s.spec.mnemonic, tuple(t for t, _ in ops), s.vtype


def _static_vtype(ops: list[tuple[str, int]]) -> tuple[int, int] | None:
    sew = lmul = None
    for text, _ in ops:
        t = text.strip().lower()
        if t in ("e8", "e16", "e32"):
            sew = int(t[1:])
        elif t in ("m1", "m2", "m4", "m8"):
            lmul = int(t[1:])
    if sew is None:
        return None
    return sew, lmul or 1


def assemble(source: str, hw: RVVConfig | None = None) -> RVVProgram:
    """Assemble GNU-``as``-style RISC-V source; raises :class:`AssemblyError` with every error."""
    return _Asm(source, hw or RVVConfig()).run()


def assemble_unmemoized(source: str, hw: RVVConfig | None = None) -> RVVProgram:
    """:func:`assemble` with every line parsed and encoded afresh (what the memoized path must equal)."""
    return _Asm(source, hw or RVVConfig(), memo=False).run()
