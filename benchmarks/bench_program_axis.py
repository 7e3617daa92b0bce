"""Why batch scoring does not simulate different programs in one JAX call (NPU, measured).

The NPU interpreter is ``vmap``-ed over input sets with the program counter unbatched, so each
step's ``lax.switch`` runs one opcode handler. Adding a *program* axis (``vmap`` over the
instruction words too) batches the program counter: every step then runs all opcode handlers
and selects, and memory updates become batched. This script times both ways on N distinct
``KernelCraft-NPU-matmul`` C1 kernels (compiler and expert kernels, numbered comments), each on
3 input sets, and checks that they agree on the cycle counts. Then the same for the trace path's data part
(:func:`trace_data_paths`): one call per program against one call with a program axis, at each batch size of
``--sizes``, to find the size at which the program axis breaks even (issue 16 asks for it; on a GPU, where the
``vmap``-ed selects run in parallel, it may). ``kcgym``'s own answer to many programs at once is a different
merge (``npu/trace.py: run_many``, measured by ``bench_scoring.py --merge``): the programs' operations side by side
in one stream, with no select.

    python benchmarks/bench_program_axis.py [--n 16] [--sizes 1,2,4,8,16] [--out benchmarks/results/program_axis.json]

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
TRACE_REPEATS = 3  # warm calls per way and size: the best is kept (a shared box is noisy)


def readme_sentence(result: dict) -> str:
    """What the README says about the measurement (benchmarks/readme_tables.py keeps it equal to the file)."""
    text = (f"measured it {result['slowdown']:g}x slower than one call per program ({result['programs']} distinct "
            f"matmul C1 kernels x {result['input_sets']} input sets on {result['device'].upper()}: "
            f"{result['program_axis_warm_s']:.2f} s vs {result['per_program_warm_s']:.2f} s warm, same cycles; "
            f"{result['date']}, {result['cpus']} cores at load {result['load']})")
    sizes = result.get("trace_sizes")
    if not sizes:
        return text
    ratios = ", ".join(f"{r['ratio']:g}x at {r['programs']}" for r in sizes)
    even = result.get("trace_break_even")
    return text + (
        "; the trace path's data part (resolved operations, no control) with a program axis, where each group's "
        f"kind switch becomes a select, against one call per program: {ratios} programs (warm, best of "
        f"{TRACE_REPEATS}; same memories bit for bit: {result['trace_identical']}), so "
        + (f"it breaks even at {even} programs" if even else f"it does not break even up to {sizes[-1]['programs']} "
           "programs") + f" on {result['device'].upper()}")


def trace_data_paths(hw, words: np.ndarray, hbm: np.ndarray, fpm: np.ndarray, limit: int,
                     sizes: list[int]) -> dict:
    """The trace path's data part (``trace.py``: groups of resolved operations, no control) for the same
    programs: one jitted call per program, as ``simulate`` does, against one call with a program axis
    (``vmap`` over the programs' groups too, so each group's ``lax.switch`` on its kind becomes a select
    over every kind's branch), for the first ``s`` programs of each size ``s`` in ``sizes``. The pre-passes are
    done first and are not timed: they are per program either way. Returns, per size, the warm seconds of both
    (best of ``TRACE_REPEATS``) and whether their final HBM images agree bit for bit, and the smallest size at
    which the program axis is no slower (None: none of those measured)."""
    hw_json = hw.model_dump_json()
    H = hbm.shape[1]
    traces = [trace.traced(w, hw, hw_json, limit, MAX_STEPS, H) for w in words]
    if any(g is None or len(c) != 1 for _, g, c in traces):
        return {}
    initial, chunk = trace.data_runner(hw_json, H)
    dp = trace.DataPath(hw, trace.dims_of(hw, H))
    one = jax.vmap(dp.run_chunk, in_axes=(0, None, None, None, None))  # over input sets
    start = jax.jit(jax.vmap(dp.initial, in_axes=(0, None)))
    axis = jax.jit(jax.vmap(one, in_axes=(None, 0, 0, 0, 0)))  # and over programs (the state shared)
    size = max(int(g.n) for _, g, _ in traces)
    rows = []
    for s in sizes:
        sub = traces[:s]

        def per_program(sub=sub):
            return [jax.device_get(chunk(initial(hbm, fpm), *c[0]).mem) for _, _, c in sub]

        k, f, q = (np.stack([np.asarray(a)[:size] for a in arrays]) for arrays in
                   zip(*[(c[0][0], c[0][1], c[0][2]) for _, _, c in sub], strict=True))
        n = np.asarray([int(g.n) for _, g, _ in sub], np.int32)

        def program_axis(k=k, f=f, q=q, n=n):
            return jax.device_get(axis(start(hbm, fpm), k, f, q, n).mem)

        timings: dict = {}
        for name, fn in (("per_program", per_program), ("program_axis", program_axis)):
            timings[name + "_out"] = fn()  # compiles (program axis: once per size)
            best = float("inf")
            for _ in range(TRACE_REPEATS):
                t0 = time.perf_counter()
                fn()
                best = min(best, time.perf_counter() - t0)
            timings[name] = best
        same = all(np.array_equal(np.asarray(a).view(np.uint32), np.asarray(timings["program_axis_out"][i]).view(
            np.uint32)) for i, a in enumerate(timings["per_program_out"]))
        ratio = timings["program_axis"] / timings["per_program"]
        print(f"  trace data path, {s:3d} programs: one call per program {timings['per_program']:7.4f} s; one call, "
              f"program axis {timings['program_axis']:7.4f} s ({ratio:.2f}x); same memories: {same}", flush=True)
        rows.append({"programs": s, "per_program_warm_s": round(timings["per_program"], 5),
                     "program_axis_warm_s": round(timings["program_axis"], 5), "ratio": round(ratio, 2),
                     "identical": same})
    last = rows[-1]
    return {"trace_per_program_warm_s": round(last["per_program_warm_s"], 4),
            "trace_program_axis_warm_s": round(last["program_axis_warm_s"], 4),
            "trace_ratio": last["ratio"], "trace_identical": all(r["identical"] for r in rows),
            "trace_sizes": rows,
            "trace_break_even": next((r["programs"] for r in rows if r["ratio"] <= 1.0), None)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=16)
    ap.add_argument("--out", default=None, help="write the result as JSON here")
    ap.add_argument("--sizes", default="1,2,4,8,16", help="trace data path: program counts to time (each <= --n)")
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
    sizes = sorted({int(x) for x in args.sizes.split(",") if x.strip() and 0 < int(x) <= args.n} or {args.n})
    data = trace_data_paths(hw, words, hbm, fpm, limit, sizes)
    if args.out:
        result = {"programs": args.n, "input_sets": len(inputs), "per_program_warm_s": round(warm, 4),
                  "program_axis_warm_s": round(warm_axis, 4), "slowdown": round(warm_axis / warm, 1), **data,
                  "cpus": os.cpu_count(), "load": round(os.getloadavg()[0], 1), "date": time.strftime("%Y-%m-%d"),
                  "device": jax.devices()[0].platform}
        Path(args.out).write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
