"""VLIW baseline before and after the compiler's -O2 back end, on every task and config.

For each (task, config): the template kernel as the templates write it (``old``: one operation per bundle,
no unrolling) and the compiler's kernel (``new``: :mod:`kcgym.sims.vliw.compiler.optimize`), each run on one
input set and checked against the task's reference at its tolerance; simulated cycles, bundles executed,
program size, and the wall time of each run. A run whose kernel needs more than ``--skip-over`` seconds is
recorded as skipped (``old_s`` / ``new_s`` say what was spent before the skip was decided: the estimate comes
from the previous config of the task). The results file is benchmarks/results/vliw_baseline.jsonl.

    PYTHONPATH=. python benchmarks/bench_vliw_baseline.py                  # every task, C1..C5
    PYTHONPATH=. python benchmarks/bench_vliw_baseline.py --quick          # C1 of every task
    PYTHONPATH=. python benchmarks/bench_vliw_baseline.py --tasks relu,mha --configs 1,2 --jsonl out.jsonl

The README's table is :func:`readme_table` of the results file (``python benchmarks/readme_tables.py --write``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from kcgym.sims.vliw import ACCELERATOR
from kcgym.sims.vliw.compiler import compile_task, template_kernel
from kcgym.tasks import TASKS
from kcgym.tasks.compare import compare_outputs

RESULTS = Path(__file__).resolve().parent / "results" / "vliw_baseline.jsonl"
MAX_STEPS = 50_000_000
SKIP_OVER_S = 120.0  # a single run expected to take longer than this is skipped (the brief's budget)


def run(source: str, name: str, index: int) -> dict:
    """Cycles, bundles executed, program bundles, correctness and wall time of one kernel."""
    hw = ACCELERATOR.make_hw()
    task = TASKS[name]
    cfg = task.config("VLIW", index)
    inputs = task.generate_inputs(cfg, np.random.default_rng([0, 0, index]))
    program = ACCELERATOR.assemble(source, hw)
    t0 = time.perf_counter()
    (res,) = ACCELERATOR.run(program, task, cfg, hw, [inputs], MAX_STEPS)
    wall = time.perf_counter() - t0
    correct = res.fault is None and all(c.correct for c in compare_outputs(
        res.outputs, task.reference(cfg, inputs), task.tolerance))
    return {"cycles": res.cycles, "bundles": res.instructions, "size": program.length, "correct": correct,
            "fault": None if res.fault is None else res.fault.name, "s": wall}


def measure(name: str, index: int, estimate_s: dict[str, float], skip_over: float) -> dict:
    hw = ACCELERATOR.make_hw()
    task = TASKS[name]
    cfg = task.config("VLIW", index)
    layout = ACCELERATOR.kernel_layout(task, cfg, hw)
    row: dict = {"task": name, "config": index}
    for which, build in (("old", template_kernel), ("new", compile_task)):
        if estimate_s.get(which, 0.0) > skip_over:
            row[which] = {"skipped": f"estimated over {skip_over:.0f} s"}
            continue
        r = run(build(task, cfg, hw, layout), name, index)
        row[which] = r
    if "cycles" in row["old"] and "cycles" in row["new"]:
        row["speedup"] = row["old"]["cycles"] / row["new"]["cycles"]
    sol = ACCELERATOR.speed_of_light(task, cfg, hw) if hasattr(ACCELERATOR, "speed_of_light") else None
    if sol is not None:
        row["sol"] = sol.cycles
    return row


def load(path: Path = RESULTS) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _cell(r: dict | None) -> str:
    if r is None:
        return "—"
    old, new = r["old"], r["new"]
    if "cycles" not in new:
        return "skipped"
    mark = "" if new["correct"] else " (WRONG)"
    if "cycles" not in old:
        return f"{new['cycles']:,} (old skipped){mark}"
    return f"{old['cycles']:,} → {new['cycles']:,} ({r['speedup']:.2f}x){mark}"


def readme_table(rows: list[dict]) -> str:
    """Old -> new compiler cycles per task and config, and the geometric-mean gain."""
    by = {(r["task"], r["config"]): r for r in rows}
    tasks = list(dict.fromkeys(r["task"] for r in rows))
    configs = sorted({r["config"] for r in rows})
    out = ["| task | " + " | ".join(f"C{i}" for i in configs) + " |", "|---|" + "---|" * len(configs)]
    for name in tasks:
        out.append(f"| {name} | " + " | ".join(_cell(by.get((name, i))) for i in configs) + " |")
    gains = [r["speedup"] for r in rows if "speedup" in r]
    wrong = [f"{r['task']} C{r['config']}" for r in rows if "cycles" in r["new"] and not r["new"]["correct"]]
    skipped = sum(1 for r in rows for k in ("old", "new") if "skipped" in r[k])
    out += ["", f"{len(gains)} task-configs measured old and new: the -O2 back end's cycle gain is "
            f"{min(gains):.2f}x to {max(gains):.2f}x, geometric mean {float(np.exp(np.mean(np.log(gains)))):.2f}x; "
            f"{skipped} run(s) skipped (over {SKIP_OVER_S:.0f} s); "
            + (f"WRONG results: {', '.join(wrong)}." if wrong else "every new kernel correct.")]
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", default=",".join(n for n, t in TASKS.items() if ACCELERATOR.supports(t)))
    ap.add_argument("--configs", default="1,2,3,4,5")
    ap.add_argument("--quick", action="store_true", help="C1 only")
    ap.add_argument("--skip-over", type=float, default=SKIP_OVER_S)
    ap.add_argument("--jsonl", default=None, help="append one JSON line per (task, config)")
    args = ap.parse_args()
    configs = [1] if args.quick else [int(c) for c in args.configs.split(",")]
    for name in args.tasks.split(","):
        estimate: dict[str, float] = {}
        previous: dict | None = None
        for index in configs:
            if previous is not None:  # work grows with the config: scale the last wall time by the work ratio
                task = TASKS[name]
                ratio = task.macs(task.config("VLIW", index)) / max(task.macs(task.config("VLIW", index - 1)), 1)
                estimate = {k: previous[k]["s"] * max(ratio, 1.0) for k in ("old", "new") if "s" in previous[k]}
            row = measure(name, index, estimate, args.skip_over)
            previous = row
            print(json.dumps(row), flush=True)
            if args.jsonl:
                with open(args.jsonl, "a", encoding="utf-8") as f:
                    f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
