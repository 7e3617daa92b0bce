"""RVV simulator benchmark: compiler kernels on every task and config, and the expert speedups.

Prints, per (task, config): simulated cycles, roofline bound, dynamic instructions, wall time of
one ``simulate`` (cold = first call in this process, including tracing/compilation or a
persistent-cache hit; warm = median of repeats) and simulator instructions per second; then,
with ``--experts``, a Markdown table of expert speedups (compiler cycles / expert cycles).

    python benchmarks/bench_rvv.py [--tasks a,b] [--configs 1,5] [--repeats 3] [--experts]
    python benchmarks/bench_rvv.py --experts-only     # the expert table alone, into results/rvv_experts.jsonl
    python benchmarks/bench_rvv.py --configs 1,5 --repeats 1 --jsonl benchmarks/results/rvv.jsonl

The README's compiler table is :func:`readme_table` of ``benchmarks/results/rvv.jsonl``, its expert table
:func:`render_experts` of ``benchmarks/results/rvv_experts.jsonl``
(``python benchmarks/readme_tables.py --write``); cycle counts are deterministic.

``--speed --base DIR``: the trace path of this tree against a checkout of the tree before, a fresh process per
(kernel, tree), the trees alternating: the first ``simulate`` (JAX's persistent cache as it is), the warm one
(median CPU and wall seconds; instructions per CPU second), the pre-pass alone (``_Run.advance``'s CPU
microseconds per instruction, over whole explores with the trace cache cleared) and whether both trees give the
same cycles and outputs. Rows replace their kernels' rows in ``benchmarks/results/rvv_speed.jsonl``;
:func:`render_speed` is the README block. ``--kinds TASK:CONFIG``: the data path's CPU microseconds per
operation of each operation kind of that kernel (a chunk of only that kind's operations, in their order), with
and without ``trace.DATA_PATH_XLA_OPTIONS``: which classes dominate (printed, not kept).

    python benchmarks/bench_rvv.py --speed --base /work/wt/base6 [--quick] [--repeats 2]
    python benchmarks/bench_rvv.py --kinds softmax:3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from kcgym.sims.rvv import ACCELERATOR
from kcgym.tasks import tasks_for

sys.path.insert(0, str(Path(__file__).parent))
from bench_speed import _git_commit  # noqa: E402

EXPERT_TASKS = ("gemv", "matmul", "conv2d", "depthwise_conv")
EXPERT_RESULTS = Path(__file__).resolve().parent / "results" / "rvv_experts.jsonl"
SPEED_RESULTS = Path(__file__).resolve().parent / "results" / "rvv_speed.jsonl"
# (task, config) of --speed: matmul C1/C3 (BatchScorer's and the cold start's), the kernels whose control reads
# data (softmax, layernorm, rmsnorm, gemv) and two long ones
SPEED_KERNELS = (("matmul", 1), ("matmul", 3), ("softmax", 3), ("softmax", 5), ("layernorm", 3), ("rmsnorm", 3),
                 ("gemv", 3), ("conv2d", 3), ("swiglu", 3))
SPEED_QUICK = (("matmul", 1), ("softmax", 3))
SPEED_WARM = 5  # warm simulates per process (their median)
SPEED_PREPASS = 3  # whole explores per process whose pre-pass is timed (their minimum: the least disturbed)
WARM_TARGET = 1e6  # issue 16: simulated instructions per second, warm, on the C3-C5 compiler kernels

# one fresh process: kcgym from the tree on PYTHONPATH, one compiler kernel on one input set
_SPEED_CODE = """
import hashlib, json, statistics, sys, time
import numpy as np
from kcgym.evaluation import Evaluator
from kcgym.sims.rvv import ACCELERATOR as acc, trace
from kcgym.tasks import tasks_for
name, index, warm_n, prepass_n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
hw = acc.make_hw()
task = tasks_for("int8")[name]
cfg = task.config("RVV", index)
program = acc.assemble(acc.compile(task, cfg, hw), hw)
inputs = Evaluator(acc, task, cfg, hw).input_sets(0, 1)
def timed():
    t0, c0 = time.perf_counter(), time.process_time()
    (res,) = acc.run(program, task, cfg, hw, inputs, 50_000_000)
    return res, time.perf_counter() - t0, time.process_time() - c0
