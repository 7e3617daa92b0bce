"""Batch scoring throughput: distinct kernels per second through ``BatchScorer``, before and after, in one run.

For each case (default: matmul on NPU, VLIW and RVV at C1 and C3) a batch of ``n`` *distinct* kernels is
scored: the compiler's kernel with one scalar instruction put in front that sets a register the kernel does
not use to a numbered immediate (:func:`variant`), so every kernel differs in one immediate and misses every
cache (source, program words, trace), as an RL batch does, while its cycles are those of the variant
numbered 0 (the run checks that every record is correct with those cycles).
Each case runs in a fresh subprocess against two trees, alternating so a shared machine's load hits both
alike: ``before`` (``--base``, a checkout of main: ``git worktree add --detach /tmp/h16asm_base main``) and
``after`` (this tree). Per case and tree (best of ``--repeats`` batches, each of fresh sources):

  kernels_per_s  distinct kernels scored per wall second (BatchScorer's default thread pool; ``after`` also
                 with ``backend="processes"``, its workers started and warm before the timed batches)
  cpu_ms         CPU milliseconds of the process per kernel (all threads; threads backend only)
  assemble_ms    CPU milliseconds of one ``accelerator.assemble`` of such a kernel (no cache)
  overhead_ms    CPU milliseconds per kernel of everything but the simulation (``accelerator.run`` replays
                 one real result): assembly, checking, output comparison, the records

    python benchmarks/bench_scoring.py [--quick] [--base DIR] [--cases NPU:matmul:1 ...] [--repeats 2]
    python benchmarks/bench_scoring.py --profile [--quick] [--cases ...]   (where a kernel's time goes)
    python benchmarks/bench_scoring.py --paths [--env-id ID] [--config 1] [--n 64]   (env vs single vs batch)
    python benchmarks/bench_scoring.py --merge [--quick] [--cases NPU:matmul:1 ...]   (NPU merged-call size)

Writes one JSON line per (case, tree) to ``benchmarks/results/scoring.jsonl`` (``--out``; ``--quick``
writes nothing) and prints the table side by side. ``python benchmarks/readme_tables.py --write`` puts
it in the README.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "scoring.jsonl"
PROFILE_RESULTS = ROOT / "benchmarks" / "results" / "scoring_profile.jsonl"
MERGE_RESULTS = ROOT / "benchmarks" / "results" / "scoring_merge.jsonl"
MERGE_SIZES = (1, 4, 8, 16, 32, 64)  # --merge: programs per merged NPU data-path call
TARGETS = {1: 2000, 3: 100}  # issue 16: distinct kernels/s at C1 and at C3
# (machine, task, config) -> kernels per batch: what a shared 2-core machine scores in seconds
CASES = {("NPU", "matmul", 1): 64, ("VLIW", "matmul", 1): 64, ("RVV", "matmul", 1): 4,
         ("NPU", "matmul", 3): 32, ("VLIW", "matmul", 3): 8, ("RVV", "matmul", 3): 2}
QUICK = {("NPU", "matmul", 1): 16, ("VLIW", "matmul", 1): 8}
# machine -> (register prefix or names the kernel may leave free, the instruction that sets one of them)
VARIANT = {"NPU": ([f"gp{i}" for i in range(15, 0, -1)], "S_ADDI_INT {reg}, gp0, {imm}"),
           "VLIW": ([f"r{i}" for i in range(15, 0, -1)], "MOVI {reg}, {imm}"),
           "RVV": (["t6", "t5", "t4", "s11", "s10", "s9", "a7", "a5"], "li {reg}, {imm}")}


def variant(machine: str, source: str, imm: int) -> str:
    """``source`` with ``reg = imm`` in front of its first instruction, ``reg`` a register it never names.

    The new instruction is scalar and independent of the kernel, so every variant has the same cycles and
    outputs; only the immediate (hence the source, the program words and the trace) differs."""
    regs, template = VARIANT[machine]
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", source))
    reg = next((r for r in regs if r not in words), None)
    if reg is None:
        raise SystemExit(f"no free register for a {machine} variant: the kernel names all of {regs}")
    lines = source.split("\n")
    comment = re.compile(r"\s*(;|#|//|$)")
    at = next(i for i, line in enumerate(lines) if not comment.match(line))
    while re.match(r"\s*[.][A-Za-z]|\s*[A-Za-z_.$][A-Za-z0-9_.$]*:\s*$", lines[at]):  # directives, labels
        at += 1
    return "\n".join([*lines[:at], "    " + template.format(reg=reg, imm=imm), *lines[at:]])


def measure(machine: str, task: str, config: int, n: int, repeats: int, backend: str = "threads") -> dict:
    """One case in this process (whatever ``kcgym`` is importable): rates and a correctness check."""
    import kcgym  # noqa: F401
    from kcgym.scoring import BatchScorer

    scorer = BatchScorer(f"KernelCraft-{machine}-{task}", config, **({"backend": backend} if backend != "threads"
                                                                        else {}))
    pids = scorer.start() or []  # worker processes (backend="processes"; older trees: None): CPU from /proc
    env = scorer.env
    source = env.accelerator.compile(env.task, env.cfg, env.hw)
    (warm,) = scorer.score([variant(machine, source, 0)])  # JIT compilation, baseline, hidden inputs
    best_wall = best_cpu = float("inf")
    ok = True
    for r in range(repeats):
        kernels = [variant(machine, source, 1 + r * n + i) for i in range(n)]
        t0, c0, w0 = time.perf_counter(), time.process_time(), sum(map(_cpu_s, pids))
        records = scorer.score(kernels)
        best_wall = min(best_wall, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0 + sum(map(_cpu_s, pids)) - w0)
        ok = ok and all(rec.correct and rec.cycles == warm.cycles for rec in records)
    if backend != "threads":  # the time is the workers' (CPU: theirs and this process's; patches cannot reach them)
        scorer.close()
        return {"kernels_per_s": float(f"{n / best_wall:.4g}"), "cpu_ms": float(f"{best_cpu / n * 1e3:.4g}"),
                "all_correct": bool(ok and warm.correct), "cycles": warm.cycles, "workers": scorer.max_workers,
                "backend": backend}
    overhead_ms = _without_simulation(scorer, machine, source, max(n, 64), 1 + repeats * n)
    sources = [variant(machine, source, 1 + (repeats + 3) * max(n, 64) + i) for i in range(max(n, 8))]
    paused = getattr(importlib.import_module("kcgym.scoring"), "_gc_paused", contextlib.nullcontext)
    with paused():  # as a scored batch assembles (older trees without the pause: as they scored)
        c0 = time.process_time()
        for s in sources:
            env.accelerator.assemble(s, env.hw)
        assemble_ms = (time.process_time() - c0) / len(sources) * 1e3
    return {"kernels_per_s": float(f"{n / best_wall:.4g}"), "cpu_ms": float(f"{best_cpu / n * 1e3:.4g}"),
            "assemble_ms": round(assemble_ms, 3), "overhead_ms": round(overhead_ms, 3),
            "all_correct": bool(ok and warm.correct), "cycles": warm.cycles,
            "workers": scorer.max_workers, "backend": backend}


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) a live process has used so far (Linux ``/proc``; clock ticks, so 10 ms steps)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _without_simulation(scorer, machine: str, source: str, n: int, first: int) -> float:
    """CPU ms per distinct kernel of the scoring path with the simulator taken out: ``accelerator.run``
    replays one real result, so what is left is assembly, checking, comparison and the records."""
    cls = type(scorer.env.accelerator)
    real, replay = cls.run, {}
    real_many = getattr(cls, "run_many", None)  # trees with merged runs (the NPU): replayed the same way

    def run(self, *args, **kwargs):
        if "result" not in replay:
            replay["result"] = real(self, *args, **kwargs)
        return replay["result"]

    def run_many(self, programs, *args, **kwargs):
        if "many" not in replay:
            replay["many"] = real_many(self, programs[:1], *args, **kwargs)[0]
        return [replay["many"]] * len(programs)

    had_many = "run_many" in cls.__dict__
    cls.run = run
    if real_many is not None:
        cls.run_many = run_many
    try:
        scorer.score([variant(machine, source, first)])
        best = float("inf")
        for r in range(3):
            kernels = [variant(machine, source, first + 1 + r * n + i) for i in range(n)]
            c0 = time.process_time()
            scorer.score(kernels)
            best = min(best, time.process_time() - c0)
    finally:
        cls.run = real
        if real_many is not None:
            if had_many:
                cls.run_many = real_many
            else:
                del cls.run_many
    return best / n * 1e3


# the --profile table's column order
PHASE_ORDER = ("assembly", "trace pre-pass", "simulation", "results", "reference", "comparison", "records", "other")
# (module, attribute, phase): what --profile times per kernel; a missing attribute is skipped (older trees)
PHASES = (("kcgym.evaluation", "assemble_cached", "assembly"),
          ("kcgym.sims.npu.trace", "prepass", "trace pre-pass"),
          ("kcgym.sims.vliw.trace", "prepass", "trace pre-pass"),
          ("kcgym.sims.rvv.trace", "prepass", "trace pre-pass"),
          ("kcgym.sims.rvv.trace", "_program", "trace pre-pass"),  # RVV's run_info: decode, then _Run.advance
          ("kcgym.sims.rvv.trace", "_Run.advance", "trace pre-pass"),
          ("kcgym.evaluation", "Evaluator.expected_outputs", "reference"),
          ("kcgym.evaluation", "Evaluator._fill", "comparison"),
          ("kcgym.scoring", "BatchScorer._record", "records"))


def profile(machine: str, task: str, config: int, n: int, repeats: int = 3) -> dict:
    """Where one distinct kernel's time goes, in CPU ms per kernel (all threads of the process, so XLA's
    own threads count too; steadier than wall time on a shared box), on one scoring thread
    (``max_workers=1``), best of ``repeats`` batches per phase: assembly, the trace pre-pass (where the
    machine has one), the rest of the simulation (JAX: images, dispatch, the run, reading the state back),
    reading results, the reference outputs (once per seed, shared by the batch), comparing outputs, building
    records, and everything else."""

    from kcgym.scoring import BatchScorer

    scorer = BatchScorer(f"KernelCraft-{machine}-{task}", config, max_workers=1)
    env = scorer.env
    source = env.accelerator.compile(env.task, env.cfg, env.hw)
    scorer.score([variant(machine, source, 0)])
    spent: dict[str, float] = {}

    def timed_fn(fn, phase):
        def wrapper(*args, **kwargs):
            c0 = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[phase] = spent.get(phase, 0.0) + time.process_time() - c0
        return wrapper

    cls = type(env.accelerator)
    targets = [(importlib.import_module(mod), attr, phase) for mod, attr, phase in PHASES]
    targets += [(cls, "simulate", "simulation"), (cls, "result", "results")]
    if "run_many" in cls.__dict__:  # a machine with merged runs: its simulation is run_many less its results
        targets += [(cls, "run_many", "simulation")]
    patched = []
    for owner, attr, phase in targets:
        *path, name = attr.split(".")
        for part in path:
            owner = getattr(owner, part, None)
        if owner is None or not hasattr(owner, name):
            continue
        patched.append((owner, name, owner.__dict__.get(name, getattr(owner, name))))
        setattr(owner, name, timed_fn(getattr(owner, name), phase))
    best: dict[str, float] = {}
    ok = True
    try:
        for r in range(repeats):
            scorer._inputs.clear()  # so each batch computes its reference outputs, as a fresh seed does
            spent.clear()
            kernels = [variant(machine, source, 1 + r * n + i) for i in range(n)]
            c0 = time.process_time()
            records = scorer.score(kernels)
            ms = {k: v / n * 1e3 for k, v in spent.items()}
            if "trace pre-pass" in ms:  # the pre-pass runs inside simulate
                ms["simulation"] -= ms["trace pre-pass"]
            if "run_many" in cls.__dict__ and "results" in ms:  # and run_many reads its own results
                ms["simulation"] -= ms["results"]
            ms["other"] = (time.process_time() - c0) / n * 1e3 - sum(ms.values())
            ms["total"] = (time.process_time() - c0) / n * 1e3
            best = {k: min(v, best.get(k, v)) for k, v in ms.items()}
            ok = ok and all(rec.correct for rec in records)
    finally:
        for owner, name, original in reversed(patched):
            setattr(owner, name, original)
    total = best.pop("total")
    return {"total_ms": round(total, 4), "phases_ms": {k: round(v, 4) for k, v in best.items()}, "all_correct": ok}


def merge_sizes(task: str, config: int, sizes: tuple[int, ...], repeats: int) -> list[dict]:
    """CPU ms per distinct kernel of ``NPUAccelerator.run_many`` (``trace.MERGE_PROGRAMS`` = each size, one
    merged call) against ``run`` one program at a time, on the same fresh numbered variants (this tree only:
    the merged path is new). Best of ``repeats`` per size and path, the two alternating."""
    from kcgym.scoring import BatchScorer
    from kcgym.sims.npu import trace

    scorer = BatchScorer(f"KernelCraft-NPU-{task}", config, max_workers=1)
    env, acc = scorer.env, scorer.env.accelerator
    source = acc.compile(env.task, env.cfg, env.hw)
    scorer.score([variant("NPU", source, 0)])
    inputs = scorer.hidden_input_sets(0)[0]
    inputs = inputs + [inputs[-1]] * ((1 << (len(inputs) - 1).bit_length()) - len(inputs))  # as the evaluator pads
    steps = env.evaluator.max_steps(env.evaluator.baseline())
    counter = iter(range(1, 1 << 30))

    def fresh(k: int) -> list:
        return [acc.assemble(variant("NPU", source, next(counter)), env.hw) for _ in range(k)]

    rows = []
    default = trace.MERGE_PROGRAMS
    try:
        for size in sizes:
            trace.MERGE_PROGRAMS = size
            acc.run_many(fresh(max(size, 2)), env.task, env.cfg, env.hw, inputs, steps)  # compile this size
            best = {"merged": float("inf"), "alone": float("inf")}
            for _ in range(repeats):
                for path in ("merged", "alone"):
                    programs = fresh(size)
                    c0 = time.process_time()
                    if path == "merged" and size > 1:
                        acc.run_many(programs, env.task, env.cfg, env.hw, inputs, steps)
                    else:
                        for p in programs:
                            acc.run(p, env.task, env.cfg, env.hw, inputs, steps)
                    best[path] = min(best[path], (time.process_time() - c0) / size * 1e3)
            rows.append({"machine": "NPU", "task": task, "config": config, "programs": size,
                         "merged_ms": round(best["merged"], 3), "alone_ms": round(best["alone"], 3)})
            print(f"NPU {task} C{config} {size:3d} programs: merged {best['merged']:.3f} ms/kernel, alone "
                  f"{best['alone']:.3f}", flush=True)
    finally:
        trace.MERGE_PROGRAMS = default
    return rows


def merges(args: argparse.Namespace) -> None:
    """``--merge``: the merged call's cost per kernel by size, per NPU case (default matmul C1 and C3)."""
    cases = [("matmul", 1)] if args.quick else [("matmul", 1), ("matmul", 3)]
    if args.cases:
        cases = [(c.split(":")[1], int(c.split(":")[2])) for c in args.cases if c.upper().startswith("NPU:")]
    sizes = (1, 4, 8) if args.quick else MERGE_SIZES
    from kcgym.sims.npu import trace

    print(f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; this tree ({_commit(ROOT)}), "
          f"trace.MERGE_PROGRAMS = {trace.MERGE_PROGRAMS}")
    rows = []
    for task, config in cases:
        for r in merge_sizes(task, config, sizes, args.repeats):
            rows.append({**r, "commit": _commit(ROOT), "repeats": args.repeats, "cpus": os.cpu_count(),
                         "load": round(os.getloadavg()[0], 1), "date": time.strftime("%Y-%m-%d"),
                         "default": trace.MERGE_PROGRAMS,
                         "command": "python benchmarks/bench_scoring.py " + " ".join(sys.argv[1:])})
        if not args.quick:  # in place of this run's cases' rows; other cases' rows are kept
            old = [json.loads(x) for x in MERGE_RESULTS.read_text().splitlines() if x.strip()] \
                if MERGE_RESULTS.exists() else []
            done = {(r["task"], r["config"]) for r in rows}
            kept = [r for r in old if (r["task"], r["config"]) not in done]
            MERGE_RESULTS.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in kept + rows))
    if not args.quick:
        print(f"wrote {len(rows)} rows to {MERGE_RESULTS}")


