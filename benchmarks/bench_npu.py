"""NPU simulator benchmark: compiler kernels on every task and config.

Prints, per (task, config): simulated cycles, dynamic instructions, wall time of one
``simulate`` (cold = first call in this process, including tracing/compilation or a
persistent-cache hit; warm = median of repeats), the warm run's CPU time (the interpreter is
one thread: on a shared, loaded machine CPU time is what the wall time would be alone), and
simulator instructions per second of wall time.

    python benchmarks/bench_npu.py [--tasks a,b] [--configs 1,5] [--repeats 3] [--inputs 1] [--jsonl FILE]

The README's two NPU compiler tables are :func:`readme_table` and :func:`readme_composites` of
``benchmarks/results/npu.jsonl`` (``--configs 1,5 --jsonl benchmarks/results/npu.jsonl``, then
``python benchmarks/readme_tables.py --write``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from kcgym.evaluation import Evaluator
from kcgym.sims.npu import ACCELERATOR
from kcgym.tasks import TASKS

RESULTS = Path(__file__).resolve().parent / "results" / "npu.jsonl"
COMPOSITES = ("rope", "ffn", "swiglu", "sdpa", "flash_attention", "mha", "gqa", "mqa", "decoder_llama", "decoder_t5")


def load(path: Path = RESULTS) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _when(rows: list[dict]) -> str:
    return (f"measured {rows[0]['date']} on {rows[0]['cpus']} shared cores, load {min(r['load'] for r in rows)}-"
            f"{max(r['load'] for r in rows)}")


def readme_table(rows: list[dict]) -> str:
    """The README's table of the single-operator compiler kernels at C1 and C5 (warm wall seconds)."""
    by = {(r["task"], r["config"]): r for r in rows}
    out = ["| task | C1 cycles | C1 dyn. instr | C1 warm s | C5 cycles | C5 roofline | C5 dyn. instr | C5 warm s |",
           "|---|---|---|---|---|---|---|---|"]
    tasks = [t for t in dict.fromkeys(r["task"] for r in rows) if t not in COMPOSITES]
    for t in tasks:
        a, b = by[(t, 1)], by[(t, 5)]
        out.append(f"| {t} | {a['cycles']} | {a['instructions']} | {a['warm_s']:.3f} | {b['cycles']} | "
                   f"{b['roofline']} | {b['instructions']} | {b['warm_s']:.3f} |")
    return "\n".join(out + ["", f"({_when([r for r in rows if r['task'] in tasks])}.)"])


def readme_composites(rows: list[dict]) -> str:
    """The README's table of the composite compiler kernels (C5 cold, warm and CPU seconds)."""
    by = {(r["task"], r["config"]): r for r in rows}
    out = ["| task | C1 cycles | C1 dyn. instr | C5 cycles | C5 roofline | C5 dyn. instr | C5 cold s | C5 warm s | "
           "C5 cpu s |", "|---|---|---|---|---|---|---|---|---|"]
    tasks = [t for t in dict.fromkeys(r["task"] for r in rows) if t in COMPOSITES]
    for t in tasks:
        a, b = by[(t, 1)], by[(t, 5)]
        out.append(f"| {t} | {a['cycles']} | {a['instructions']} | {b['cycles']} | {b['roofline']} | "
                   f"{b['instructions']} | {b['cold_s']:.2f} | {b['warm_s']:.3f} | {b['cpu_s']:.3f} |")
    return "\n".join(out + ["", f"({_when([r for r in rows if r['task'] in tasks])}.)"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", default=",".join(n for n, t in TASKS.items() if ACCELERATOR.supports(t)))
    ap.add_argument("--configs", default="1,2,3,4,5")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--inputs", type=int, default=1, help="input sets per simulate (1 = the simulate tool)")
    ap.add_argument("--jsonl", default=None, help="write one JSON line per (task, config) here")
    args = ap.parse_args()
    hw = ACCELERATOR.make_hw()
    rows: list[dict] = []
    print(f"{'task':15s} {'cfg':3s} {'cycles':>9s} {'roofline':>9s} {'dyn.instr':>9s} {'cold s':>7s} "
          f"{'warm s':>7s} {'cpu s':>7s} {'instr/s':>9s}")
    for name in args.tasks.split(","):
        task = TASKS[name]
        for index in (int(c) for c in args.configs.split(",")):
            cfg = task.config("NPU", index)
            ev = Evaluator(ACCELERATOR, task, cfg, hw)
            src = ACCELERATOR.compile(task, cfg, hw)
            program = ACCELERATOR.assemble(src, hw)
            inputs = ev.input_sets(0, args.inputs)
            t0 = time.perf_counter()
            (res, *_) = ACCELERATOR.run(program, task, cfg, hw, inputs, 50_000_000)
            cold = time.perf_counter() - t0
            warm, cpu = [], []
            for _ in range(args.repeats):
                t0, c0 = time.perf_counter(), time.process_time()
                ACCELERATOR.run(program, task, cfg, hw, inputs, 50_000_000)
                warm.append(time.perf_counter() - t0)
                cpu.append(time.process_time() - c0)
            w = statistics.median(warm)
            roof = ACCELERATOR.roofline_cycles(task, cfg, hw)
            print(f"{name:15s} C{index:<2d} {res.cycles:9d} {roof:9d} {res.instructions:9d} {cold:7.2f} {w:7.3f} "
                  f"{statistics.median(cpu):7.3f} "
                  f"{res.instructions / w:9.0f}", flush=True)
            rows.append({"task": name, "config": index, "cycles": res.cycles, "roofline": roof,
                         "instructions": res.instructions, "cold_s": round(cold, 3), "warm_s": round(w, 4),
                         "cpu_s": round(statistics.median(cpu), 4), "inputs": args.inputs, "repeats": args.repeats,
                         "cpus": os.cpu_count(), "load": round(os.getloadavg()[0], 1),
                         "date": time.strftime("%Y-%m-%d")})
            if args.jsonl:  # after every row, so an interrupted run keeps what it measured
                Path(args.jsonl).write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))


if __name__ == "__main__":
    main()
