"""The CPU case study's kernels: GCC -O2 baseline and expert cycles on every task and config.

Per (task, config), on one default input set (seed 0): the GCC baseline's simulated cycles, dynamic
instructions and IPC, the expert's cycles where one exists, and the speed of light. Writes one JSON
line each to ``benchmarks/results/cpu_tasks.jsonl``; the README's CPU task table is :func:`render` of
that file (``python benchmarks/readme_tables.py --write``), and ``bench_sol.py --reuse
CPU=benchmarks/results/cpu_tasks.jsonl`` takes its cycles. Cycle counts are deterministic.

    python benchmarks/bench_cpu_tasks.py [--quick] [--tasks a,b] [--configs 1,5] [--out PATH]

``--quick`` runs config 1 only and writes nothing (a smoke run).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "cpu_tasks.jsonl"


def measure(task, cfg) -> dict:
    """One row: baseline and expert cycles on the seed-0 input set, and the bound."""
    from kcgym.evaluation import Evaluator
    from kcgym.registry import ACCELERATORS

    acc = ACCELERATORS["CPU"]
    hw = acc.make_hw()
    ev = Evaluator(acc, task, cfg, hw)
    inputs = ev.input_sets(0, 1)
    row: dict = {"task": task.name, "level": task.level, "config": cfg.index, "params": dict(cfg.params),
                 "sol_cycles": ev.speed_of_light().cycles}
    t0 = time.perf_counter()
    rep = ev.evaluate(acc.compile(task, cfg, hw), inputs, with_baseline=False, max_steps=50_000_000)
    row.update(cycles=rep.cycles, instructions=rep.instructions, correct=rep.correct,
               fault=None if rep.fault is None else rep.fault.name, seconds=round(time.perf_counter() - t0, 2))
    expert = acc.expert(task, cfg, hw)
    if expert is not None:
        rep = ev.evaluate(expert, inputs, with_baseline=False, max_steps=50_000_000)
        row.update(expert_cycles=rep.cycles, expert_correct=rep.correct,
                   expert_fault=None if rep.fault is None else rep.fault.name)
    return row


def load(path: Path = RESULTS) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def render(rows: list[dict]) -> str:
    """The README table: per task and config, GCC cycles (IPC), the expert's speedup over it, and SOL."""
    configs = sorted({r["config"] for r in rows})
    out = ["| task | L | " + " | ".join(f"C{c}: GCC cycles (IPC) / expert speedup / SOL" for c in configs) + " |",
           "|---|---|" + "---|" * len(configs)]
    by: dict[str, dict[int, dict]] = {}
    for r in rows:
        by.setdefault(r["task"], {})[r["config"]] = r
    for task, per in by.items():
        cells = []
        for c in configs:
            r = per.get(c)
            if r is None:
                cells.append("-")
                continue
            ok = "" if r["correct"] else " WRONG"
            speedup = f"{r['cycles'] / r['expert_cycles']:.2f}x" if r.get("expert_cycles") else "-"
            cells.append(f"{r['cycles']:,} ({r['instructions'] / r['cycles']:.2f}){ok} / {speedup} / "
                         f"{r['sol_cycles']:,}")
        level = next(iter(per.values()))["level"]
        out.append(f"| {task} | {level} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--tasks", default="")
    ap.add_argument("--configs", default="1,2,3,4,5")
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args()
    from kcgym.registry import task_for
    from kcgym.tasks import manifest

    configs = [1] if args.quick else [int(c) for c in args.configs.split(",")]
    names = args.tasks.split(",") if args.tasks else list(manifest.tasks_on("CPU"))
    rows = []
    for name in names:
        task = task_for("CPU", name)
        for c in configs:
            row = measure(task, task.config("CPU", c))
            rows.append(row)
            speed = f" expert {row['cycles'] / row['expert_cycles']:.2f}x" if row.get("expert_cycles") else ""
            print(f"{name:10s} C{c} gcc {row['cycles']:>8,} cycles ({row['instructions']:,} instr, correct="
                  f"{row['correct']}){speed} sol {row['sol_cycles']:,} {row['seconds']}s", flush=True)
    if args.quick:
        return
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
