"""Speed of light vs measured kernels: compiler and expert cycles / sol_cycles per machine x task x config.

Simulates the template compiler's kernel and the expert kernel (where one exists) of every
(accelerator, task, config) on one input set, writes one JSON line each to
``benchmarks/results/sol.jsonl`` (cycles, sol_cycles, its terms, the anti-cheat floor) and
rewrites the README's expert/SOL table (the ``<!-- generated: sol -->`` block, as
``benchmarks/readme_tables.py`` does) from that file.

    python benchmarks/bench_sol.py [--quick] [--accelerators NPU,VLIW] [--configs 1,2] [--tasks a,b]
        [--hw NPU='{"hbm_latency": 50}'] [--hw-configs 1,2] [--reuse VLIW=benchmarks/results/vliw.jsonl]
        [--out PATH] [--no-readme] [--from-results] [--merge] [--override-only]

The committed results came from (2 CPU cores, about 25 min under load):

    python benchmarks/bench_sol.py --hw 'NPU={"hbm_latency": 40, "hbm_bytes_per_cycle": 128}' \
        --hw 'VLIW={"dma_latency": 24, "dma_bytes_per_cycle": 64}' --hw 'RVV={"ext_latency": 8, \
        "ext_bytes_per_cycle": 8}' --hw-configs 1,2 --reuse VLIW=benchmarks/results/vliw.jsonl
    python benchmarks/bench_sol.py --hw 'NPU=...' --hw 'RVV=...' --configs 3,4,5 --override-only \
        --accelerators NPU,RVV --merge

The CPU rows take their cycles from the CPU task benchmark (``bench_cpu_tasks.py``):

    python benchmarks/bench_sol.py --accelerators CPU --reuse CPU=benchmarks/results/cpu_tasks.jsonl --merge
    python benchmarks/bench_sol.py --accelerators CPU --hw 'CPU={"mem_latency": 8, "mem_units": 2}' \
        --override-only --merge

``--quick`` runs config 1 only and writes neither the results file nor the README (a smoke run).
``--reuse ACC=FILE`` takes that machine's default-hw compiler and expert cycles from a results file of its
own benchmark (``bench_vliw.py`` writes ``cycles`` and ``expert_cycles`` per task and config) instead of
simulating again: VLIW's large configs take minutes each. ``--hw-configs`` limits the override rows.
``--merge`` adds the new rows to the results file (replacing rows of the same machine, task, config and
hw) instead of overwriting it. ``--from-results`` simulates nothing: it recomputes the bound of every row
already in the results file with the current code (kernel cycles do not change when only the bound does)
and rewrites file and README.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "sol.jsonl"
README = ROOT / "README.md"
BEGIN, END = "<!-- generated: sol -->", "<!-- end generated -->"  # benchmarks/readme_tables.py markers
MACHINES = ("NPU", "VLIW", "RVV", "CPU")  # table order (the registry's)
LOOSE = 2.0  # an expert above this many times SOL gets a note on the loose term or the missing optimisation


def bound_fields(acc, task, cfg, hw) -> dict:
    """The bound's part of a row: sol_cycles, the binding term, every term and the anti-cheat floor."""
    from kcgym.evaluation import Evaluator

    ev = Evaluator(acc, task, cfg, hw)
    sol = ev.speed_of_light()
    return {"accelerator": acc.name, "task": task.name, "config": cfg.index, "hw": hw.model_dump(),
            "sol_cycles": sol.cycles, "binding": sol.binding.name if sol.binding else None,
            "terms": {t.name: t.cycles for t in sol.terms}, "floor_cycles": ev.roofline()}


def reused(acc, task, cfg, hw, rows: dict[tuple[str, int], dict]) -> dict:
    """A row whose kernel cycles come from another benchmark's results (the bound is computed here)."""
    src = rows[(task.name, cfg.index)]
    row = bound_fields(acc, task, cfg, hw)
    for kind, key in (("compiler", "cycles"), ("expert", "expert_cycles")):
        if src.get(key) is not None:
            fault = src.get("fault" if kind == "compiler" else "expert_fault")
            row[f"{kind}_cycles"] = src[key]
            row[f"{kind}_correct"] = None if fault in (None, "None") else False  # not checked there: faults only
    row["cycles_from"] = "reused"
    return row


def measure(acc, task, cfg, hw) -> dict:
    from kcgym.evaluation import Evaluator

    ev = Evaluator(acc, task, cfg, hw)
    inputs = ev.input_sets(0, 1)
    row = bound_fields(acc, task, cfg, hw)
    kernels = {"compiler": acc.compile(task, cfg, hw), "expert": acc.expert(task, cfg, hw)}
    for kind, source in kernels.items():
        if source is None:
            continue
        rep = ev.evaluate(source, inputs, with_baseline=False, max_steps=50_000_000)
        row[f"{kind}_cycles"] = rep.cycles
        row[f"{kind}_correct"] = rep.correct
    return row