def render_merge(rows: list[dict]) -> str:
    """The README table of ``--merge`` (a pure function of its file)."""
    cases = list(dict.fromkeys((r["task"], r["config"]) for r in rows))
    sizes = sorted({r["programs"] for r in rows})
    by = {(r["task"], r["config"], r["programs"]): r for r in rows}
    out = ["| NPU case | one at a time, CPU ms/kernel | " + " | ".join(f"{n} merged" for n in sizes) + " |",
           "|---|---|" + "---|" * len(sizes)]
    for task, config in cases:
        alone = min(r["alone_ms"] for r in rows if (r["task"], r["config"]) == (task, config))
        cells = [f"{by[(task, config, n)]['merged_ms']:.3f}" if (task, config, n) in by else "-" for n in sizes]
        out.append(f"| {task} C{config} | {alone:.3f} | " + " | ".join(cells) + " |")
    first = rows[0]
    out += ["", f"`NPUAccelerator.run_many` CPU ms per distinct kernel by programs per merged call (\"1 merged\" runs "
            f"them one at a time too), best of {first['repeats']}; `trace.MERGE_PROGRAMS` = {first['default']}; "
            f"measured {first['date']} on {first['cpus']} CPUs at load {min(r['load'] for r in rows)}-"
            f"{max(r['load'] for r in rows)} ({', '.join(dict.fromkeys(r['commit'] for r in rows))})."]
    return "\n".join(out)


