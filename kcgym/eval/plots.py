"""PNG plots of a report: speedup and % of speed of light per task and config (the paper's Fig. 3), success vs.
turn budget, and cycles / speedup / % of speed of light against each axis of a hardware sweep.

matplotlib is a core dependency (reports are part of the main job); the Agg backend is
forced so plotting works on headless machines and from worker threads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from kcgym.eval import metrics as M
from kcgym.eval.records import EpisodeRecord, point_text
from kcgym.eval.report import best_success, by_agent, registry_order, sweep_axes, sweep_cells, sweep_records


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def speedup_plot(records: Sequence[EpisodeRecord], accelerator: str, path: Path) -> Path:
    """Grouped bars of the best speedup: for each task, one bar per config; one panel per agent. Failures: x."""
    return _bars(records, accelerator, path, lambda r: r.speedup, "speedup (x)", "{:.2f}", 1.0,
                 "speedup over the template compiler")


def sol_plot(records: Sequence[EpisodeRecord], accelerator: str, path: Path) -> Path:
    """The same bars for the best kernel's share of the speed of light (100% = at the bound)."""
    return _bars(records, accelerator, path, lambda r: None if r.sol_share is None else 100 * r.sol_share,
                 "% of speed of light", "{:.0f}", 100.0, "% of speed of light (sol_cycles / cycles)")


def _bars(records: Sequence[EpisodeRecord], accelerator: str, path: Path,
          value: Callable[[EpisodeRecord], float | None], ylabel: str, fmt: str, reference: float, what: str) -> Path:
    plt = _pyplot()
    groups = {k: [r for r in v if r.accelerator == accelerator] for k, v in by_agent(records).items()}
    groups = {k: v for k, v in groups.items() if M.counted(v)}
    rs_all = [r for v in groups.values() for r in v]
    tasks = registry_order(rs_all)[1]
    configs = sorted({r.config for r in rs_all})
    fig, axes = plt.subplots(len(groups), 1, figsize=(max(6.0, 0.9 * len(tasks) * max(1, len(configs)) / 2 + 3),
                                                      2.6 * len(groups) + 0.6), squeeze=False)
    width = 0.8 / max(1, len(configs))
    cmap = plt.get_cmap("viridis")
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    colors = [cmap(ci / max(1, len(configs) - 1)) if len(configs) > 1 else cmap(0.35) for ci in range(len(configs))]
    for ax, (label, rs) in zip(axes[:, 0], groups.items(), strict=True):
        any_fail = False
        for ci, c in enumerate(configs):
            xs, ys, fails = [], [], []
            for ti, task in enumerate(tasks):
                played = [r for r in M.counted(rs) if r.task == task and r.config == c]
                good = [v for v in (value(r) for r in played if r.success) if v]
                x = ti + (ci - (len(configs) - 1) / 2) * width
                if good:
                    xs.append(x)
                    ys.append(max(good))
                elif played:
                    fails.append(x)
            if xs:
                bars = ax.bar(xs, ys, width=width, color=colors[ci])
                ax.bar_label(bars, labels=[fmt.format(y) for y in ys], fontsize=6, padding=1)
            if fails:
                any_fail = True
                ax.scatter(fails, [0.05] * len(fails), marker="x", color="crimson", zorder=3)
        # explicit handles: every config keeps its colour in the legend even where it has no bar
        handles: list[Any] = [Patch(color=colors[ci], label=f"C{c}") for ci, c in enumerate(configs)]
        if any_fail:
            handles.append(Line2D([], [], marker="x", color="crimson", linestyle="", label="fail"))
        ax.axhline(reference, color="black", linewidth=0.8, linestyle="--")
        ax.set_xlim(-0.6, len(tasks) - 0.4)  # same task positions in every panel, bars or not
        ax.set_xticks(range(len(tasks)))
        ax.set_xticklabels(tasks, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel(ylabel)
        ax.set_ylim(0, max([reference, *(value(r) or 0 for r in rs)]) * 1.18)
        ax.set_title(f"{label} on {accelerator}: {what} (blank: not run or excluded)",
                     fontsize=9)
        ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))  # outside the bars
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def budget_axis(records: Sequence[EpisodeRecord]) -> tuple[int, dict[int, int]]:
    """``(x-axis end, {level: default budget})``: the paper's budgets set the axis, not an agent's own.

    The search agent asks for 2 x budget + 4 turns (up to 54); stretching the axis to it would squeeze
    the 15/20/25 region that the comparison is about, so its curve is cut at the largest level budget.
    """
    from kcgym.envs.kernel_env import DEFAULT_MAX_TURNS

    levels = sorted({r.level for r in records if r.level in DEFAULT_MAX_TURNS})
    budgets = {lv: DEFAULT_MAX_TURNS[lv] for lv in levels}
    longest = max((r.max_turns for r in records), default=1) or 1
    return (max(budgets.values()) if budgets else longest), budgets


