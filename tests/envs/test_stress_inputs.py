"""Stress inputs: every task states its input domain, and every hidden evaluation adds sets from its edge.

The shortcut kernels below are the compiler's own output, edited textually into kernels that are
correct only for typical values: they pass the visible default set and must fail submit.
"""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest

import kcgym  # noqa: F401  (registers the envs)
from kcgym.evaluation import Evaluator
from kcgym.registry import ACCELERATORS
from kcgym.tasks import tasks_for
from kcgym.tasks.base import UNSTATED_DOMAIN
from kcgym.tasks.numerics import is_bf16
from tests.conformance.cells import HIDDEN_SEED

CASES = [
    (acc_name, task_name)
    for acc_name, acc in ACCELERATORS.items()
    for task_name, task in tasks_for(acc.numerics).items()
    if acc.supports(task)
]
SEED = HIDDEN_SEED  # the conformance suite's hidden sets: its compiler and expert checks cover these


def _evaluator(acc_name: str, task_name: str, index: int) -> Evaluator:
    acc = ACCELERATORS[acc_name]
    task = tasks_for(acc.numerics)[task_name]
    return Evaluator(acc, task, task.config(acc_name, index), acc.make_hw())


@pytest.mark.parametrize("acc_name, task_name", CASES)
def test_every_task_states_a_domain_and_a_stress_set(acc_name, task_name):
    ev = _evaluator(acc_name, task_name, 1)
    assert ev.task.stress_sets, "every task needs at least one stress set"
    for cfg in ev.task.configs(acc_name):
        domain = ev.task.input_domain(cfg)
        assert list(domain) == [t.name for t in ev.task.inputs(cfg)]
        assert all(len(text) > 10 and text != UNSTATED_DOMAIN for text in domain.values())
    for stress in ev.task.stress_sets:
        inputs = {t.name for t in ev.task.inputs(ev.cfg)}
        assert set(stress.transforms) <= inputs and stress.description


@pytest.mark.parametrize("acc_name, task_name", CASES)
def test_stress_sets_keep_the_reference_meaningful(acc_name, task_name):
    """Stress outputs stay finite and not all zero, in the machine's number format."""
    ev = _evaluator(acc_name, task_name, 1)
    default = ev.input_sets(SEED, 1)[0]
    for stress, inputs in zip(ev.task.stress_sets, ev.stress_input_sets(SEED), strict=True):
        assert set(inputs) == set(default)
        changed = [k for k in inputs if not np.array_equal(inputs[k], default[k])]
        assert changed, f"{stress.name} draws the default set"
        for name, arr in inputs.items():
            assert arr.shape == default[name].shape and arr.dtype == default[name].dtype
            if ACCELERATORS[acc_name].numerics == "bf16":
                assert is_bf16(arr), name
        sparse = getattr(ev.task, "sparse_outputs", ())  # zero but for a few entries by definition (Dhrystone)
        for name, out in ev.task.reference(ev.cfg, inputs).items():
            out = np.asarray(out, np.float64)
            assert np.isfinite(out).all(), f"{stress.name}: reference {name} is not finite"
            assert name in sparse or np.count_nonzero(out) > out.size // 4, (
                f"{stress.name}: reference {name} is mostly zero")


def test_stress_sets_are_seeded_from_the_hidden_seed():
    ev = _evaluator("NPU", "softmax", 2)
    a, names = ev.hidden_input_sets(7, 3)
    b, _ = ev.hidden_input_sets(7, 3)
    c, _ = ev.hidden_input_sets(8, 3)
    assert names == ["input set 1", "input set 2", "input set 3", "stress set large_logits"]
    assert all(np.array_equal(x["X"], y["X"]) for x, y in zip(a, b, strict=True))
    assert not np.array_equal(a[3]["X"], c[3]["X"])
    assert all(np.array_equal(x["X"], y["X"]) for x, y in zip(a[:3], ev.input_sets(7, 3), strict=True))
    assert np.abs(a[3]["X"]).max() > 88.7  # past exp's overflow, unlike the default draw
    assert np.abs(a[0]["X"]).max() < 20


def test_prompt_states_the_domain_and_the_stress_sets():
    env = gym.make("KernelCraft-NPU-layernorm", config=1, docs_in_prompt=False)
    prompt, _ = env.reset(seed=0)
    assert "Input domain" in prompt and "- X: bf16 rows" in prompt
    assert "stress sets drawn from the edge of this domain" in prompt
    assert "offset_rows:" in prompt
    assert "simulate runs the visible default set only" in prompt


