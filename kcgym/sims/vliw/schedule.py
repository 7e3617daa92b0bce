"""A list scheduler that packs straight-line operations into bundles: the expert kernels' and the compiler's tool.

Operations are given in program order; each is placed in the earliest bundle where its slot
is free and its dependences allow: after each register it reads is ready (RAW, by latency),
not before an earlier reader of a register it overwrites (WAR: the same bundle is fine, since
reads see the state before the bundle), and after an earlier writer of it (WAW). The timing
model is the machine's, so a schedule without stalls runs at one bundle per cycle.

The experts order memory by hand; the compiler attaches each operation's memory accesses
(:class:`Access`, worked out by :mod:`kcgym.sims.vliw.compiler.optimize`): two accesses that may
touch the same bytes, one of them a write, keep their order in separate bundles, and two data-memory
accesses known to fall in one bank do not share a bundle (VLIW-T3).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from kcgym.isa.spec import InstrSpec, Reg
from kcgym.limits import MAX_CACHED_OPERATIONS, MAX_MEMOISED_CONFIGS
from kcgym.sims.vliw.config import VLIWConfig
from kcgym.sims.vliw.isa import SLOTS, make_isa


@dataclass(frozen=True)
class Access:
    """Bytes ``[lo, hi)`` of ``space`` ("DM" or "EXT") from a symbolic ``base`` (None: address 0).

    Accesses from different bases may overlap unless ``where`` (the absolute bytes the access may touch,
    over every value the base takes; None: unknown) says they cannot; from one base they overlap exactly
    when their ranges do. ``banked``: a VLD/VLDB/VST, which takes a bank (VLIW-T3).
    """

    space: str
    base: Hashable | None
    lo: int
    hi: int
    write: bool
    banked: bool = False
    where: tuple[int, int] | None = None

    def conflicts(self, other: Access) -> bool:
        """Must the two keep their program order?"""
        if self.space != other.space or not (self.write or other.write):
            return False
        if self.where and other.where and (self.where[1] <= other.where[0] or other.where[1] <= self.where[0]):
            return False
        return self.base != other.base or (self.lo < other.hi and other.lo < self.hi)

    def same_bank(self, other: Access, bank_bytes: int) -> bool:
        """Known (or, from one base less than a bank apart, likely) to hit one bank together."""
        if not (self.banked and other.banked):
            return False
        if self.where and other.where:
            a = {self.where[0] // bank_bytes, (self.where[1] - 1) // bank_bytes}
            b = {other.where[0] // bank_bytes, (other.where[1] - 1) // bank_bytes}
            if len(a) == 1 and a == b:
                return True
            if max(a) < min(b) or max(b) < min(a):
                return False
        if self.base != other.base:
            return False
        if self.base is None:
            return self.lo // bank_bytes == other.lo // bank_bytes
        return abs(self.lo - other.lo) < bank_bytes


@dataclass(frozen=True)
class Op:
    text: str
    unit: str
    reads: tuple[str, ...]
    writes: tuple[tuple[str, int], ...]  # (register, latency)
    mem: tuple[Access, ...] = ()


# hw config (by identity; the entry holds it, so its id is not reused while cached) -> {line text: value}
_PER_CONFIG: dict[int, tuple[VLIWConfig, dict]] = {}


def per_config_memo(hw: VLIWConfig) -> dict:
    """A memo of facts about operation texts on ``hw``: the -O2 optimiser's liveness and scheduling passes ask
    about the same few thousand lines millions of times, and hashing the config (or its JSON, which
    ``make_isa`` keys on) per question cost most of a C1 decoder compile. Bounded by MAX_CACHED_OPERATIONS."""
    entry = _PER_CONFIG.get(id(hw))
    if entry is None or entry[0] is not hw:
        if len(_PER_CONFIG) >= MAX_MEMOISED_CONFIGS:
            _PER_CONFIG.clear()
        entry = _PER_CONFIG[id(hw)] = (hw, {})
    memo = entry[1]
    if len(memo) > MAX_CACHED_OPERATIONS:
        memo.clear()
    return memo


def operands(text: str, hw: VLIWConfig) -> tuple[InstrSpec, tuple[str, ...]]:
    """The instruction's spec and its operand texts."""
    memo = per_config_memo(hw)
    key = ("operands", text)
    got = memo.get(key)
    if got is None:
        mnemonic, _, rest = text.strip().partition(" ")
        spec = make_isa(hw).by_mnemonic[mnemonic.upper()]
        got = memo[key] = (spec, tuple(a.strip() for a in rest.split(",")) if rest.strip() else ())
    return got