res, first, first_cpu = timed()
warm = [timed()[1:] for _ in range(warm_n)]
real, spent = trace._Run.advance, [0.0]
def advance(self, p):
    c0 = time.process_time()
    try:
        return real(self, p)
    finally:
        spent[0] += time.process_time() - c0
trace._Run.advance = advance
prepass = []
for _ in range(prepass_n):
    trace._TRACES.clear()
    spent[0] = 0.0
    timed()
    prepass.append(spent[0])
digest = hashlib.sha1(repr(res.cycles).encode())
for k in sorted(res.outputs):
    digest.update(np.ascontiguousarray(res.outputs[k]).tobytes())
print(json.dumps(dict(instructions=res.instructions, cycles=res.cycles, first_s=first, first_cpu_s=first_cpu,
                      warm_s=statistics.median(w for w, _ in warm), warm_cpu_s=statistics.median(c for _, c in warm),
                      prepass_cpu_s=min(prepass), digest=digest.hexdigest())))
"""


def _run(source: str, task, cfg, hw, inputs):
    program = ACCELERATOR.assemble(source, hw)
    t0 = time.perf_counter()
    (res,) = ACCELERATOR.run(program, task, cfg, hw, inputs, 50_000_000)
    return res, time.perf_counter() - t0, program


def expert_rows(configs: list[int]) -> list[dict]:
    """Compiler and expert cycles per expert task and config, on one input set (seed 0)."""
    tasks = tasks_for("int8")
    hw = ACCELERATOR.make_hw()
    rows = []
    for name in EXPERT_TASKS:
        task = tasks[name]
        for index in configs:
            cfg = task.config("RVV", index)
            inputs = [task.generate_inputs(cfg, np.random.default_rng(0))]
            base, _, _ = _run(ACCELERATOR.compile(task, cfg, hw), task, cfg, hw, inputs)
            fast, _, _ = _run(ACCELERATOR.expert(task, cfg, hw), task, cfg, hw, inputs)
            rows.append({"task": name, "config": index, "compiler_cycles": base.cycles, "expert_cycles": fast.cycles})
            print(json.dumps(rows[-1]), flush=True)
    return rows


def render_experts(rows: list[dict]) -> str:
    """The README's expert table: speedup (expert vs compiler cycles) per task and config."""
    configs = sorted({r["config"] for r in rows})
    out = ["| task | " + " | ".join(f"C{i}" for i in configs) + " |", "|---|" + "---|" * len(configs)]
    for name in dict.fromkeys(r["task"] for r in rows):
        by = {r["config"]: r for r in rows if r["task"] == name}
        cells = [f"{by[i]['compiler_cycles'] / by[i]['expert_cycles']:.2f} ({by[i]['expert_cycles']} vs "
                 f"{by[i]['compiler_cycles']})" for i in configs]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def readme_table(rows: list[dict]) -> str:
    """The README's compiler table: C1 and C5 cycles, instructions and cold / warm wall seconds."""
    by = {(r["task"], r["config"]): r for r in rows}
    out = ["| task | C1 cycles | C1 dyn. instr | C1 cold / warm s | C5 cycles | C5 roofline | C5 dyn. instr | "
           "C5 cold / warm s |", "|---|---|---|---|---|---|---|---|"]
    for t in dict.fromkeys(r["task"] for r in rows):
        a, b = by[(t, 1)], by[(t, 5)]
        out.append(f"| {t} | {a['cycles']} | {a['instructions']} | {a['cold_s']:.2f} / {a['warm_s']:.3f} | "
                   f"{b['cycles']} | {b['roofline']} | {b['instructions']} | {b['cold_s']:.2f} / {b['warm_s']:.3f} |")
    loads = [r["load"] for r in rows]
    rates = [r["instructions"] / r["warm_s"] for r in rows if r["warm_s"] > 0]
    return "\n".join(out + ["", f"(measured {rows[0]['date']} on {rows[0]['cpus']} shared cores, load "
                                 f"{min(loads)}-{max(loads)}; warm, the interpreter ran {min(rates):.1e} to "
                                 f"{max(rates):.1e} RVV instructions per second.)"])


