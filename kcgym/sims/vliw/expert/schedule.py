"""A list scheduler that packs straight-line operations into bundles: the expert kernels' tool.

Operations are given in program order; each is placed in the earliest bundle where its slot
is free and its dependences allow: after each register it reads is ready (RAW, by latency),
not before an earlier reader of a register it overwrites (WAR: the same bundle is fine, since
reads see the state before the bundle), and after an earlier writer of it (WAW). The timing
model is the machine's, so a schedule without stalls runs at one bundle per cycle.
"""

from __future__ import annotations

from dataclasses import dataclass

from kcgym.isa.spec import Reg
from kcgym.sims.vliw.config import VLIWConfig
from kcgym.sims.vliw.isa import SLOTS, make_isa


@dataclass(frozen=True)
class Op:
    text: str
    unit: str
    reads: tuple[str, ...]
    writes: tuple[tuple[str, int], ...]  # (register, latency)


def parse(text: str, hw: VLIWConfig) -> Op:
    """The slot, registers read and registers written (with latency) of one operation."""
    isa = make_isa(hw)
    mnemonic, _, rest = text.strip().partition(" ")
    spec = isa.by_mnemonic[mnemonic.upper()]
    args = [a.strip() for a in rest.split(",")] if rest.strip() else []
    reads, writes = [], []
    for od, arg in zip(spec.operands, args, strict=True):
        if isinstance(od.kind, Reg):
            if not od.name.endswith("d"):
                reads.append(arg)
            if od.kind.write:
                writes.append((arg, 1 if od.kind.file == "p" else spec.cost("latency", hw)))
    return Op(text.strip(), spec.unit, tuple(reads), tuple(writes))


def schedule(texts: list[str], hw: VLIWConfig, slots: dict[str, int] | None = None) -> list[list[str]]:
    """Pack ``texts`` (program order) into bundles; returns the bundles' operation texts.

    ``slots`` lowers a unit's slots per bundle (e.g. ``{"LD": 1}``: loads never share a bundle, so
    they can never hit one bank together).
    """
    limit = {**SLOTS, **(slots or {})}
    ops = [parse(t, hw) for t in texts]
    bundles: list[list[Op]] = []
    ready: dict[str, int] = {}  # register -> cycle its latest value is usable
    last_write: dict[str, int] = {}  # register -> bundle of its latest writer
    last_read: dict[str, int] = {}  # register -> latest bundle that reads its current value
    for op in ops:
        t = 0
        for r in op.reads:
            t = max(t, ready.get(r, 0))
        for r, _ in op.writes:
            t = max(t, last_read.get(r, 0), last_write.get(r, -1) + 1)
        while True:
            while len(bundles) <= t:
                bundles.append([])
            used = sum(1 for o in bundles[t] if o.unit == op.unit)
            written = {r for o in bundles[t] for r, _ in o.writes}
            if used < limit[op.unit] and not written & {r for r, _ in op.writes}:
                break
            t += 1
        bundles[t].append(op)
        for r in op.reads:
            last_read[r] = max(last_read.get(r, 0), t)
        for r, lat in op.writes:
            ready[r], last_write[r] = t + lat, t
            last_read[r] = t
    return [[o.text for o in b] for b in bundles]


def emit(asm, texts: list[str], hw: VLIWConfig, slots: dict[str, int] | None = None) -> int:
    """Schedule ``texts`` and emit one line per bundle (``NOP`` for an empty one); returns the bundle count."""
    bundles = schedule(texts, hw, slots)
    for b in bundles:
        asm(" || ".join(b) if b else "NOP")
    return len(bundles)