def _commit(tree: Path) -> str:
    out = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip() or "?"


def run_case(tree: Path, case: tuple[str, str, int], n: int, repeats: int, split: bool = False,
             backend: str = "threads") -> dict:
    """``measure`` (``split``: ``profile``) in a subprocess that imports kcgym from ``tree``."""
    machine, task, config = case
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--measure", f"{machine}:{task}:{config}", "--n", str(n),
           "--repeats", str(repeats), *(["--profile"] if split else []),
           *(["--backend", backend] if backend != "threads" else [])]
    out = subprocess.run(cmd, env=env, cwd=tree, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{case} on {tree} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def compare(args: argparse.Namespace) -> None:
    cases = QUICK if args.quick else CASES
    if args.cases:
        cases = {}
        for c in args.cases:
            m, t, k = c.split(":")
            cases[(m.upper(), t, int(k))] = CASES.get((m.upper(), t, int(k)), 8)
    if args.batch:  # one batch size for every case
        cases = {case: args.batch for case in cases}
    trees = {"before": Path(args.base).resolve(), "after": ROOT}
    if not (trees["before"] / "kcgym").is_dir():
        raise SystemExit(f"--base {args.base} is not a kcgym checkout (git worktree add --detach {args.base} main)")
    commits = {name: _commit(tree) for name, tree in trees.items()}
    print(f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; before = {trees['before']} ({commits['before']}), "
          f"after = {ROOT} ({commits['after']})")
    if args.profile:
        return profiles(args, cases, trees, commits)
    print(f"{'case':18s} {'n':>3s}  {'before k/s':>10s} {'after k/s':>10s} {'x':>5s} {'processes':>9s}  "
          f"{'asm ms before':>13s} {'after':>6s}  {'no-sim ms before':>16s} {'after':>6s}  {'target':>6s}  correct")
    rows: list[dict] = []
    out = Path(args.out)
    command = "python benchmarks/bench_scoring.py " + " ".join(sys.argv[1:])
    runs = (("before", "threads"), ("after", "threads"), ("after", "processes"))
    for case, n in cases.items():
        got = {}
        for name, backend in runs:
            got[name, backend] = run_case(trees[name], case, n, args.repeats, backend=backend)
        b, a, p = got["before", "threads"], got["after", "threads"], got["after", "processes"]
        target = TARGETS.get(case[2])
        print(f"{case[0]}-{case[1]} C{case[2]:<5d} {n:3d}  {b['kernels_per_s']:10.3g} {a['kernels_per_s']:10.3g} "
              f"{a['kernels_per_s'] / b['kernels_per_s']:5.2f} {p['kernels_per_s']:9.3g}  {b['assemble_ms']:13.3f} "
              f"{a['assemble_ms']:6.3f}  {b['overhead_ms']:16.3f} {a['overhead_ms']:6.3f}  "
              f"{target or '-':>6}  {b['all_correct'] and a['all_correct'] and p['all_correct']}", flush=True)
        for name, backend in runs:
            rows.append({"machine": case[0], "task": case[1], "config": case[2], "tree": name,
                         "commit": commits[name], "n": n, "repeats": args.repeats, **got[name, backend],
                         "backend": backend, "target_kernels_per_s": target, "cpus": os.cpu_count(),
                         "load": round(os.getloadavg()[0], 1), "date": time.strftime("%Y-%m-%d"),
                         "command": command})
        if not args.quick:  # after every case, so an interrupted run keeps what it measured
            _write_rows(out, rows)
    if not args.quick:
        print(f"wrote {len(rows)} rows to {out}")


def _write_rows(out: Path, rows: list[dict]) -> None:
    """``rows`` into ``out`` in place of the rows of the same (machine, task, config, batch size, tree, backend);
    the file's other rows (cases this run did not measure) are kept."""
    def key(r: dict) -> tuple:
        return r["machine"], r["task"], r["config"], r["n"], r["tree"], r.get("backend", "threads")

    new = {key(r) for r in rows}
    old = [json.loads(line) for line in out.read_text().splitlines() if line.strip()] if out.exists() else []
    kept = [r for r in old if key(r) not in new]
    out.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in kept + rows))


