"""The final report lists every hidden set (correctness, worst error, tolerance margin), bounded in size."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import kcgym  # noqa: F401  (registers the envs)
from kcgym.envs.reports import MAX_SET_LINES, fmt_margin, render_sets
from kcgym.evaluation import SetResult
from kcgym.sims.npu import ACCELERATOR as NPU
from kcgym.tasks.base import Tolerance
from kcgym.tasks.compare import compare_output, tolerance_margin

TOL = Tolerance(atol=0.01, rtol=0.1)


def test_margin_is_the_worst_error_over_its_bound():
    expected = np.array([0.0, 1.0, -2.0])
    assert tolerance_margin(expected, expected, TOL) == 0.0
    # errors 0.005 (bound 0.01), 0.055 (bound 0.11), 0.0 -> worst 0.5
    assert tolerance_margin(np.array([0.005, 1.055, -2.0]), expected, TOL) == pytest.approx(0.5)
    assert tolerance_margin(np.array([0.0, 1.11, -2.0]), expected, TOL) == pytest.approx(1.0)
    assert tolerance_margin(np.array([np.nan, 1.0, -2.0]), expected, TOL) == math.inf
    exact = Tolerance(atol=0.0, rtol=0.0)
    assert tolerance_margin(np.array([1, 2]), np.array([1, 2]), exact) == 0.0
    assert tolerance_margin(np.array([1, 3]), np.array([1, 2]), exact) == math.inf


def test_margin_agrees_with_the_match_test():
    rng = np.random.default_rng(0)
    expected = rng.normal(size=1000)
    actual = expected + rng.normal(scale=0.02, size=1000)
    c = compare_output("Y", actual, expected, TOL)
    assert (c.max_margin <= 1.0) == c.correct
    near = expected + 0.9 * (TOL.atol + TOL.rtol * np.abs(expected))
    c = compare_output("Y", near, expected, TOL)
    assert c.correct and 0.89 < c.max_margin <= 0.9 + 1e-9


def test_margin_is_rounded_up_when_shown():
    assert fmt_margin(0.9996) == "1.000"
    assert fmt_margin(0.12341) == "0.124"
    assert fmt_margin(41.61) == "41.7"
    assert fmt_margin(math.inf) == "inf" and fmt_margin(0.0) == "0" and fmt_margin(None) == "n/a"


def _compiled(env) -> str:
    u = env.unwrapped
    return NPU.compile(u.task, u.cfg, u.hw)


def test_submit_reports_every_hidden_set():
    env = gym.make("KernelCraft-NPU-softmax", config=1, docs_in_prompt=False, hidden_inputs=3)
    env.reset(seed=3)
    env.step({"name": "write_kernel", "arguments": {"source": _compiled(env)}})
    obs, _, _, _, sim = env.step({"name": "simulate", "arguments": {}})
    assert "tolerance margin" in obs
    assert [s["name"] for s in sim["sets"]] == ["input set 1"] and sim["max_margin"] < 1
    obs, reward, terminated, _, info = env.step({"name": "submit", "arguments": {}})
    assert terminated and reward > 0
    names = ["input set 1", "input set 2", "input set 3", "stress set large_logits"]
    assert [s["name"] for s in info["sets"]] == names
    assert "Final evaluation on 4 hidden input sets (3 default, 1 stress" in obs
    for s in info["sets"]:
        assert s["correct"] and 0 <= s["max_margin"] < 1 and s["max_abs_error"] is not None
        assert f"    {s['name']}: correct, max abs error" in obs
    assert info["max_margin"] == max(s["max_margin"] for s in info["sets"])
    episode = info["episode"]
    assert episode["sets"] == info["sets"] and episode["max_margin"] == info["max_margin"]
    assert episode["stress_sets"] == ["large_logits"]


def test_truncation_reports_every_hidden_set_too():
    env = gym.make("KernelCraft-NPU-softmax", config=1, docs_in_prompt=False, max_turns=1)
    env.reset(seed=0)
    src = _compiled(env).replace("V_MUL_VF gp4, gp10, f2", "V_MUL_VF gp4, gp10, f0", 1)  # row 0 all zero
    obs, reward, terminated, truncated, info = env.step({"name": "write_kernel", "arguments": {"source": src}})
    assert truncated and not terminated and reward == 0.0
    sets = info["episode"]["sets"]
    assert len(sets) == 4 and not any(s["correct"] for s in sets)
    assert all(s["n_mismatch"] > 0 and s["max_margin"] > 1 for s in sets)
    assert "Every input set (0/4 correct" in obs and "stress set large_logits: INCORRECT" in obs


def test_the_set_list_is_bounded():
    sets = [SetResult(f"input set {i + 1}", i != 30, 1.0, 0, 0.0, 0.1) for i in range(40)]
    sets.append(SetResult("stress set tails", True, 1.0, 0, 0.0, 0.5, description="|X| in 4..32"))
    lines = render_sets(sets)
    listed = [line for line in lines if line.startswith("    input set ") or line.startswith("    stress set ")]
    assert len(listed) == MAX_SET_LINES
    assert lines[0].startswith("  Every input set (40/41 correct; worst margin 0.500 on stress set tails)")
    assert f"... {41 - MAX_SET_LINES} more set(s), 1 of them incorrect" in lines[-1]
