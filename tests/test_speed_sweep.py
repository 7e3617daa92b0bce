"""The every-kernel speed sweep (``benchmarks/bench_speed.py --sweep``): its results file covers every registered
kernel with the row schema the README block reads, and a kernel past the cap is kept, never dropped."""

from __future__ import annotations

import json
import math
from pathlib import Path

from kcgym.registry import SUPPORTED, task_for
from tests.bench_modules import load

ROOT = Path(__file__).resolve().parent.parent


B = load("bench_speed")
COMMON = {"kind", "machine", "task", "config", "kernel", "status", "first_s", "warm_s", "load1", "date", "command",
          "commit"}


def _rows() -> list[dict]:
    return [json.loads(line) for line in B.SWEEP.read_text().splitlines() if line.strip()]


def test_every_registered_compiler_kernel_has_a_row():
    rows = _rows()
    have = {(r["machine"], r["task"], r["config"]) for r in rows if r["kernel"] == "compiler"}
    want = {(m, name, cfg.index) for m in B.SWEEP_MACHINES for name in SUPPORTED[m]
            for cfg in task_for(m, name).configs(m) if cfg.index in B.SWEEP_CONFIGS}
    assert want <= have, f"kernels missing from {B.SWEEP.name}: {sorted(want - have)[:10]}"
    assert len({(r["machine"], r["task"], r["config"], r["kernel"]) for r in rows}) == len(rows)  # no repeats


def test_the_rows_schema():
    for r in _rows():
        assert r.keys() >= COMMON, r
        assert r["kind"] == "sweep" and r["kernel"] in B.SWEEP_KINDS and r["status"] in ("ok", "over_cap", "error")
        if r["status"] == "ok":
            assert r["path"] in ("interpreter", "trace") and r["instructions"] > 0 and r["cycles"] > 0
            assert r["first_s"] > 0 and r["warm_s"] > 0 and r["fault"] is None  # every baseline kernel is correct
        else:
            assert r["cap_s"] > 0 and r["warm_s"] is None


def _row(machine, task, warm, status="ok"):
    return {"kind": "sweep", "machine": machine, "task": task, "config": 5, "kernel": "compiler", "status": status,
            "instructions": 10, "path": "trace", "first_s": warm, "warm_s": warm, "cap_s": 240.0, "load1": 1.0,
            "date": "d", "command": "c", "commit": "x"}


def test_the_readme_block_counts_and_orders_the_slow_kernels():
    rows = [_row("NPU", f"t{i}", 0.1 * i) for i in range(12)] + [_row("VLIW", "big", None, "over_cap"),
                                                                  _row("VLIW", "slow", 11.0)]
    text = B.readme_sweep(rows)
    assert "14 kernels" in text and "2 with a warm simulate over 10 s (1 of them stopped at the cap)" in text
    worst = text.split("The ten slowest:")[1].split("The slowest of each machine:")[0]
    lines = [line for line in worst.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert len(lines) == 10 and "> 240 (cap)" in lines[0] and "| slow |" in lines[1] and "| t11 |" in lines[2]
    per_machine = text.split("The slowest of each machine:")[1]
    assert "| t11 |" in per_machine and "> 240 (cap)" in per_machine


def test_a_kernel_past_the_cap_is_kept_as_an_over_cap_row():
    rows: list[dict] = []
    B.sweep("CPU", (1,), ("copy",), 0.001, {"date": "d"}, rows.append)  # a worker per kernel, each killed
    assert [(r["task"], r["kernel"], r["status"]) for r in rows] == [("copy", "compiler", "over_cap"),
                                                                     ("copy", "expert", "over_cap")]
    assert all(r["cap_s"] == 0.001 and r["date"] == "d" and not math.isnan(r["load1"]) for r in rows)
