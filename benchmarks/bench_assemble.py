"""Assembler time per instruction, NPU and VLIW, before and after, side by side.

Two cases per machine, each in a fresh process per tree, the trees alternating machine by machine (the order
flips every round) so a shared box's load hits both alike:

- ``kernels``: every compiler and expert kernel of the configs (default C1-C5), compiled once beforehand in
  this tree and each assembled once in a fresh process: every line is new to the assembler's memos, so the
  rate is no cache artefact.
- ``matmul C<n> variants``: the BatchScorer's distinct kernels (``bench_scoring.variant``: the compiler's
  matmul kernel with one immediate changed), ``--variants`` of them after one warm-up assembly: what RL
  batches and ``BatchScorer`` see.
- ``mutants + hostile``: seeded mutants of every C1 kernel (``tests/isa/corpus.py``: deleted, garbled, swapped
  lines, bad operands, directives...) and the hostile sources of issue 14, mostly assembly errors: what the
  fast path costs where it gives up and the general path assembles from the start (ms per source).

"Instructions" are the operations of the assembled programs (NPU: words; VLIW: non-NOP slots). CPU is
``time.process_time`` of the assembling process, wall beside it, with the garbage collector on (a full
collection that the set-up's objects would set off is done before the clock starts); ``identical``
compares every program's words, line map and warnings across the trees.

    PYTHONPATH=. python benchmarks/bench_assemble.py --base /work/wt/base7 [--quick] [--rounds 2]

Rows go to ``benchmarks/results/assemble.jsonl``; :func:`render` is the README block
(``python benchmarks/readme_tables.py --write``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "assemble.jsonl"
MACHINES = ("NPU", "VLIW")
VARIANT_CONFIGS = (1, 3)

# in this tree: every compiler and expert kernel of the configs, as JSON {machine: {name: source}}
_CORPUS = """
import json, sys
from kcgym.registry import ACCELERATORS, SUPPORTED, task_for
machines, configs = sys.argv[1].split(","), [int(c) for c in sys.argv[2].split(",")]
out = {}
for machine in machines:
    acc = ACCELERATORS[machine]
    hw = acc.make_hw()
    got = out[machine] = {}
    for name in SUPPORTED[machine]:
        task = task_for(machine, name)
        for cfg in task.configs(machine):
            if cfg.index in configs:
                got[f"{name} C{cfg.index} compiler"] = acc.compile(task, cfg, hw)
                expert = acc.expert(task, cfg, hw)
                if expert is not None:
                    got[f"{name} C{cfg.index} expert"] = expert
json.dump(out, open(sys.argv[3], "w"))
"""

# in a fresh process of one tree: assemble the sources of one case, one JSON line
_MEASURE = """
import hashlib, json, sys, time
from kcgym.registry import ACCELERATORS
from kcgym.isa.diagnostics import AssemblyError
machine, path = sys.argv[1], sys.argv[2]
warm, sources = json.load(open(path))
acc = ACCELERATORS[machine]
hw = acc.make_hw()
for s in warm:
    acc.assemble(s, hw)
import gc
gc.collect()  # the set-up's garbage (the sources just loaded) is not the assembler's: collected before the clock
programs = []
c0, w0 = time.process_time(), time.perf_counter()
for s in sources:
    try:
        programs.append(acc.assemble(s, hw))
    except AssemblyError as e:
        programs.append(e)
cpu, wall = time.process_time() - c0, time.perf_counter() - w0
sha, ops = hashlib.sha256(), 0
for p in programs:
    if isinstance(p, AssemblyError):
        sha.update(repr([(d.code, d.line, d.col, d.message) for d in p.diagnostics]).encode())
        continue
    sha.update(p.words.tobytes() + repr((p.lines, [w.render() for w in p.warnings], p.slot_lines)).encode())
    if machine == "VLIW":
        from kcgym.sims.vliw.isa import make_isa
        isa = make_isa(hw)
        op = p.words.reshape(p.length, -1, isa.n_fields)[:, :, 0]
        ops += int((op != isa.opcodes[isa.nop_mnemonic]).sum())
    else:
        ops += p.length
print(json.dumps({"cpu_s": cpu, "wall_s": wall, "kernels": len(sources), "instructions": ops,
                  "sha": sha.hexdigest()}))
