"""How fast the real ISA runs on this box: QEMU's functional speed on the RVV compiler kernels, the ceiling that
an RVV simulator's per-kernel cost is set beside (issue 16's BatchScorer targets).

For each case, the compiler kernel is built with GNU binutils around one input set's external-memory image
(``kcgym/sims/rvv/qemu.py``, as the differential tests run it), called once and called ``runs`` times in a loop
from the harness (each call from the state the harness gives a kernel), and so is an empty kernel (``ret``) in
the same two ways. All four ELFs run under ``qemu-riscv32`` ``--repeats`` times, alternated; the best of each is
kept. The differences take process start-up, the harness and the loop out: the *first run* (once, less the empty
once) is QEMU translating a program it has not seen and running it; the *warm run* (the loop's extra runs, less
the empty loop's) is one run of translated code. The dynamic instruction count is the simulator's
(``RunResult.instructions``; the QEMU differential tests check the two end in the same state). A distinct kernel
costs at least one warm run, so a scorer running QEMU on every core could score at most ``cores / warm run``
distinct kernels per second, before any checking, comparison or Python.

    python benchmarks/bench_rvv_qemu.py [--quick] [--cases matmul:1,matmul:3] [--repeats 7]

Without ``--quick`` the rows replace those of the same cases in ``benchmarks/results/rvv_qemu.jsonl``; the
README's table is rendered from it by ``benchmarks/readme_tables.py``.
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

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "rvv_qemu.jsonl"
CASES = ("matmul:1", "matmul:3", "softmax:3")
QUICK = ("matmul:1",)
TARGETS = {1: 2000, 3: 100}  # issue 16: BatchScorer distinct kernels/s at C1 and at C3 (as bench_scoring.TARGETS)
EMPTY_KERNEL = "    ret"  # what the harness and the loop cost alone: start-up, register zeroing, the dump
COUNTER_OFFSET = 200  # the repeat loop's counter: a word of the dump head the harness writes only at the end
LOOP_INSTRUCTIONS = 20_000_000  # dynamic instructions the repeated run executes (>= 0.2 s at QEMU's rates here)
MAX_RUNS = 2_000


def _run_s(elf: Path, timeout: float) -> float:
    """One timed run of a built ELF under QEMU (wall seconds); a failed run is an error, not a time."""
    from kcgym.sims.rvv.qemu import run_elf

    t0 = time.perf_counter()
    out = run_elf(elf, timeout)
    spent = time.perf_counter() - t0
    if out.returncode != 0:
        raise RuntimeError(f"qemu exited with {out.returncode}: {out.stderr.decode(errors='replace')[-500:]}")
    return spent


def repeated(source: str, runs: int, hw) -> str:
    """``source`` called ``runs`` times from the harness, each call from the state the harness starts a kernel
    in (registers zeroed, ``sp`` at the top of the DTCM): the loop counter lives in the dump area's unused head
    word, since every register is zeroed."""
    from kcgym.sims.rvv.config import DTCM_BASE

    zero = "\n".join(f"    li x{i}, 0" for i in range(4, 32))
    return f"""    li t0, {runs}
    sw t0, {COUNTER_OFFSET}(gp)
__kcgym_bench_loop:
{zero}
    li sp, {DTCM_BASE + hw.dtcm_bytes}
    call __kcgym_bench_body
    lw t0, {COUNTER_OFFSET}(gp)
    addi t0, t0, -1
    sw t0, {COUNTER_OFFSET}(gp)
    bnez t0, __kcgym_bench_loop
    la ra, __kcgym_epilogue
    ret
__kcgym_bench_body:
{source}
"""


def measure(task_name: str, config: int, repeats: int) -> dict:
    """One case: best QEMU wall time of the kernel called once and ``runs`` times, each beside the same harness
    around an empty kernel (``ret``)."""
    import gymnasium as gym
    import numpy as np

    import kcgym  # noqa: F401
    from kcgym.limits import UNBASED_STEP_BUDGET
    from kcgym.sims.rvv.qemu import build, run_elf

    env = gym.make(f"KernelCraft-RVV-{task_name}", config=config).unwrapped
    acc, task, cfg, hw = env.accelerator, env.task, env.cfg, env.hw
    source = acc.compile(task, cfg, hw)
    inputs = task.generate_inputs(cfg, np.random.default_rng(0))
    ext = acc.ext_image(task, cfg, hw, inputs)
    (result,) = acc.run(acc.assemble(source, hw), task, cfg, hw, [inputs], UNBASED_STEP_BUDGET * 100)
    if result.fault is not None:
        raise RuntimeError(f"RVV {task_name} C{config}: the compiler kernel faults: {result.fault.render()}")
    runs = min(MAX_RUNS, max(2, -(-LOOP_INSTRUCTIONS // max(1, result.instructions))))
    texts = {"empty": repeated(EMPTY_KERNEL, 1, hw), "once": repeated(source, 1, hw),
             "empty_loop": repeated(EMPTY_KERNEL, runs, hw), "loop": repeated(source, runs, hw)}
    best = dict.fromkeys(texts, float("inf"))
    with tempfile.TemporaryDirectory(prefix="kcgym_qemu_bench_") as d:
        elves = {}
        for name, text in texts.items():
            (Path(d) / name).mkdir()
            elves[name] = build(text, ext, hw, Path(d) / name)
        dumps = {name: run_elf(elves[name], 120.0).stdout for name in ("once", "loop")}
        if dumps["once"] != dumps["loop"]:  # the loop must repeat the kernel, not change what it computes
            raise RuntimeError(f"RVV {task_name} C{config}: the kernel called {runs} times ends in another state")
        for _ in range(repeats):
            for name, elf in elves.items():  # alternated, so load drift hits all alike
                best[name] = min(best[name], _run_s(elf, 120.0))
    # translating a program QEMU has not seen, and one run of it (the harness and one loop trip taken out)
    first = best["once"] - best["empty"]
    # one more run, translated already: the loop's own trips (register zeroing, the counter) taken out too
    warm = ((best["loop"] - best["empty_loop"]) - (best["once"] - best["empty"])) / (runs - 1)
    cores = os.cpu_count() or 1
    return {"machine": "RVV", "task": task_name, "config": config, "instructions": int(result.instructions),
            "runs": runs, "qemu_empty_ms": round(best["empty"] * 1e3, 3), "qemu_once_ms": round(best["once"] * 1e3, 3),
            "qemu_loop_ms": round(best["loop"] * 1e3, 3),
            "qemu_empty_loop_ms": round(best["empty_loop"] * 1e3, 3), "first_ms": round(first * 1e3, 3),
            "warm_ms": round(warm * 1e3, 4),
            "warm_instructions_per_s": float(f"{result.instructions / warm:.3g}") if warm > 0 else None,
            # a distinct kernel costs at least one translated run (``first`` is also larger, but it is the
            # difference of two ~12 ms process runs: too noisy for a bound)
            "ceiling_kernels_per_s": float(f"{cores / warm:.3g}") if warm > 0 else None,
            "target_kernels_per_s": TARGETS.get(config), "repeats": repeats, "cpus": cores}


def _first(ms: float) -> str:
    """A first run's time; a difference below zero is start-up noise, not a time."""
    return f"{ms:.2f}" if ms >= 0 else "below the noise"