def profiles(args: argparse.Namespace, cases: dict, trees: dict[str, Path], commits: dict[str, str]) -> None:
    """The split of one distinct kernel's wall time, per case, before and after (``--profile``)."""
    rows: list[dict] = []
    out = Path(args.profile_out)
    for case, n in cases.items():
        for name in ("before", "after"):
            got = run_case(trees[name], case, n, args.repeats, split=True)
            split = "  ".join(f"{k} {v:.3f}" for k, v in got["phases_ms"].items())
            print(f"{case[0]}-{case[1]} C{case[2]} {name:6s} {got['total_ms']:8.3f} ms/kernel: {split}", flush=True)
            rows.append({"machine": case[0], "task": case[1], "config": case[2], "tree": name,
                         "commit": commits[name], "n": n, "repeats": args.repeats, **got, "cpus": os.cpu_count(),
                         "load": round(os.getloadavg()[0], 1), "date": time.strftime("%Y-%m-%d"),
                         "command": "python benchmarks/bench_scoring.py " + " ".join(sys.argv[1:])})
        if not args.quick:  # in place of this run's cases' rows; other cases' rows are kept
            old = [json.loads(x) for x in out.read_text().splitlines() if x.strip()] if out.exists() else []
            done = {(r["machine"], r["task"], r["config"]) for r in rows}
            kept = [r for r in old if (r["machine"], r["task"], r["config"]) not in done]
            out.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in kept + rows))
    if not args.quick:
        print(f"wrote {len(rows)} rows to {out}")


