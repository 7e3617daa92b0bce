"""Simulator speed, old (the interpreter, ``KCGYM_SIM=oracle``) and new (trace-ahead) side by side.

Per machine with a trace-ahead path (``MACHINES``: NPU, VLIW, RVV), per compiler kernel and config: dynamic
instructions (bundles on the VLIW), the first ``simulate`` of the kernel in this process (new: pre-pass +
schedule + data path, plus a compile where its shape bucket is new), the warm ``simulate`` (median of
repeats: the trace is cached per program, so this is the data path alone), its CPU seconds and
instructions per second, and whether old and new agree (cycles and outputs). Then a fresh process with an
empty JAX persistent cache times its first ``simulate`` (the cold start a user sees) of ``COLD_KERNELS``;
``--cold --base DIR`` times only those, this tree alternating with a checkout of the tree before.

Rows go to ``benchmarks/results/speed.jsonl`` (one JSON object per line); ``--table`` prints the
README's Markdown table from that file.

``--crossover``: where the interpreter beats the trace path. Per compiler kernel (every task of the
machine at C1, and one C3 kernel), ``--distinct`` variants that differ in one immediate (so each misses
the trace cache, as an RL batch of new kernels does; ``--sets`` input sets each, as ``BatchScorer`` checks
a kernel on) are simulated on each path -- the interpreter, the trace path and the default dispatch --
and the median CPU time per simulate is kept. Rows go to ``benchmarks/results/speed_crossover.jsonl``,
with a ``choice`` row per machine: the dispatch threshold (dynamic instructions: the machine's
``trace.ORACLE_MAX_INSTRUCTIONS`` / ``ORACLE_MAX_BUNDLES``) that minimises the summed CPU time of its C1
and C2 rows.

    PYTHONPATH=. python benchmarks/bench_speed.py --quick      # C1 and C3 on five tasks (minutes)
    PYTHONPATH=. python benchmarks/bench_speed.py              # every task at C1, C3, C5
    PYTHONPATH=. python benchmarks/bench_speed.py --machines VLIW --quick --append
    PYTHONPATH=. python benchmarks/bench_speed.py --table      # Markdown from the results file
    PYTHONPATH=. python benchmarks/bench_speed.py --tasks batch_matmul --configs 5 --append --no-cold
    PYTHONPATH=. python benchmarks/bench_speed.py --crossover [--quick] [--machines VLIW]  # the dispatch threshold
    PYTHONPATH=. nice -n 5 python benchmarks/bench_speed.py --sweep [--quick]  # every kernel: the 10 s target
    PYTHONPATH=. python benchmarks/bench_speed.py --cold --base /tmp/base [--machines NPU]  # cold starts, before/after
    PYTHONPATH=. python benchmarks/bench_speed.py --prepass --base /tmp/base [--quick]  # VLIW pre-pass, before/after

``--sweep``: every registered env of every machine (NPU, VLIW, RVV, CPU) x configs 1..5 x {compiler kernel,
expert kernel where one exists}, on one input set: the first ``simulate`` in the process (a compile where
the shape bucket is new to it), the warm one (median of repeats), dynamic instructions, cycles and which
path ran (``interpreter``, ``trace``). One worker process per machine streams its rows; a kernel that runs
past ``--cap`` seconds (first and warm together) is killed and kept as an ``over_cap`` row (``> cap`` in
the table), never dropped. Rows go to ``benchmarks/results/speed_sweep.jsonl``; ``readme_sweep`` renders
the README block (``benchmarks/readme_tables.py``: count over ``SWEEP_TARGET_S``, worst ten, slowest per
machine).
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

RESULTS = Path(__file__).parent / "results" / "speed.jsonl"
QUICK_CONFIGS = (1, 3)
FULL_CONFIGS = (1, 3, 5)
MAX_STEPS = 50_000_000
CROSSOVER = Path(__file__).parent / "results" / "speed_crossover.jsonl"
PATHS = {"old": "oracle", "trace": "trace", "auto": ""}  # KCGYM_SIM per path ("": the default dispatch)
SWEEP = Path(__file__).parent / "results" / "speed_sweep.jsonl"
SWEEP_MACHINES = ("NPU", "VLIW", "RVV", "CPU")
SWEEP_CONFIGS = (1, 2, 3, 4, 5)
SWEEP_QUICK_CONFIGS = (1,)
SWEEP_TARGET_S = 10.0  # issue 16: every compiler and expert kernel's warm simulate at most this
SWEEP_CAP_S = 240.0  # per kernel, first and warm simulate together: past it the kernel is killed, "> cap"
SWEEP_QUICK_CAP_S = 60.0
SWEEP_WARM_REPEATS = 3  # warm simulates of a kernel whose first one took under SWEEP_REPEAT_BELOW_S
SWEEP_REPEAT_BELOW_S = 1.0
SWEEP_KINDS = ("compiler", "expert")


class MachineBench(NamedTuple):
    """What the benchmark needs to know of one machine with a trace-ahead path."""

    package: str  # kcgym.sims.<machine>: its ACCELERATOR, ``machine`` and ``trace`` modules
    quick_tasks: tuple[str, ...]
    variant: str  # an instruction with no effect but one more step, ``{n}`` an immediate: a distinct program
    threshold: str  # the trace module's dispatch threshold (dynamic instructions)
    crossover_extra: tuple[tuple[str, int, int], ...]  # (task, config, repeats) besides every task at C1 (C1
    # and C2 rows choose the threshold; a C3 one checks that a large kernel stays on the trace path)
    crossover_sweep: tuple[tuple[str, int], ...]  # (task, repeats) at C1: points between the kernels' sizes
    quick_crossover: tuple[str, ...]
    words: Callable[[Any, Any], np.ndarray]  # (program, hw) -> the padded words its runner sees


MACHINES = {
    "NPU": MachineBench("kcgym.sims.npu", ("softmax", "matmul", "conv2d", "gqa", "decoder_llama"),
                        "S_ADDI_INT gp0, gp0, {n}", "ORACLE_MAX_INSTRUCTIONS",
                        (("matmul", 3, 1),),
                        (("relu", 2), ("relu", 4), ("softmax", 2), ("softmax", 3), ("softmax", 4), ("matmul", 2),
                         ("matmul", 3)),
                        ("relu", "softmax", "matmul", "gemv", "layernorm", "rope"), lambda p, hw: _npu_words(p, hw)),
    "VLIW": MachineBench("kcgym.sims.vliw", ("softmax", "matmul", "conv2d", "gqa", "decoder_llama"),
                         "ADDI r0, r0, {n}", "ORACLE_MAX_BUNDLES",
                         # kernels use labels (a repeated source would not assemble): C2 kernels fill the gaps
                         (("relu", 2, 1), ("rmsnorm", 2, 1), ("silu", 2, 1), ("softmax", 2, 1), ("gemv", 2, 1),
                          ("matmul", 3, 1)), (),
                         ("relu", "silu", "softmax", "matmul", "layernorm", "rmsnorm"),
                         lambda p, hw: _vliw_words(p, hw)),
    # RVV: no dispatch threshold (its trace path beat the interpreter even on C1 relu), so no --crossover;
    # gemv branches on data: its trace path resolves the branches (trace.run_info)
    "RVV": MachineBench("kcgym.sims.rvv", ("relu", "softmax", "matmul", "conv2d", "swiglu", "gemv"),
                        "addi x0, x0, {n}", "", (), (), (), lambda p, hw: p),
}
# the first simulate of a fresh process, JAX's persistent cache empty: per machine, matmul (dotprod on the
# CPU) at C1 and C3 and one large kernel (and a VLIW kernel short enough for its interpreter: NPU matmul C1 is)
COLD_KERNELS = {
    "NPU": (("matmul", 1), ("matmul", 3), ("decoder_llama", 5), ("decoder_t5", 5), ("batch_matmul", 5)),  # (the
    # last three: the NPU's longest first simulates, streamed: trace.STREAM_ABOVE)
    "VLIW": (("relu", 1), ("matmul", 1), ("matmul", 3), ("decoder_llama", 5), ("batch_matmul", 4),
             ("batch_matmul", 5)),  # relu: short, on the interpreter
    "RVV": (("matmul", 1), ("matmul", 3), ("conv2d", 5)),
    "CPU": (("dotprod", 1), ("dotprod", 3), ("qsort", 5)),
}
COLD_EXPERTS = {"VLIW": (("batch_matmul", 4), ("batch_matmul", 5), ("swiglu", 5))}  # expert kernels timed the same way
# (``--cold``): the VLIW's longest first simulates are experts' (double-buffered loops: they roll as iterations of two
# passes, rolled.PERIOD_MAX)
COLD_TARGET_S = 5.0  # issue 16: the first simulate of a fresh process, cache cold, at most this


def _npu_words(program, hw) -> np.ndarray:
    from kcgym.sims.npu import machine as M
    from kcgym.sims.npu.accelerator import PROGRAM_BUCKET

    return program.padded(M.bucket(program.length, PROGRAM_BUCKET), M.Machine(hw).halt_row)


def _vliw_words(program, hw) -> np.ndarray:
    from kcgym.sims.vliw import machine as M

    return program.padded(hw.imem_bundles + 1, M.Machine(hw).halt_row)


def _module(machine: str, name: str):
    return importlib.import_module(f"{MACHINES[machine].package}.{name}")


def _accelerator(machine: str):
    return importlib.import_module(MACHINES[machine].package).ACCELERATOR


def _tasks(machine: str) -> dict:
    from kcgym.tasks import TASKS, tasks_for

    return dict(tasks_for("int8")) if machine == "RVV" else TASKS


def _setup(machine: str, name: str, index: int, sets: int = 1):
    from kcgym.evaluation import Evaluator

    acc = _accelerator(machine)
    hw = acc.make_hw()
    task = _tasks(machine)[name]
    cfg = task.config(machine, index)
    program = acc.assemble(acc.compile(task, cfg, hw), hw)
    inputs = Evaluator(acc, task, cfg, hw).input_sets(0, sets)
    return acc, task, cfg, hw, program, inputs


def _simulate(acc, task, cfg, hw, program, inputs, oracle: bool):
    if oracle:
        os.environ["KCGYM_SIM"] = "oracle"
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        (res,) = acc.run(program, task, cfg, hw, inputs, MAX_STEPS)
        return res, time.perf_counter() - t0, time.process_time() - c0
    finally:
        os.environ.pop("KCGYM_SIM", None)


def measure(machine: str, name: str, index: int, repeats: int) -> dict:
    acc, task, cfg, hw, program, inputs = _setup(machine, name, index)
    row: dict = {"machine": machine, "task": name, "config": index}
    results = {}
    for path, oracle in (("old", True), ("new", False)):
        res, first, _ = _simulate(acc, task, cfg, hw, program, inputs, oracle)
        walls, cpus = [], []
        for _ in range(repeats):
            _, w, c = _simulate(acc, task, cfg, hw, program, inputs, oracle)
            walls.append(w)
            cpus.append(c)
        wall, cpu = statistics.median(walls), statistics.median(cpus)
        results[path] = res
        row.update({f"{path}_first_s": first, f"{path}_warm_s": wall, f"{path}_warm_cpu_s": cpu,
                    f"{path}_instr_per_s": res.instructions / wall, f"{path}_instr_per_cpu_s": res.instructions / cpu})
    old, new = results["old"], results["new"]
    row["instructions"] = old.instructions
    row["cycles"] = old.cycles
    row["identical"] = bool(old.cycles == new.cycles and old.instructions == new.instructions and all(
        np.ascontiguousarray(old.outputs[k]).tobytes() == np.ascontiguousarray(new.outputs[k]).tobytes()
        for k in old.outputs))
    return row


# a fresh process's set-up: the compiler kernel of (machine, name, index) assembled, and one input set
_KERNEL_SETUP = """
acc = ACCELERATORS[machine]
hw = acc.make_hw()
task = task_for(machine, name)
cfg = task.config(machine, index)
program = acc.assemble(acc.compile(task, cfg, hw), hw)
inputs = Evaluator(acc, task, cfg, hw).input_sets(0, 1)
"""

_COLD_CODE = f"""
import json, sys, time
from kcgym.evaluation import Evaluator
from kcgym.registry import ACCELERATORS, task_for
machine, name, index, kind = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
{_KERNEL_SETUP.replace("acc.compile(task, cfg, hw)", '(acc.compile(task, cfg, hw) if kind == "compiler" else '
                       'acc.expert(task, cfg, hw))')}