def speed_process(tree: Path, name: str, index: int) -> dict:
    """:data:`_SPEED_CODE` in a fresh process of ``tree``'s kcgym (its own env: the default dispatch)."""
    env = {k: v for k, v in os.environ.items() if k != "KCGYM_SIM"}
    env["PYTHONPATH"] = str(tree)
    out = subprocess.run([sys.executable, "-c", _SPEED_CODE, name, str(index), str(SPEED_WARM), str(SPEED_PREPASS)],
                         env=env, cwd=tree, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def speed_row(name: str, index: int, base: Path, repeats: int) -> dict:
    """One kernel on this tree (``new``) and ``base``, ``repeats`` processes each, alternating; medians."""
    here = Path(__file__).resolve().parent.parent
    trees = {"new": here, "base": base}
    got: dict = {k: [] for k in trees}
    for i in range(repeats):
        for key in list(trees)[i % 2:] + list(trees)[:i % 2]:
            got[key].append(speed_process(trees[key], name, index))
    new, old = got["new"][0], got["base"][0]
    row: dict = {"kind": "rvv_speed", "machine": "RVV", "task": name, "config": index,
                 "instructions": new["instructions"], "cycles": new["cycles"], "repeats": repeats,
                 "base": _git_commit(base), "identical": all(r["digest"] == old["digest"] and
                                                             r["instructions"] == old["instructions"]
                                                             for rs in got.values() for r in rs)}
    for key, runs in got.items():
        for field in ("first_s", "first_cpu_s", "warm_s", "warm_cpu_s", "prepass_cpu_s"):
            row[f"{key}_{field}"] = statistics.median(r[field] for r in runs)
        row[f"{key}_instr_per_cpu_s"] = row["instructions"] / row[f"{key}_warm_cpu_s"]
        row[f"{key}_prepass_us"] = 1e6 * row[f"{key}_prepass_cpu_s"] / row["instructions"]
    return {**row, "load": round(os.getloadavg()[0], 2)}


def run_speed(kernels: tuple[tuple[str, int], ...], base: Path, repeats: int, out: Path) -> list[dict]:
    """``--speed``: every kernel's row, printed as it comes; the results file keeps other kernels' rows."""
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": _git_commit(),
            "command": "python benchmarks/bench_rvv.py " + " ".join(sys.argv[1:])}
    rows = []
    for name, index in kernels:
        row = {**speed_row(name, index, base, repeats), **meta}
        rows.append(row)
        print(f"{name} C{index}: {row['instructions']} instr; warm instr/CPU s {row['base_instr_per_cpu_s']:.3g} -> "
              f"{row['new_instr_per_cpu_s']:.3g}; pre-pass us/instr {row['base_prepass_us']:.2f} -> "
              f"{row['new_prepass_us']:.2f}; first CPU s {row['base_first_cpu_s']:.2f} -> {row['new_first_cpu_s']:.2f}"
              f"; identical={row['identical']}; load {row['load']}", flush=True)
    keys = {(r["task"], r["config"]) for r in rows}
    kept = [r for r in (load(out) if out.exists() else []) if (r["task"], r["config"]) not in keys]
    out.write_text("".join(json.dumps(r) + "\n" for r in kept + rows))
    return rows