def _episode(env_id: str, source: str, config: int = 1, seed: int = 0):
    env = gym.make(env_id, config=config, docs_in_prompt=False)
    env.reset(seed=seed)
    env.step({"name": "write_kernel", "arguments": {"source": source}})
    _, _, _, _, sim = env.step({"name": "simulate", "arguments": {}})
    obs, reward, _, _, sub = env.step({"name": "submit", "arguments": {}})
    return sim, sub, obs, reward


def _compiled(acc_name: str, task_name: str, index: int = 1) -> str:
    ev = _evaluator(acc_name, task_name, index)
    return ev.accelerator.compile(ev.task, ev.cfg, ev.hw)


def _shortcut_fails_submit(env_id: str, source: str, stress: str, config: int = 1) -> None:
    sim, sub, obs, reward = _episode(env_id, source, config)
    assert sim["correct"] and len(sim["sets"]) == 1, "the shortcut must pass the visible default set"
    assert not sub["correct"] and reward == 0.0
    verdicts = {s["name"]: s["correct"] for s in sub["sets"]}
    assert verdicts[f"stress set {stress}"] is False
    assert all(ok for name, ok in verdicts.items() if name.startswith("input set"))
    assert f"stress set {stress}: INCORRECT" in obs


def test_npu_softmax_without_max_subtraction_fails_submit():
    src = _compiled("NPU", "softmax")
    shortcut = "\n".join(line for line in src.splitlines() if "V_RED_MAX" not in line)
    shortcut = shortcut.replace("S_LI_FP f1, -3.0e38", "S_LI_FP f1, 0.0")  # x - 0: exp of the raw logits
    assert shortcut.count("V_SUB_VF") == src.count("V_SUB_VF") and "V_RED_MAX" not in shortcut
    _shortcut_fails_submit("KernelCraft-NPU-softmax", shortcut, "large_logits")


def test_npu_softmax_with_a_max_left_over_from_earlier_rows_fails_submit():
    """The row max is never reset: it carries over (softmax is shift-invariant, so typical rows still pass)."""
    src = _compiled("NPU", "softmax", 2)
    shortcut = "\n".join(line for line in src.splitlines() if "S_LI_FP f1, -3.0e38" not in line)
    _shortcut_fails_submit("KernelCraft-NPU-softmax", shortcut, "large_logits", config=2)


@pytest.mark.parametrize("task_name", ["layernorm", "rmsnorm"])
def test_npu_norm_without_eps_fails_submit(task_name):
    """Dropping eps is invisible at the default row scales, not on the small-variance stress rows."""
    src = _compiled("NPU", task_name)
    shortcut = re.sub(r"^\s*S_ADD_FP (f\d), \1, f7.*$\n", "", src, flags=re.M)
    assert "f7" in src and shortcut.count("S_ADD_FP") < src.count("S_ADD_FP")
    _shortcut_fails_submit(f"KernelCraft-NPU-{task_name}", shortcut, "offset_rows")


def test_npu_rmsnorm_reusing_a_leftover_accumulator_fails_submit():
    """The sum of squares is not zeroed per row, so it starts from the previous row's 1/rms."""
    src = _compiled("NPU", "rmsnorm", 2)
    shortcut = "\n".join(line for line in src.splitlines() if "S_ADD_FP f1, f0, f0" not in line)
    assert shortcut != src
    _, sub, obs, reward = _episode("KernelCraft-NPU-rmsnorm", shortcut, config=2)
    assert not sub["correct"] and reward == 0.0
    assert "INCORRECT" in obs


def test_rvv_int_softmax_with_an_8_bit_difference_fails_submit():
    """max - x computed at e8 and sign-extended: right while rows span < 128, wrong on full-range rows."""
    from kcgym.sims.rvv.compiler import compile_template

    ev = _evaluator("RVV", "softmax", 1)  # the template kernel: its text is kcgym's own, stable to edit
    src = compile_template(ev.task, ev.cfg, ev.hw, ev.accelerator.kernel_layout(ev.task, ev.cfg, ev.hw))
    widen = "    vsetvli x0, t1, e32, m4, ta, ma\n    vsext.vf4 v4, v1\n    vrsub.vx v4, v4, s4\n"
    narrow = "    vrsub.vx v1, v1, s4\n    vsetvli x0, t1, e32, m4, ta, ma\n    vsext.vf4 v4, v1\n"
    assert src.count(widen) == 2
    _shortcut_fails_submit("KernelCraft-RVV-softmax", src.replace(widen, narrow), "full_range_rows")


# --- compiler and expert kernels pass every stress set --------------------------------------------
# tests/conformance/ scores every compiler and expert kernel on the hidden sets (the default sets and every
# stress set, from SEED) at every config: C1 and cheap C2 by default, the rest under slow.
