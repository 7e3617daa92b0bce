"""examples/grpo_tiny.py: TRL's real GRPOTrainer takes steps on CPU, rewarded by kcgym."""

from __future__ import annotations

import pytest

pytest.importorskip("trl")
pytest.importorskip("torch")


def test_grpo_steps_use_kcgym_rewards_and_move_the_policy():
    from examples.grpo_tiny import run

    result = run("KernelCraft-NPU-relu", config=1, steps=3, group=4, seed=0)
    rewards = result["rewards"]
    assert len(rewards) == 3 and all(len(step) == 4 for step in rewards)  # one kcgym call per step
    assert all(r == 0.0 or r >= 0.1 for step in rewards for r in step)  # kcgym's reward: 0, or >= 0.1 if correct
    assert any(any(step) for step in result["correct"])  # the warm-started policy writes correct kernels
    # what the trainer optimised is what kcgym returned
    logged = [e["reward"] for e in result["log"] if "reward" in e]
    assert logged == pytest.approx([sum(step) / len(step) for step in rewards])
    assert result["parameter_l1_change"] > 0
