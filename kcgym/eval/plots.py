"""PNG plots of a report: speedup and % of speed of light per task and config (the paper's Fig. 3), success vs.
turn budget.

matplotlib is a core dependency (reports are part of the main job); the Agg backend is
forced so plotting works on headless machines and from worker threads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from kcgym.eval import metrics as M
from kcgym.eval.records import EpisodeRecord
from kcgym.eval.report import by_agent, registry_order


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
        handles = [Patch(color=colors[ci], label=f"C{c}") for ci, c in enumerate(configs)]
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


def write_plots(records: Sequence[EpisodeRecord], out_dir: str | Path) -> list[Path]:
    """All plots for these records into ``out_dir``; returns the files written."""
    out = Path(out_dir)
    paths = [success_budget_plot(records, out / "success_vs_turns.png")]
    for acc in dict.fromkeys(r.accelerator for r in records):
        if any(r.accelerator == acc for r in M.counted(records)):
            paths.append(speedup_plot(records, acc, out / f"speedup_{acc}.png"))
            if any(r.sol_share is not None for r in M.counted(records) if r.accelerator == acc):
                paths.append(sol_plot(records, acc, out / f"sol_{acc}.png"))
    return paths
