"""RVV through the gymnasium env: a real episode, the tools' fault and error reports, and the guide's examples."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np

import kcgym  # noqa: F401  (registers the envs)
from kcgym.sims.rvv import ACCELERATOR
from kcgym.sims.rvv.docs import rvv_docs
from kcgym.tasks import tasks_for
from tests.envs.conftest import call

HW = ACCELERATOR.make_hw()


def test_all_fifteen_rvv_envs_are_registered():
    ids = [e for e in kcgym.ENV_IDS if e.startswith("KernelCraft-RVV-")]
    assert len(ids) == 15 and all(e in gym.registry for e in ids)


def test_expert_kernel_episode_scores_above_one():
    env = gym.make("KernelCraft-RVV-matmul", config=1, docs_in_prompt=False)
    obs, _ = env.reset(seed=0)
    assert "0x20000000" in obs and "mult" in obs
    u = env.unwrapped
    call(env, "write_kernel", source=ACCELERATOR.expert(u.task, u.cfg, u.hw))
    *_, info = call(env, "simulate")
    assert info["correct"] and info["speedup"] > 2 and info["cycles"] >= info["roofline_cycles"]
    _, r, term, _, info = call(env, "submit")
    assert term and r > 2 and info["episode"]["success"]


def test_tools_report_assembly_errors_and_runtime_faults():
    env = gym.make("KernelCraft-RVV-relu", config=1, docs_in_prompt=False)
    env.reset(seed=0)
    call(env, "write_kernel", source="li t0, 16\nvsetvli t1, t0, e8, m1, ta, ma\naddi t7, t0, 1\n")
    obs, *_ = call(env, "assemble")
    assert "kernel.s:3:6" in obs and "no t7" in obs
    call(env, "write_kernel", source="li t0, 1\nloop:\n    bnez t0, loop\n")
    obs, *_, info = call(env, "simulate")
    assert not info["correct"] and "STEP_BUDGET" in obs and "line 3" in obs


def test_guide_examples_assemble_and_the_relu_example_is_correct():
    text = "\n".join(s.text for s in rvv_docs(HW))
    blocks = re.findall(r"```asm\n(.*?)```", text, re.S)
    assert len(blocks) >= 3
    for block in blocks:
        ACCELERATOR.assemble(block, HW)
    task = tasks_for("int8")["relu"]
    cfg = task.config("RVV", 1)  # n = 512, Y at 0x20001000: exactly the example's addresses
    inputs = task.generate_inputs(cfg, np.random.default_rng(0))
    (res,) = ACCELERATOR.run(ACCELERATOR.assemble(blocks[0], HW), task, cfg, HW, [inputs], 100_000)
    assert res.fault is None and np.array_equal(res.outputs["Y"], task.reference(cfg, inputs)["Y"])


def test_guide_placeholders_are_filled_and_sections_present():
    docs = rvv_docs(HW)
    assert not any("{{" in s.text for s in docs)
    assert [s.id for s in docs][:3] == ["overview", "memory-map", "vsetvli-sew-and-lmul"] and docs[-1].id == "isa"
