"""RVV simulator benchmark: compiler kernels on every task and config, and the expert speedups.

Prints, per (task, config): simulated cycles, roofline bound, dynamic instructions, wall time of
one ``simulate`` (cold = first call in this process, including tracing/compilation or a
persistent-cache hit; warm = median of repeats) and simulator instructions per second; then,
with ``--experts``, a Markdown table of expert speedups (compiler cycles / expert cycles).

    python benchmarks/bench_rvv.py [--tasks a,b] [--configs 1,5] [--repeats 3] [--experts]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from kcgym.sims.rvv import ACCELERATOR
from kcgym.tasks import tasks_for

EXPERT_TASKS = ("gemv", "matmul", "conv2d", "depthwise_conv")


def _run(source: str, task, cfg, hw, inputs):
    program = ACCELERATOR.assemble(source, hw)
    t0 = time.perf_counter()
    (res,) = ACCELERATOR.run(program, task, cfg, hw, inputs, 50_000_000)
    return res, time.perf_counter() - t0, program


def main() -> None:
    tasks = tasks_for("int8")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", default=",".join(tasks))
    ap.add_argument("--configs", default="1,2,3,4,5")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--experts", action="store_true", help="also print the expert speedup table")
    args = ap.parse_args()
    hw = ACCELERATOR.make_hw()
    configs = [int(c) for c in args.configs.split(",")]
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
    if not args.experts:
        return
    print("\n| task | " + " | ".join(f"C{i}" for i in configs) + " |\n|---|" + "---|" * len(configs))
    for name in EXPERT_TASKS:
        task = tasks[name]
        cells = []
        for index in configs:
            cfg = task.config("RVV", index)
            inputs = [task.generate_inputs(cfg, np.random.default_rng(0))]
            base, _, _ = _run(ACCELERATOR.compile(task, cfg, hw), task, cfg, hw, inputs)
            fast, _, _ = _run(ACCELERATOR.expert(task, cfg, hw), task, cfg, hw, inputs)
            cells.append(f"{base.cycles / fast.cycles:.2f} ({fast.cycles} vs {base.cycles})")
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
