"""Cost of cycle attribution: warm simulate time of compiler kernels, plain vs profiling interpreter.

The plain interpreter carries no per-PC counters (``profile`` is a static flag: a separate jitted
function), so its speed is unchanged by construction; run this script on the tree before the
profiler with ``--plain-only`` to compare. The profiling interpreter runs only for the ``profile``
tool (one extra pass on one input set). Every profiled run must report the same cycles as the
plain one. Prints median warm wall seconds per (machine, task, config) over ``--repeats``,
interleaving plain and profiled runs so a shared machine's noise hits both alike.

    PYTHONPATH=. python benchmarks/bench_profiler.py [--kernels NPU:relu:1,VLIW:matmul:3] [--repeats 3]
        [--plain-only] [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import time

DEFAULT = "NPU:relu:1,NPU:matmul:3,VLIW:relu:1,VLIW:matmul:3,RVV:relu:1,RVV:matmul:3"
QUICK = "NPU:relu:1,VLIW:relu:1,RVV:relu:1"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", default=DEFAULT, help="ACC:task:config,...")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--plain-only", action="store_true", help="time only the plain interpreter (any tree)")
    ap.add_argument("--quick", action="store_true", help=f"--kernels {QUICK} --repeats 2")
    args = ap.parse_args()
    if args.quick:
        args.kernels, args.repeats = QUICK, 2

    from kcgym.evaluation import Evaluator
    from kcgym.registry import ACCELERATORS, task_for

    print(f"{'kernel':<18} {'cycles':>9} {'plain s':>8} {'profile s':>9} {'ratio':>6}")
    for spec in args.kernels.split(","):
        acc_name, task_name, index = spec.split(":")
        acc = ACCELERATORS[acc_name]
        task = task_for(acc_name, task_name)
        hw = acc.make_hw()
        cfg = task.config(acc_name, int(index))
        program = acc.assemble(acc.compile(task, cfg, hw), hw)
        inputs = Evaluator(acc, task, cfg, hw).input_sets(0, 1)
        kinds = [False] if args.plain_only else [False, True]
        times: dict[bool, list[float]] = {k: [] for k in kinds}
        cycles: dict[bool, int] = {}
        for rep in range(args.repeats + 1):  # the first round compiles (or reads the persistent cache)
            for prof in kinds:
                t = time.perf_counter()
                kw = {"profile": True} if prof else {}
                (res,) = acc.run(program, task, cfg, hw, inputs, 50_000_000, **kw)
                if rep:
                    times[prof].append(time.perf_counter() - t)
                cycles[prof] = res.cycles
        if not args.plain_only and cycles[True] != cycles[False]:
            raise SystemExit(f"{spec}: profiled cycles {cycles[True]} != plain {cycles[False]}")
        plain = statistics.median(times[False])
        if args.plain_only:
            print(f"{spec:<18} {cycles[False]:>9,} {plain:>8.3f}")
        else:
            prof_t = statistics.median(times[True])
            print(f"{spec:<18} {cycles[False]:>9,} {plain:>8.3f} {prof_t:>9.3f} {prof_t / plain:>6.2f}")


if __name__ == "__main__":
    main()