"""


def _load1() -> float:
    return round(os.getloadavg()[0], 2)


def _run(tree: Path, code: str, *args: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(tree))
    return subprocess.run([sys.executable, "-c", code, *args], env=env, cwd=tree, capture_output=True, text=True,
                          check=True).stdout


MUTANTS_PER_KERNEL = 3


def cases(corpus: dict[str, dict[str, str]], machine: str, n_variants: int) -> dict[str, tuple[list, list]]:
    """case name -> (warm-up sources, timed sources)."""
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(HERE.parent))
    from bench_scoring import variant

    from tests.isa.corpus import hostile, mutants

    kernels = corpus[machine]
    out = {"kernels": ([], list(kernels.values()))}
    for index in VARIANT_CONFIGS:
        src = kernels.get(f"matmul C{index} compiler")
        if src is not None:
            out[f"matmul C{index} variants"] = ([variant(machine, src, 0)],
                                                [variant(machine, src, 100 + i) for i in range(n_variants)])
    bad = [m for n, (name, src) in enumerate(sorted(kernels.items())) if " C1 " in name
           for m in mutants(src, machine, MUTANTS_PER_KERNEL, seed=n)]
    out["mutants + hostile"] = ([], bad + list(hostile(machine).values()))
    return out


def measure(base: Path, machines: list[str], configs: str, n_variants: int, rounds: int,
            only: set[str] | None = None) -> list[dict]:
    here = HERE.parent
    commit = {side: subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=tree, capture_output=True,
                                   text=True).stdout.strip() for side, tree in (("before", base), ("after", here))}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        corpus_path = Path(tmp) / "corpus.json"
        _run(here, _CORPUS, ",".join(machines), configs, str(corpus_path))
        corpus = json.loads(corpus_path.read_text())
        for machine in machines:
            for case, (warm, sources) in cases(corpus, machine, n_variants).items():
                if only is not None and case not in only:
                    continue
                path = Path(tmp) / f"{machine}-{case}.json"
                path.write_text(json.dumps([warm, sources]))
                got: dict[str, list[dict]] = {"before": [], "after": []}
                loads = []
                for r in range(rounds):
                    order = [("after", here), ("before", base)] if r % 2 else [("before", base), ("after", here)]
                    for side, tree in order:
                        loads.append(_load1())
                        got[side].append(json.loads(_run(tree, _MEASURE, machine, str(path)).splitlines()[-1]))
                best = {side: min(runs, key=lambda x: x["cpu_s"]) for side, runs in got.items()}
                b, a = best["before"], best["after"]
                n = max(a["instructions"], 1)
                rows.append({
                    "kind": "assemble", "machine": machine, "case": case,
                    "configs": configs if case == "kernels" else None, "kernels": a["kernels"], "instructions": n,
                    "before_us_per_instr": round(b["cpu_s"] / n * 1e6, 3),
                    "after_us_per_instr": round(a["cpu_s"] / n * 1e6, 3),
                    "before_ms_per_kernel": round(b["cpu_s"] / a["kernels"] * 1e3, 4),
                    "after_ms_per_kernel": round(a["cpu_s"] / a["kernels"] * 1e3, 4),
                    "before_wall_ms_per_kernel": round(b["wall_s"] / a["kernels"] * 1e3, 4),
                    "after_wall_ms_per_kernel": round(a["wall_s"] / a["kernels"] * 1e3, 4),
                    "identical": b["sha"] == a["sha"] and b["instructions"] == n, "rounds": rounds,
                    "base": commit["before"], "commit": commit["after"], "load": f"{min(loads)}-{max(loads)}",
                    "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                    "command": "python benchmarks/bench_assemble.py " + " ".join(sys.argv[1:])})
                print(json.dumps(rows[-1]), flush=True)
    return rows


def render(rows: list[dict]) -> str:
    """Per machine and case: CPU µs per instruction and ms per kernel, before and after (the latest row of each)."""
    latest: dict[tuple[str, str], dict] = {}
    for r in rows:
        latest[(r["machine"], r["case"])] = r
    lines = ["| machine | case | kernels | instructions | before µs/instr | after µs/instr | speedup | "
             "before ms/kernel | after ms/kernel | identical |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for (machine, case), r in sorted(latest.items(), key=lambda kv: (MACHINES.index(kv[0][0]), kv[0][1])):
        what = f"every compiler + expert kernel, C{r['configs'].replace(',', '/C')}, once each" \
            if case == "kernels" else case
        if case == "mutants + hostile":  # mostly errors: the rate per source is what counts
            rate = (f"– | – | {r['before_ms_per_kernel'] / r['after_ms_per_kernel']:.2f}x (per source)")
            what = "mutants of every C1 kernel + hostile sources (mostly errors)"
        else:
            rate = (f"{r['before_us_per_instr']:.2f} | {r['after_us_per_instr']:.2f} | "
                    f"{r['before_us_per_instr'] / r['after_us_per_instr']:.1f}x")
        lines.append(f"| {machine} | {what} | {r['kernels']:,} | {r['instructions']:,} | {rate} | "
                     f"{r['before_ms_per_kernel']:.3f} | {r['after_ms_per_kernel']:.3f} | "
                     f"{'yes' if r['identical'] else 'NO'} |")
    kept = list(latest.values())
    dates = sorted({r["date"] for r in kept})
    loads = sorted({r["load"] for r in kept})
    lines.append("")
    lines.append(f"(CPU time, best of {kept[0]['rounds']} alternating rounds; measured {dates[0]}"
                 f"{' to ' + dates[-1] if len(dates) > 1 else ''}, load {', '.join(loads)}; before = {kept[0]['base']},"
                 f" after = {kept[0]['commit']}: `{kept[0]['command']}`)")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", type=Path, required=True, help="the 'before' tree (a checkout)")
    ap.add_argument("--machines", default=",".join(MACHINES))
    ap.add_argument("--configs", default="1,2,3,4,5")
    ap.add_argument("--variants", type=int, default=256, help="distinct matmul variants per config")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="C1 only, 32 variants, one round; no results row")
    ap.add_argument("--cases", default=None, help="comma-separated case names to run (default: all)")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()
    if args.quick:
        args.configs, args.variants, args.rounds = "1", 32, 1
    rows = measure(args.base.resolve(), args.machines.split(","), args.configs, args.variants, args.rounds,
                   None if args.cases is None else set(args.cases.split(",")))
    if args.quick:
        print(render(rows))
        return
    with args.out.open("a") as f:
        f.write("".join(json.dumps(r) + "\n" for r in rows))
    print(render([json.loads(line) for line in args.out.read_text().splitlines() if line.strip()]))


if __name__ == "__main__":
    main()
