"""VLIW benchmark: compiler and expert kernels on every task and config.

For each (task, config): the compiler kernel's simulated cycles, bundles executed and
vector-slot utilisation; the expert kernel's cycles, utilisation and speedup over the
compiler (where an expert exists); the roofline bound; and the wall time of one
``simulate`` of the compiler kernel (cold = first call in this process, including
tracing/compilation or a persistent-cache hit; warm = median of repeats).

    PYTHONPATH=. python benchmarks/bench_vliw.py [--tasks a,b] [--configs 1,5] [--repeats 2] [--jsonl out.jsonl]
    PYTHONPATH=. python benchmarks/bench_vliw.py --table out.jsonl     # all rows as Markdown

The README's two VLIW tables are :func:`readme_speedups` and :func:`readme_compiler` of
``benchmarks/results/vliw.jsonl`` (``python benchmarks/readme_tables.py --write``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

from kcgym.sims.vliw import ACCELERATOR
from kcgym.tasks import TASKS

RESULTS = str(Path(__file__).resolve().parent / "results" / "vliw.jsonl")


def measure(name: str, index: int, repeats: int) -> dict:
    hw = ACCELERATOR.make_hw()
    task = TASKS[name]
    cfg = task.config("VLIW", index)
    rng_inputs = [task.generate_inputs(cfg, np.random.default_rng([0, 0, index]))]
    program = ACCELERATOR.assemble(ACCELERATOR.compile(task, cfg, hw), hw)
    t0 = time.perf_counter()
    (base,) = ACCELERATOR.run(program, task, cfg, hw, rng_inputs, 50_000_000)
    cold = time.perf_counter() - t0
    warm = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        ACCELERATOR.run(program, task, cfg, hw, rng_inputs, 50_000_000)
        warm.append(time.perf_counter() - t0)
    row = {
        "task": name, "config": index, "cycles": base.cycles, "bundles": base.instructions,
        "vec_util": base.unit_busy["VECTOR"] / base.cycles, "roofline": ACCELERATOR.roofline_cycles(task, cfg, hw),
        "cold_s": cold, "warm_s": statistics.median(warm) if warm else None, "fault": str(base.fault),
    }
    src = ACCELERATOR.expert(task, cfg, hw)
    if src is not None:
        (exp,) = ACCELERATOR.run(ACCELERATOR.assemble(src, hw), task, cfg, hw, rng_inputs, 50_000_000)
        row.update(expert_cycles=exp.cycles, expert_vec_util=exp.unit_busy["VECTOR"] / exp.cycles,
                   speedup=base.cycles / exp.cycles, expert_fault=str(exp.fault))
    return row


def table(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    by = {(r["task"], r["config"]): r for r in rows}
    tasks = list(dict.fromkeys(r["task"] for r in rows))
    out = ["| task | " + " | ".join(f"C{i}" for i in range(1, 6)) + " |", "|---|" + "---|" * 5]
    for name in tasks:
        cells = []
        for i in range(1, 6):
            r = by.get((name, i))
            if r is None or "speedup" not in r:
                cells.append("—")
            else:
                cells.append(f"{r['speedup']:.2f} ({r['expert_cycles']} vs {r['cycles']}, "
                             f"vec {r['expert_vec_util']:.0%})")
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    out += ["", "| task | cfg | cycles | bundles | roofline | vec util | cold s | warm s |",
            "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        warm = f"{r['warm_s']:.3f}" if r["warm_s"] is not None else "—"
        out.append(f"| {r['task']} | C{r['config']} | {r['cycles']} | {r['bundles']} | {r['roofline']} | "
                   f"{r['vec_util']:.0%} | {r['cold_s']:.2f} | {warm} |")
    return "\n".join(out)


def load(path: str = RESULTS) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def readme_speedups(rows: list[dict]) -> str:
    """The README's expert table: speedup per task with an expert and config, and the tasks without one."""
    by = {(r["task"], r["config"]): r for r in rows}
    tasks = list(dict.fromkeys(r["task"] for r in rows))
    with_expert = [t for t in tasks if any("speedup" in r for r in rows if r["task"] == t)]
    out = ["| task | " + " | ".join(f"C{i}" for i in range(1, 6)) + " |", "|---|" + "---|" * 5]
    for name in with_expert:
        cells = []
        for i in range(1, 6):
            r = by.get((name, i))
            cells.append("—" if r is None or "speedup" not in r else
                         f"{r['speedup']:.2f} ({r['expert_cycles']} vs {r['cycles']}, vec {r['expert_vec_util']:.0%})")
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    missing = [t for t in tasks if t not in with_expert]
    out += ["", f"Expert kernels exist for {len(with_expert)} of the {len(tasks)} tasks; "
            + ", ".join(f"`{t}`" for t in missing) + " have none yet."]
    return "\n".join(out)


def readme_compiler(rows: list[dict]) -> str:
    """The README's compiler table: C1 and C5 rows (the rest stay in the results file)."""
    out = ["| task | cfg | cycles | bundles | roofline | vec util | cold s | warm s |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["config"] in (1, 5):
            warm = f"{r['warm_s']:.2f}" if r["warm_s"] is not None else "—"
            out.append(f"| {r['task']} | C{r['config']} | {r['cycles']} | {r['bundles']} | {r['roofline']} | "
                       f"{r['vec_util']:.0%} | {r['cold_s']:.2f} | {warm} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", default=",".join(n for n, t in TASKS.items() if ACCELERATOR.supports(t)))
    ap.add_argument("--configs", default="1,2,3,4,5")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--jsonl", default=None, help="append one JSON line per measurement")
    ap.add_argument("--table", default=None, help="render a JSONL file as Markdown and exit")
    args = ap.parse_args()
    if args.table:
        print(table(args.table))
        return
    for name in args.tasks.split(","):
        for index in (int(c) for c in args.configs.split(",")):
            row = measure(name, index, args.repeats)
            print(json.dumps(row), flush=True)
            if args.jsonl:
                with open(args.jsonl, "a", encoding="utf-8") as f:
                    f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
