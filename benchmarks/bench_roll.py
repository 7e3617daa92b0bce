"""Where VLIW loop rolling pays: each kernel's first and warm simulate with its loops rolled and stepped.

``trace.ROLL_ABOVE`` decides which programs roll their steady loops (``kcgym/sims/vliw/rolled.py``):
rolling shortens the pre-pass (the first simulate, what an eval episode feels) and packs into more groups
(a slower warm simulate). Per kernel this times both in fresh processes, stepped and rolled alternating
(``bench_speed.sweep_kernel``: first and warm simulate, wall and CPU, one input set), so the threshold is
read off measurements. Rows go to ``benchmarks/results/speed_roll.jsonl``.

    PYTHONPATH=. python benchmarks/bench_roll.py --quick   # two kernels (minutes)
    PYTHONPATH=. python benchmarks/bench_roll.py           # the compiler kernels of 0.5M-1.5M bundles
    PYTHONPATH=. python benchmarks/bench_roll.py --tasks matmul,linear   # some of them
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_speed import _git_commit  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "speed_roll.jsonl"
QUICK = (("batch_matmul", 3, "compiler"), ("decoder_llama", 4, "compiler"))
FULL = (*QUICK, ("matmul", 5, "compiler"), ("conv2d", 4, "compiler"), ("decoder_t5", 4, "compiler"),
        ("linear", 5, "compiler"))
# one measurement in a fresh process: ROLL_ABOVE 0 rolls every program, a huge one none
SNIPPET = """import json, sys
sys.path.insert(0, "benchmarks")
from kcgym.sims.vliw import trace
import bench_speed
trace.ROLL_ABOVE = int(sys.argv[4])
print(json.dumps(bench_speed.sweep_kernel("VLIW", sys.argv[1], int(sys.argv[2]), sys.argv[3])))
"""
MODES = {"stepped": 1 << 40, "rolled": 0}


def measure(task: str, index: int, kind: str, mode: str) -> dict:
    out = subprocess.run([sys.executable, "-c", SNIPPET, task, str(index), kind, str(MODES[mode])],
                         capture_output=True, text=True, check=True, env={**os.environ, "KCGYM_SIM": ""})
    return {**json.loads(out.stdout.strip().splitlines()[-1]), "kind": "roll", "mode": mode}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help=f"only {len(QUICK)} kernels")
    ap.add_argument("--tasks", default=None, help="comma-separated: only these tasks' kernels")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "command": "python benchmarks/bench_roll.py " + " ".join(sys.argv[1:]), "commit": _git_commit()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tasks = args.tasks.split(",") if args.tasks else None
    for task, index, kind in QUICK if args.quick else FULL:
        if tasks and task not in tasks:
            continue
        for mode in MODES:
            row = {**measure(task, index, kind, mode), **meta}
            with args.out.open("a") as f:
                f.write(json.dumps(row) + "\n")
            print(f"{task:14s} C{index} {kind:8s} {mode:7s} first {row['first_s']:7.2f}s "
                  f"(CPU {row['first_cpu_s']:6.2f}s)  warm {row['warm_s']:6.3f}s (CPU {row['warm_cpu_s']:6.3f}s)  "
                  f"load {row['load1']}", flush=True)


if __name__ == "__main__":
    main()
