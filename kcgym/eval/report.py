"""Markdown report of one or more run directories, in the paper's table shapes.

Several run directories (or several agents in one) are shown side by side: every cell lists
the agents in the order of the summary table, comma-separated, as the paper's Table 5 lists
its four models.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kcgym.eval import metrics as M
from kcgym.eval.records import EpisodeRecord, HwPoint
from kcgym.eval.store import EPISODES, load_records

ERROR_LETTERS = {
    "syntax": "S", "functional": "F", "below_roofline": "R", "tool_use": "T", "api": "A", "harness": "H",
}


def load_runs(run_dirs: Sequence[str | Path]) -> list[EpisodeRecord]:
    """Records of every run directory, in order, each directory's grouped by agent label.

    Concurrent workers append records as they finish, so file order is not stable; sorting by
    label (stably) gives every report the same agent order. FileNotFoundError names a directory
    without records."""
    out: list[EpisodeRecord] = []
    per_dir = []
    for d in run_dirs:
        path = Path(d) / EPISODES
        if not path.is_file():
            raise FileNotFoundError(f"{d}: no {EPISODES} here (is this a `kcgym eval --out` directory?)")
        per_dir.append((str(d), sorted(load_records(path), key=lambda r: r.label)))
    dirs_of: dict[str, set[str]] = {}
    for d, records in per_dir:
        for r in records:
            dirs_of.setdefault(r.label, set()).add(d)
    for d, records in per_dir:  # one agent in two runs (`kcgym report A B`) is two rows, not one merged row
        for r in records:
            if len(dirs_of[r.label]) > 1:
                r.run_tag = Path(d).name or d
        out.extend(records)
    return out


def registry_order(records: Sequence[EpisodeRecord]) -> tuple[list[str], list[str]]:
    """Accelerators and tasks in the registry's order (then any others in record order): stable tables
    whatever order concurrent workers finished in."""
    from kcgym.registry import SUPPORTED

    accs = list(SUPPORTED)
    tasks = [t for row in SUPPORTED.values() for t in row]
    accs += [r.accelerator for r in records]
    tasks += [r.task for r in records]
    present_accs = {r.accelerator for r in records}
    present_tasks = {r.task for r in records}
    return ([a for a in dict.fromkeys(accs) if a in present_accs],
            [t for t in dict.fromkeys(tasks) if t in present_tasks])


def by_agent(records: Sequence[EpisodeRecord]) -> dict[str, list[EpisodeRecord]]:
    groups: dict[str, list[EpisodeRecord]] = {}
    for r in records:
        groups.setdefault(r.label, []).append(r)
    return groups


def _fmt(x: float | None, spec: str = ".2f", none: str = "–") -> str:
    return none if x is None else format(x, spec)


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _tokens(played: Sequence[EpisodeRecord], value, spec: str = ",.0f") -> str:
    """Mean of a token count; "–" for agents that never call a model (offline agents have no tokens, not 0)."""
    if not any(r.tokens.api_calls for r in played):
        return "–"
    return _fmt(M.mean(value(r) for r in played), spec)


def summary_table(groups: dict[str, list[EpisodeRecord]]) -> str:
    header = [
        "agent", "episodes", "success", *(f"fast_{p:g}" for p in M.FAST_P), "geomean speedup",
        "geomean % of SOL", "turn of first correct", "tool calls", "evaluations", "tokens / episode", "excluded",
    ]
    rows = []
    for label, rs in groups.items():
        played = M.counted(rs)
        n_ok = sum(r.success for r in played)
        rows.append([
            label,
            str(len(played)),
            f"{n_ok}/{len(played)} ({_pct(M.success_rate(rs))})",
            *(_pct(M.fast_p(rs, p)) for p in M.FAST_P),
            _fmt(M.geomean_speedup(rs), ".3f"),
            _pct(M.geomean_sol_share(rs)),
            _fmt(M.turns_to_first_correct(rs), ".1f"),
            _fmt(M.mean(r.tool_calls for r in played), ".1f"),
            _fmt(M.mean(r.evaluations for r in played), ".1f"),
            _tokens(played, lambda r: r.tokens.total),
            str(len(rs) - len(played)),
        ])
    return _table(header, rows)


def success_table(groups: dict[str, list[EpisodeRecord]]) -> str:
    """Table 5: successes n/N per task and accelerator, level subtotals and totals."""
    records = [r for rs in groups.values() for r in rs]
    accs, task_order = registry_order(records)
    level_of = {r.task: r.level for r in records}
    tasks_by_level: dict[int, list[str]] = {}
    for task in task_order:
        tasks_by_level.setdefault(level_of[task], []).append(task)
    labels = list(groups)

    def cell(rs_by_label: dict[str, list[EpisodeRecord]]) -> str:
        parts = []
        for label in labels:
            played = M.counted(rs_by_label.get(label, []))
            parts.append(f"{sum(r.success for r in played)}/{len(played)}" if played else "–")
        return ", ".join(parts)

    def select(**where: object) -> dict[str, list[EpisodeRecord]]:
        return {
            label: [r for r in rs if all(getattr(r, k) == v for k, v in where.items())]
            for label, rs in groups.items()
        }

    header = ["level", "task", *accs]
    rows = []
    for level in sorted(tasks_by_level):
        for task in tasks_by_level[level]:
            rows.append([f"L{level}", task, *(cell(select(level=level, task=task, accelerator=a)) for a in accs)])
        rows.append([f"**L{level}**", "**subtotal**", *(f"**{cell(select(level=level, accelerator=a))}**"
                                                          for a in accs)])
    rows.append(["**all**", "**total**", *(f"**{cell(select(accelerator=a))}**" for a in accs)])
    return f"Cells: successes/episodes for {', '.join(labels)} (in that order); – = not run or excluded.\n\n" + \
        _table(header, rows)


def speedup_tables(groups: dict[str, list[EpisodeRecord]]) -> str:
    """Fig. 3 / Tables 15-17: best speedup over the compiler per task and config, per accelerator."""
    out = []
    labels = list(groups)
    records = [r for rs in groups.values() for r in rs]
    accs, task_order = registry_order(records)
    for acc in accs:
        rs_acc = [r for r in records if r.accelerator == acc]
        configs = sorted({r.config for r in rs_acc})
        tasks = [t for t in task_order if any(r.task == t for r in rs_acc)]
        rows = []
        for task in tasks:
            row = [task]
            for c in configs:
                parts = []
                for label in labels:
                    played = [r for r in M.counted(groups[label]) if r.accelerator == acc and r.task == task
                              and r.config == c]
                    good = [r for r in played if r.success and r.speedup]
                    best = max(good, key=lambda r: r.speedup or 0.0) if good else None
                    parts.append(_speedup_cell(best) if best else ("fail" if played else "–"))
                row.append(", ".join(parts))
            rows.append(row)
        out.append(f"### {acc}\n\n" + _table(["task", *(f"C{c}" for c in configs)], rows))
    return (f"Best speedup over the template compiler per cell, for {', '.join(labels)}, with that kernel's share "
            "of the speed of light in parentheses (sol_cycles / cycles; * = beat the bound).\n\n" + "\n\n".join(out))


def _speedup_cell(r: EpisodeRecord) -> str:
    """``2.31 (87%)``: speedup and % of speed of light of one successful episode."""
    share = r.sol_share
    return f"{r.speedup:.2f}" + (f" ({_pct(share)}{'*' if r.beats_sol else ''})" if share is not None else "")


def error_table(groups: dict[str, list[EpisodeRecord]]) -> str:
    header = ["agent", *(f"{name} ({ERROR_LETTERS[name]})" for name in M.ERROR_CLASSES), "prompt tokens",
              "completion tokens", "reasoning tokens", "tokens / turn", "API calls"]
    rows = []
    for label, rs in groups.items():
        counts = M.error_counts(rs)
        played = M.counted(rs)
        rows.append([
            label, *(str(counts[name]) for name in M.ERROR_CLASSES),
            _tokens(played, lambda r: r.tokens.prompt),
            _tokens(played, lambda r: r.tokens.completion),
            _tokens(played, lambda r: r.tokens.reasoning),
            _tokens([r for r in played if r.turns], lambda r: r.tokens.total / r.turns),  # the paper's Table 7
            _tokens(played, lambda r: r.tokens.api_calls, ".1f"),
        ])
    return _table(header, rows)


def sweep_records(records: Sequence[EpisodeRecord]) -> list[EpisodeRecord]:
    """The records of hardware-sweep points (``kcgym sweep``); the ordinary tables leave them out."""
    return [r for r in records if r.hw_overrides]


def swept_fields(records: Sequence[EpisodeRecord]) -> list[str]:
    """The hw fields the sweep records vary, in first-seen order."""
    return list(dict.fromkeys(k for r in records for k in r.hw_overrides))


def sweep_axes(records: Sequence[EpisodeRecord]) -> list[tuple[str, ...]]:
    """The swept axes: fields whose values always agree (``MLEN+VLEN``, tied by the sweep) form one axis."""
    axes: list[tuple[str, ...]] = []
    for f in swept_fields(records):
        for i, axis in enumerate(axes):
            if all(r.hw_overrides.get(f) == r.hw_overrides.get(axis[0]) for r in records):
                axes[i] = (*axis, f)
                break
        else:
            axes.append((f,))
    return axes


def sweep_cells(records: Sequence[EpisodeRecord]) -> dict[tuple[str, str, int], dict[HwPoint, list[EpisodeRecord]]]:
    """``{(accelerator, task, config): {point: records}}`` in registry order, points by their values."""
    accs, tasks = registry_order(records)
    fields = swept_fields(records)
    out: dict[tuple[str, str, int], dict[HwPoint, list[EpisodeRecord]]] = {}
    for acc in accs:
        for task in tasks:
            for c in sorted({r.config for r in records if r.accelerator == acc and r.task == task}):
                rs = [r for r in records if r.accelerator == acc and r.task == task and r.config == c]
                points = sorted({r.point for r in rs}, key=lambda p: [dict(p).get(f, 0) for f in fields])
                out[(acc, task, c)] = {p: [r for r in rs if r.point == p] for p in points}
    return out


def best_success(rs: Sequence[EpisodeRecord]) -> EpisodeRecord | None:
    """The fastest correct episode of several (runs of one agent at one point)."""
    good = [r for r in rs if r.success and r.cycles]
    return min(good, key=lambda r: r.cycles or 0) if good else None


def _sweep_cell(rs: Sequence[EpisodeRecord]) -> str:
    played = M.counted(rs)
    best = best_success(played)
    if best is not None:
        share = f", {_pct(best.sol_share)} SOL" if best.sol_share is not None else ""
        return f"{best.cycles:,} ({best.speedup:.2f}x{share})" if best.speedup else f"{best.cycles:,}"
    if played:
        letters = sorted({ERROR_LETTERS.get(r.error_class or "", "?") for r in played})
        return f"fail ({','.join(letters)})"
    return "excluded" if any(r.status == "excluded" for r in rs) else "–"


def sweep_table(records: Sequence[EpisodeRecord]) -> str:
    """One row per (machine, task, config, hw point): the compiler's cycles, the speed of light, and each
    agent's best correct kernel as ``cycles (speedup, % of SOL)``; an invalid point says why."""
    sweep = sweep_records(records)
    axes = sweep_axes(sweep)
    labels = list(by_agent(sweep))
    header = ["machine", "task", "config", *("+".join(a) for a in axes), "compiler cycles", "speed of light", *labels]
    rows = []
    for (acc, task, c), points in sweep_cells(sweep).items():
        for point, rs in points.items():
            values = dict(point)
            lead = [acc, task, f"C{c}", *(str(values.get(a[0], "default")) for a in axes)]
            bad = next((r for r in rs if r.status == "invalid"), None)
            if bad is not None:
                rows.append([*lead, f"invalid: {bad.excluded_reason}", "–", *("–" for _ in labels)])
                continue
            played = M.counted(rs)
            base = next((r.baseline_cycles for r in played if r.baseline_cycles), None)
            sol = next((r.sol_cycles for r in played if r.sol_cycles), None)
            cells = [_sweep_cell([r for r in rs if r.label == label]) for label in labels]
            rows.append([*lead, _fmt(base, ","), _fmt(sol, ","), *cells])
    return _table(header, rows)


