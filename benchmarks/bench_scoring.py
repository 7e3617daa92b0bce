"""Batch scoring throughput: 64 candidate kernels for one (env id, config), batch vs one by one.

Candidates (default ``KernelCraft-NPU-matmul`` C1), a quarter each: the compiler's kernel,
the expert kernel (correct, faster), a kernel with one instruction line removed (wrong or
faulting), and a kernel with an unknown mnemonic (does not assemble). Every candidate is a
distinct source (a numbered comment), so nothing is deduplicated in the "distinct" case; the
"grpo" case draws the 64 from 16 distinct sources, as a GRPO group of a peaked policy does.

Paths (kernels/s, best of ``--repeats`` after one warm-up, since a shared machine only adds noise;
hidden inputs as the env's submit):
  env        gym.make once; per kernel: reset, write_kernel, submit (no batch API)
  single     BatchScorer.score([k]) per kernel
  batch/wN   BatchScorer(max_workers=N).score(all 64) in one call

    python benchmarks/bench_scoring.py [--env-id ID] [--config 1] [--n 64] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import time

import gymnasium as gym

import kcgym  # noqa: F401
from kcgym.scoring import BatchScorer


def candidates(scorer: BatchScorer, n: int, distinct: int) -> list[str]:
    env = scorer.env
    compiled = env.accelerator.compile(env.task, env.cfg, env.hw)
    expert = env.accelerator.expert(env.task, env.cfg, env.hw) or compiled
    lines = compiled.splitlines()
    code = [i for i, line in enumerate(lines) if line.split(";")[0].strip() and not line.strip().startswith(".")]
    out = []
    for i in range(distinct):
        kind = i % 4
        if kind == 0:
            src = compiled
        elif kind == 1:
            src = expert
        elif kind == 2:
            drop = code[(i * 7) % len(code)]
            src = "\n".join(line for j, line in enumerate(lines) if j != drop)
        else:
            src = compiled + "\n    NOT_AN_INSTRUCTION gp1, gp2\n"
        out.append(f"; candidate {i}\n{src}")
    return [out[i % distinct] for i in range(n)]


def timed(fn, repeats: int) -> float:
    fn()  # warm-up: compilation, baseline, input generation
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--env-id", default="KernelCraft-NPU-matmul")
    ap.add_argument("--config", type=int, default=1)
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    scorer = BatchScorer(args.env_id, args.config, max_workers=1)
    print(f"{args.env_id} C{args.config}, {args.n} candidates; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    for case, distinct in (("distinct", args.n), ("grpo", max(1, args.n // 4))):
        kernels = candidates(scorer, args.n, distinct)
        records = scorer.score(kernels)
        summary = {
            "correct": sum(r.correct for r in records),
            "wrong": sum(r.assembled and not r.correct for r in records),
            "syntax": sum(not r.assembled for r in records),
        }
        print(f"\n[{case}: {distinct} distinct sources] {summary}")
        env = gym.make(args.env_id, config=args.config, docs_in_prompt=False)

        def one_by_one_env(kernels=kernels, env=env) -> None:
            for k in kernels:
                env.reset(seed=0)
                env.step({"name": "write_kernel", "arguments": {"source": k}})
                env.step({"name": "submit", "arguments": {}})

        paths = {
            "env": one_by_one_env,
            "single": lambda kernels=kernels: [scorer.score([k]) for k in kernels],
        }
        for workers in (1, 2, 4):
            batch = BatchScorer(args.env_id, args.config, max_workers=workers)
            paths[f"batch/w{workers}"] = lambda kernels=kernels, batch=batch: batch.score(kernels)
        base = None
        for name, fn in paths.items():
            seconds = timed(fn, args.repeats)
            rate = args.n / seconds
            base = base or rate
            print(f"  {name:10s} {seconds * 1000:8.1f} ms  {rate:8.1f} kernels/s  x{rate / base:.2f} vs env")


if __name__ == "__main__":
    main()