def render(rows: list[dict]) -> str:
    """The README table (a pure function of the results file)."""
    out = ["| task | config | dynamic instructions | empty kernel once, ms | kernel once, ms "
           "| first run ms (translate + run) | warm run ms | warm instructions/s "
           "| at most distinct kernels/s on all cores | BatchScorer target |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        rate = f"{r['warm_instructions_per_s']:.3g}" if r["warm_instructions_per_s"] else "-"
        ceiling = f"{r['ceiling_kernels_per_s']:,.0f}" if r["ceiling_kernels_per_s"] else "-"
        out.append(f"| {r['task']} | C{r['config']} | {r['instructions']:,} | {r['qemu_empty_ms']:.1f} | "
                   f"{r['qemu_once_ms']:.1f} | {_first(r['first_ms'])} | {r['warm_ms']:.3f} | {rate} | {ceiling} | "
                   f"{r['target_kernels_per_s'] or '-'} |")
    when = "; ".join(dict.fromkeys(f"{r['date']} at load {r['load']}" for r in rows))
    runs = f"{min(r['runs'] for r in rows)}-{max(r['runs'] for r in rows)}"
    out += ["", f"`qemu-riscv32` (user mode, RVV 1.0, VLEN=128) on {rows[0]['cpus']} cores, best of "
            f"{rows[0]['repeats']} runs of each ELF, alternated; the warm run from one process calling the kernel "
            f"{runs} times (less the same loop around an empty kernel). A distinct kernel costs QEMU at least one "
            "warm run (its first run also translates it, but that is the difference of two ~12 ms process runs, "
            "too noisy for a bound), so the second-last column bounds what any scorer running QEMU on every core "
            f"could reach; {when}."]
    shares = [f"{r['task']} C{r['config']} {r['target_kernels_per_s'] / r['ceiling_kernels_per_s']:.0%}"
              for r in rows if r["target_kernels_per_s"] and r["ceiling_kernels_per_s"]]
    if shares:
        out[-1] += " The BatchScorer target as a share of that bound: " + ", ".join(shares) + "."
    return "\n".join(out)


def load(path: Path = RESULTS) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.exists() else []


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help=f"only {','.join(QUICK)}, nothing written")
    ap.add_argument("--cases", default=None, help=f"comma-separated task:config (default {','.join(CASES)})")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()
    from kcgym.sims.rvv.qemu import unavailable_reason

    if (why := unavailable_reason()) is not None:
        raise SystemExit(why)
    cases = QUICK if args.quick else tuple(args.cases.split(",")) if args.cases else CASES
    rows = []
    for case in cases:
        task, config = case.split(":")
        row = measure(task, int(config), 2 if args.quick else args.repeats)
        row.update(load=round(os.getloadavg()[0], 1), date=time.strftime("%Y-%m-%d"), commit=_commit(),
                   command="python benchmarks/bench_rvv_qemu.py " + " ".join(sys.argv[1:]))
        print(f"RVV {task} C{config}: {row['instructions']:,} instructions; QEMU first run {row['first_ms']:.2f} ms, "
              f"warm {row['warm_ms']:.3f} ms ({row['warm_instructions_per_s']} instructions/s): at most "
              f"{row['ceiling_kernels_per_s']} kernels/s on {row['cpus']} cores (target "
              f"{row['target_kernels_per_s']})", flush=True)
        rows.append(row)
    if not args.quick:
        done = {(r["task"], r["config"]) for r in rows}
        kept = [r for r in load(args.out) if (r["task"], r["config"]) not in done]
        args.out.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in kept + rows))
        print(f"wrote {len(rows)} rows to {args.out}")


def _commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


if __name__ == "__main__":
    main()
