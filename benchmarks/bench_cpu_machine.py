"""The CPU machine on every task's GCC -O2 kernel: what the out-of-order model says, and how fast it runs.

Per task and config (one input set, seed 0): cycles, dynamic instructions, IPC, the branch misprediction
and L1 D-cache miss rates the model counted, the warm ``simulate`` time (median of repeats) and
instructions per second; and, for comparison, the warm time of the RVV core's step on the very same
program and memory image (the RVV step runs its 128-byte vector lanes on every scalar instruction; the
CPU step skips them; pmp, which needs machine mode, has no RVV counterpart). Rows go to
``benchmarks/results/cpu_machine.jsonl``; ``--table`` prints the README block from that file.

    PYTHONPATH=. python benchmarks/bench_cpu_machine.py --quick    # C1 and C3 (a minute or two)
    PYTHONPATH=. python benchmarks/bench_cpu_machine.py            # C1, C3, C5
    PYTHONPATH=. python benchmarks/bench_cpu_machine.py --table
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from datetime import date
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).parent / "results" / "cpu_machine.jsonl"
QUICK_CONFIGS = (1, 3)
FULL_CONFIGS = (1, 3, 5)
MAX_STEPS = 20_000_000
MACHINE_MODE = ("pmp",)  # its CSR writes and mret are not RVV instructions: no RVV comparison


def measure(task_name: str, index: int, repeats: int) -> dict:
    from kcgym.registry import task_for
    from kcgym.sims.cpu import ACCELERATOR as CPU
    from kcgym.sims.cpu import machine as M
    from kcgym.sims.cpu.accelerator import simulate_images
    from kcgym.sims.rvv import machine as RM
    from kcgym.sims.rvv.accelerator import simulate_images as rvv_simulate
    from kcgym.sims.rvv.assembler import assemble as rvv_assemble
    from kcgym.sims.rvv.config import RVVConfig

    hw = CPU.make_hw()
    task = task_for("CPU", task_name)
    cfg = task.config("CPU", index)
    source = CPU.compile(task, cfg, hw)
    program = CPU.assemble(source, hw)
    inputs = task.generate_inputs(cfg, np.random.default_rng(0))
    image = CPU.ext_image(task, cfg, hw, inputs)[None]

    def timed(fn) -> tuple[float, object]:  # CPU seconds of this process: steadier than wall time on shared cores
        t = time.process_time()
        out = fn()
        return time.process_time() - t, out

    first, st = timed(lambda: simulate_images(program, image, hw, MAX_STEPS))
    warm = statistics.median(timed(lambda: simulate_images(program, image, hw, MAX_STEPS))[0] for _ in range(repeats))
    steps, cyc = int(st.ctl[0, M.STEPS]), int(st.ctl[0, M.T_END])
    stats = dict(zip(M.STATS, np.asarray(st.stats[0]).tolist(), strict=True))
    rvv_warm = None
    if task_name not in MACHINE_MODE:
        rvv_hw = RVVConfig(itcm_bytes=hw.imem_bytes, dtcm_bytes=hw.ram_bytes)
        rvv_program = rvv_assemble(source, rvv_hw)
        rvv_simulate(rvv_program, image, rvv_hw, MAX_STEPS)  # compile and warm
        rvv_warm = statistics.median(timed(lambda: rvv_simulate(rvv_program, image, rvv_hw, MAX_STEPS))[0]
                                     for _ in range(repeats))
        rvv_st = rvv_simulate(rvv_program, image, rvv_hw, MAX_STEPS)
        assert int(rvv_st.ctl[0, RM.STEPS]) == steps, "the RVV core ran a different instruction count"
    return {"task": task_name, "config": index, "cycles": cyc, "instructions": steps, "ipc": round(steps / cyc, 3),
            "mispredict_rate": round(stats["mispredicts"] / max(stats["branches"], 1), 4),
            "dcache_miss_rate": round(stats["dcache_misses"] / max(stats["dcache_accesses"], 1), 4),
            "first_s": round(first, 3), "warm_s": round(warm, 4), "instr_per_s": round(steps / warm),
            "rvv_warm_s": None if rvv_warm is None else round(rvv_warm, 4),
            "rvv_instr_per_s": None if rvv_warm is None else round(steps / rvv_warm),
            "date": date.today().isoformat(), "load": round(os.getloadavg()[0], 1)}


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.2g}"


def readme_table(rows: list[dict]) -> str:
    out = ["| task | config | cycles | dyn. instr | IPC | mispredicted branches | D-cache misses | warm CPU s | "
           "instr/s | RVV step instr/s |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['task']} | C{r['config']} | {r['cycles']} | {r['instructions']} | {r['ipc']:.2f} | "
                   f"{100 * r['mispredict_rate']:.1f}% | {100 * r['dcache_miss_rate']:.1f}% | {r['warm_s']:.3f} | "
                   f"{r['instr_per_s']:.2g} | {_rate(r['rvv_instr_per_s'])} |")
    cpu = sorted(r["instr_per_s"] for r in rows)
    ratio = statistics.median(r["instr_per_s"] / r["rvv_instr_per_s"] for r in rows if r["rvv_instr_per_s"])
    loads = sorted(r["load"] for r in rows)
    out += ["", f"(measured {rows[0]['date']} on 2 shared cores, load {loads[0]}-{loads[-1]}; warm, per CPU second, "
            f"the CPU step ran {cpu[0]:.2g} to {cpu[-1]:.2g} instructions per second, a median {ratio:.2f}x the "
            "RVV core's step on the same programs.)"]
    return "\n".join(out)


def load(path: Path = RESULTS) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help=f"configs {QUICK_CONFIGS} only")
    ap.add_argument("--configs", help="comma-separated config indices (default: 1,3,5)")
    ap.add_argument("--tasks", help="comma-separated task names (default: every CPU task)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--table", action="store_true", help="print the README table from the results file")
    args = ap.parse_args()
    if args.table:
        print(readme_table(load()))
        return
    from kcgym.registry import SUPPORTED

    configs = [int(c) for c in args.configs.split(",")] if args.configs else list(
        QUICK_CONFIGS if args.quick else FULL_CONFIGS)
    tasks = args.tasks.split(",") if args.tasks else list(SUPPORTED["CPU"])
    rows = []
    for name in tasks:
        for index in configs:
            rows.append(measure(name, index, args.repeats))
            print(json.dumps(rows[-1]), flush=True)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    print(readme_table(rows))


if __name__ == "__main__":
    main()
