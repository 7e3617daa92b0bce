"""Why batch scoring does not simulate different programs in one JAX call (NPU, measured).

The NPU interpreter is ``vmap``-ed over input sets with the program counter unbatched, so each
step's ``lax.switch`` runs one opcode handler. Adding a *program* axis (``vmap`` over the
instruction words too) batches the program counter: every step then runs all opcode handlers
and selects, and memory updates become batched. This script times both ways on N distinct
``KernelCraft-NPU-matmul`` C1 kernels (compiler and expert kernels, numbered comments), each on
3 input sets, and checks that they agree on the cycle counts.

    python benchmarks/bench_program_axis.py [--n 16] [--out benchmarks/results/program_axis.json]

``--out`` writes the measurement as JSON (the README's sentence about it quotes that file).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import gymnasium as gym
import jax
import numpy as np

import kcgym  # noqa: F401
from kcgym.sims.npu import machine as M
from kcgym.sims.npu import trace
from kcgym.sims.npu.accelerator import HBM_BUCKET, PROGRAM_BUCKET

MAX_STEPS = 200_000


def readme_sentence(result: dict) -> str:
    """What the README says about the measurement (benchmarks/readme_tables.py keeps it equal to the file)."""
    return (f"measured it {result['slowdown']:g}x slower than one call per program ({result['programs']} distinct "
            f"matmul C1 kernels x {result['input_sets']} input sets on {result['device'].upper()}: "
            f"{result['program_axis_warm_s']:.2f} s vs {result['per_program_warm_s']:.2f} s warm, same cycles; "
            f"{result['date']}, {result['cpus']} cores at load {result['load']})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=16)
    ap.add_argument("--out", default=None, help="write the result as JSON here")
    args = ap.parse_args()
    env = gym.make("KernelCraft-NPU-matmul", config=1).unwrapped
    acc, task, cfg, hw = env.accelerator, env.task, env.cfg, env.hw
    compiled, expert = acc.compile(task, cfg, hw), acc.expert(task, cfg, hw)
    programs = [acc.assemble(f"; {i}\n" + (compiled if i % 2 else expert), hw) for i in range(args.n)]
    inputs = env.evaluator.input_sets(0, 3)
    print(
        f"{args.n} distinct programs x {len(inputs)} input sets; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}"
    )

    def per_program():
        return [acc.run(p, task, cfg, hw, inputs, MAX_STEPS) for p in programs]

    t0 = time.perf_counter()
    per_program()
    cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    reference = per_program()
    warm = time.perf_counter() - t0
    print(f"  one call per program (today):  first {cold:7.2f} s, then {warm:7.3f} s")

    layout = acc.layout(task, cfg, hw)
    limit = acc.hbm_size(layout)
    hbm = np.full((len(inputs), M.bucket(limit, HBM_BUCKET)), np.nan, np.float32)
    for b, inp in enumerate(inputs):
        for r in layout.regions:
            if r.space == "HBM" and r.role == "input":
                hbm[b, r.offset : r.offset + r.size] = np.asarray(inp[r.name], np.float32).reshape(-1)
    fpm = np.zeros(hw.fpsram_size, np.float32)
    machine, _ = trace.batched_runner(hw.model_dump_json())
    size = M.bucket(max(p.length for p in programs), PROGRAM_BUCKET)
    words = np.stack([p.padded(size, machine.halt_row) for p in programs])
    inner = jax.vmap(machine.run_one, in_axes=(None, 0, None, None, None))
    batched = jax.jit(jax.vmap(inner, in_axes=(0, None, None, None, None)))

    def program_axis():
        return jax.device_get(batched(words, hbm, fpm, np.int32(limit), np.int32(MAX_STEPS)))

    t0 = time.perf_counter()
    program_axis()
    cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    state = program_axis()
    warm_axis = time.perf_counter() - t0
    print(
        f"  one call, program axis:        first {cold:7.2f} s, then {warm_axis:7.3f} s "
        f"({warm_axis / warm:.0f}x slower)"
    )
    cycles = [int(state.ctl[i, 0, M.T_END]) for i in range(args.n)]
    assert cycles == [r[0].cycles for r in reference], "the two ways disagree on cycles"
    print("  cycle counts agree")
    if args.out:
        result = {"programs": args.n, "input_sets": len(inputs), "per_program_warm_s": round(warm, 4),
                  "program_axis_warm_s": round(warm_axis, 4), "slowdown": round(warm_axis / warm, 1),
                  "cpus": os.cpu_count(), "load": round(os.getloadavg()[0], 1), "date": time.strftime("%Y-%m-%d"),
                  "device": jax.devices()[0].platform}
        Path(args.out).write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
