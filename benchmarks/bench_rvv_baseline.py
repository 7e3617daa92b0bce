"""The RVV baseline before and after: template-compiler cycles against clang-14 -O2 of the C kernels.

Per (task, config): both kernels' simulated cycles and dynamic instructions on one input set (seed 0),
and whether clang's kernel is exact on it and on every stress set of the task (seed 1). Deterministic.

    python benchmarks/bench_rvv_baseline.py --quick       # C1 of every task (a smoke run, not written)
    python benchmarks/bench_rvv_baseline.py --jsonl benchmarks/results/rvv_baseline.jsonl   # all configs

The README's table is :func:`readme_table` of ``benchmarks/results/rvv_baseline.jsonl``
(``python benchmarks/readme_tables.py --write``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from kcgym.sims.rvv import ACCELERATOR, compiler
from kcgym.tasks import tasks_for

RESULTS = Path(__file__).resolve().parent / "results" / "rvv_baseline.jsonl"
MAX_STEPS = 50_000_000


def input_sets(task, cfg) -> list[dict[str, np.ndarray]]:
    """The default draw (seed 0) and each stress set's redraw of it (seed 1)."""
    base = task.generate_inputs(cfg, np.random.default_rng(0))
    sets = [base]
    for stress in getattr(task, "stress_sets", ()):
        rng = np.random.default_rng(1)
        sets.append({k: (stress.transforms[k](v, rng) if k in stress.transforms else v) for k, v in base.items()})
    return sets


def measure(name: str, index: int) -> dict:
    task = tasks_for("int8")[name]
    cfg = task.config("RVV", index)
    hw = ACCELERATOR.make_hw()
    layout = ACCELERATOR.kernel_layout(task, cfg, hw)
    sets = input_sets(task, cfg)
    row: dict = {"task": name, "config": index}
    for kind, source in (("template", compiler.compile_template(task, cfg, hw, layout)),
                         ("clang", compiler.compile_task(task, cfg, hw, layout))):
        results = ACCELERATOR.run(ACCELERATOR.assemble(source, hw), task, cfg, hw, sets, MAX_STEPS)
        exact = all(r.fault is None and all(np.array_equal(r.outputs[k], v) for k, v in task.reference(cfg, s).items())
                    for r, s in zip(results, sets, strict=True))
        row |= {f"{kind}_cycles": results[0].cycles, f"{kind}_instructions": results[0].instructions,
                f"{kind}_exact": exact}
    return row


def readme_table(rows: list[dict]) -> str:
    """Per task and config: clang cycles, template cycles and their ratio (< 1: clang's code is faster)."""
    configs = sorted({r["config"] for r in rows})
    out = ["| task | " + " | ".join(f"C{i} clang / template" for i in configs) + " |", "|---|" + "---|" * len(configs)]
    for name in dict.fromkeys(r["task"] for r in rows):
        by = {r["config"]: r for r in rows if r["task"] == name}
        cells = [f"{by[i]['clang_cycles']} / {by[i]['template_cycles']} "
                 f"({by[i]['clang_cycles'] / by[i]['template_cycles']:.2f})" for i in configs]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    exact = sum(r["clang_exact"] for r in rows)
    ratios = [r["clang_cycles"] / r["template_cycles"] for r in rows]
    out += ["", f"(clang's kernel exact on the default and stress sets in {exact} of {len(rows)} cells; "
                f"clang / template cycles {min(ratios):.2f}-{max(ratios):.2f}.)"]
    return "\n".join(out)


def load(path: Path = RESULTS) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main() -> None:
    tasks = tasks_for("int8")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", default=",".join(n for n, t in tasks.items() if ACCELERATOR.supports(t)))
    ap.add_argument("--configs", default="1,2,3,4,5")
    ap.add_argument("--quick", action="store_true", help="C1 only")
    ap.add_argument("--jsonl", default=None, help="write one JSON line per (task, config)")
    args = ap.parse_args()
    configs = [1] if args.quick else [int(c) for c in args.configs.split(",")]
    rows = []
    for name in args.tasks.split(","):
        for index in configs:
            rows.append(measure(name, index))
            print(json.dumps(rows[-1]), flush=True)
            if args.jsonl:  # after every row, so an interrupted run keeps what it measured
                Path(args.jsonl).write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    print(readme_table(rows))


if __name__ == "__main__":
    main()