def render_speed(rows: list[dict]) -> str:
    """The README's RVV trace-path table: warm speed, pre-pass cost and first simulate, before and after."""
    out = ["| task | config | instructions | warm instr/CPU s, before | after | pre-pass us/instr, before | after | "
           "first simulate CPU s, before | after | same results | load |", "|---" * 11 + "|"]
    for r in rows:
        mark = "" if r["new_instr_per_cpu_s"] >= WARM_TARGET or r["config"] < 3 else f" (below {WARM_TARGET:g})"
        out.append(f"| {r['task']} | C{r['config']} | {r['instructions']:,} | {r['base_instr_per_cpu_s']:.3g} "
                   f"({r['base']}) | {r['new_instr_per_cpu_s']:.3g}{mark} | {r['base_prepass_us']:.2f} | "
                   f"{r['new_prepass_us']:.2f} | {r['base_first_cpu_s']:.2f} | {r['new_first_cpu_s']:.2f} | "
                   f"{'yes' if r['identical'] else 'NO'} | {r['load']:.1f} |")
    runs = dict.fromkeys((r["date"], r["commit"], r["command"]) for r in rows)
    return "\n".join(out) + "".join(f"\n\n(measured {d} on {c}, medians of {rows[0]['repeats']} processes per tree: "
                                   f"`{cmd}`)" for d, c, cmd in runs)


def kinds(name: str, index: int) -> None:
    """``--kinds``: CPU us per operation of each operation kind of one compiler kernel's data path (a chunk of only
    that kind's operations, in their order, on one input set), with and without ``DATA_PATH_XLA_OPTIONS``."""
    import collections
    import functools

    import jax

    from kcgym.sims.rvv import trace
    from kcgym.sims.rvv.accelerator import machine_inputs
    from kcgym.sims.xla_options import older_fusion_emitters

    hw = ACCELERATOR.make_hw()
    task = tasks_for("int8")[name]
    cfg = task.config("RVV", index)
    program = ACCELERATOR.assemble(ACCELERATOR.compile(task, cfg, hw), hw)
    layout = ACCELERATOR.layout(task, cfg, hw)
    images = np.stack([ACCELERATOR.ext_image(task, cfg, hw, inp, layout)
                       for inp in [task.generate_inputs(cfg, np.random.default_rng(0))]])
    words, mems = machine_inputs(program, images, hw)
    es = np.int32(ACCELERATOR.ext_size(task, cfg, hw))
    trace._TRACES.clear()
    found = trace._explore(trace._program(words, program.length, hw, hw.model_dump_json(), int(es), 50_000_000),
                           mems[0, : hw.dtcm_bytes].tobytes(), trace.DataPath.initial(mems), 1,
                           trace.data_runner(hw.model_dump_json(), mems.shape[1])[1], es)[0]
    if found is None:
        print(f"{name} C{index}: the interpreter runs it")
        return
    ops = np.concatenate([np.asarray(part)[:n] for node in found.nodes() for part, n in node.chunks])
    dp = trace.DataPath(hw, mems.shape[1])
    names = trace.KIND_NAMES
    counts = collections.Counter(ops[:, trace.R_KIND].tolist())
    for label, opts in (("DATA_PATH_XLA_OPTIONS", older_fusion_emitters()), ("XLA defaults", {})):
        chunk = jax.jit(functools.partial(dp.run_chunk, vmem=True, rare=True), compiler_options=opts)

        def us_per_op(sel: np.ndarray, chunk=chunk) -> float:
            part = jax.device_put(np.resize(sel, (trace.OP_CHUNK, trace.N_REC)).astype(np.int32))
            cpus = []
            for _ in range(6):
                d = dp.initial(mems)
                jax.block_until_ready(d)
                c0 = time.process_time()
                jax.block_until_ready(chunk(d, part, np.int32(trace.OP_CHUNK), es))
                cpus.append(time.process_time() - c0)
            return min(cpus[1:]) / trace.OP_CHUNK * 1e6  # (the first compiles)

        print(f"{name} C{index}, {label} (load {os.getloadavg()[0]:.1f}): {len(ops)} operations, "
              f"{us_per_op(ops):.2f} us each in their order")
        for k, n in counts.most_common():
            us = us_per_op(ops[ops[:, trace.R_KIND] == k])
            print(f"  {names[k]:7s} {n:7d} x {us:5.2f} us = {n * us / 1e3:7.2f} ms")


