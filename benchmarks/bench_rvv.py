"""RVV simulator benchmark: compiler kernels on every task and config, and the expert speedups.

Prints, per (task, config): simulated cycles, roofline bound, dynamic instructions, wall time of
one ``simulate`` (cold = first call in this process, including tracing/compilation or a
persistent-cache hit; warm = median of repeats) and simulator instructions per second; then,
with ``--experts``, a Markdown table of expert speedups (compiler cycles / expert cycles).

    python benchmarks/bench_rvv.py [--tasks a,b] [--configs 1,5] [--repeats 3] [--experts]
    python benchmarks/bench_rvv.py --experts-only     # the expert table alone, into results/rvv_experts.jsonl
    python benchmarks/bench_rvv.py --configs 1,5 --repeats 1 --jsonl benchmarks/results/rvv.jsonl

The README's compiler table is :func:`readme_table` of ``benchmarks/results/rvv.jsonl``, its expert table
:func:`render_experts` of ``benchmarks/results/rvv_experts.jsonl``
(``python benchmarks/readme_tables.py --write``); cycle counts are deterministic.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np

from kcgym.sims.rvv import ACCELERATOR
from kcgym.tasks import tasks_for

EXPERT_TASKS = ("gemv", "matmul", "conv2d", "depthwise_conv")
EXPERT_RESULTS = Path(__file__).resolve().parent / "results" / "rvv_experts.jsonl"


def _run(source: str, task, cfg, hw, inputs):
    program = ACCELERATOR.assemble(source, hw)
    t0 = time.perf_counter()
    (res,) = ACCELERATOR.run(program, task, cfg, hw, inputs, 50_000_000)
    return res, time.perf_counter() - t0, program


def expert_rows(configs: list[int]) -> list[dict]:
    """Compiler and expert cycles per expert task and config, on one input set (seed 0)."""
    tasks = tasks_for("int8")
    hw = ACCELERATOR.make_hw()
    rows = []
    for name in EXPERT_TASKS:
        task = tasks[name]
        for index in configs:
            cfg = task.config("RVV", index)
            inputs = [task.generate_inputs(cfg, np.random.default_rng(0))]
            base, _, _ = _run(ACCELERATOR.compile(task, cfg, hw), task, cfg, hw, inputs)
            fast, _, _ = _run(ACCELERATOR.expert(task, cfg, hw), task, cfg, hw, inputs)
            rows.append({"task": name, "config": index, "compiler_cycles": base.cycles, "expert_cycles": fast.cycles})
            print(json.dumps(rows[-1]), flush=True)
    return rows


def render_experts(rows: list[dict]) -> str:
    """The README's expert table: speedup (expert vs compiler cycles) per task and config."""
    configs = sorted({r["config"] for r in rows})
    out = ["| task | " + " | ".join(f"C{i}" for i in configs) + " |", "|---|" + "---|" * len(configs)]
    for name in dict.fromkeys(r["task"] for r in rows):
        by = {r["config"]: r for r in rows if r["task"] == name}
        cells = [f"{by[i]['compiler_cycles'] / by[i]['expert_cycles']:.2f} ({by[i]['expert_cycles']} vs "
                 f"{by[i]['compiler_cycles']})" for i in configs]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def readme_table(rows: list[dict]) -> str:
    """The README's compiler table: C1 and C5 cycles, instructions and cold / warm wall seconds."""
    by = {(r["task"], r["config"]): r for r in rows}
    out = ["| task | C1 cycles | C1 dyn. instr | C1 cold / warm s | C5 cycles | C5 roofline | C5 dyn. instr | "
           "C5 cold / warm s |", "|---|---|---|---|---|---|---|---|"]
    for t in dict.fromkeys(r["task"] for r in rows):
        a, b = by[(t, 1)], by[(t, 5)]
        out.append(f"| {t} | {a['cycles']} | {a['instructions']} | {a['cold_s']:.2f} / {a['warm_s']:.3f} | "
                   f"{b['cycles']} | {b['roofline']} | {b['instructions']} | {b['cold_s']:.2f} / {b['warm_s']:.3f} |")
    loads = [r["load"] for r in rows]
    rates = [r["instructions"] / r["warm_s"] for r in rows if r["warm_s"] > 0]
    return "\n".join(out + ["", f"(measured {rows[0]['date']} on {rows[0]['cpus']} shared cores, load "
                                 f"{min(loads)}-{max(loads)}; warm, the interpreter ran {min(rates):.1e} to "
                                 f"{max(rates):.1e} RVV instructions per second.)"])


def load(path: Path = EXPERT_RESULTS) -> list[dict]:
    """The rows of a results file this script wrote (rvv_experts.jsonl by default, or rvv.jsonl)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main() -> None:
    tasks = tasks_for("int8")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", default=",".join(tasks))
    ap.add_argument("--configs", default="1,2,3,4,5")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--experts", action="store_true", help="also print the expert speedup table")
    ap.add_argument("--experts-only", action="store_true", help="only the expert table, written to --out")
    ap.add_argument("--out", default=str(EXPERT_RESULTS))
    ap.add_argument("--jsonl", default=None, help="write one JSON line per (task, config) of the compiler table")
    args = ap.parse_args()
    if args.experts_only:
        rows = expert_rows([int(c) for c in args.configs.split(",")])
        Path(args.out).write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
        print(render_experts(rows))
        return
    hw = ACCELERATOR.make_hw()
    configs = [int(c) for c in args.configs.split(",")]
    rows: list[dict] = []
    print(f"{'task':15s} {'cfg':3s} {'cycles':>9s} {'roofline':>9s} {'dyn.instr':>9s} {'cold s':>7s} "
          f"{'warm s':>7s} {'instr/s':>9s}")
    for name in args.tasks.split(","):
        task = tasks[name]
        for index in configs:
            cfg = task.config("RVV", index)
            inputs = [task.generate_inputs(cfg, np.random.default_rng(0))]
            res, cold, program = _run(ACCELERATOR.compile(task, cfg, hw), task, cfg, hw, inputs)
            warm = []
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                ACCELERATOR.run(program, task, cfg, hw, inputs, 50_000_000)
                warm.append(time.perf_counter() - t0)
            w = statistics.median(warm)
            roof = ACCELERATOR.roofline_cycles(task, cfg, hw)
            print(f"{name:15s} C{index:<2d} {res.cycles:9d} {roof:9d} {res.instructions:9d} {cold:7.2f} {w:7.3f} "
                  f"{res.instructions / w:9.0f}", flush=True)
            rows.append({"task": name, "config": index, "cycles": res.cycles, "roofline": roof,
                         "instructions": res.instructions, "cold_s": round(cold, 3), "warm_s": round(w, 4),
                         "cpus": os.cpu_count(), "load": round(os.getloadavg()[0], 1),
                         "date": time.strftime("%Y-%m-%d")})
            if args.jsonl:  # after every row, so an interrupted run keeps what it measured
                Path(args.jsonl).write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    if not args.experts:
        return
    print()
    print(render_experts(expert_rows(configs)))


if __name__ == "__main__":
    main()