def table(rows: list[dict]) -> str:
    """The README table: expert cycles / sol_cycles per accelerator x task, a column per config (the compiler's
    where a task has no expert)."""
    default = [r for r in rows if r.get("hw_default", True)]
    configs = sorted({r["config"] for r in default})
    out = ["| machine | task | kernel | " + " | ".join(f"C{c}" for c in configs) + " | binding term (last config) |",
           "|---|---|---|" + "---|" * len(configs) + "---|"]
    by: dict[tuple[str, str], dict[int, dict]] = {}
    for r in sorted(default, key=lambda r: MACHINES.index(r["accelerator"]) if r["accelerator"] in MACHINES else 99):
        by.setdefault((r["accelerator"], r["task"]), {})[r["config"]] = r
    for (acc, task), per in by.items():
        has_expert = any("expert_cycles" in r for r in per.values())
        for kind in ("expert",) if has_expert else ("compiler",):
            cells = []
            for c in configs:
                r = per.get(c)
                cells.append(f"{r[f'{kind}_cycles'] / r['sol_cycles']:.2f}" if r and f"{kind}_cycles" in r else "-")
            last = per[max(per)]
            out.append(f"| {acc} | {task} | {kind} | " + " | ".join(cells) + f" | {last['binding']} |")
    return "\n".join(out)


def _ratio(row: dict, kind: str = "expert") -> float:
    return row[f"{kind}_cycles"] / row["sol_cycles"]


def loose_notes(rows: list[dict]) -> str:
    """The (accelerator, task) pairs whose expert is more than LOOSE x SOL somewhere, with the binding term."""
    worst: dict[tuple[str, str], dict] = {}
    for r in rows:
        if r.get("hw_default", True) and "expert_cycles" in r:
            k = (r["accelerator"], r["task"])
            if k not in worst or _ratio(r) > _ratio(worst[k]):
                worst[k] = r
    notes = []
    for (acc, task), r in worst.items():
        ratio = _ratio(r)
        if ratio > LOOSE:
            notes.append(f"- {acc} {task}: expert {ratio:.1f}x SOL at C{r['config']} (binding: {r['binding']}); "
                         f"{note_for(acc, task, r['binding'])}")
    return "\n".join(notes) if notes else "- none: every expert is within 2x of SOL"


# Why an expert is far above SOL: which term is loose there, or what the bound leaves free that the expert pays
# for. Rules (machine, tasks, binding term, note), first match wins, "*" matches anything. Shown above LOOSE only.
ELEMENTWISE = ("silu", "gelu", "softmax", "layernorm", "rmsnorm")
NOTE_RULES: tuple[tuple[str, tuple[str, ...] | str, str, str], ...] = (
    ("NPU", ("depthwise_conv",), "*", "loose `macs`: it credits the matrix unit at full peak, but per-channel "
                                       "taps fill at most a BLEN x BLEN diagonal of an M_MM; the vector unit does "
                                       "the work at VLEN/2 MACs per cycle"),
    ("VLIW", ("depthwise_conv",), "*", "loose `vec_slot`: it credits 128 MACs per VMMUL, but per-channel taps "
                                        "cannot fill a 4x8x4 block (VMAC does 32)"),
    ("*", ("rope",), "*", "loose: the rotate-half pairing is data movement (shifted copies of each row) the bound "
                          "leaves out"),
    ("*", ELEMENTWISE, "*", "loose `vector_passes`/`vec_slot`: the bound counts only the unavoidable ops per element "
                            "(sol.ELEMENTWISE_PASSES); the expert's exp/tanh approximations, reductions and "
                            "conversions take several times more, so compute, not DMA, limits it"),
    ("*", ("conv2d", "conv_block"), "*", "the bound makes layout free: the expert spends loads, slides or indexed "
                                         "accesses gathering input patches (im2col) that the MAC term leaves out"),
    ("RVV", "*", "int32_macs", "the bound runs e32 multiply-accumulates back to back; widening, loads from the DTCM "
                               "and requantisation are free in it"),
    ("RVV", "*", "*", "the bound hides all compute under one pass over external memory plus two latencies; the "
                      "expert's inner loop (widening multiply-accumulates, reductions) is the limit"),
    ("CPU", ("median",), "*", "loose `memory_accesses`: the bound counts loads and stores only; the branchless "
                              "expert's 15 compare-and-mask ALU instructions per element fill the two-wide dispatch"),
    ("CPU", "*", "*", "the bound counts only the loads and stores every correct kernel makes (and a cold start); "
                      "the algorithm's own work (the shift-and-add loop, comparisons, recursion, Dhrystone's "
                      "procedures) is free in it"),
    ("*", "*", "matrix_macs", "at small shapes the bound overlaps every stage; the expert's tile loads, write-outs "
                              "and softmax between the two matmuls do not overlap fully"),
    ("*", "*", "*", "the bound hides all compute under one DMA stream plus two latencies; at this shape the expert "
                    "does not overlap them fully"),
)


