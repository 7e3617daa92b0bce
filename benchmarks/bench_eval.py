"""Wall time of the main job (`kcgym eval` with its defaults): cold and warm JAX cache, or two trees side by side.

Usage:
    python benchmarks/bench_eval.py [--configs 1-2] [extra kcgym eval flags...]
        this tree, an empty then a warm JAX cache (each in a fresh process, a temporary run directory)
    python benchmarks/bench_eval.py --side-by-side BEFORE_TREE [--nice 19] [--label L] [extra kcgym eval flags...]
        `kcgym eval` of BEFORE_TREE (a checkout of an older commit) and of this tree started together, so a
        shared box's load hits both alike; then the comparison below
    python benchmarks/bench_eval.py --compare BEFORE_DIR AFTER_DIR [--wall B A] [--cpu B A] [--label L] [--command C]
        the comparison alone, of two run directories written by hand-started runs

The comparison sums each episode's own wall time (``wall_s`` of episodes.jsonl) over the episodes both runs
played (same agent, env, config, run), by machine and agent: trees that differ in their env list (a newer tree
adds a machine) or runs cut short compare on what they share. One row per run to
``benchmarks/results/eval_side_by_side.jsonl`` (``--out``); the README's main-job block renders them.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "eval_side_by_side.jsonl"


def timed_eval(cache_dir: Path, out: Path, extra: list[str]) -> float:
    env = {**os.environ, "KCGYM_CACHE_DIR": str(cache_dir), "JAX_PLATFORMS": os.environ.get("JAX_PLATFORMS", "cpu")}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "kcgym.cli", "eval", "--out", str(out), "--quiet", "--no-report", *extra],
                   check=True, env=env)
    return time.perf_counter() - start


def cold_warm(extra: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cold = timed_eval(root / "cache", root / "cold", extra)
        warm = timed_eval(root / "cache", root / "warm", extra)
        n = len((root / "cold" / "episodes.jsonl").read_text().splitlines())
    print(f"kcgym eval {' '.join(extra) or '(defaults)'}: {n} episodes, cold cache {cold:.1f} s, warm {warm:.1f} s "
          f"({os.cpu_count()} CPUs)")


def episodes(run_dir: Path) -> dict[tuple, dict]:
    """The episodes of a run directory by (agent, env id, config, run); a torn last line (a run still
    writing) is skipped."""
    out: dict[tuple, dict] = {}
    for line in (run_dir / "episodes.jsonl").read_text(encoding="utf-8").splitlines():
        try:
            e = json.loads(line)
        except json.JSONDecodeError:
            continue
        out[(e["agent"], e["env_id"], e["config"], e["run"])] = e
    return out


def compare(before: dict[tuple, dict], after: dict[tuple, dict]) -> dict:
    """Summed episode wall seconds over the shared episodes, by machine and agent, and in all."""
    shared = sorted(set(before) & set(after))
    cells: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0, 0, 0])
    for key in shared:
        b, a = before[key], after[key]
        for cell in (f"{a['accelerator']} {key[0]}", f"all {key[0]}", "all"):
            c = cells[cell]
            c[0] += b.get("wall_s") or 0.0
            c[1] += a.get("wall_s") or 0.0
            c[2] += 1
            c[3] += bool(b.get("success"))
            c[4] += bool(a.get("success"))
    return {"episodes_before": len(before), "episodes_after": len(after), "shared": len(shared),
            "configs": sorted({k[2] for k in shared}),
            "cells": {k: {"n": int(n), "before_s": round(x, 1), "after_s": round(y, 1), "success_before": int(sb),
                          "success_after": int(sa)} for k, (x, y, n, sb, sa) in sorted(cells.items())}}


def _commit(tree: Path) -> str:
    return subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip() or "?"


def _load() -> float:
    return round(os.getloadavg()[0], 1)


def side_by_side(before_tree: Path, extra: list[str], nice: int, label: str, out: Path) -> dict:
    """Start both trees' `kcgym eval` at once (each with its own tree first on PYTHONPATH), wait for both,
    and compare them; wall and CPU seconds per process from ``os.wait4``."""
    trees = {"before": before_tree.resolve(), "after": ROOT}
    loads = [_load()]
    with tempfile.TemporaryDirectory() as tmp:
        procs, dirs, started = {}, {}, {}
        for name, tree in trees.items():
            dirs[name] = Path(tmp) / name
            env = {**os.environ, "PYTHONPATH": str(tree), "JAX_PLATFORMS": os.environ.get("JAX_PLATFORMS", "cpu")}
            cmd = ["nice", "-n", str(nice)] if nice else []
            cmd += [sys.executable, "-m", "kcgym.cli", "eval", "--out", str(dirs[name]), "--quiet", "--no-report",
                    *extra]
            started[name] = time.perf_counter()
            procs[name] = subprocess.Popen(cmd, cwd=tree, env=env, stdout=subprocess.DEVNULL)
        wall, cpu = {}, {}
        by_pid = {p.pid: name for name, p in procs.items()}
        while by_pid:
            pid, status, usage = os.wait4(-1, 0)
            name = by_pid.pop(pid, "")
            if not name:  # not one of ours
                continue
            procs[name].returncode = os.waitstatus_to_exitcode(status)
            wall[name] = round(time.perf_counter() - started[name], 1)
            cpu[name] = round(usage.ru_utime + usage.ru_stime, 1)
            loads.append(_load())
        for name, p in procs.items():
            if p.returncode:
                raise SystemExit(f"kcgym eval of the {name} tree exited {p.returncode}")
        row = compare(episodes(dirs["before"]), episodes(dirs["after"]))
    command = "python benchmarks/bench_eval.py --side-by-side BEFORE " + " ".join(
        ([f"--nice {nice}"] if nice else []) + extra)
    return record(row, label or " ".join(extra) or "kcgym eval", command, _commit(trees["before"]), _commit(ROOT),
                  wall, cpu, f"{min(loads)}-{max(loads)}", out)


def record(row: dict, label: str, command: str, before: str, after: str, wall: dict, cpu: dict, load: str,
           out: Path) -> dict:
    row = {"label": label, "before": before, "after": after, **row, "wall_s": wall, "cpu_s": cpu, "load": load,
           "date": datetime.date.today().isoformat(), "cpus": os.cpu_count(), "command": command}
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a", encoding="utf-8") as f:
        f.write(json.dumps(row, sort_keys=True) + "\n")
    print(render([row]))
    return row


def _ratio(cell: dict) -> str:
    return f"{cell['before_s'] / max(cell['after_s'], 1e-9):.2f}x"


def render(rows: list[dict]) -> str:
    """The README block: per run, the summed episode wall over the shared episodes by machine x agent."""
    parts = []
    for r in rows:
        cells = r["cells"]
        agents = sorted({k.split()[1] for k in cells if k != "all" and not k.startswith("all ")})
        machines = sorted({k.split()[0] for k in cells if not k.startswith("all")})
        head = "| machine | " + " | ".join(f"{a} before -> after (s)" for a in agents) + " |"
        lines = [head, "|---|" + "---|" * len(agents)]
        for m in [*machines, "all"]:
            row = []
            for a in agents:
                c = cells.get(f"{m} {a}")
                row.append("–" if c is None else f"{c['before_s']:,.1f} -> {c['after_s']:,.1f} ({_ratio(c)})")
            lines.append(f"| {m} | " + " | ".join(row) + " |")
        t = cells["all"]
        configs = ",".join(map(str, r["configs"]))
        whole = ""
        if r.get("wall_s"):
            whole = (f" Whole runs: before {r['wall_s']['before']:,.1f} s wall, {r['cpu_s']['before']:,.1f} CPU s "
                     f"({r['episodes_before']} episodes); after {r['wall_s']['after']:,.1f} s wall, "
                     f"{r['cpu_s']['after']:,.1f} CPU s ({r['episodes_after']} episodes).")
        parts.append(
            f"`{r['label']}` (configs {configs}), before = {r['before']}, after = {r['after']}, started together on "
            f"{r['cpus']} CPUs at load {r['load']}, {r['date']}: the {t['n']} episodes both played took "
            f"{t['before_s']:,.1f} s -> {t['after_s']:,.1f} s of summed episode wall ({_ratio(t)}); "
            f"successes {t['success_before']} -> {t['success_after']}.{whole}\n\n" + "\n".join(lines))
    return "\n\n".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--side-by-side", metavar="BEFORE_TREE", type=Path)
    ap.add_argument("--compare", nargs=2, metavar=("BEFORE_DIR", "AFTER_DIR"), type=Path)
    ap.add_argument("--wall", nargs=2, type=float, metavar=("BEFORE", "AFTER"), help="whole-run wall s (--compare)")
    ap.add_argument("--cpu", nargs=2, type=float, metavar=("BEFORE", "AFTER"), help="whole-run CPU s (--compare)")
    ap.add_argument("--commits", nargs=2, metavar=("BEFORE", "AFTER"), help="the trees' commits (--compare)")
    ap.add_argument("--load", default="", help="the load while they ran (--compare)")
    ap.add_argument("--command", default="", help="how the runs were started (--compare)")
    ap.add_argument("--nice", type=int, default=0)
    ap.add_argument("--label", default="")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args, extra = ap.parse_known_args()
    if args.compare:
        row = compare(episodes(args.compare[0]), episodes(args.compare[1]))
        wall = dict(zip(("before", "after"), args.wall, strict=True)) if args.wall else {}
        cpu = dict(zip(("before", "after"), args.cpu, strict=True)) if args.cpu else {}
        before, after = args.commits or ("?", "?")
        record(row, args.label or "kcgym eval", args.command or "python benchmarks/bench_eval.py --compare",
               before, after, wall, cpu, args.load or str(_load()), args.out)
    elif args.side_by_side:
        side_by_side(args.side_by_side, extra, args.nice, args.label, args.out)
    else:
        cold_warm(extra)


if __name__ == "__main__":
    main()