def render_profile(rows: list[dict]) -> str:
    """The README table of ``--profile``: ms per kernel by phase, before -> after (a pure function of the file)."""
    seen = {k for r in rows for k in r["phases_ms"]}
    phases = [p for p in PHASE_ORDER if p in seen] + sorted(seen - set(PHASE_ORDER))
    by = {(r["machine"], r["task"], r["config"], r["tree"]): r for r in rows}
    cases = list(dict.fromkeys((r["machine"], r["task"], r["config"]) for r in rows))
    out = ["| machine | task | config | total CPU ms before | after | " + " | ".join(phases) + " |",
           "|---|---|---|---|---|" + "---|" * len(phases)]
    for m, t, c in cases:
        b, a = by[(m, t, c, "before")], by[(m, t, c, "after")]
        cells = [f"{b['phases_ms'].get(p, 0):.3f} -> {a['phases_ms'].get(p, 0):.3f}"
                 if p in b["phases_ms"] or p in a["phases_ms"] else "-" for p in phases]
        out.append(f"| {m} | {t} | C{c} | {b['total_ms']:.3f} | {a['total_ms']:.3f} | " + " | ".join(cells) + " |")
    first = rows[0]
    when = "; ".join(dict.fromkeys(f"{r['machine']} C{r['config']} {r['date']} at load {r['load']}"
                                   for r in rows if r["tree"] == "after"))
    out += ["", f"CPU ms per distinct kernel (all threads) on one scoring thread (`max_workers=1`), best phase of "
            f"{first['repeats']} batches, before -> after; measured on {first['cpus']} CPUs: {when}; every kernel "
            f"correct: {all(r['all_correct'] for r in rows)}."]
    return "\n".join(out)


