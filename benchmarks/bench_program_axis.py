"""Why batch scoring does not simulate different programs in one JAX call (NPU, measured).

The NPU interpreter is ``vmap``-ed over input sets with the program counter unbatched, so each
step's ``lax.switch`` runs one opcode handler. Adding a *program* axis (``vmap`` over the
instruction words too) batches the program counter: every step then runs all opcode handlers
and selects, and memory updates become batched. This script times both ways on N distinct
``KernelCraft-NPU-matmul`` C1 kernels (compiler and expert kernels, numbered comments), each on
3 input sets, and checks that they agree on the cycle counts. Then the same for the trace path's data part
(:func:`trace_data_paths`): one call per program against one call with a program axis.

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
            f"{result['date']}, {result['cpus']} cores at load {result['load']})" + (
                "; the trace path's data part (resolved operations, no control) with a program axis, where "
                f"each group's kind switch becomes a select, is {result['trace_ratio']:g}x slower than one call per "
                f"program ({result['trace_program_axis_warm_s']:.3f} s vs {result['trace_per_program_warm_s']:.3f} "
                f"s, same memories bit for bit: {result['trace_identical']})" if "trace_ratio" in result else ""))


def trace_data_paths(hw, words: np.ndarray, hbm: np.ndarray, fpm: np.ndarray, limit: int) -> dict:
    """The trace path's data part (``trace.py``: groups of resolved operations, no control) for the same
    programs: one jitted call per program, as ``simulate`` does, against one call with a program axis
    (``vmap`` over the programs' groups too, so each group's ``lax.switch`` on its kind becomes a select
    over every kind's branch). The pre-passes are done first and are not timed: they are per program either
    way. Returns the warm seconds of both and whether their final HBM images agree bit for bit."""
    hw_json = hw.model_dump_json()
    H = hbm.shape[1]
    traces = [trace.traced(w, hw, hw_json, limit, MAX_STEPS, H) for w in words]
    if any(g is None or len(c) != 1 for _, g, c in traces):
        return {}
    initial, chunk = trace.data_runner(hw_json, H)

    def per_program():
        return [jax.device_get(chunk(initial(hbm, fpm), *c[0]).mem) for _, _, c in traces]

    size = max(int(g.n) for _, g, _ in traces)
    k, f, q = (np.stack([np.asarray(a)[:size] for a in arrays]) for arrays in
               zip(*[(c[0][0], c[0][1], c[0][2]) for _, _, c in traces], strict=True))
    n = np.asarray([int(g.n) for _, g, _ in traces], np.int32)
    dp = trace.DataPath(hw, trace.dims_of(hw, H))
    one = jax.vmap(dp.run_chunk, in_axes=(0, None, None, None, None))  # over input sets
    start = jax.jit(jax.vmap(dp.initial, in_axes=(0, None)))
    axis = jax.jit(jax.vmap(one, in_axes=(None, 0, 0, 0, 0)))  # and over programs (the state shared)

    def program_axis():
        return jax.device_get(axis(start(hbm, fpm), k, f, q, n).mem)

    timings = {}
    for name, fn in (("per_program", per_program), ("program_axis", program_axis)):
        fn()
        t0 = time.perf_counter()
        out = fn()
        timings[name] = time.perf_counter() - t0
        timings[name + "_out"] = out
    same = all(np.array_equal(np.asarray(a).view(np.uint32), np.asarray(timings["program_axis_out"][i]).view(
        np.uint32)) for i, a in enumerate(timings["per_program_out"]))
    print(f"  trace data path, one call per program: {timings['per_program']:7.3f} s; one call, program axis: "
          f"{timings['program_axis']:7.3f} s ({timings['program_axis'] / timings['per_program']:.2f}x); "
          f"same memories: {same}")
    return {"trace_per_program_warm_s": round(timings["per_program"], 4),
            "trace_program_axis_warm_s": round(timings["program_axis"], 4),
            "trace_ratio": round(timings["program_axis"] / timings["per_program"], 2), "trace_identical": same}


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
    data = trace_data_paths(hw, words, hbm, fpm, limit)
    if args.out:
        result = {"programs": args.n, "input_sets": len(inputs), "per_program_warm_s": round(warm, 4),
                  "program_axis_warm_s": round(warm_axis, 4), "slowdown": round(warm_axis / warm, 1), **data,
                  "cpus": os.cpu_count(), "load": round(os.getloadavg()[0], 1), "date": time.strftime("%Y-%m-%d"),
                  "device": jax.devices()[0].platform}
        Path(args.out).write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
