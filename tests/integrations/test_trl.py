"""The TRL reward function and dataset builder (no trainer: see test_grpo_tiny.py)."""

from __future__ import annotations

import pytest

from kcgym.integrations.trl import KernelReward, build_dataset
from kcgym.scoring import BatchScorer, scorer_for
from tests.envs.fake_accelerator import FAST, SLOW, WRONG
from tests.integrations.conftest import FAKE_ID


def fenced(kernel: str) -> list[dict]:
    return [{"role": "assistant", "content": f"```asm\n{kernel}```"}]


def test_rewards_are_the_scorers_per_env_config_and_seed():
    completions = [fenced(FAST), fenced(WRONG), "no code", fenced(SLOW), fenced(FAST)]
    ids = [FAKE_ID] * 5
    configs = [1, 1, 1, 2, 2]
    seeds = [0, 0, 0, 9, 9]
    metrics: dict[str, float] = {}
    reward = KernelReward()
    got = reward(
        prompts=[[]] * 5,
        completions=completions,
        env_id=ids,
        config=configs,
        seed=seeds,
        log_metric=metrics.__setitem__,
        trainer_state=None,
        completion_ids=None,
    )
    expected = [
        *[r.reward for r in scorer_for(FAKE_ID, 1).score_completions(completions[:3], seed=0)],
        *[r.reward for r in scorer_for(FAKE_ID, 2).score_completions(completions[3:], seed=9)],
    ]
    assert got == expected and got[0] > 1 and got[1] == got[2] == 0 and 0 < got[3] < 1
    math = __import__("math")  # C2: 8 rows, 40 cycles each; speed of light = the fake roofline, 50
    assert got[4] == pytest.approx(1 + 3 * math.log(8 * 40 / 100) / math.log(8 * 40 / 50))
    assert metrics == {"kcgym/correct": 0.6, "kcgym/assembled": 0.8, "kcgym/kernel_found": 0.8}
    assert [r.index for r in reward.history[0]] == [0, 1, 2, 3, 4]
    assert reward.__name__ == "kcgym_reward"  # the name TRL logs rewards under


def test_defaults_apply_to_rows_without_columns():
    reward = KernelReward(FAKE_ID, config=1, reward={"correct_base": 2.0})
    (r,) = reward(prompts=["p"], completions=[f"```\n{FAST}```"])
    assert r == pytest.approx(2 + 1.212, abs=1e-3)  # sol reward: 3 log(1.6) / log(160 / 50)


def test_bad_configuration_is_named():
    with pytest.raises(ValueError, match="give the dataset an 'env_id' column"):
        KernelReward()(prompts=["p"], completions=["x"])
    with pytest.raises(ValueError, match="2 completions but 2 env ids, 1 configs"):
        KernelReward()(prompts=["p", "q"], completions=["x", "y"], env_id=[FAKE_ID] * 2, config=[1])
    with pytest.raises(ValueError, match="did you mean 'KernelCraft-NPU-relu'"):
        KernelReward("KernelCraft-NPU-rel")


def test_build_dataset_rows_are_chat_prompts_with_routing_columns():
    pytest.importorskip("datasets")
    ds = build_dataset([(FAKE_ID, 1), (FAKE_ID, 2), FAKE_ID], repeats=2, first_seed=100)
    assert ds.column_names == ["prompt", "env_id", "config", "seed"]
    assert ds["config"] == [1, 2, 1, 1, 2, 1] and ds["seed"] == list(range(100, 106))
    system, user = ds[0]["prompt"]
    assert system["role"] == "system" and "fenced code block" in system["content"]
    assert user["role"] == "user" and "Formula: Y = X" in user["content"] and "## Documentation" in user["content"]
    assert "shape [4x8]" in user["content"] and "shape [8x8]" in ds[1]["prompt"][1]["content"]
    short = build_dataset([FAKE_ID], docs_in_prompt=False)
    assert "## Documentation" not in short[0]["prompt"][1]["content"]
    with pytest.raises(ValueError, match="repeats must be >= 1"):
        build_dataset([FAKE_ID], repeats=0)
    with pytest.raises(ValueError, match="at least one"):
        build_dataset([])


def test_npu_prompt_and_reward_agree_with_the_env():
    pytest.importorskip("datasets")
    ds = build_dataset([("KernelCraft-NPU-relu", 1)])
    assert "ReLU" in ds[0]["prompt"][1]["content"] or "relu" in ds[0]["prompt"][1]["content"]
    env = BatchScorer("KernelCraft-NPU-relu").env
    kernel = env.accelerator.compile(env.task, env.cfg, env.hw)
    (r,) = KernelReward()(
        prompts=ds["prompt"], completions=[f"```\n{kernel}\n```"], **{k: ds[k] for k in ("env_id", "config", "seed")}
    )
    assert r == pytest.approx(1.0)