def render_floor(rows: list[dict]) -> str:
    """The README's sentence on the ceiling the ``--profile`` split sets (a pure function of its file): per
    case of this tree, CPU ms per kernel, of which Python outside the JAX calls (it holds the GIL: every
    phase but ``simulate``, whose JAX part does not); kernels/s can exceed neither cpus / total nor 1 / Python."""
    parts = []
    for r in rows:
        if r["tree"] != "after":
            continue
        python_ms = r["total_ms"] - r["phases_ms"].get("simulation", 0.0)
        ceiling = min(r["cpus"] * 1e3 / r["total_ms"], 1e3 / python_ms)
        parts.append(f"{r['machine']} {r['task']} C{r['config']} {r['total_ms']:.3g} ms, {python_ms:.3g} ms of it "
                     f"outside `simulate`: at most {ceiling:.3g} kernels/s")
    return "; ".join(parts)


def render(rows: list[dict]) -> str:
    """The README table: per case, before and after side by side (a pure function of the results file)."""
    by = {(r["machine"], r["task"], r["config"], r["n"], r["tree"], r.get("backend", "threads")): r for r in rows}
    cases = list(dict.fromkeys((r["machine"], r["task"], r["config"], r["n"]) for r in rows))
    out = ["| machine | task | config | kernels | kernels/s before | after | x | after, processes | "
           "CPU ms/kernel before | after | after, processes (all processes) | without simulation ms before | after | "
           "assembly ms before | after | target kernels/s |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    best: dict[tuple, float] = {}
    for m, t, c, n in cases:
        b, a = by[(m, t, c, n, "before", "threads")], by[(m, t, c, n, "after", "threads")]
        p = by.get((m, t, c, n, "after", "processes"))
        best[(m, t, c, n)] = max(a["kernels_per_s"], p["kernels_per_s"] if p else 0.0)
        procs = f"{p['kernels_per_s']:.3g}" if p else "-"
        procs_ms = f"{p['cpu_ms']:.2f}" if p and "cpu_ms" in p else "-"
        out.append(f"| {m} | {t} | C{c} | {n} | {b['kernels_per_s']:.3g} | {a['kernels_per_s']:.3g} | "
                   f"{a['kernels_per_s'] / b['kernels_per_s']:.2f} | {procs} | "
                   f"{b['cpu_ms']:.2f} | {a['cpu_ms']:.2f} | {procs_ms} | {b['overhead_ms']:.3f} | "
                   f"{a['overhead_ms']:.3f} | {b['assemble_ms']:.3f} | {a['assemble_ms']:.3f} | "
                   f"{a['target_kernels_per_s'] or '-'} |")
    met = [f"{m} {t} C{c} ({n} kernels)" for m, t, c, n in cases
           if by[(m, t, c, n, "after", "threads")]["target_kernels_per_s"] and
           best[(m, t, c, n)] >= by[(m, t, c, n, "after", "threads")]["target_kernels_per_s"]]
    out += ["", f"Targets met by `after` (either backend): {', '.join(met) if met else 'none'}."]
    runs: dict[tuple, list[dict]] = {}  # rows from separate runs (a later run re-measured some cases)
    for r in rows:
        if r["tree"] == "before":
            runs.setdefault((r["date"], r["cpus"], r["commit"], r["repeats"]), []).append(r)
    for (date, cpus, commit, repeats), group in runs.items():
        names = dict.fromkeys(f"{r['machine']} C{r['config']}" for r in group)
        which = "" if len(runs) == 1 else ", ".join(names) + ": "
        loads = sorted(r["load"] for r in group)
        load = f"{loads[0]}" if loads[0] == loads[-1] else f"{loads[0]}-{loads[-1]}"
        out += ["", f"{which}measured {date} on {cpus} CPUs at load {load} (before = {commit}, best of {repeats} "
                f"batch{'es' if repeats > 1 else ''})."]
    out += ["", f"Every kernel correct with the compiler's cycles: {all(r['all_correct'] for r in rows)}."]
    return "\n".join(out)


# -- the older comparison: one batch call vs one env episode (or one score call) per kernel ------------------
def candidates(scorer, n: int, distinct: int) -> list[str]:
    """A quarter each: the compiler's kernel, the expert kernel, one line removed, an unknown mnemonic."""
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
        out.append(f"# candidate {i}\n{src}")
    return [out[i % distinct] for i in range(n)]


def timed(fn, repeats: int) -> float:
    fn()  # warm-up: compilation, baseline, input generation
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def paths(args: argparse.Namespace) -> None:
    import gymnasium as gym

    import kcgym  # noqa: F401
    from kcgym.scoring import BatchScorer

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

        fns = {"env": one_by_one_env, "single": lambda kernels=kernels: [scorer.score([k]) for k in kernels]}
        for workers in (1, 2, 4):
            batch = BatchScorer(args.env_id, args.config, max_workers=workers)
            fns[f"batch/w{workers}"] = lambda kernels=kernels, batch=batch: batch.score(kernels)
        base = None
        for name, fn in fns.items():
            seconds = timed(fn, args.repeats)
            rate = args.n / seconds
            base = base or rate
            print(f"  {name:10s} {seconds * 1000:8.1f} ms  {rate:8.1f} kernels/s  x{rate / base:.2f} vs env")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="NPU and VLIW matmul C1, small batches; writes nothing")
    ap.add_argument("--base", default="/tmp/h16asm_base", help="the 'before' tree (a checkout of main)")
    ap.add_argument("--cases", nargs="*", help="MACHINE:task:config, e.g. NPU:matmul:1")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--out", default=str(RESULTS))
    ap.add_argument("--profile", action="store_true", help="the split of a kernel's time by phase, before/after")
    ap.add_argument("--profile-out", default=str(PROFILE_RESULTS))
    ap.add_argument("--measure", help=argparse.SUPPRESS)  # internal: one case in this process, as JSON
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--batch", type=int, help="kernels per batch for every case (default: per case, CASES)")
    ap.add_argument("--backend", default="threads", choices=("threads", "processes"), help=argparse.SUPPRESS)
    ap.add_argument("--paths", action="store_true", help="env vs single vs batch on one env id")
    ap.add_argument("--merge", action="store_true", help="NPU merged data-path call: CPU ms per kernel by size")
    ap.add_argument("--env-id", default="KernelCraft-NPU-matmul")
    ap.add_argument("--config", type=int, default=1)
    args = ap.parse_args()
    if args.measure:
        machine, task, config = args.measure.split(":")
        fn = profile(machine, task, int(config), args.n, args.repeats) if args.profile else measure(
            machine, task, int(config), args.n, args.repeats, args.backend)
        print(json.dumps(fn))
    elif args.paths:
        paths(args)
    elif args.merge:
        merges(args)
    else:
        compare(args)


if __name__ == "__main__":
    main()
