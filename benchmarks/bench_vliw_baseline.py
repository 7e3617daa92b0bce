"""VLIW baseline before and after the compiler's -O2 back end, on every task and config.

For each (task, config): the template kernel as the templates write it (``old``: one operation per bundle,
no unrolling) and the compiler's kernel (``new``: :mod:`kcgym.sims.vliw.compiler.optimize`), each run on one
input set and checked against the task's reference at its tolerance; simulated cycles, bundles executed,
program size, vector-slot busy cycles and the wall time of each run. A run expected to need more than
``--skip-over`` seconds (the previous config's wall time scaled by the growth in MACs) is recorded as skipped.

Simulating every config twice takes an hour on a shared 2-core box, so the configs outside ``--simulate``
can take their cycles from results files of ``bench_vliw.py`` (same input set, deterministic cycles):
``--old-from`` one measured before the back end existed (its compiler kernel is ``template_kernel``'s, the
same code), ``--new-from`` one measured with it. Such a side records ``"from"`` (the file) and no
correctness check (the conformance suite's slow tier checks those configs); at simulated configs a file's
cycles are compared with the simulation (``"agrees"``). The results file is benchmarks/results/vliw_baseline.jsonl.

    PYTHONPATH=. python benchmarks/bench_vliw_baseline.py                  # every task, C1..C5, all simulated
    PYTHONPATH=. python benchmarks/bench_vliw_baseline.py --quick          # C1 of every task
    PYTHONPATH=. python benchmarks/bench_vliw_baseline.py --simulate 1,2 --old-from OLD.jsonl --new-from NEW.jsonl

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
            "fault": None if res.fault is None else res.fault.name, "vec_busy": res.unit_busy["VECTOR"], "s": wall}


def _reused(rows: dict[tuple[str, int], dict] | None, path: str | None, name: str, index: int) -> dict | None:
    r = (rows or {}).get((name, index))
    if r is None:
        return None
    return {"cycles": r["cycles"], "bundles": r["bundles"], "correct": None, "fault": r.get("fault"),
            "vec_busy": round(r["vec_util"] * r["cycles"]), "from": Path(str(path)).name}


def measure(name: str, index: int, estimate_s: dict[str, float], skip_over: float, simulate: bool = True,
            files: dict[str, tuple[str | None, dict | None]] | None = None) -> dict:
    hw = ACCELERATOR.make_hw()
    task = TASKS[name]
    cfg = task.config("VLIW", index)
    layout = ACCELERATOR.kernel_layout(task, cfg, hw)
    row: dict = {"task": name, "config": index}
    for which, build in (("old", template_kernel), ("new", compile_task)):
        path, rows = (files or {}).get(which, (None, None))
        reused = _reused(rows, path, name, index)
        if not simulate and reused is not None:
            row[which] = reused
            continue
        if estimate_s.get(which, 0.0) > skip_over:
            row[which] = {"skipped": f"estimated over {skip_over:.0f} s"}
            continue
        r = run(build(task, cfg, hw, layout), name, index)
        if reused is not None:
            r["agrees"] = (r["cycles"], r["bundles"]) == (reused["cycles"], reused["bundles"])
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
    mark = " (WRONG)" if new["correct"] is False else ""
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
    wrong = [f"{r['task']} C{r['config']}" for r in rows if r["new"].get("correct") is False]
    checked = sum(1 for r in rows if r["new"].get("correct") is True)
    skipped = sum(1 for r in rows for k in ("old", "new") if "skipped" in r[k])
    files = sorted({r[k]["from"] for r in rows for k in ("old", "new") if "from" in r[k]})
    disagree = [f"{r['task']} C{r['config']}" for r in rows for k in ("old", "new") if r[k].get("agrees") is False]
    out += ["", f"{len(gains)} task-configs measured old and new: the -O2 back end's cycle gain is "
            f"{min(gains):.2f}x to {max(gains):.2f}x, geometric mean {float(np.exp(np.mean(np.log(gains)))):.2f}x; "
            f"{skipped} run(s) skipped (over {SKIP_OVER_S:.0f} s). {checked} new kernels simulated here and checked "
            "against the reference: " + (f"WRONG: {', '.join(wrong)}." if wrong else "all correct.")
            + (f" The other cycles come from {', '.join(files)} (bench_vliw.py, the same kernels; "
               + (f"DISAGREE at {', '.join(disagree)})." if disagree else "they agree with every simulated config).")
               if files else "")]
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", default=",".join(n for n, t in TASKS.items() if ACCELERATOR.supports(t)))
    ap.add_argument("--configs", default="1,2,3,4,5")
    ap.add_argument("--quick", action="store_true", help="C1 only")
    ap.add_argument("--skip-over", type=float, default=SKIP_OVER_S)
    ap.add_argument("--jsonl", default=None, help="append one JSON line per (task, config)")
    ap.add_argument("--simulate", default=None, help="configs to simulate (default: all); the rest from the files")
    ap.add_argument("--old-from", default=None, help="bench_vliw.py results measured before the back end")
    ap.add_argument("--new-from", default=None, help="bench_vliw.py results measured with the back end")
    args = ap.parse_args()
    configs = [1] if args.quick else [int(c) for c in args.configs.split(",")]
    simulate = set(configs) if args.simulate is None else {int(c) for c in args.simulate.split(",")}
    files = {which: (path, {(r["task"], r["config"]): r for r in load(Path(path))} if path else None)
             for which, path in (("old", args.old_from), ("new", args.new_from))}
    for name in args.tasks.split(","):
        estimate: dict[str, float] = {}
        previous: dict | None = None
        for index in configs:
            if previous is not None:  # work grows with the config: scale the last wall time by the work ratio
                task = TASKS[name]
                ratio = task.macs(task.config("VLIW", index)) / max(task.macs(task.config("VLIW", index - 1)), 1)
                estimate = {k: previous[k]["s"] * max(ratio, 1.0) for k in ("old", "new") if "s" in previous[k]}
                if index not in simulate:
                    estimate = {}
            row = measure(name, index, estimate, args.skip_over, index in simulate, files)
            previous = row
            print(json.dumps(row), flush=True)
            if args.jsonl:
                with open(args.jsonl, "a", encoding="utf-8") as f:
                    f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
