"""Cycle attribution: where a kernel's cycles went, per source line and per loop.

Each simulator, built with ``profile=True``, accumulates per program counter the executions,
the issue cycles and the stall cycles by cause, taken from its own scoreboard's wait
computation (``PROFILE_STALLS`` in each ``machine.py``). The front end's time is exactly the
sum over instructions of issue + stalls; what remains of the kernel's cycles after the last
issue is the *drain* (the last DMAs, stores and results finishing). So the table adds up:
``sum(issue + stalls) + drain == cycles``, which a test checks for every compiler kernel.

This module turns those per-PC arrays into line and loop tables and a bounded text form.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kcgym.isa.program import Program

MAX_PROFILE_LINES = 20  # hottest source lines shown in the text form
MAX_PROFILE_LOOPS = 8  # hottest loops shown in the text form
MAX_SOURCE_COLS = 56  # a line's source text is cut to this many characters
END_LABEL = "(end)"  # the row of the implicit halt after the last instruction
DRAIN_CAUSE = "drain (last DMAs/stores/results finishing after the last issue)"


@dataclass
class PcProfile:
    """Per-PC counters of one run: ``table[pc] = [executions, issue, *stalls]`` for the kernel's PCs."""

    stall_names: tuple[str, ...]
    table: np.ndarray  # int64[program length, 2 + len(stall_names)]
    end_row: np.ndarray  # the same columns, summed over PCs past the program (the implicit halt)
    drain: int  # cycles after the last issue

    @classmethod
    def from_counters(cls, prof: np.ndarray, length: int, stall_names: tuple[str, ...], cycles: int,
                      issue_end: int) -> PcProfile:
        """From a simulator's ``State.prof`` (``issue_end``: its front end's final issue time)."""
        prof = np.asarray(prof, np.int64)
        return cls(stall_names=tuple(stall_names), table=prof[:length].copy(), end_row=prof[length:].sum(axis=0),
                   drain=int(cycles) - int(issue_end))

    @classmethod
    def attach(cls, results: list, st, length: int, stall_names: tuple[str, ...], issue_col: int) -> None:
        """Set ``res.profile`` of each input set's result from a profiling run's batched state ``st``
        (``issue_col``: the ``st.ctl`` column holding the front end's final issue time)."""
        for b, res in enumerate(results):
            res.profile = cls.from_counters(st.prof[b], length, stall_names, res.cycles, int(st.ctl[b, issue_col]))

    @property
    def front_end_cycles(self) -> int:
        return int(self.table[:, 1:].sum() + self.end_row[1:].sum())

    @property
    def total_cycles(self) -> int:
        return self.front_end_cycles + self.drain


@dataclass
class ProfileRow:
    """One source line or loop: executions, issue cycles and stall cycles by cause."""

    label: str  # "line 12" / "loop lines 5-9"
    text: str  # the source line (or the loop's first line)
    executions: int
    issue: int
    stalls: dict[str, int]
    line: int | None = None

    @property
    def cycles(self) -> int:
        return self.issue + sum(self.stalls.values())

    def to_dict(self) -> dict:
        return {"label": self.label, "line": self.line, "text": self.text, "executions": self.executions,
                "issue": self.issue, "stalls": dict(self.stalls), "cycles": self.cycles}


@dataclass
class LineProfile:
    """The attribution of one run: every line (hottest first), every loop, the drain and the total."""

    cycles: int
    lines: list[ProfileRow]
    loops: list[ProfileRow]
    drain: int
    stall_names: tuple[str, ...]
    unit_busy: dict[str, int] = field(default_factory=dict)

    @property
    def attributed(self) -> int:
        return sum(r.cycles for r in self.lines) + self.drain

    def stall_totals(self) -> dict[str, int]:
        out = {n: 0 for n in self.stall_names}
        for r in self.lines:
            for k, v in r.stalls.items():
                out[k] += v
        return out

    def to_dict(self) -> dict:
        return {"cycles": self.cycles, "attributed": self.attributed, "drain": self.drain,
                "stall_totals": self.stall_totals(), "unit_busy": dict(self.unit_busy),
                "lines": [r.to_dict() for r in self.lines], "loops": [r.to_dict() for r in self.loops]}


