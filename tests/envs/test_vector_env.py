"""``gym.make_vec`` (sync and async) runs whole episodes exactly as single envs do."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

import kcgym
from kcgym.envs.kernel_env import KernelCraftEnv
from kcgym.envs.vector import async_vector_kwargs, tolerate_mixed_info_types
from tests.envs.fake_accelerator import COPY_TASK, FAKE, FAST, SYNTAX, WRONG

FAKE_ID = "KernelCraftVecTest-FAKE-copy"


@pytest.fixture(autouse=True)
def _register_fake_id():
    """Registered per test, not at import: other test modules pop ids from the registry when done."""
    if FAKE_ID not in gym.registry:
        gym.register(FAKE_ID, entry_point=KernelCraftEnv, kwargs={"accelerator": FAKE, "task": COPY_TASK})
    yield


def episode_actions(kernel: str) -> list:
    """A full episode in the forms agents send: a dict, a JSON string, an OpenAI tool call."""
    return [
        {"name": "write_kernel", "arguments": {"source": kernel}},
        json.dumps({"name": "simulate", "arguments": {}}),
        {"id": "call_1", "type": "function", "function": {"name": "profile", "arguments": "{}"}},
        {"name": "submit", "arguments": {}},
    ]


def unbatch(batched: dict, i: int) -> dict:
    """Sub-env ``i``'s info from a batched vector info (absent and ``None`` values dropped)."""
    out = {}
    for key, value in batched.items():
        if key.startswith("_") or not batched[f"_{key}"][i]:
            continue
        item = unbatch(value, i) if isinstance(value, dict) else value[i]
        if item is not None:
            out[key] = item.item() if isinstance(item, np.generic) else item
    return out


def without_none(info: dict | None) -> dict | None:
    if info is None:
        return None
    return {k: without_none(v) if isinstance(v, dict) else v for k, v in info.items() if v is not None}


def single_env_run(env_id: str, seed: int, actions: list, **kwargs) -> list[tuple]:
    env = gym.make(env_id, **kwargs)
    obs, _ = env.reset(seed=seed)
    steps = [(obs, 0.0, False, False, None)]
    for a in actions:
        obs, r, term, trunc, info = env.step(a)
        steps.append((obs, r, term, trunc, without_none(info.get("episode"))))
    env.close()
    return steps


def make_vec(env_id: str, num_envs: int, mode: str, **kwargs) -> gym.vector.VectorEnv:
    return gym.make_vec(
        env_id, num_envs=num_envs, vectorization_mode=mode, vector_kwargs=async_vector_kwargs(mode), **kwargs
    )


def vector_run(env_id: str, mode: str, seeds: list[int], kernels: list[str], **kwargs) -> list[list[tuple]]:
    envs = make_vec(env_id, len(seeds), mode, **kwargs)
    try:
        obs, _ = envs.reset(seed=seeds)
        runs = [[(obs[i], 0.0, False, False, None)] for i in range(len(seeds))]
        per_env = [episode_actions(k) for k in kernels]
        for t in range(len(per_env[0])):
            obs, rew, term, trunc, info = envs.step(tuple(actions[t] for actions in per_env))
            for i in range(len(seeds)):
                episode = unbatch(info["episode"], i) if "episode" in info and info["_episode"][i] else None
                runs[i].append((obs[i], float(rew[i]), bool(term[i]), bool(trunc[i]), episode))
        # next-step autoreset: the step after the end starts a fresh episode from the prompt
        assert envs.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
        obs, rew, term, _, _ = envs.step(tuple(json.dumps({"name": "submit"}) for _ in seeds))
        assert list(obs) == [r[0][0] for r in runs] and not term.any() and not rew.any()
    finally:
        envs.close()
    return runs


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_fake_vector_episodes_equal_single_env_episodes(mode: str):
    """FAST, WRONG and SYNTAX report int / int / None cycles in the same step: mixed info types."""
    seeds, kernels = [0, 1, 2], [FAST, WRONG, SYNTAX]
    runs = vector_run(FAKE_ID, mode, seeds, kernels, config=2)
    for seed, kernel, run in zip(seeds, kernels, runs, strict=True):
        assert run == single_env_run(FAKE_ID, seed, episode_actions(kernel), config=2)
    assert [run[-1][1] for run in runs][1:] == [0.0, 0.0] and runs[0][-1][1] > 1


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_npu_vector_episodes_equal_single_env_episodes(mode: str):
    env = gym.make("KernelCraft-NPU-relu", config=1).unwrapped
    compiled = env.accelerator.compile(env.task, env.cfg, env.hw)
    seeds, kernels = [3, 4], [compiled, compiled.replace("\n", "\n# comment\n", 1)]
    kwargs = {"config": 1, "docs_in_prompt": False}
    runs = vector_run("KernelCraft-NPU-relu", mode, seeds, kernels, **kwargs)
    for seed, kernel, run in zip(seeds, kernels, runs, strict=True):
        assert run == single_env_run("KernelCraft-NPU-relu", seed, episode_actions(kernel), **kwargs)
        assert run[-1][1] == pytest.approx(1.0) and run[-1][4]["success"]


@pytest.mark.parametrize("env_id", kcgym.ENV_IDS)
def test_every_id_vectorises(env_id: str):
    envs = gym.make_vec(env_id, num_envs=2, vectorization_mode="sync", docs_in_prompt=False)
    obs, info = envs.reset(seed=[0, 1])
    assert len(obs) == 2 and obs[0] == obs[1] and list(info["seed"]) == [0, 1]
    obs, rew, term, trunc, info = envs.step(("not json", {"name": "read_docs", "arguments": {}}))
    assert "invalid tool call" in obs[0] and info["tool"][1] == "read_docs"
    assert np.array_equal(rew, [0.0, 0.0]) and not term.any() and not trunc.any()
    envs.close()


class MixedInfoEnv(gym.Env):
    """Sub-env ``i`` reports info of different types for the same keys (as kcgym envs do)."""

    observation_space = gym.spaces.Discrete(2)
    action_space = gym.spaces.Discrete(2)
    INFOS = (
        {"cycles": 568, "speedup": 1.25, "fault": None, "rate": 1},
        {"cycles": None, "speedup": None, "fault": {"code": 3, "line": None}, "rate": 0.5},
        {"cycles": 600, "speedup": 0.9, "fault": None, "rate": 2},
    )

    def __init__(self, index: int):
        self.index = index

    def reset(self, *, seed=None, options=None):
        return 0, dict(self.INFOS[self.index])

    def step(self, action):
        return 0, 0.0, False, False, dict(self.INFOS[self.index])


def test_mixed_none_and_number_infos_batch_as_objects():
    tolerate_mixed_info_types()  # what creating a kcgym env does
    envs = gym.vector.SyncVectorEnv([lambda i=i: MixedInfoEnv(i) for i in range(3)])
    _, info = envs.reset(seed=0)
    assert list(info["cycles"]) == [568, None, 600] and list(info["speedup"]) == [1.25, None, 0.9]
    assert list(info["rate"]) == [1, 0.5, 2]  # a float after ints is not truncated
    assert info["fault"]["code"][1] == 3 and list(info["fault"]["_code"]) == [False, True, False]
    assert list(info["_cycles"]) == [True, True, True]
    envs.close()
