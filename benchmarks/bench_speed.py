"""Simulator speed, old (the interpreter, ``KCGYM_SIM=oracle``) and new (trace-ahead) side by side.

Per machine with a trace-ahead path (NPU), per compiler kernel and config: dynamic instructions,
the first ``simulate`` of the kernel in this process (new: pre-pass + schedule + data path, plus a
compile where its shape bucket is new), the warm ``simulate`` (median of repeats: the trace is cached
per program, so this is the data path alone), its CPU seconds and instructions per second, and
whether old and new agree (cycles and outputs). Then a fresh process per path with an empty JAX
persistent cache times its first ``simulate`` (the cold start a user sees).

Rows go to ``benchmarks/results/speed.jsonl`` (one JSON object per line); ``--table`` prints the
README's Markdown table from that file.

    PYTHONPATH=. python benchmarks/bench_speed.py --quick      # C1 and C3 on five tasks (minutes)
    PYTHONPATH=. python benchmarks/bench_speed.py              # every NPU task at C1, C3, C5
    PYTHONPATH=. python benchmarks/bench_speed.py --table      # Markdown from the results file
    PYTHONPATH=. python benchmarks/bench_speed.py --tasks batch_matmul --configs 5 --append --no-cold
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).parent / "results" / "speed.jsonl"
QUICK_TASKS = ("softmax", "matmul", "conv2d", "gqa", "decoder_llama")
QUICK_CONFIGS = (1, 3)
FULL_CONFIGS = (1, 3, 5)
COLD_KERNELS = (("matmul", 1), ("decoder_llama", 3))  # (task, config) timed in a fresh process
MAX_STEPS = 50_000_000


def _accelerator(machine: str):
    if machine == "NPU":
        from kcgym.sims.npu import ACCELERATOR
    else:
        raise ValueError(machine)
    return ACCELERATOR


def _setup(machine: str, name: str, index: int):
    from kcgym.evaluation import Evaluator
    from kcgym.tasks import TASKS

    acc = _accelerator(machine)
    hw = acc.make_hw()
    task = TASKS[name]
    cfg = task.config(machine, index)
    program = acc.assemble(acc.compile(task, cfg, hw), hw)
    inputs = Evaluator(acc, task, cfg, hw).input_sets(0, 1)
    return acc, task, cfg, hw, program, inputs


def _simulate(acc, task, cfg, hw, program, inputs, oracle: bool):
    if oracle:
        os.environ["KCGYM_SIM"] = "oracle"
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        (res,) = acc.run(program, task, cfg, hw, inputs, MAX_STEPS)
        return res, time.perf_counter() - t0, time.process_time() - c0
    finally:
        os.environ.pop("KCGYM_SIM", None)


def measure(machine: str, name: str, index: int, repeats: int) -> dict:
    acc, task, cfg, hw, program, inputs = _setup(machine, name, index)
    row: dict = {"machine": machine, "task": name, "config": index}
    results = {}
    for path, oracle in (("old", True), ("new", False)):
        res, first, _ = _simulate(acc, task, cfg, hw, program, inputs, oracle)
        walls, cpus = [], []
        for _ in range(repeats):
            _, w, c = _simulate(acc, task, cfg, hw, program, inputs, oracle)
            walls.append(w)
            cpus.append(c)
        wall, cpu = statistics.median(walls), statistics.median(cpus)
        results[path] = res
        row.update({f"{path}_first_s": first, f"{path}_warm_s": wall, f"{path}_warm_cpu_s": cpu,
                    f"{path}_instr_per_s": res.instructions / wall, f"{path}_instr_per_cpu_s": res.instructions / cpu})
    old, new = results["old"], results["new"]
    row["instructions"] = old.instructions
    row["cycles"] = old.cycles
    row["identical"] = bool(old.cycles == new.cycles and old.instructions == new.instructions and all(
        np.array_equal(np.asarray(old.outputs[k]).view(np.uint32), np.asarray(new.outputs[k]).view(np.uint32))
        for k in old.outputs))
    return row


def cold_process(machine: str, name: str, index: int, oracle: bool) -> float:
    """Seconds of the first simulate in a fresh process whose JAX persistent cache is empty."""
    code = (f"import sys, time; sys.path.insert(0, {str(Path(__file__).parent)!r}); import bench_speed as b; "
            f"s = b._setup({machine!r}, {name!r}, {index}); t0 = time.perf_counter(); "
            f"b._simulate(*s, oracle={oracle}); print(time.perf_counter() - t0)")
    with tempfile.TemporaryDirectory() as cache:
        env = {k: v for k, v in os.environ.items() if k not in ("JAX_COMPILATION_CACHE_DIR", "KCGYM_SIM")}
        env["KCGYM_CACHE_DIR"] = cache
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def table(path: Path = RESULTS) -> str:
    return readme_table([json.loads(line) for line in path.read_text().splitlines() if line.strip()])


def readme_table(rows: list[dict]) -> str:
    """The README's speed tables from the results rows (``benchmarks/readme_tables.py`` calls it)."""
    kernels = [r for r in rows if r.get("kind", "kernel") == "kernel"]
    colds = [r for r in rows if r.get("kind") == "cold_process"]
    out = ["| machine | task | config | instructions | old warm s | new warm s | new first s | old instr/s | "
           "new instr/s | speedup | identical |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in kernels:
        out.append(f"| {r['machine']} | {r['task']} | C{r['config']} | {r['instructions']} | {r['old_warm_s']:.3f} | "
                   f"{r['new_warm_s']:.3f} | {r['new_first_s']:.2f} | {r['old_instr_per_s']:.3g} | "
                   f"{r['new_instr_per_s']:.3g} | {r['old_warm_s'] / r['new_warm_s']:.1f}x | "
                   f"{'yes' if r['identical'] else 'NO'} |")
    if colds:
        out += ["", "| machine | task | config | first simulate in a fresh process, empty JAX cache: old s | new s |",
                "|---|---|---|---|---|"]
        out += [f"| {r['machine']} | {r['task']} | C{r['config']} | {r['old_s']:.2f} | {r['new_s']:.2f} |"
                for r in colds]
    runs = dict.fromkeys((r.get("date", ""), r.get("command", "")) for r in rows)
    return "\n".join(out) + "".join(f"\n\n(measured {d}: `{c}`)" for d, c in runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help=f"tasks {','.join(QUICK_TASKS)} at C1 and C3")
    ap.add_argument("--tasks", default=None, help="comma-separated task names (default: all, or --quick's)")
    ap.add_argument("--configs", default=None, help="e.g. 1,3,5")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--append", action="store_true", help="add the rows to --out instead of replacing it")
    ap.add_argument("--no-cold", action="store_true", help="skip the fresh-process cold starts")
    ap.add_argument("--table", action="store_true", help="print the Markdown table of --out and exit")
    args = ap.parse_args()
    if args.table:
        print(table(args.out))
        return
    from kcgym.tasks import TASKS

    acc = _accelerator("NPU")
    tasks = args.tasks.split(",") if args.tasks else (
        list(QUICK_TASKS) if args.quick else [n for n, t in TASKS.items() if acc.supports(t)])
    configs = [int(c) for c in args.configs.split(",")] if args.configs else list(
        QUICK_CONFIGS if args.quick else FULL_CONFIGS)
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "command": "python benchmarks/bench_speed.py " + " ".join(sys.argv[1:])}
    rows = []
    for index in configs:
        for name in tasks:
            row = {"kind": "kernel", **measure("NPU", name, index, args.repeats), **meta}
            rows.append(row)
            print(f"NPU {name:15s} C{index} {row['instructions']:9d} instr  old {row['old_warm_s']:7.3f}s "
                  f"new {row['new_warm_s']:7.3f}s (first {row['new_first_s']:6.2f}s)  "
                  f"new {row['new_instr_per_s']:10.3g} instr/s  identical={row['identical']}", flush=True)
    for name, index in () if args.no_cold else COLD_KERNELS:
        row = {"kind": "cold_process", "machine": "NPU", "task": name, "config": index,
               "old_s": cold_process("NPU", name, index, True), "new_s": cold_process("NPU", name, index, False),
               **meta}
        rows.append(row)
        print(f"cold process NPU {name} C{index}: old {row['old_s']:.2f}s new {row['new_s']:.2f}s", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    old = args.out.read_text() if args.append and args.out.exists() else ""
    args.out.write_text(old + "".join(json.dumps(r) + "\n" for r in rows))
    print()
    print(table(args.out))


if __name__ == "__main__":
    main()
