"""NPU expert kernels against the template compiler: cycles and speedup per task and config.

For every task with an expert kernel (``kcgym/sims/npu/expert``) and each of its five
configurations, simulates the compiler's kernel and the expert's on one input set: compiler
cycles, expert cycles, speedup, the expert's cycles over the roofline bound, and per task the
geometric mean of the speedups. Correctness is checked on the same inputs; an incorrect expert
is reported, not timed. Cycle counts are deterministic, so the results file changes only when a
kernel or the timing model does.

    python benchmarks/bench_npu_experts.py [--tasks a,b] [--seed 0] [--quick]

Writes one JSON line per (task, config) to ``benchmarks/results/npu_experts.jsonl`` (``--out``;
``--quick``: relu only, writes nothing) and prints the README's table (:func:`render`; the README's
copy is rewritten from the file by ``python benchmarks/readme_tables.py --write``).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "npu_experts.jsonl"


def measure(name: str, seed: int) -> list[dict]:
    from kcgym.evaluation import Evaluator
    from kcgym.sims.npu import ACCELERATOR
    from kcgym.tasks import TASKS

    hw = ACCELERATOR.make_hw()
    task = TASKS[name]
    rows = []
    for cfg in task.configs("NPU"):
        ev = Evaluator(ACCELERATOR, task, cfg, hw)
        rep = ev.evaluate(ACCELERATOR.expert(task, cfg, hw), ev.input_sets(seed, 1))
        rows.append({"task": name, "level": task.level, "config": cfg.index, "correct": rep.correct,
                     "compiler_cycles": rep.baseline_cycles, "expert_cycles": rep.cycles,
                     "roofline_cycles": rep.roofline_cycles, "speedup": rep.speedup if rep.correct else None})
    return rows


def render(rows: list[dict]) -> str:
    """The README table: speedup per config (``incorrect`` where the expert failed) and the geometric mean."""
    out = ["| task | level | C1 | C2 | C3 | C4 | C5 | geomean |", "|---|---|---|---|---|---|---|---|"]
    for name in dict.fromkeys(r["task"] for r in rows):
        mine = sorted((r for r in rows if r["task"] == name), key=lambda r: r["config"])
        speedups = [r["speedup"] for r in mine if r["correct"]]
        cells = [f"{r['speedup']:.2f}" if r["correct"] else "incorrect" for r in mine]
        geo = math.exp(sum(math.log(s) for s in speedups) / len(speedups)) if speedups else float("nan")
        out.append(f"| {name} | {mine[0]['level']} | " + " | ".join(cells) + f" | **{geo:.2f}** |")
    return "\n".join(out)


def load(path: Path = RESULTS) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main() -> None:
    from kcgym.sims.npu.expert import EXPERTS
    from kcgym.tasks import TASKS

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", default=",".join(n for n in TASKS if n in EXPERTS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args()
    rows = []
    for name in ["relu"] if args.quick else args.tasks.split(","):
        rows += measure(name, args.seed)
        for r in rows[-5:]:
            print(f"{name:14s} C{r['config']}  compiler {r['compiler_cycles']:7d}  expert {r['expert_cycles']:7d}  "
                  f"roofline {r['roofline_cycles']:7d}  x roofline {r['expert_cycles'] / r['roofline_cycles']:5.2f}"
                  f"{'' if r['correct'] else '  INCORRECT'}", flush=True)
    print()
    print(render(rows))
    if not args.quick:
        Path(args.out).write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
        print(f"wrote {len(rows)} rows to {args.out}")


if __name__ == "__main__":
    main()