def _row(label: str, text: str, counts: np.ndarray, names: tuple[str, ...], line: int | None = None) -> ProfileRow:
    return ProfileRow(label=label, text=text, executions=int(counts[0]), issue=int(counts[1]),
                      stalls={n: int(v) for n, v in zip(names, counts[2:], strict=True)}, line=line)


def line_profile(program: Program, pc: PcProfile, loops: list[tuple[int, int]], cycles: int,
                 unit_busy: dict[str, int] | None = None) -> LineProfile:
    """Aggregate ``pc`` by source line and over each loop's PC range ``(first, last)`` (inclusive).

    A VLIW bundle written over several lines counts on its first line (its issue is one event)."""
    src = program.source.splitlines()

    def text(line: int | None) -> str:
        return src[line - 1].strip() if line and 0 < line <= len(src) else ""

    by_line: dict[int, np.ndarray] = {}
    for p in range(pc.table.shape[0]):
        ln = program.line_of(p) or 0
        by_line[ln] = by_line.get(ln, 0) + pc.table[p]
    rows = [_row(f"line {ln}", text(ln), v, pc.stall_names, ln) for ln, v in by_line.items() if v[0]]
    if pc.end_row[0]:
        rows.append(_row(END_LABEL, "implicit halt after the last instruction", pc.end_row, pc.stall_names))
    rows.sort(key=lambda r: (-r.cycles, r.line or 0))
    loop_rows = []
    for first, last in sorted(set(loops)):
        if not 0 <= first <= last < pc.table.shape[0]:
            continue
        v = pc.table[first : last + 1].sum(axis=0)
        a, b = program.line_of(first), program.line_of(last)
        row = _row(f"loop lines {a}-{b}", text(a), v, pc.stall_names, a)
        row.executions = int(pc.table[first, 0])  # iterations: times its first instruction ran
        loop_rows.append(row)
    loop_rows.sort(key=lambda r: (-r.cycles, r.line or 0))
    return LineProfile(cycles=int(cycles), lines=rows, loops=loop_rows, drain=pc.drain, stall_names=pc.stall_names,
                       unit_busy=dict(unit_busy or {}))


def _stall_text(stalls: dict[str, int]) -> str:
    parts = [f"{k} {v:,}" for k, v in sorted(stalls.items(), key=lambda kv: -kv[1]) if v]
    return "; ".join(parts) if parts else "-"


def _cut(s: str) -> str:
    return s if len(s) <= MAX_SOURCE_COLS else s[: MAX_SOURCE_COLS - 3] + "..."


def render_line_profile(lp: LineProfile, sol_text: str | None = None) -> list[str]:
    """The bounded text form: stall totals, the hottest loops and lines, the drain, units, the bound.

    ``sol_text``: the binding speed-of-light term where the evaluation provides one (else omitted)."""
    cyc = lp.cycles or 1
    out = [f"  Cycle attribution (issue + stalls per line, plus the drain, add up to {lp.attributed:,} of "
           f"{lp.cycles:,} cycles):"]
    out.append(f"    issue {sum(r.issue for r in lp.lines):,}; stalls: {_stall_text(lp.stall_totals())}; "
               f"{DRAIN_CAUSE} {lp.drain:,}")
    if lp.loops:
        out.append(f"  Hottest loops (of {len(lp.loops)}; cycles, share, iterations, issue, stalls by cause):")
        for r in lp.loops[:MAX_PROFILE_LOOPS]:
            out.append(f"    {r.label:<18} {r.cycles:>10,} {r.cycles / cyc:6.1%}  x{r.executions:<8,} "
                       f"issue {r.issue:,}; {_stall_text(r.stalls)}")
    out.append(f"  Hottest lines (of {len(lp.lines)}; cycles, share, executions, issue, stalls by cause):")
    for r in lp.lines[:MAX_PROFILE_LINES]:
        out.append(f"    {r.label:<10} {r.cycles:>10,} {r.cycles / cyc:6.1%}  x{r.executions:<8,} "
                   f"issue {r.issue:,}; {_stall_text(r.stalls)}")
        if r.text:
            out.append(f"               {_cut(r.text)}")
    if sol_text:
        out.append(f"  Binding speed-of-light term: {sol_text}")
    return out