def sweep_table_of_file(path: str | Path) -> str:
    """The sweep table of a results file (an ``episodes.jsonl``): what the README's generated block holds."""
    return sweep_table(load_records(path))


SWEEP_LEGEND = """\
Cells: the agent's best correct kernel at that point as cycles (speedup over the compiler at the same point,
share of the speed of light); fail (letters: the error classes) = played, never correct; invalid = the point
is not a machine (the hw model rejects it) or the compiler cannot map the task to it: a hole in the design
space, counted nowhere."""


def render(records: Sequence[EpisodeRecord], sources: Sequence[str | Path] = (), sweep_only: bool = False) -> str:
    """The whole report as Markdown; hardware-sweep records get their own section (``sweep_only``: just it)."""
    sweep = sweep_records(records)
    if sweep_only or (sweep and len(sweep) == len(records)):
        return _render_sweep(sweep, sources)
    records = [r for r in records if not r.hw_overrides]
    groups = by_agent(records)
    if not groups:
        return "# kcgym evaluation report\n\nNo episodes recorded yet.\n"
    versions = sorted({r.suite_version for r in records})
    parts = [
        "# kcgym evaluation report",
        f"Runs: {', '.join(str(s) for s in sources) or '(records)'}; suite version {', '.join(versions)}; "
        f"{len(records)} episodes.",
        "## Summary",
        summary_table(groups),
        "## Success per task (Table 5 layout)",
        success_table(groups),
        "## Speedup per task and configuration (Fig. 3 layout)",
        speedup_tables(groups),
        "## Errors and cost (Table 9 layout; tokens are means per episode)",
        error_table(groups),
        METRICS_LEGEND,
    ]
    if sweep:
        parts += ["## Hardware sweep", sweep_table(sweep), SWEEP_LEGEND]
    return "\n\n".join(parts) + "\n"


