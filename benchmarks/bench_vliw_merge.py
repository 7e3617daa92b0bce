"""VLIW merged data-path calls: CPU ms per distinct kernel by programs per call (``trace.MERGE_PROGRAMS``).

For each size, an in-thread ``BatchScorer`` (one worker, so the chunks are what one merged call takes, up to half
the batch) scores a warm-up batch (its compiles), then ``--repeats`` batches of ``n`` fresh distinct kernels
(``bench_scoring.variant``: the compiler's kernel with one numbered immediate in front); per size the best batch:

  cpu_ms          CPU milliseconds of the process per kernel (everything: assembly, pre-pass, data path, records)
  wall_ms         wall milliseconds per kernel
  merged_call_ms  CPU milliseconds per kernel inside ``trace._run_merged`` (the merged data-path calls)

Size 1 scores one kernel at a time (``run``, no merging). Sizes alternate within each repeat, so load hits all alike.

    python benchmarks/bench_vliw_merge.py [--quick] [--cases VLIW:matmul:1 ...] [--n 128] [--repeats 3]

Writes one JSON line per (case, size) to ``benchmarks/results/scoring_merge_vliw.jsonl`` (``--quick`` writes
nothing).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

RESULTS = ROOT / "benchmarks" / "results" / "scoring_merge_vliw.jsonl"
SIZES = (1, 8, 16, 32, 64)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="sizes 1 and 32, 32 kernels, one repeat; writes nothing")
    ap.add_argument("--cases", nargs="*", default=["VLIW:matmul:1"])
    ap.add_argument("--n", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args()
    sizes, n, repeats = ((1, 32), 32, 1) if args.quick else (SIZES, args.n, args.repeats)

    from bench_scoring import variant

    from kcgym.scoring import BatchScorer
    from kcgym.sims.vliw import trace
    from kcgym.sims.vliw.accelerator import VLIWAccelerator

    spent = [0.0]
    real = trace._run_merged

    def timed(*a, **kw):
        c = time.process_time()
        try:
            return real(*a, **kw)
        finally:
            spent[0] += time.process_time() - c

    trace._run_merged = timed
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    rows = []
    for case in args.cases:
        machine, task, config = case.split(":")
        assert machine == "VLIW", "merged calls of this benchmark: VLIW only"
        scorer = BatchScorer(f"KernelCraft-VLIW-{task}", int(config), max_workers=1)
        env = scorer.env
        source = env.accelerator.compile(env.task, env.cfg, env.hw)
        imm = 1
        best: dict[int, tuple[float, float, float]] = {}
        for r in range(repeats + 1):  # the first round: compiles of every size
            for size in sizes:
                trace.MERGE_PROGRAMS = VLIWAccelerator.merged_programs = size
                kernels = [variant("VLIW", source, imm + i) for i in range(n)]
                imm += n
                spent[0] = 0.0
                c0, t0 = time.process_time(), time.perf_counter()
                records = scorer.score(kernels)
                got = ((time.process_time() - c0) / n * 1e3, (time.perf_counter() - t0) / n * 1e3, spent[0] / n * 1e3)
                if not all(rec.correct for rec in records):
                    raise SystemExit(f"{case} size {size}: a kernel scored incorrect")
                if r and (size not in best or got[0] < best[size][0]):
                    best[size] = got
        for size in sizes:
            cpu, wall, merged = best[size]
            rows.append({"machine": machine, "task": task, "config": int(config), "merge_programs": size, "n": n,
                         "cpu_ms": round(cpu, 3), "wall_ms": round(wall, 3), "merged_call_ms": round(merged, 3),
                         "repeats": repeats, "cpus": os.cpu_count(), "load": round(os.getloadavg()[0], 1),
                         "date": time.strftime("%Y-%m-%d"), "commit": commit,
                         "command": "python benchmarks/bench_vliw_merge.py " + " ".join(sys.argv[1:])})
            print(f"{case:16} P={size:3}  cpu {cpu:7.2f} ms  wall {wall:7.2f} ms  merged call {merged:6.2f} ms",
                  flush=True)
    if not args.quick:
        with open(args.out, "a") as fh:
            for row in rows:
                fh.write(json.dumps(row, sort_keys=True) + "\n")
        print(f"wrote {len(rows)} rows to {args.out}")


if __name__ == "__main__":
    main()
