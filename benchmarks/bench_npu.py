"""NPU simulator benchmark: compiler kernels on every task and config.

Prints, per (task, config): simulated cycles, dynamic instructions, wall time of one
``simulate`` (cold = first call in this process, including tracing/compilation or a
persistent-cache hit; warm = median of repeats), the warm run's CPU time (the interpreter is
one thread: on a shared, loaded machine CPU time is what the wall time would be alone), and
simulator instructions per second of wall time.

    python benchmarks/bench_npu.py [--tasks a,b] [--configs 1,5] [--repeats 3] [--inputs 1]
"""

from __future__ import annotations

import argparse
import statistics
import time

from kcgym.evaluation import Evaluator
from kcgym.sims.npu import ACCELERATOR
from kcgym.tasks import TASKS


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", default=",".join(n for n, t in TASKS.items() if ACCELERATOR.supports(t)))
    ap.add_argument("--configs", default="1,2,3,4,5")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--inputs", type=int, default=1, help="input sets per simulate (1 = the simulate tool)")
    args = ap.parse_args()
    hw = ACCELERATOR.make_hw()
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


if __name__ == "__main__":
    main()
