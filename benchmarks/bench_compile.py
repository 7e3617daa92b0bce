"""Compiler time: each machine's baseline compiler on every task and config, before and after, side by side.

Every episode's first ``simulate`` (and ``kcgym eval``'s compiler agent) pays the compiler once per
(task, config, hw): the env's baseline is the compiler's kernel. Per machine, a fresh process per tree
compiles every registered task at each config and reports CPU seconds per compile and the kernel text's
SHA-256; the two trees (``--base``: a checkout of the tree before, e.g. ``git worktree add --detach /tmp/base
main``; and this one) alternate machine by machine so a shared box's load hits both alike. ``identical``
says whether both trees emit the same kernel text (a faster compiler must not change the yardstick).

    PYTHONPATH=. python benchmarks/bench_compile.py --base /tmp/base [--machines VLIW] [--configs 1,3,5]

Rows go to ``benchmarks/results/compile.jsonl``; :func:`render` is the README block
(``python benchmarks/readme_tables.py --write``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "compile.jsonl"
MACHINES = ("NPU", "VLIW", "RVV", "CPU")

# run in a fresh process of one tree: one JSON line per (task, config)
_CODE = """
import hashlib, json, sys, time
import gymnasium as gym
import kcgym  # noqa: F401  (registers the envs)
from kcgym.registry import ACCELERATORS, task_for
machine, configs = sys.argv[1], [int(c) for c in sys.argv[2].split(",")]
acc = ACCELERATORS[machine]
hw = acc.make_hw()
names = sorted({e.split("-", 2)[2] for e in gym.registry if e.startswith(f"KernelCraft-{machine}-")})
for index in configs:
    for name in names:
        task = task_for(machine, name)
        cfg = task.config(machine, index)
        c0 = time.process_time()
        source = acc.compile(task, cfg, hw)
        cpu = time.process_time() - c0
        print(json.dumps({"task": name, "config": index, "cpu_s": cpu,
                          "sha": hashlib.sha256(source.encode()).hexdigest()}), flush=True)
"""


def compile_times(tree: Path, machine: str, configs: str) -> dict[tuple[str, int], dict]:
    """(task, config) -> {cpu_s, sha} for every registered task of ``machine``, compiled in ``tree``."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, "-c", _CODE, machine, configs], env=env, cwd=tree, capture_output=True,
                         text=True, check=True)
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    return {(r["task"], r["config"]): r for r in rows}


def _load1() -> float:
    return round(os.getloadavg()[0], 2)


def measure(base: Path, machines: list[str], configs: str) -> list[dict]:
    here = Path(__file__).resolve().parent.parent
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=base, capture_output=True, text=True).stdout
    rows = []
    for i, machine in enumerate(machines):
        order = [("after", here), ("before", base)] if i % 2 else [("before", base), ("after", here)]
        got = {side: compile_times(tree, machine, configs) for side, tree in order}
        for key, new in sorted(got["after"].items()):
            old = got["before"].get(key)
            rows.append({"kind": "compile", "machine": machine, "task": key[0], "config": key[1],
                         "before_cpu_s": None if old is None else round(old["cpu_s"], 4),
                         "after_cpu_s": round(new["cpu_s"], 4),
                         "identical": None if old is None else old["sha"] == new["sha"],
                         "base": commit.strip(), "load1": _load1(),
                         "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                         "command": "python benchmarks/bench_compile.py " + " ".join(sys.argv[1:])})
        print(f"{machine}: {len(got['after'])} compiles", flush=True)
    return rows


def render(rows: list[dict]) -> str:
    """Per machine and config: summed CPU seconds of every task's compile, before and after, the slowest task
    after, and how many kernels came out identical."""
    lines = ["| machine | config | tasks | before CPU s | after CPU s | speedup | slowest after | identical |",
             "|---|---|---|---|---|---|---|---|"]
    groups: dict[tuple[str, int], list[dict]] = {}
    for r in rows:
        groups.setdefault((r["machine"], r["config"]), []).append(r)
    for (machine, index), rs in sorted(groups.items(), key=lambda kv: (MACHINES.index(kv[0][0]), kv[0][1])):
        both = [r for r in rs if r["before_cpu_s"] is not None]
        before = sum(r["before_cpu_s"] for r in both)
        after = sum(r["after_cpu_s"] for r in both)
        slow = max(rs, key=lambda r: r["after_cpu_s"])
        lines.append(f"| {machine} | C{index} | {len(rs)} | {before:.2f} | {after:.2f} | "
                     f"{before / after:.1f}x | {slow['task']} {slow['after_cpu_s']:.2f} | "
                     f"{sum(bool(r['identical']) for r in both)} of {len(both)} |")
    dates = sorted({r["date"] for r in rows})
    loads = [r["load1"] for r in rows]
    lines.append("")
    lines.append(f"(measured {dates[0]}{' to ' + dates[-1] if len(dates) > 1 else ''}, load {min(loads)}-"
                 f"{max(loads)}, before = {rows[0]['base']}: `{rows[0]['command']}`)")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", type=Path, required=True, help="the 'before' tree (a checkout)")
    ap.add_argument("--machines", default=",".join(MACHINES))
    ap.add_argument("--configs", default="1,2,3,4,5")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()
    rows = measure(args.base.resolve(), args.machines.split(","), args.configs)
    machines = {r["machine"] for r in rows}
    kept = []
    if args.out.exists():  # rows of machines not measured this time stay
        kept = [line for line in args.out.read_text().splitlines()
                if line.strip() and json.loads(line)["machine"] not in machines]
    args.out.write_text("".join(line + "\n" for line in kept) + "".join(json.dumps(r) + "\n" for r in rows))
    print(render([json.loads(line) for line in kept] + rows))


if __name__ == "__main__":
    main()