def success_budget_plot(records: Sequence[EpisodeRecord], path: Path) -> Path:
    """Success rate if the turn budget had been b, for b = 1..the largest level budget, one line per agent."""
    plt = _pyplot()
    groups = {k: v for k, v in by_agent(records).items() if M.counted(v)}
    x_end, budgets = budget_axis(records)
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    styles = ["-", "--", "-.", ":"]
    for i, (label, rs) in enumerate(groups.items()):
        curve = M.success_curve(rs, x_end)
        own = max(r.max_turns for r in rs)
        name = f"{label} (own budget {own}, cut at {x_end})" if own > x_end else label
        ax.step(range(1, len(curve) + 1), [100 * y for y in curve], where="post", label=name,
                linestyle=styles[i % len(styles)], linewidth=1.6)
    for level, b in budgets.items():
        ax.axvline(b, color="grey", linewidth=0.6, linestyle=":")
        ax.annotate(f"L{level} budget {b}", (b, 1), xytext=(-2, 2), textcoords="offset points", rotation=90,
                    ha="right", va="bottom", fontsize=7, color="grey", xycoords=("data", "axes fraction"))
    ax.set_xlim(0.5, x_end + 0.5)
    ax.set_xlabel("turn budget (tool calls)")
    ax.set_ylabel("success (%)")
    ax.set_ylim(-2, 102)
    ax.set_title("Success vs. turn budget (dotted: the paper's budget per level)", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_plots(records: Sequence[EpisodeRecord], out_dir: str | Path, sweep_only: bool = False) -> list[Path]:
    """All plots for these records into ``out_dir`` (hardware sweeps: :func:`write_sweep_plots`); the files."""
    out = Path(out_dir)
    sweep = write_sweep_plots(records, out)
    records = [r for r in records if not r.hw_overrides]
    if sweep_only or not records:
        return sweep
    paths = [success_budget_plot(records, out / "success_vs_turns.png")]
    for acc in dict.fromkeys(r.accelerator for r in records):
        if any(r.accelerator == acc for r in M.counted(records)):
            paths.append(speedup_plot(records, acc, out / f"speedup_{acc}.png"))
            if any(r.sol_share is not None for r in M.counted(records) if r.accelerator == acc):
                paths.append(sol_plot(records, acc, out / f"sol_{acc}.png"))
    return paths + sweep


def sweep_plot(records: Sequence[EpisodeRecord], accelerator: str, task: str, config: int, axis: tuple[str, ...],
               path: Path) -> Path:
    """Cycles, speedup over the compiler and % of speed of light against one swept axis (one PNG).

    Each line is one agent (one colour) at one setting of the other axes (one line style); the compiler's
    cycles are the baseline of every point; the speed of light is black; an invalid point is an x on the
    cycles panel's axis.
    """
    plt = _pyplot()
    from matplotlib.transforms import blended_transform_factory

    rs = [r for r in records if r.accelerator == accelerator and r.task == task and r.config == config]
    others = [a for a in sweep_axes(rs) if a != axis]

    def rest(r: EpisodeRecord) -> tuple:
        return tuple(r.hw_overrides.get(a[0]) for a in others)

    def rest_text(key: tuple) -> str:
        return point_text(tuple(("+".join(a), v) for a, v in zip(others, key, strict=True)))

    x_of = {r.point: r.hw_overrides[axis[0]] for r in rs}
    labels = list(by_agent([r for r in rs if r.agent != "compiler"]))
    color = {label: f"C{i}" for i, label in enumerate(["compiler", *labels])}  # an agent keeps its colour
    fig, (ax_c, ax_s, ax_l) = plt.subplots(1, 3, figsize=(13.5, 5.6))
    styles = ["-", "--", "-.", ":"]
    for ki, key in enumerate(sorted({rest(r) for r in rs}, key=_value_order)):
        sub = [r for r in rs if rest(r) == key]
        suffix = f" [{rest_text(key)}]" if others else ""
        ls = styles[ki % len(styles)]
        points = sorted({r.point for r in sub if r.status != "invalid"}, key=lambda p: x_of[p])
        xs = [x_of[p] for p in points]

        def at(p, value, who=None, sub=sub):
            played = [r for r in M.counted(sub) if r.point == p and (who is None or r.label == who)]
            return value(played)

        base = [at(p, lambda pl: next((r.baseline_cycles for r in pl if r.baseline_cycles), None)) for p in points]
        sol = [at(p, lambda pl: next((r.sol_cycles for r in pl if r.sol_cycles), None)) for p in points]
        _line(ax_c, xs, base, f"compiler{suffix}", ls, "o", color["compiler"])
        _line(ax_c, xs, sol, f"speed of light{suffix}", ls, "_", color="black")
        for label in labels:
            best = [at(p, lambda pl: best_success(pl), label) for p in points]
            _line(ax_c, xs, [b.cycles if b else None for b in best], f"{label}{suffix}", ls, "s", color[label])
            _line(ax_s, xs, [b.speedup if b else None for b in best], f"{label}{suffix}", ls, "s", color[label])
        for label in ["compiler", *labels] if any(r.agent == "compiler" for r in sub) else labels:
            best = [at(p, lambda pl: best_success(pl), label) for p in points]
            _line(ax_l, xs, [100 * b.sol_share if b and b.sol_share else None for b in best], f"{label}{suffix}",
                  ls, "o" if label == "compiler" else "s", color.get(label))
        bad = sorted({x_of[r.point] for r in sub if r.status == "invalid"})
        if bad:
            tr = blended_transform_factory(ax_c.transData, ax_c.transAxes)
            first = not any(c.get_label() == "invalid point" for c in ax_c.collections)
            ax_c.scatter(bad, [0.03] * len(bad), marker="x", color="crimson", transform=tr, zorder=3, clip_on=False,
                         label="invalid point" if first else None)
    name = "+".join(axis)
    values = [v for v in x_of.values() if isinstance(v, (int, float))]
    log2 = bool(values) and min(values) > 0 and max(values) / min(values) >= 4
    for ax, ylabel in ((ax_c, "cycles"), (ax_s, "speedup over the compiler (x)"), (ax_l, "% of speed of light")):
        ax.set_xlabel(name)
        ax.set_ylabel(ylabel)
        if log2:
            ax.set_xscale("log", base=2)
        if values:
            ax.set_xticks(sorted(set(values)), [str(v) for v in sorted(set(values))])
        if ax.lines or ax.collections:  # below the panel: the lines stay readable
            ax.legend(fontsize=6.5, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=1 if not others else 2)
    ys = [y for line in ax_c.lines for y in line.get_ydata() if y]
    if ys and max(ys) / min(ys) >= 10:  # cycles over orders of magnitude; else a plain axis reads better
        from matplotlib.ticker import ScalarFormatter

        ax_c.set_yscale("log")
        for axis_ in (ax_c.yaxis,):
            axis_.set_major_formatter(ScalarFormatter())
            axis_.set_minor_formatter(ScalarFormatter())
            axis_.get_major_formatter().set_scientific(False)
            axis_.get_minor_formatter().set_scientific(False)
    ax_s.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax_l.set_ylim(0, 105)
    fig.suptitle(f"{accelerator} {task} C{config}: sweep of {name}", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _value_order(key: tuple) -> tuple:
    """Numbers by value (4 before 16), then anything else by its text."""
    return tuple((0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v)) for v in key)


def _line(ax, xs, ys, label, linestyle, marker, color=None) -> None:
    """A line through the points that have a value (a failed or missing point is a gap, not a zero)."""
    pts = [(x, y) for x, y in zip(xs, ys, strict=True) if y is not None]
    if pts:
        ax.plot([p[0] for p in pts], [p[1] for p in pts], linestyle=linestyle, marker=marker, label=label,
                color=color, linewidth=1.4, markersize=4)


def write_sweep_plots(records: Sequence[EpisodeRecord], out_dir: str | Path) -> list[Path]:
    """``sweep_<ACC>_<task>_C<c>_<axis>.png`` for every swept cell and axis; returns the files written."""
    sweep = sweep_records(records)
    paths = []
    for acc, task, c in sweep_cells(sweep):
        cell = [r for r in sweep if r.accelerator == acc and r.task == task and r.config == c]
        for axis in sweep_axes(cell):
            name = "+".join(axis)
            paths.append(sweep_plot(sweep, acc, task, c, axis, Path(out_dir) / f"sweep_{acc}_{task}_C{c}_{name}.png"))
    return paths
