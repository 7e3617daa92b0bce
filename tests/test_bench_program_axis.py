"""The program-axis measurement (``benchmarks/bench_program_axis.py``): its trace-path sweep times one call per
program against one ``vmap``-ed call at each batch size, gets the same memories, and its README sentence names the
break-even size only where one was measured."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import kcgym  # noqa: F401
from kcgym.sims.npu import machine as M
from kcgym.sims.npu import trace
from kcgym.sims.npu.accelerator import HBM_BUCKET, PROGRAM_BUCKET
from tests.bench_modules import load

B = load("bench_program_axis")


def _result(ratios: list[float]) -> dict:
    sizes = [{"programs": 1 << i, "per_program_warm_s": 0.01, "program_axis_warm_s": 0.01 * r, "ratio": r,
              "identical": True} for i, r in enumerate(ratios)]
    return {"slowdown": 30.0, "programs": 16, "input_sets": 3, "device": "cpu", "program_axis_warm_s": 1.0,
            "per_program_warm_s": 0.03, "date": "2026-12-02", "cpus": 2, "load": 1.0, "trace_sizes": sizes,
            "trace_identical": True, "trace_break_even": next((s["programs"] for s in sizes if s["ratio"] <= 1), None)}


def test_sentence_names_the_break_even_only_where_measured():
    never = B.readme_sentence(_result([2.0, 3.0, 5.0]))
    assert "2x at 1, 3x at 2, 5x at 4 programs" in never
    assert "does not break even up to 4 programs on CPU" in never
    assert "breaks even at 4 programs" in B.readme_sentence(_result([2.0, 1.5, 0.9]))


def test_trace_sweep_same_memories_at_each_size():
    env = gym.make("KernelCraft-NPU-matmul", config=1).unwrapped
    acc, task, cfg, hw = env.accelerator, env.task, env.cfg, env.hw
    programs = [acc.assemble(f"; {i}\n" + acc.compile(task, cfg, hw), hw) for i in range(2)]
    layout = acc.layout(task, cfg, hw)
    limit = acc.hbm_size(layout)
    hbm = np.zeros((2, M.bucket(limit, HBM_BUCKET)), np.float32)
    fpm = np.zeros(hw.fpsram_size, np.float32)
    size = M.bucket(max(p.length for p in programs), PROGRAM_BUCKET)
    halt = trace.batched_runner(hw.model_dump_json())[0].halt_row
    words = np.stack([p.padded(size, halt) for p in programs])
    got = B.trace_data_paths(hw, words, hbm, fpm, limit, [1, 2])
    assert [r["programs"] for r in got["trace_sizes"]] == [1, 2]
    assert got["trace_identical"] and all(r["identical"] for r in got["trace_sizes"])
    assert got["trace_break_even"] in (None, 1, 2)
