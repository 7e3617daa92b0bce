"""The instruction table: the single source of truth for an accelerator's ISA.

Each :class:`InstrSpec` names a mnemonic, its operands (register files, immediates with
ranges and alignment), the opcode class the simulator dispatches on, the unit it occupies,
its occupancy and latency, and its documentation. The assembler, encoder, disassembler,
simulator dispatch ids and the Markdown reference are all derived from it, so they cannot
drift apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Cost = int | Callable[[Any], int]  # a number, or a function of the hardware config


@dataclass(frozen=True)
class RegisterFile:
    """Registers ``<prefix>0 .. <prefix>{count-1}``; ``zero`` is hardwired (reads 0, writes dropped)."""

    name: str
    prefix: str
    count: int
    doc: str
    zero: int | None = None

    def names(self) -> list[str]:
        return [f"{self.prefix}{i}" for i in range(self.count)]


@dataclass(frozen=True)
class Reg:
    """Operand kind: a register of file ``file``; ``write`` marks a destination."""

    file: str
    write: bool = False


@dataclass(frozen=True)
class Imm:
    """Operand kind: a constant expression in ``[lo, hi]``, a multiple of ``align``."""

    lo: int | float
    hi: int | float
    align: int = 1
    is_float: bool = False


@dataclass(frozen=True)
class Operand:
    name: str
    kind: Reg | Imm
    doc: str = ""


@dataclass(frozen=True)
class InstrSpec:
    mnemonic: str
    operands: tuple[Operand, ...]
    cls: str  # opcode class (simulator dispatch group)
    unit: str  # functional unit it occupies
    occupancy: Cost  # cycles the unit is busy
    latency: Cost  # cycles until the result is visible
    summary: str  # one line
    semantics: str = ""  # pseudo-code / details for the reference
    hidden: tuple[str, ...] = ()  # extra encoded fields the assembler computes (e.g. loop target)
    sub: int | None = None  # explicit sub-op id within its class (None: its index within the class, in table order)

    @property
    def syntax(self) -> str:
        ops = ", ".join(o.name for o in self.operands)
        return f"{self.mnemonic} {ops}".strip()

    def cost(self, which: str, hw: Any) -> int:
        c = self.occupancy if which == "occupancy" else self.latency
        return int(c(hw) if callable(c) else c)


@dataclass
class ISA:
    """An instruction set: register files, instructions, classes and units, in fixed order."""

    name: str
    register_files: tuple[RegisterFile, ...]
    instructions: tuple[InstrSpec, ...]
    classes: tuple[str, ...]
    units: tuple[str, ...]
    comment_prefixes: tuple[str, ...] = (";", "#", "//")
    has_labels: bool = False
    label_hint: str = ""
    halt_mnemonic: str = "HALT"
    max_program: int = 16384
    # hook(ParsedProgram, hw, report) for ISA-specific static checks and hidden fields
    finalize: Callable[..., None] | None = None
    # hw -> {symbol: value} predefined for expressions (e.g. MLEN)
    symbols: Callable[[Any], dict[str, int | float]] = field(default=lambda hw: {})
    # VLIW: unit -> operations of that unit one bundle may hold (None: one instruction per word).
    # The units' slots, in this order, are the columns of an encoded bundle.
    bundle_slots: dict[str, int] | None = None
    nop_mnemonic: str = "NOP"  # fills the empty slots of a bundle
    # int32 fields of an encoded word when the ISA lays out its own fields (None: [opcode, class, sub, operands...])
    word_fields: int | None = None

    def __post_init__(self) -> None:
        self.by_mnemonic = {s.mnemonic: s for s in self.instructions}
        if len(self.by_mnemonic) != len(self.instructions):
            raise ValueError(f"{self.name}: duplicate mnemonic in instruction table")
        self.opcodes = {s.mnemonic: i for i, s in enumerate(self.instructions)}
        self.class_ids = {c: i for i, c in enumerate(self.classes)}
        self.unit_ids = {u: i for i, u in enumerate(self.units)}
        for s in self.instructions:
            if s.cls not in self.class_ids:
                raise ValueError(f"{s.mnemonic}: unknown class {s.cls!r}")
            if s.unit not in self.unit_ids:
                raise ValueError(f"{s.mnemonic}: unknown unit {s.unit!r}")
            for o in s.operands:
                if isinstance(o.kind, Reg) and o.kind.file not in self.files:
                    raise ValueError(f"{s.mnemonic}: unknown register file {o.kind.file!r}")
        # sub-op id: index of the mnemonic within its class, in table order
        counters: dict[str, int] = {}
        self.sub_ids: dict[str, int] = {}
        for s in self.instructions:
            self.sub_ids[s.mnemonic] = counters.get(s.cls, 0) if s.sub is None else s.sub
            counters[s.cls] = counters.get(s.cls, 0) + 1
        # encoded word: [opcode, class, sub, fields...]
        self.n_fields = self.word_fields or 3 + max(len(s.operands) + len(s.hidden) for s in self.instructions)
        if self.bundle_slots is not None:
            unknown = set(self.bundle_slots) - set(self.units)
            if unknown or self.nop_mnemonic not in self.by_mnemonic:
                raise ValueError(f"{self.name}: bundle slots name unknown units {unknown} or no {self.nop_mnemonic}")
        self.register_names: dict[str, tuple[RegisterFile, int]] = {}
        for rf in self.register_files:
            for i, n in enumerate(rf.names()):
                self.register_names[n.lower()] = (rf, i)

    @property
    def slot_units(self) -> list[str]:
        """The unit of each slot column of an encoded bundle (empty for a non-VLIW ISA)."""
        return [u for u, n in (self.bundle_slots or {}).items() for _ in range(n)]

    @property
    def files(self) -> dict[str, RegisterFile]:
        return {rf.name: rf for rf in self.register_files}

    def class_members(self, cls: str) -> list[InstrSpec]:
        return [s for s in self.instructions if s.cls == cls]

    def table(self, key: str, hw: Any) -> list[int]:
        """Per-opcode numeric table: 'occupancy', 'latency', 'unit', 'class' or 'sub'."""
        out = []
        for s in self.instructions:
            if key in ("occupancy", "latency"):
                out.append(s.cost(key, hw))
            elif key == "unit":
                out.append(self.unit_ids[s.unit])
            elif key == "class":
                out.append(self.class_ids[s.cls])
            elif key == "sub":
                out.append(self.sub_ids[s.mnemonic])
            else:
                raise KeyError(key)
        return out