def note_for(acc: str, task: str, term: str | None) -> str:
    for a, tasks, t, text in NOTE_RULES:
        if a in ("*", acc) and (tasks == "*" or task in tasks) and t in ("*", term):
            return text
    return ""


def write_readme(rows: list[dict]) -> None:
    text = README.read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"README.md has no {BEGIN} ... {END} markers")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    block = f"{BEGIN}\n{render(rows)}\n{END}"
    README.write_text(head + block + tail)


def render(rows: list[dict]) -> str:
    """What goes between the README markers (a pure function of the results file: tests compare it)."""
    return table(rows) + "\n\nExperts above 2x SOL (the loose term, or what the expert lacks):\n\n" + loose_notes(rows)


def load(path: Path = RESULTS) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--accelerators", default=",".join(MACHINES))
    ap.add_argument("--configs", default="1,2,3,4,5")
    ap.add_argument("--tasks", default="")
    ap.add_argument("--hw", action="append", default=[], help="ACC=JSON overrides (adds rows, not in the README)")
    ap.add_argument("--out", default=str(RESULTS))
    ap.add_argument("--no-readme", action="store_true")
    ap.add_argument("--from-results", action="store_true")
    ap.add_argument("--hw-configs", default="", help="configs of the --hw override rows (default: all)")
    ap.add_argument("--reuse", action="append", default=[], help="ACC=FILE: default-hw cycles from FILE")
    ap.add_argument("--override-only", action="store_true", help="only the --hw rows")
    ap.add_argument("--merge", action="store_true", help="merge the rows into the existing results file")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from kcgym.registry import ACCELERATORS, task_for
    from kcgym.tasks import tasks_for

    if args.from_results:
        rows = []
        for r in load(Path(args.out)):
            acc = ACCELERATORS[r["accelerator"]]
            task = task_for(acc.name, r["task"])
            rows.append({**r, **bound_fields(acc, task, task.config(acc.name, r["config"]), acc.make_hw(r["hw"]))})
        finish(rows, Path(args.out), args.no_readme)
        return

    configs = [1] if args.quick else [int(c) for c in args.configs.split(",")]
    overrides = {k: json.loads(v) for k, _, v in (h.partition("=") for h in args.hw)}
    hw_configs = {int(c) for c in args.hw_configs.split(",")} if args.hw_configs else set(configs)
    reuse = {}
    for item in args.reuse:
        name, _, path = item.partition("=")
        reuse[name] = {(r["task"], r["config"]): r for r in load(ROOT / path)}
    rows = []
    for name in args.accelerators.split(","):
        acc = ACCELERATORS[name]
        hws = [(True, acc.make_hw())] + ([(False, acc.make_hw(overrides[name]))] if name in overrides else [])
        names = args.tasks.split(",") if args.tasks else list(tasks_for(acc.numerics))
        for tname in names:
            task = task_for(name, tname)
            if not acc.supports(task):
                continue
            for c in configs:
                for is_default, hw in hws:
                    if (not is_default and c not in hw_configs) or (is_default and args.override_only):
                        continue
                    t0 = time.perf_counter()
                    if is_default and name in reuse:
                        row = reused(acc, task, task.config(name, c), hw, reuse[name])
                    else:
                        row = measure(acc, task, task.config(name, c), hw)
                    row["hw_default"] = is_default
                    rows.append(row)
                    ratio = {k: row[f"{k}_cycles"] / row["sol_cycles"] for k in ("compiler", "expert")
                             if f"{k}_cycles" in row}
                    flag = " BEATS SOL" if any(v < 1 for v in ratio.values()) else ""
                    where = "default" if is_default else "hw="
                    print(f"{name:4s} {tname:16s} C{c} {where:7s} sol={row['sol_cycles']:>8,} ({row['binding']}) "
                          + " ".join(f"{k}={v:.2f}x" for k, v in ratio.items())
                          + f" {time.perf_counter() - t0:.1f}s{flag}", flush=True)
    if args.quick:
        return
    if args.merge and Path(args.out).is_file():
        def key(r: dict) -> tuple:
            return r["accelerator"], r["task"], r["config"], json.dumps(r["hw"], sort_keys=True)

        new = {key(r) for r in rows}
        rows = [r for r in load(Path(args.out)) if key(r) not in new] + rows
    finish(rows, Path(args.out), args.no_readme)


def finish(rows: list[dict], out: Path, no_readme: bool) -> None:
    """Write the results file (and the README table, for the default file); fail if a kernel beat the bound."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    if not no_readme and out.resolve() == RESULTS:
        write_readme(rows)
    bad = [r for r in rows if any(r.get(f"{k}_cycles", math.inf) < r["sol_cycles"] for k in ("compiler", "expert"))]
    if bad:
        raise SystemExit(f"{len(bad)} kernel(s) beat the speed of light: a bug in the bound or the simulator")


if __name__ == "__main__":
    main()