def parse(text: str, hw: VLIWConfig, mem: tuple[Access, ...] = ()) -> Op:
    """The slot, registers read and registers written (with latency) of one operation."""
    spec, args = operands(text, hw)
    reads, writes = [], []
    for od, arg in zip(spec.operands, args, strict=True):
        if isinstance(od.kind, Reg):
            if not od.name.endswith("d"):
                reads.append(arg)
            if od.kind.write:
                writes.append((arg, 1 if od.kind.file == "p" else spec.cost("latency", hw)))
    return Op(text.strip(), spec.unit, tuple(reads), tuple(writes), mem)


def schedule_ops(ops: list[Op], hw: VLIWConfig, slots: dict[str, int] | None = None,
                 window: int | None = None) -> list[list[int]]:
    """Pack ``ops`` (program order) into bundles; returns each bundle's operation indices (a bundle may be empty).

    ``window``: no operation is placed before the bundle of the one ``window`` places earlier in program
    order, which bounds how far values are hoisted above their uses (and so the registers they hold).
    """
    limit = {**SLOTS, **(slots or {})}
    bundles: list[list[int]] = []
    ready: dict[str, int] = {}  # register -> cycle its latest value is usable
    last_write: dict[str, int] = {}  # register -> bundle of its latest writer
    last_read: dict[str, int] = {}  # register -> latest bundle that reads its current value
    placed: list[tuple[int, Access]] = []  # (bundle, access) of every access placed so far
    where: list[int] = []  # bundle of each operation placed
    for i, op in enumerate(ops):
        t = where[i - window] if window is not None and i >= window else 0
        for r in op.reads:
            t = max(t, ready.get(r, 0))
        for r, _ in op.writes:
            t = max(t, last_read.get(r, 0), last_write.get(r, -1) + 1)
        for b, acc in placed:
            if b >= t and any(acc.conflicts(a) for a in op.mem):
                t = b + 1
        while True:
            while len(bundles) <= t:
                bundles.append([])
            there = [ops[j] for j in bundles[t]]
            used = sum(1 for o in there if o.unit == op.unit)
            written = {r for o in there for r, _ in o.writes}
            banks = op.mem and any(a.same_bank(b, hw.bank_bytes) for o in there for b in o.mem for a in op.mem)
            if used < limit[op.unit] and not written & {r for r, _ in op.writes} and not banks:
                break
            t += 1
        bundles[t].append(i)
        where.append(t)
        placed += [(t, a) for a in op.mem]
        for r in op.reads:
            last_read[r] = max(last_read.get(r, 0), t)
        for r, lat in op.writes:
            ready[r], last_write[r] = t + lat, t
            last_read[r] = t
    return bundles


def schedule(texts: list[str], hw: VLIWConfig, slots: dict[str, int] | None = None) -> list[list[str]]:
    """Pack ``texts`` (program order) into bundles; returns the bundles' operation texts.

    ``slots`` lowers a unit's slots per bundle (e.g. ``{"LD": 1}``: loads never share a bundle, so
    they can never hit one bank together).
    """
    ops = [parse(t, hw) for t in texts]
    return [[ops[i].text for i in b] for b in schedule_ops(ops, hw, slots)]


def emit(asm, texts: list[str], hw: VLIWConfig, slots: dict[str, int] | None = None) -> int:
    """Schedule ``texts`` and emit one line per bundle (``NOP`` for an empty one); returns the bundle count."""
    bundles = schedule(texts, hw, slots)
    for b in bundles:
        asm(" || ".join(b) if b else "NOP")
    return len(bundles)