t0, c0 = time.perf_counter(), time.process_time()
acc.run(program, task, cfg, hw, inputs, {MAX_STEPS})
print(json.dumps([time.perf_counter() - t0, time.process_time() - c0]))
"""


_PER_CALL_CODE = f"""
import json, os, sys, time
from kcgym.evaluation import Evaluator
from kcgym.registry import ACCELERATORS, task_for
machine, name, index, calls, sim = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
if sim:
    os.environ["KCGYM_SIM"] = sim
{_KERNEL_SETUP}
for _ in range(5):
    acc.run(program, task, cfg, hw, inputs, {MAX_STEPS})
times = []
for _ in range(calls):
    t0 = time.perf_counter()
    acc.run(program, task, cfg, hw, inputs, {MAX_STEPS})
    times.append(time.perf_counter() - t0)
times.sort()
print(json.dumps([times[len(times) // 2], times[len(times) // 10]]))
"""
# (machine, task, config, KCGYM_SIM): short kernels on the interpreter (oracle) and on the default dispatch (a
# short one's first INTERPRETER_AFTER_SHORT_RUNS runs take the trace path), and C3 kernels on the trace path
PER_CALL_KERNELS = (("NPU", "softmax", 1, "oracle"), ("NPU", "matmul", 1, "oracle"), ("NPU", "softmax", 1, ""),
                    ("NPU", "softmax", 3, ""), ("VLIW", "relu", 1, "oracle"), ("VLIW", "softmax", 3, ""))


def per_call(tree: Path, machine: str, name: str, index: int, sim: str, calls: int) -> tuple[float, float]:
    """(median, 10th percentile) seconds of a warm ``Accelerator.run`` of the compiler kernel in ``tree``."""
    env = {k: v for k, v in os.environ.items() if k != "KCGYM_SIM"}
    env["PYTHONPATH"] = str(tree)
    out = subprocess.run([sys.executable, "-c", _PER_CALL_CODE, machine, name, str(index), str(calls), sim], env=env,
                         cwd=tree, capture_output=True, text=True, check=True)
    median, p10 = json.loads(out.stdout.strip().splitlines()[-1])
    return median, p10


def per_call_row(machine: str, name: str, index: int, sim: str, base: Path, repeats: int, calls: int) -> dict:
    """The warm per-call time of this tree and of ``base``, a process each, alternating ``repeats`` times."""
    here = Path(__file__).resolve().parent.parent
    trees = {"new": here, "base": base}
    times: dict = {k: [] for k in trees}
    for i in range(repeats):
        for key in list(trees)[i % 2:] + list(trees)[:i % 2]:
            times[key].append(per_call(trees[key], machine, name, index, sim, calls))
    row: dict = {"kind": "per_call", "machine": machine, "task": name, "config": index, "sim": sim or "auto",
                 "calls": calls, "repeats": repeats, "base": _git_commit(base)}
    for key, ts in times.items():
        row[f"{key}_ms"] = 1e3 * statistics.median(t[0] for t in ts)
        row[f"{key}_p10_ms"] = 1e3 * statistics.median(t[1] for t in ts)
    return {**row, "load1": round(os.getloadavg()[0], 2)}


def cold_first(tree: Path, machine: str, name: str, index: int, sim: str = "",
               kind: str = "compiler") -> tuple[float, float]:
    """(wall s, CPU s) of the first simulate of the ``kind`` kernel (compiler or expert) in a fresh process of
    ``tree``'s kcgym whose JAX persistent cache is empty (``sim``: its ``KCGYM_SIM``)."""
    with tempfile.TemporaryDirectory() as cache:
        env = {k: v for k, v in os.environ.items() if k not in ("JAX_COMPILATION_CACHE_DIR", "KCGYM_SIM")}
        env.update(KCGYM_CACHE_DIR=cache, PYTHONPATH=str(tree), **({"KCGYM_SIM": sim} if sim else {}))
        out = subprocess.run([sys.executable, "-c", _COLD_CODE, machine, name, str(index), kind], env=env, cwd=tree,
                             capture_output=True, text=True, check=True)
    wall, cpu = json.loads(out.stdout.strip().splitlines()[-1])
    return wall, cpu


def cold_row(machine: str, name: str, index: int, base: Path | None, repeats: int, kind: str = "compiler") -> dict:
    """The cold start of this tree (and of the ``base`` checkout, alternating with it): medians of ``repeats``
    (an expert kernel's row names it: ``kernel``)."""
    here = Path(__file__).resolve().parent.parent
    trees = {"new": here, **({"base": base} if base else {})}
    times: dict = {k: [] for k in trees}
    for i in range(repeats):
        for key in list(trees)[i % len(trees):] + list(trees)[:i % len(trees)]:
            times[key].append(cold_first(trees[key], machine, name, index, kind=kind))
    row: dict = {"kind": "cold_process", "machine": machine, "task": name, "config": index, "repeats": repeats,
                 **({"kernel": kind} if kind != "compiler" else {})}
    for key, ts in times.items():
        row[f"{key}_s"] = statistics.median(t[0] for t in ts)
        row[f"{key}_cpu_s"] = statistics.median(t[1] for t in ts)
    if base:
        row["base"] = _git_commit(base)
    return {**row, "load1": round(os.getloadavg()[0], 2)}


# ---- the VLIW pre-pass alone (``--prepass``): this tree against a checkout of the tree before ------------------
PREPASS_KERNELS = (("matmul", 3, "compiler"), ("batch_matmul", 3, "expert"), ("decoder_llama", 3, "compiler"),
                   ("softmax", 3, "compiler"), ("decoder_llama", 5, "compiler"), ("batch_matmul", 4, "compiler"),
                   ("batch_matmul", 4, "expert"), ("batch_matmul", 5, "compiler"),
                   ("batch_matmul", 5, "expert"))  # (task, config, kernel); C4, C5: the longest first simulates
PREPASS_QUICK = (("matmul", 3, "compiler"), ("softmax", 3, "compiler"))
PREPASS_CALLS = 3  # pre-pass calls timed after the first simulate, in the same process (their median)

_PREPASS_CODE = f"""
import hashlib, json, os, statistics, sys, time
from kcgym.evaluation import Evaluator
from kcgym.registry import ACCELERATORS, task_for
from kcgym.sims.vliw import trace
name, index, kind, calls = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
acc = ACCELERATORS["VLIW"]
hw = acc.make_hw()
task = task_for("VLIW", name)
cfg = task.config("VLIW", index)
program = acc.assemble(acc.compile(task, cfg, hw) if kind == "compiler" else acc.expert(task, cfg, hw), hw)
inputs = Evaluator(acc, task, cfg, hw).input_sets(0, 1)
seen, real = [], trace.prepass
def prepass(*a, **k):
    seen.append((a, k))
    return real(*a, **k)
trace.prepass = prepass
os.environ["KCGYM_SIM"] = "trace"
t0, c0 = time.perf_counter(), time.process_time()
(res,) = acc.run(program, task, cfg, hw, inputs, {MAX_STEPS})
first, first_cpu = time.perf_counter() - t0, time.process_time() - c0
a, k = seen[0]
walls, cpus = [], []
for _ in range(calls):
    t0, c0 = time.perf_counter(), time.process_time()
    tr = real(*a, **k)
    walls.append(time.perf_counter() - t0)
    cpus.append(time.process_time() - c0)
t0, c0 = time.perf_counter(), time.process_time()
(res2,) = acc.run(program, task, cfg, hw, inputs, {MAX_STEPS})
warm, warm_cpu = time.perf_counter() - t0, time.process_time() - c0
digest = hashlib.sha1()
for f in tr._fields:
    v = getattr(tr, f)
    digest.update(f.encode() + (v.tobytes() if hasattr(v, "tobytes") else repr(v).encode()))
out = hashlib.sha1()
for r in (res, res2):
    for key in sorted(r.outputs):
        out.update(key.encode() + r.outputs[key].tobytes())
    out.update(repr((r.cycles, r.instructions, r.fault, r.counts_by_category, r.unit_busy)).encode())
print(json.dumps(dict(first_s=first, first_cpu_s=first_cpu, prepass_s=statistics.median(walls),
                      prepass_cpu_s=statistics.median(cpus), warm_s=warm, warm_cpu_s=warm_cpu,
                      bundles=int(tr.ctl[1]), cycles=int(res.cycles), trace=digest.hexdigest(),
                      outputs=out.hexdigest())))
"""


def prepass_times(tree: Path, name: str, index: int, kind: str, calls: int) -> dict:
    """A fresh process of ``tree``'s kcgym: its first simulate of the VLIW ``kind`` kernel (the trace path; JAX's
    persistent cache as it is), then ``calls`` pre-passes of the same program alone (median wall and CPU s),
    its dynamic bundles and a digest of the whole Trace."""
    env = {k: v for k, v in os.environ.items() if k != "KCGYM_SIM"}
    env["PYTHONPATH"] = str(tree)
    out = subprocess.run([sys.executable, "-c", _PREPASS_CODE, name, str(index), kind, str(calls)], env=env, cwd=tree,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def prepass_row(name: str, index: int, kind: str, base: Path, repeats: int, calls: int) -> dict:
    """Pre-pass CPU per bundle, the first simulate and a warm one, this tree and ``base`` alternating
    ``repeats`` times (medians); ``identical``: the same outputs, cycles, counters and bundles from both (both
    simulates); ``same_trace``: the same Trace too (a change to rolling changes the Trace, not the results)."""
    here = Path(__file__).resolve().parent.parent
    trees = {"new": here, "base": base}
    got: dict = {k: [] for k in trees}
    for i in range(repeats):
        for key in list(trees)[i % 2:] + list(trees)[:i % 2]:
            got[key].append(prepass_times(trees[key], name, index, kind, calls))
    new, old = got["new"][0], got["base"][0]
    row: dict = {"kind": "prepass", "machine": "VLIW", "task": name, "config": index, "kernel": kind,
                 "bundles": new["bundles"], "repeats": repeats, "calls": calls, "base": _git_commit(base),
                 "identical": bool(new["outputs"] == old["outputs"] and new["cycles"] == old["cycles"]
                                   and new["bundles"] == old["bundles"]), "same_trace": new["trace"] == old["trace"]}
    for key, runs in got.items():
        for field in ("prepass_s", "prepass_cpu_s", "first_s", "first_cpu_s", "warm_s", "warm_cpu_s"):
            row[f"{key}_{field}"] = statistics.median(r[field] for r in runs)
        row[f"{key}_us_per_bundle"] = 1e6 * row[f"{key}_prepass_cpu_s"] / max(row["bundles"], 1)
    return {**row, "load1": round(os.getloadavg()[0], 2)}


def run_prepass(ap: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``--prepass``: PREPASS_KERNELS (``--quick``: PREPASS_QUICK), this tree against ``--base``; rows replace
    the results file's prepass rows of the same kernels."""
    if args.base is None or not (args.base / "kcgym").is_dir():
        ap.error("--prepass needs --base DIR, a kcgym checkout of the tree before")
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "command": "python benchmarks/bench_speed.py " + " ".join(sys.argv[1:]), "commit": _git_commit()}
    rows = []
    for name, index, kind in PREPASS_QUICK if args.quick else PREPASS_KERNELS:
        if args.tasks and name not in args.tasks.split(","):
            continue
        row = {**prepass_row(name, index, kind, args.base, args.repeats, PREPASS_CALLS), **meta}
        rows.append(row)
        print(f"prepass VLIW {name} C{index} {kind}: {row['bundles']} bundles, CPU us/bundle "
              f"{row['base_us_per_bundle']:.2f} -> {row['new_us_per_bundle']:.2f}; first simulate CPU s "
              f"{row['base_first_cpu_s']:.2f} -> "
              f"{row['new_first_cpu_s']:.2f}  identical={row['identical']}  load {row['load1']}", flush=True)
    keys = {_key(r) for r in rows}
    kept = [line for line in (args.out.read_text().splitlines() if args.out.exists() else [])
            if line.strip() and _key(json.loads(line)) not in keys]
    args.out.write_text("".join(line + "\n" for line in kept) + "".join(json.dumps(r) + "\n" for r in rows))


_VARIANT = itertools.count(1)


def _distinct_cpu(acc, task, cfg, hw, source: str, inputs, n: int, variant: str) -> tuple[dict, dict]:
    """Per path: the median CPU seconds of ``simulate`` over ``n`` variants of ``source`` that differ in
    one immediate (``variant``, e.g. a write to the zero register ahead of the kernel: one more instruction
    and cycle, no other effect), the paths taking turns (in rotating order) so a shared machine's load hits them alike;
    and a result."""
    cpus: dict = {p: [] for p in PATHS}
    results = {}
    order = list(PATHS.items())
    for i in range(n + 1):
        for path, mode in order[i % len(order):] + order[:i % len(order)]:  # each path after each other
            program = acc.assemble(variant.format(n=next(_VARIANT)) + f"\n{source}", hw)
            os.environ["KCGYM_SIM"] = mode
            try:
                c0 = time.process_time()
                results[path] = acc.run(program, task, cfg, hw, inputs, MAX_STEPS)[0]
                if i:  # the first round compiles where a shape bucket is new
                    cpus[path].append(time.process_time() - c0)
            finally:
                os.environ.pop("KCGYM_SIM", None)
    return {p: statistics.median(c) for p, c in cpus.items()}, results


def crossover(machine: str, kernels: list[tuple[str, int, int]], n: int, sets: int, meta: dict) -> list[dict]:
    """One row per (task, config, repeats): the compiler kernel (``repeats`` copies back to back: the same
    outputs, written again), its dynamic instructions and CPU ms per distinct simulate on each path."""
    trace = _module(machine, "trace")
    mb = MACHINES[machine]
    rows = []
    for name, index, repeats in kernels:
        acc, task, cfg, hw, program, inputs = _setup(machine, name, index, sets)
        source = acc.compile(task, cfg, hw) * repeats
        row = {"kind": "crossover", "machine": machine, "task": name, "config": index, "repeats": repeats,
               "distinct": n, "input_sets": sets}
        cpus, results = _distinct_cpu(acc, task, cfg, hw, source, inputs, n, mb.variant)
        row.update({f"{path}_cpu_ms": round(cpu * 1e3, 3) for path, cpu in cpus.items()})
        first = acc.assemble(mb.variant.format(n=0) + f"\n{source}", hw)
        row["instructions"] = results["old"].instructions
        row["dynamic_count"] = trace.dynamic_count(mb.words(first, hw), 1 << 62)
        row["identical"] = all(results[p].cycles == results["old"].cycles and all(
            np.array_equal(np.asarray(results[p].outputs[o]).view(np.uint32),
                           np.asarray(results["old"].outputs[o]).view(np.uint32)) for o in results["old"].outputs)
            for p in PATHS)
        rows.append({**row, **meta})
        print(f"{machine} {name:15s} C{index} x{repeats} {row['dynamic_count']:7d} instr  CPU ms per distinct "
              f"kernel: old {row['old_cpu_ms']:7.3f} trace {row['trace_cpu_ms']:7.3f} auto {row['auto_cpu_ms']:7.3f}  "
              f"identical={row['identical']}", flush=True)
    return rows


def choose_threshold(rows: list[dict]) -> int:
    """The threshold (a row's dynamic count, or 0) minimising the summed CPU ms of the rows when a kernel
    of at most that many instructions takes the interpreter and every other one the trace path."""
    def total(t: int) -> float:
        return sum(r["old_cpu_ms"] if r["dynamic_count"] <= t else r["trace_cpu_ms"] for r in rows)

    return min([0, *sorted(r["dynamic_count"] for r in rows)], key=lambda t: (total(t), t))


def _key(row: dict) -> tuple:
    return row.get("machine"), row.get("task"), row.get("config"), row.get("kind", "kernel")


def table(path: Path = RESULTS) -> str:
    return readme_table([json.loads(line) for line in path.read_text().splitlines() if line.strip()])


def readme_table(rows: list[dict]) -> str:
    """The README's speed tables from the results rows (``benchmarks/readme_tables.py`` calls it)."""
    kernels = [r for r in rows if r.get("kind", "kernel") == "kernel"]
    colds = [r for r in rows if r.get("kind") == "cold_process"]
    out = ["| machine | task | config | instructions | old warm s | new warm s | new first s | old instr/s | "
           "new instr/s | speedup | identical |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in kernels:
        out.append(f"| {r['machine']} | {r['task']} | C{r['config']} | {r['instructions']} | {r['old_warm_s']:.3f} | "
                   f"{r['new_warm_s']:.3f} | {r['new_first_s']:.2f} | {r['old_instr_per_s']:.3g} | "
                   f"{r['new_instr_per_s']:.3g} | {r['old_warm_s'] / r['new_warm_s']:.1f}x | "
                   f"{'yes' if r['identical'] else 'NO'} |")
    if colds:
        out += ["", f"First simulate in a fresh process, JAX's persistent cache empty (target <= {COLD_TARGET_S:g} s; "
                "before: the tree named, after: this one, alternating; median wall and CPU seconds):", "",
                "| machine | task | config | before s | before CPU s | after s | after CPU s | load |",
                "|---|---|---|---|---|---|---|---|"]
        order = {(m, t, c, kind): i for i, (m, t, c, kind) in enumerate(_cold_cells(list(COLD_KERNELS)))}
        for r in sorted(colds, key=lambda r: order.get(_cold_key(r)[1:], len(order))):
            before = (f"{r['base_s']:.2f} ({r['base']}) | {r['base_cpu_s']:.2f}" if "base_s" in r else "- | -")
            task = r["task"] + (f" ({r['kernel']})" if r.get("kernel", "compiler") != "compiler" else "")
            out.append(f"| {r['machine']} | {task} | C{r['config']} | {before} | {r['new_s']:.2f} | "
                       f"{r['new_cpu_s']:.2f} | {r['load1']:.1f} |")
    calls = [r for r in rows if r.get("kind") == "per_call"]
    if calls:
        out += ["", "Warm `Accelerator.run` of one short kernel, repeated (a process per tree, alternating; median and "
                "10th percentile ms; at the load shown, small differences are noise):", "",
                "| machine | task | config | KCGYM_SIM | before ms | before p10 | after ms | after p10 | load |",
                "|---|---|---|---|---|---|---|---|---|"]
        out += [f"| {r['machine']} | {r['task']} | C{r['config']} | {r['sim']} | {r['base_ms']:.3f} ({r['base']}) | "
                f"{r['base_p10_ms']:.3f} | {r['new_ms']:.3f} | {r['new_p10_ms']:.3f} | {r['load1']:.1f} |"
                for r in calls]
    pre = [r for r in rows if r.get("kind") == "prepass"]
    if pre:
        out += ["", "The VLIW trace path's pre-pass alone (CPU microseconds per dynamic bundle, median of "
                f"{PREPASS_CALLS} calls) and the first simulate of a fresh process (CPU s; JAX's persistent cache "
                "warm) and a warm simulate after it (wall s), before (the tree named) and after (this one), a process "
                "each, alternating; same results: outputs, cycles and counters:", "",
                "| task | config | kernel | bundles | before us/bundle | after us/bundle | less CPU | "
                "before first CPU s | after first CPU s | before warm s | after warm s | same results | load |",
                "|---" * 13 + "|"]
        out += [f"| {r['task']} | C{r['config']} | {r['kernel']} | {r['bundles']:,} | {r['base_us_per_bundle']:.2f} "
                f"({r['base']}) | {r['new_us_per_bundle']:.2f} | "
                f"{r['base_us_per_bundle'] / r['new_us_per_bundle']:.1f}x | "
                f"{r['base_first_cpu_s']:.2f} | {r['new_first_cpu_s']:.2f} | "
                + (f"{r['base_warm_s']:.2f} | {r['new_warm_s']:.2f}" if "new_warm_s" in r else "- | -")
                + f" | {'yes' if r['identical'] else 'NO'} | {r['load1']:.1f} |" for r in pre]
    runs = dict.fromkeys((r.get("date", ""), r.get("command", ""), r.get("load")) for r in rows)
    return "\n".join(out) + "".join(f"\n\n(measured {d}{'' if load is None else f', load {load:.3g}'}: `{c}`)"
                                   for d, c, load in runs)

# ---- the sweep: every kernel of every config ----------------------------------------------------------------
def _git_commit(tree: Path | None = None) -> str:
    """The short commit of ``tree`` (default: this checkout); a tree that is no git checkout says so in a
    ``COMMIT`` file (``git archive REV | tar -x``, then ``echo REV > COMMIT``) or is ``unknown``."""
    tree = tree or Path(__file__).resolve().parent.parent
    out = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    if out.returncode == 0 and out.stdout.strip() and (tree / ".git").exists():
        return out.stdout.strip()
    stamp = tree / "COMMIT"
    return stamp.read_text().strip() if stamp.exists() else "unknown"


class _PathProbe:
    """Which path ran a machine's ``simulate``: wraps its ``trace.run`` (the trace-ahead data path, None
    where it leaves the program to the interpreter). The CPU has no trace path: always the interpreter."""

    def __init__(self, machine: str):
        try:
            self.module: Any = importlib.import_module(f"kcgym.sims.{machine.lower()}.trace")
        except ModuleNotFoundError:
            self.module = None
        self.traced = False

    def __enter__(self) -> _PathProbe:
        self.traced = False
        if self.module is not None:
            self.inner = self.module.run

            def run(*args: Any, **kwargs: Any) -> Any:
                st = self.inner(*args, **kwargs)
                self.traced = self.traced or st is not None
                return st

            self.module.run = run
        return self

    def __exit__(self, *exc: object) -> None:
        if self.module is not None:
            self.module.run = self.inner

    @property
    def path(self) -> str:
        return "trace" if self.traced else "interpreter"


def sweep_cells(machine: str, configs: tuple[int, ...], tasks: tuple[str, ...] | None = None
                ) -> list[tuple[str, int, str]]:
    """(task, config, kernel) of every registered env of ``machine`` (or of ``tasks``) at ``configs``."""
    from kcgym.registry import SUPPORTED, task_for

    return [(name, cfg.index, kind) for index in configs for name in SUPPORTED[machine] if not tasks or name in tasks
            for cfg in task_for(machine, name).configs(machine) if cfg.index == index for kind in SWEEP_KINDS]


def sweep_kernel(machine: str, name: str, index: int, kind: str) -> dict | None:
    """One sweep row: first and warm ``simulate`` of the ``kind`` kernel on one input set; None where
    ``kind`` is ``expert`` and the task has none at this config."""
    from kcgym.evaluation import Evaluator
    from kcgym.registry import ACCELERATORS, task_for

    acc = ACCELERATORS[machine]
    hw = acc.make_hw()
    task = task_for(machine, name)
    cfg = task.config(machine, index)
    source = acc.compile(task, cfg, hw) if kind == "compiler" else acc.expert(task, cfg, hw)
    if source is None:
        return None
    program = acc.assemble(source, hw)
    inputs = Evaluator(acc, task, cfg, hw).input_sets(0, 1)
    probe = _PathProbe(machine)
    with probe:
        t0, c0 = time.perf_counter(), time.process_time()
        (res,) = acc.run(program, task, cfg, hw, inputs, MAX_STEPS)
        first, first_cpu = time.perf_counter() - t0, time.process_time() - c0
    walls, cpus = [], []
    for _ in range(SWEEP_WARM_REPEATS if first < SWEEP_REPEAT_BELOW_S else 1):
        with probe:
            t0, c0 = time.perf_counter(), time.process_time()
            acc.run(program, task, cfg, hw, inputs, MAX_STEPS)
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
    return {"kind": "sweep", "machine": machine, "task": name, "config": index, "kernel": kind, "status": "ok",
            "instructions": res.instructions, "cycles": res.cycles, "fault": res.fault.name if res.fault else None,
            "path": probe.path, "first_s": first, "first_cpu_s": first_cpu, "warm_s": statistics.median(walls),
            "warm_cpu_s": statistics.median(cpus), "load1": round(os.getloadavg()[0], 2)}


def sweep_worker(machine: str, configs: tuple[int, ...], tasks: tuple[str, ...] | None, skip: int) -> None:
    """Measure the cells of ``machine`` from the ``skip``-th on, one JSON event per line on stdout (a
    ``start`` before each cell, then its ``row`` or ``none``): the parent times each cell against the cap."""
    for i, (name, index, kind) in enumerate(sweep_cells(machine, configs, tasks)):
        if i < skip:
            continue
        print(json.dumps({"event": "start", "unit": i, "task": name, "config": index, "kernel": kind}), flush=True)
        row = sweep_kernel(machine, name, index, kind)
        print(json.dumps({"event": "none", "unit": i} if row is None else {"event": "row", "unit": i, "row": row}),
              flush=True)
    print(json.dumps({"event": "done"}), flush=True)


def _stopped_row(machine: str, start: dict, status: str, cap: float, detail: str = "") -> dict:
    row = {"kind": "sweep", "machine": machine, "task": start["task"], "config": start["config"],
           "kernel": start["kernel"], "status": status, "cap_s": cap, "first_s": None, "warm_s": None,
           "load1": round(os.getloadavg()[0], 2)}
    return {**row, "detail": detail[-400:]} if detail else row


def sweep(machine: str, configs: tuple[int, ...], tasks: tuple[str, ...] | None, cap: float, meta: dict,
          emit: Callable[[dict], None]) -> None:
    """Run ``machine``'s sweep in a worker process, restarting it past a cell that runs over ``cap``
    seconds (an ``over_cap`` row) or crashes it (an ``error`` row); ``emit`` gets every row."""
    skip = 0
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("KCGYM_SIM", None)
    while True:
        cmd = [sys.executable, __file__, "--sweep-worker", machine, "--skip", str(skip),
               "--configs", ",".join(map(str, configs)), *(["--tasks", ",".join(tasks)] if tasks else [])]
        with tempfile.TemporaryFile() as err:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, env=env, text=True)
            assert proc.stdout is not None
            start, began, finished = None, time.monotonic(), False
            while True:
                left = cap - (time.monotonic() - began) if start else 3600.0
                ready, _, _ = select.select([proc.stdout], [], [], max(left, 0.0))
                if not ready:  # the cell ran past the cap
                    proc.kill()
                    proc.wait()
                    assert start is not None
                    emit({**_stopped_row(machine, start, "over_cap", cap), **meta})
                    skip = start["unit"] + 1
                    break
                line = proc.stdout.readline()
                if not line:  # the worker died (or finished)
                    proc.wait()
                    if start is not None:
                        err.seek(0)
                        emit({**_stopped_row(machine, start, "error", cap, err.read().decode(errors="replace")),
                              **meta})
                        skip = start["unit"] + 1
                    else:
                        finished = True
                    break
                event = json.loads(line)
                if event["event"] == "start":
                    start, began = event, time.monotonic()
                elif event["event"] in ("row", "none"):
                    if event["event"] == "row":
                        emit({**event["row"], **meta})
                    start = None
                elif event["event"] == "done":
                    proc.wait()
                    finished = True
                    break
        if finished:
            return


def _sweep_cell(r: dict) -> str:
    warm = f"{r['warm_s']:.2f}" if r["status"] == "ok" else f"> {r['cap_s']:g} (cap)" if (
        r["status"] == "over_cap") else "error"
    first = f"{r['first_s']:.2f}" if r["status"] == "ok" else "-"
    instr = f"{r['instructions']:,}" if r["status"] == "ok" else "-"
    return (f"| {r['machine']} | {r['task']} | C{r['config']} | {r['kernel']} | {instr} | {r.get('path', '-')} | "
            f"{first} | {warm} |")


def _sweep_key(r: dict) -> float:
    return r["warm_s"] if r["status"] == "ok" else float("inf")


def readme_sweep(rows: list[dict]) -> str:
    """The README's sweep block: how many kernels miss the warm target, the worst ten, the slowest per machine."""
    rows = [r for r in rows if r.get("kind") == "sweep"]
    over = [r for r in rows if _sweep_key(r) > SWEEP_TARGET_S]
    capped = [r for r in rows if r["status"] == "over_cap"]
    errors = [r for r in rows if r["status"] == "error"]
    machines = list(dict.fromkeys(r["machine"] for r in rows))
    head = ["| machine | task | config | kernel | instructions | path | first s | warm s |",
            "|---|---|---|---|---|---|---|---|"]
    out = [f"{len(rows)} kernels (compiler and expert, {', '.join(machines)}, configs "
           f"{', '.join(f'C{c}' for c in sorted({r['config'] for r in rows}))}): {len(over)} with a warm simulate over "
           f"{SWEEP_TARGET_S:g} s ({len(capped)} of them stopped at the cap), {len(errors)} failed to run.", "",
           "The ten slowest:", "", *head]
    out += [_sweep_cell(r) for r in sorted(rows, key=_sweep_key, reverse=True)[:10]]
    out += ["", "The slowest of each machine:", "", *head]
    out += [_sweep_cell(max((r for r in rows if r["machine"] == m), key=_sweep_key)) for m in machines]
    slow_first = sorted((r for r in rows if r["status"] == "ok" and r["first_s"] > COLD_TARGET_S),
                        key=lambda r: -r["first_s"])
    out += ["", f"{len(slow_first)} with a first simulate over {COLD_TARGET_S:g} s (the process's first of that "
            "kernel, JAX's persistent cache as the box had it: a compile where the shape bucket was new to the process)"
            + (": " + "; ".join(f"{r['machine']} {r['task']} C{r['config']} {r['kernel']} {r['first_s']:.1f} s"
                                for r in slow_first) if slow_first else "") + "."]
    runs: dict = {}
    for r in rows:
        runs.setdefault((r.get("date", ""), r.get("command", ""), r.get("commit", "")), []).append(r.get("load1"))
    return "\n".join(out) + "".join(
        f"\n\n(measured {d} at {c}: `{cmd}`; 1-minute load {min(x for x in loads if x is not None):.1f}-"
        f"{max(x for x in loads if x is not None):.1f})" for (d, cmd, c), loads in runs.items())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--machines", default=",".join(MACHINES), help=f"comma-separated, of {','.join(MACHINES)}")
    ap.add_argument("--quick", action="store_true", help="each machine's quick tasks at C1 and C3")
    ap.add_argument("--tasks", default=None, help="comma-separated task names (default: all, or --quick's)")
    ap.add_argument("--configs", default=None, help="e.g. 1,3,5")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--append", action="store_true", help="add the rows to --out instead of replacing it")
    ap.add_argument("--no-cold", action="store_true", help="skip the fresh-process cold starts")
    ap.add_argument("--table", action="store_true", help="print the Markdown table of --out and exit")
    ap.add_argument("--crossover", action="store_true", help="measure the interpreter/trace dispatch threshold")
    ap.add_argument("--distinct", type=int, default=5, help="--crossover: distinct variants per kernel and path")
    ap.add_argument("--sets", type=int, default=4, help="--crossover: input sets per simulate (as BatchScorer's "
                    "3 hidden + stress, padded to 4)")
    ap.add_argument("--sweep", action="store_true", help="every kernel of every config: first and warm simulate")
    ap.add_argument("--cap", type=float, default=None, help=f"--sweep: seconds per kernel (default {SWEEP_CAP_S:g}, "
                    f"--quick {SWEEP_QUICK_CAP_S:g})")
    ap.add_argument("--cold", action="store_true", help="only the fresh-process cold starts (COLD_KERNELS, "
                    "COLD_EXPERTS), all four machines by default; they replace the results file's cold rows of the "
                    "same kernels")
    ap.add_argument("--base", type=Path, default=None, help="--cold: a checkout of the tree before (git archive "
                    "REV | tar -x -C DIR; echo REV > DIR/COMMIT), timed alternating with this one")
    ap.add_argument("--per-call", action="store_true", help="warm per-call time of short kernels "
                    "(PER_CALL_KERNELS), this tree against --base, a process each, alternating")
    ap.add_argument("--prepass", action="store_true", help="the VLIW pre-pass alone (CPU per bundle) and the first "
                    "simulate of PREPASS_KERNELS, this tree against --base, a process each, alternating")
    ap.add_argument("--sweep-worker", default=None, help=argparse.SUPPRESS)  # one machine's cells (sweep's child)
    ap.add_argument("--skip", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.table:
        print(table(args.out))
        return
    if args.sweep_worker:
        sweep_worker(args.sweep_worker, tuple(int(c) for c in args.configs.split(",")),
                     tuple(args.tasks.split(",")) if args.tasks else None, args.skip)
        return
    if args.sweep:
        run_sweep(ap, args)
        return
    if args.cold:
        run_cold(ap, args)
        return
    if args.prepass:
        run_prepass(ap, args)
        return
    if args.per_call:
        if args.base is None or not (args.base / "kcgym").is_dir():
            ap.error("--per-call needs --base DIR, a kcgym checkout of the tree before")
        meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "command": "python benchmarks/bench_speed.py " + " ".join(sys.argv[1:]), "commit": _git_commit()}
        rows = []
        for machine, name, index, sim in PER_CALL_KERNELS:
            row = {**per_call_row(machine, name, index, sim, args.base, args.repeats, 200 if args.quick else 1000),
                   **meta}
            rows.append(row)
            print(f"per call {machine} {name} C{index} {row['sim']}: before {row['base_ms']:.3f} ms after "
                  f"{row['new_ms']:.3f} ms (10th pct {row['base_p10_ms']:.3f} -> {row['new_p10_ms']:.3f})  "
                  f"load {row['load1']}", flush=True)
        keys = {(r["machine"], r["task"], r["config"], r["sim"]) for r in rows}
        kept = [line for line in args.out.read_text().splitlines() if line.strip() and not (
            json.loads(line).get("kind") == "per_call" and tuple(json.loads(line).get(k) for k in (
                "machine", "task", "config", "sim")) in keys)] if args.out.exists() else []
        args.out.write_text("".join(line + "\n" for line in kept) + "".join(json.dumps(r) + "\n" for r in rows))
        return
    from kcgym.tasks import TASKS

    machines = args.machines.split(",")
    unknown = [m for m in machines if m not in MACHINES]
    if unknown:
        ap.error(f"unknown machine(s) {','.join(unknown)}; known: {','.join(MACHINES)}")
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "command": "python benchmarks/bench_speed.py " + " ".join(sys.argv[1:]),
            "load": round(os.getloadavg()[0], 1)}  # the 1-minute load average as the run starts (a shared box)
    if args.crossover:
        rows = []
        for machine in machines:
            mb, acc = MACHINES[machine], _accelerator(machine)
            if not mb.threshold:
                ap.error(f"{machine} has no interpreter/trace dispatch threshold to measure")
            names = args.tasks.split(",") if args.tasks else (
                list(mb.quick_crossover) if args.quick else [n for n, t in TASKS.items() if acc.supports(t)])
            configs = [int(c) for c in args.configs.split(",")] if args.configs else [1]
            kernels = [(n, c, 1) for c in configs for n in names]
            if not args.tasks:
                kernels += [(n, 1, r) for n, r in mb.crossover_sweep] + list(mb.crossover_extra)
            found = crossover(machine, kernels, args.distinct, args.sets, meta)
            c1 = [r for r in found if r["config"] <= 2]
            then = getattr(_module(machine, "trace"), mb.threshold)
            choice = {"kind": "choice", "machine": machine, "threshold": choose_threshold(c1), "from_rows": len(c1),
                      "dispatch_threshold_then": then, **meta}
            print(f"{machine}: threshold minimising the summed CPU time of the C1 and C2 rows: {choice['threshold']} "
                  f"instructions (trace.{mb.threshold} is {then})")
            rows += [*found, choice]
        out = CROSSOVER if args.out == RESULTS else args.out
        old = out.read_text() if args.append and out.exists() else ""
        out.write_text(old + "".join(json.dumps(r) + "\n" for r in rows))
        return
    rows = []
    for machine in machines:
        mb, acc = MACHINES[machine], _accelerator(machine)
        tasks = args.tasks.split(",") if args.tasks else (
            list(mb.quick_tasks) if args.quick else [n for n, t in _tasks(machine).items() if acc.supports(t)])
        configs = [int(c) for c in args.configs.split(",")] if args.configs else list(
            QUICK_CONFIGS if args.quick else FULL_CONFIGS)
        for index in configs:
            for name in tasks:
                row = {"kind": "kernel", **measure(machine, name, index, args.repeats), **meta}
                rows.append(row)
                print(f"{machine} {name:15s} C{index} {row['instructions']:9d} instr  old {row['old_warm_s']:7.3f}s "
                      f"new {row['new_warm_s']:7.3f}s (first {row['new_first_s']:6.2f}s)  "
                      f"new {row['new_instr_per_s']:10.3g} instr/s  identical={row['identical']}", flush=True)
        for name, index in () if args.no_cold else COLD_KERNELS[machine]:
            rows.append({**cold_row(machine, name, index, None, 1), **meta})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    old = args.out.read_text() if args.append and args.out.exists() else ""
    new_keys = {_key(r) for r in rows}  # --append: a re-measured (machine, task, config, kind) replaces its row
    old = "".join(line + "\n" for line in old.splitlines() if line.strip() and _key(json.loads(line)) not in new_keys)
    args.out.write_text(old + "".join(json.dumps(r) + "\n" for r in rows))
    print()
    print(table(args.out))


def _cold_cells(machines: list[str]) -> list[tuple[str, str, int, str]]:
    """(machine, task, config, kernel) of ``--cold``: COLD_KERNELS' compiler kernels, then COLD_EXPERTS'."""
    return [(m, t, c, "compiler") for m in machines for t, c in COLD_KERNELS.get(m, ())] + [
        (m, t, c, "expert") for m in machines for t, c in COLD_EXPERTS.get(m, ())]


def _cold_key(row: dict) -> tuple:
    """A results row's cold-start identity (other kinds of row: kind first, so they never match one)."""
    return row.get("kind"), row.get("machine"), row.get("task"), row.get("config"), row.get("kernel", "compiler")


def run_cold(ap: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``--cold``: each machine's COLD_KERNELS, this tree against ``--base``; rows replace those of the same kernel."""
    machines = args.machines.split(",") if args.machines != ",".join(MACHINES) else list(SWEEP_MACHINES)
    unknown = [m for m in machines if m not in COLD_KERNELS]
    if unknown:
        ap.error(f"unknown machine(s) {','.join(unknown)}; known: {','.join(COLD_KERNELS)}")
    if args.base is not None and not (args.base / "kcgym").is_dir():
        ap.error(f"--base {args.base} is not a kcgym checkout (no kcgym/ in it)")
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "command": "python benchmarks/bench_speed.py " + " ".join(sys.argv[1:]), "commit": _git_commit()}
    rows = []
    for machine, name, index, kind in _cold_cells(machines):
        if args.tasks and name not in args.tasks.split(","):
            continue
        row = {**cold_row(machine, name, index, args.base, args.repeats, kind), **meta}
        rows.append(row)
        before = f"before {row['base_s']:.2f} s (CPU {row['base_cpu_s']:.2f}) " if "base_s" in row else ""
        print(f"cold {machine} {name} C{index} {kind}: {before}after {row['new_s']:.2f} s (CPU {row['new_cpu_s']:.2f})"
              f"  load {row['load1']}", flush=True)
    keys = {_cold_key(r) for r in rows}
    kept = [line for line in (args.out.read_text().splitlines() if args.out.exists() else [])
            if line.strip() and _cold_key(json.loads(line)) not in keys]
    args.out.write_text("".join(line + "\n" for line in kept) + "".join(json.dumps(r) + "\n" for r in rows))


def run_sweep(ap: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``--sweep``: each machine's cells in turn, rows appended to the results file as they come."""
    machines = args.machines.split(",") if args.machines != ",".join(MACHINES) else list(SWEEP_MACHINES)
    unknown = [m for m in machines if m not in SWEEP_MACHINES]
    if unknown:
        ap.error(f"unknown machine(s) {','.join(unknown)}; known: {','.join(SWEEP_MACHINES)}")
    configs = tuple(int(c) for c in args.configs.split(",")) if args.configs else (
        SWEEP_QUICK_CONFIGS if args.quick else SWEEP_CONFIGS)
    cap = args.cap if args.cap is not None else SWEEP_QUICK_CAP_S if args.quick else SWEEP_CAP_S
    out = SWEEP if args.out == RESULTS else args.out
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "command": "python benchmarks/bench_speed.py " + " ".join(sys.argv[1:]), "commit": _git_commit()}
    out.parent.mkdir(parents=True, exist_ok=True)
    if not args.append:
        out.write_text("")

    def emit(row: dict) -> None:
        with out.open("a") as f:
            f.write(json.dumps(row) + "\n")
        warm = f"{row['warm_s']:8.3f}s" if row["status"] == "ok" else row["status"]
        print(f"{row['machine']:4s} {row['task']:15s} C{row['config']} {row['kernel']:8s} {warm} "
              f"{row.get('path', '')}", flush=True)

    tasks = tuple(args.tasks.split(",")) if args.tasks else None
    for machine in machines:
        sweep(machine, configs, tasks, cap, meta, emit)
    print()
    print(readme_sweep([json.loads(line) for line in out.read_text().splitlines() if line.strip()]))


if __name__ == "__main__":
    main()
