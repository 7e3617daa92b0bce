"""Real episodes on the VLIW tile: the compiler's kernel scores exactly 1.0, the expert more."""

from __future__ import annotations

import gymnasium as gym
import pytest

import kcgym
from tests.envs.conftest import call

VLIW_IDS = [eid for eid in kcgym.ENV_IDS if eid.startswith("KernelCraft-VLIW-")]


def test_every_task_with_a_template_is_registered():
    from kcgym.registry import ACCELERATORS, SUPPORTED
    from kcgym.tasks import TASKS

    acc = ACCELERATORS["VLIW"]
    assert set(SUPPORTED["VLIW"]) == {name for name, task in TASKS.items() if acc.supports(task)}
    assert len(VLIW_IDS) == 23


@pytest.mark.parametrize("env_id", VLIW_IDS)
def test_compiler_kernel_scores_one(env_id):
    env = gym.make(env_id, config=1, docs_in_prompt=False)
    obs, _ = env.reset(seed=0)
    assert "VLIW" in obs and "byte address" in obs
    u = env.unwrapped
    call(env, "write_kernel", source=u.accelerator.compile(u.task, u.cfg, u.hw))
    *_, info = call(env, "simulate")
    assert info["correct"] and info["speedup"] == 1.0 and info["cycles"] >= info["roofline_cycles"]
    _, r, term, trunc, info = call(env, "submit")
    assert term and not trunc and r == 1.0 and info["episode"]["success"]


def test_expert_kernel_is_rewarded_above_one_and_docs_are_searchable():
    env = gym.make("KernelCraft-VLIW-gelu", config=5)
    obs, _ = env.reset(seed=1)
    assert "slot rules" in obs.lower()  # the programming guide is in the prompt
    u = env.unwrapped
    obs, *_ = call(env, "read_docs", query="VMACL")
    assert "VMACL" in obs
    call(env, "write_kernel", source=u.accelerator.expert(u.task, u.cfg, u.hw))
    _, r, term, _, info = call(env, "submit")
    assert term and r > 1.3  # 1.55: the expert is 1.52x the -O2 compiler (3.58x the one-op-per-bundle one)


def test_a_slot_rule_violation_comes_back_as_an_assembly_error():
    env = gym.make("KernelCraft-VLIW-relu", config=1, docs_in_prompt=False)
    env.reset(seed=0)
    call(env, "write_kernel", source="VADD x1, x2, x3 || VMUL x4, x5, x6\n")
    obs, r, term, _, _ = call(env, "assemble")
    assert "E020" in obs and "slot rule" in obs and not term and r == 0
