"""NPU expert kernels against the template compiler: cycles and speedup per task and config.

For every task with an expert kernel (``kcgym/sims/npu/expert``) and each of its five
configurations, simulates the compiler's kernel and the expert's on one input set and
prints a Markdown table (the README's copy comes from this output): compiler cycles,
expert cycles, speedup, the expert's cycles over the roofline bound, and per task the
geometric mean of the speedups. Correctness is checked on the same inputs; an incorrect
expert is reported, not timed.

    python benchmarks/bench_npu_experts.py [--tasks a,b] [--seed 0]
"""

from __future__ import annotations

import argparse
import math

from kcgym.evaluation import Evaluator
from kcgym.sims.npu import ACCELERATOR
from kcgym.sims.npu.expert import EXPERTS
from kcgym.tasks import TASKS


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", default=",".join(n for n in TASKS if n in EXPERTS))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    hw = ACCELERATOR.make_hw()
    print("| task | level | C1 | C2 | C3 | C4 | C5 | geomean |")
    print("|---|---|---|---|---|---|---|---|")
    details = []
    for name in args.tasks.split(","):
        task = TASKS[name]
        cells, speedups = [], []
        for cfg in task.configs("NPU"):
            ev = Evaluator(ACCELERATOR, task, cfg, hw)
            rep = ev.evaluate(ACCELERATOR.expert(task, cfg, hw), ev.input_sets(args.seed, 1))
            if not rep.correct:
                cells.append("incorrect")
                continue
            speedups.append(rep.speedup)
            cells.append(f"{rep.speedup:.2f}")
            details.append(f"{name:14s} C{cfg.index}  compiler {rep.baseline_cycles:7d}  expert {rep.cycles:7d}  "
                           f"roofline {rep.roofline_cycles:7d}  x roofline {rep.cycles / rep.roofline_cycles:5.2f}")
        geo = math.exp(sum(math.log(s) for s in speedups) / len(speedups)) if speedups else float("nan")
        print(f"| {name} | {task.level} | " + " | ".join(cells) + f" | **{geo:.2f}** |", flush=True)
    print()
    print("\n".join(details))


if __name__ == "__main__":
    main()