def load(path: Path = EXPERT_RESULTS) -> list[dict]:
    """The rows of a results file this script wrote (rvv_experts.jsonl by default, or rvv.jsonl)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main() -> None:
    tasks = tasks_for("int8")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", default=",".join(tasks))
    ap.add_argument("--configs", default="1,2,3,4,5")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--experts", action="store_true", help="also print the expert speedup table")
    ap.add_argument("--experts-only", action="store_true", help="only the expert table, written to --out")
    ap.add_argument("--out", default=str(EXPERT_RESULTS))
    ap.add_argument("--jsonl", default=None, help="write one JSON line per (task, config) of the compiler table")
    ap.add_argument("--speed", action="store_true", help="the trace path against --base (rvv_speed.jsonl)")
    ap.add_argument("--base", type=Path, default=None, help="--speed: a kcgym checkout of the tree before")
    ap.add_argument("--quick", action="store_true", help="--speed: SPEED_QUICK's kernels only")
    ap.add_argument("--kernels", default=None, help="--speed: task:config,... (default: SPEED_KERNELS)")
    ap.add_argument("--kinds", default=None, help="TASK:CONFIG: the data path's cost per operation kind")
    args = ap.parse_args()
    if args.kinds:
        name, index = args.kinds.split(":")
        kinds(name, int(index))
        return
    if args.speed:
        if args.base is None or not (args.base / "kcgym").is_dir():
            ap.error("--speed needs --base DIR, a kcgym checkout of the tree before")
        chosen = (tuple((k.split(":")[0], int(k.split(":")[1])) for k in args.kernels.split(",")) if args.kernels
                  else SPEED_QUICK if args.quick else SPEED_KERNELS)
        run_speed(chosen, args.base, args.repeats, SPEED_RESULTS)
        return
    if args.experts_only:
        rows = expert_rows([int(c) for c in args.configs.split(",")])
        Path(args.out).write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
        print(render_experts(rows))
        return
    hw = ACCELERATOR.make_hw()
    configs = [int(c) for c in args.configs.split(",")]
    rows: list[dict] = []
    print(f"{'task':15s} {'cfg':3s} {'cycles':>9s} {'roofline':>9s} {'dyn.instr':>9s} {'cold s':>7s} "
          f"{'warm s':>7s} {'instr/s':>9s}")
    for name in args.tasks.split(","):
        task = tasks[name]
        for index in configs:
            cfg = task.config("RVV", index)
            inputs = [task.generate_inputs(cfg, np.random.default_rng(0))]
            res, cold, program = _run(ACCELERATOR.compile(task, cfg, hw), task, cfg, hw, inputs)
            warm = []
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                ACCELERATOR.run(program, task, cfg, hw, inputs, 50_000_000)
                warm.append(time.perf_counter() - t0)
            w = statistics.median(warm)
            roof = ACCELERATOR.roofline_cycles(task, cfg, hw)
            print(f"{name:15s} C{index:<2d} {res.cycles:9d} {roof:9d} {res.instructions:9d} {cold:7.2f} {w:7.3f} "
                  f"{res.instructions / w:9.0f}", flush=True)
            rows.append({"task": name, "config": index, "cycles": res.cycles, "roofline": roof,
                         "instructions": res.instructions, "cold_s": round(cold, 3), "warm_s": round(w, 4),
                         "cpus": os.cpu_count(), "load": round(os.getloadavg()[0], 1),
                         "date": time.strftime("%Y-%m-%d")})
            if args.jsonl:  # after every row, so an interrupted run keeps what it measured
                Path(args.jsonl).write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    if not args.experts:
        return
    print()
    print(render_experts(expert_rows(configs)))


if __name__ == "__main__":
    main()