def _render_sweep(sweep: Sequence[EpisodeRecord], sources: Sequence[str | Path]) -> str:
    if not sweep:
        return "# kcgym hardware sweep\n\nNo hardware-sweep records here (`kcgym sweep` writes them).\n"
    versions = sorted({r.suite_version for r in sweep})
    points = len({(r.accelerator, r.task, r.config, r.point) for r in sweep})
    invalid = len({(r.accelerator, r.task, r.config, r.point) for r in sweep if r.status == "invalid"})
    axes = ", ".join("+".join(a) for a in sweep_axes(sweep))
    head = (f"Runs: {', '.join(str(s) for s in sources) or '(records)'}; suite version {', '.join(versions)}; "
            f"{points} points swept over {axes} ({invalid} invalid), {len(sweep)} records.")
    return "\n\n".join(["# kcgym hardware sweep", head, sweep_table(sweep), SWEEP_LEGEND]) + "\n"


METRICS_LEGEND = """\
Metrics: *success* = the submitted (or, at the turn limit, the last) kernel is correct on the hidden
inputs; *fast_p* = share of all episodes that are correct AND faster than p x the compiler (KernelBench;
fast_0 = correctness rate); *geomean speedup* = geometric mean of compiler cycles / kernel cycles over
correct episodes; *% of SOL* = speed-of-light cycles / kernel cycles (100% = at the bound; geomean over
correct episodes); *turn of first correct* = mean turn at which `simulate` first reported a correct kernel;
*tool calls* / *evaluations* = mean tool calls and simulate+profile calls per episode; errors: S syntax,
F functional (wrong or faulted), R below the roofline bound (flagged), T tool-use failure (stopped calling
tools, or never wrote a kernel), A API failure (retries exhausted, timeout, context overflow), H harness."""
