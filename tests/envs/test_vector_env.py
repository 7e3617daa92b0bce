"""``gym.make_vec`` (sync and async) runs whole episodes exactly as single envs do."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

import kcgym
from kcgym.envs.kernel_env import KernelCraftEnv
from kcgym.envs.vector import TEXT_KEYS, async_vector_kwargs, stable_info
from tests.envs import fake_accelerator as fa
from tests.envs.conftest import fake_env
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


ALL_KERNELS = (fa.FAST, fa.BASELINE_LIKE, fa.SLOW, fa.WRONG, fa.PARTIAL, fa.FAULTY, fa.HANGS, fa.EXPLOIT, fa.SYNTAX,
               fa.WARNS)


def every_info() -> list[dict]:
    """Reset and step infos of every tool on every known kernel outcome, invalid calls and the end."""
    infos = []
    for kernel in ALL_KERNELS:
        for submit in (True, False):
            env = fake_env(max_turns=9)
            infos.append(env.reset(seed=1)[1])
            actions = [
                "not json", {"name": "simulate"}, {"name": "write_kernel", "arguments": {"source": kernel}},
                {"name": "view_output"}, {"name": "assemble"}, {"name": "simulate"},
                {"name": "view_output", "arguments": {"rows": 2, "output": "Y"}}, {"name": "profile"},
                {"name": "read_docs", "arguments": {"query": "copy"}},
            ]
            if submit:
                actions[-1] = {"name": "submit"}
            for action in actions:
                infos.append(env.step(action)[4])
            infos.append(env.step({"name": "submit"})[4])  # after the end
    return infos


def key_types(info: dict, prefix: str = "", out: dict | None = None) -> dict[str, set[type]]:
    out = {} if out is None else out
    for key, value in info.items():
        path = f"{prefix}{key}"
        out.setdefault(path, set()).add(type(value))
        if isinstance(value, dict):
            key_types(value, path + ".", out)
    return out


def test_every_info_key_has_one_type():
    """What lets Gymnasium batch kcgym infos unpatched: a number or dict key never meets None or another
    type; only text keys may be None (object arrays hold both)."""
    types: dict[str, set[type]] = {}
    for info in every_info():
        key_types(info, out=types)
    mixed = {}
    for path, seen in types.items():
        key = path.rpartition(".")[2]
        if key in TEXT_KEYS:
            if not seen <= {str, type(None)}:
                mixed[path] = seen
        elif len(seen) != 1 or type(None) in seen:
            mixed[path] = seen
    assert not mixed, mixed
    assert types["cycles"] == {int} and types["speedup"] == {float} and types["fault"] == {dict}
    assert types["episode.sol_share"] == {float} and types["error"] == {str, type(None)}


def test_stable_info_rules():
    info = {"cycles": None, "error": None, "speedup": 2, "fault": {"line": None, "source": None, "pc": 3},
            "sets": [{"fault": None}], "correct": False}
    assert stable_info(info) == {"error": None, "speedup": 2.0, "fault": {"source": None, "pc": 3},
                                 "sets": [{"fault": None}], "correct": False}
    assert type(stable_info(info)["speedup"]) is float


def test_gymnasium_is_not_patched():
    """Creating kcgym envs leaves Gymnasium's own VectorEnv._add_info in place."""
    envs = gym.make_vec(FAKE_ID, num_envs=2, vectorization_mode="sync")
    envs.close()
    fake_env()
    add_info = gym.vector.VectorEnv.__dict__["_add_info"]
    assert add_info.__module__ == "gymnasium.vector.vector_env" and add_info.__qualname__ == "VectorEnv._add_info"


def test_plain_sync_vector_env_batches_mixed_outcomes():
    """Sub-envs in one step: int cycles, no cycles (syntax error), a fault dict: stacked by Gymnasium alone."""
    kernels = (fa.FAST, fa.SYNTAX, fa.FAULTY, fa.WRONG)
    envs = gym.vector.SyncVectorEnv([lambda: fake_env() for _ in kernels])
    try:
        envs.reset(seed=[0, 1, 2, 3])
        envs.step(tuple({"name": "write_kernel", "arguments": {"source": k}} for k in kernels))
        _, _, _, _, info = envs.step(tuple({"name": "simulate"} for _ in kernels))
        assert list(info["_cycles"]) == [True, False, True, True] and info["cycles"].dtype.kind == "i"
        assert info["cycles"][0] == 100 and list(info["assembled"]) == [True, False, True, True]
        assert list(info["_fault"]) == [False, False, True, False] and info["fault"]["name"][2]
        assert list(info["error"]) == [None, "assembly failed", None, None]
        _, _, term, _, info = envs.step(tuple({"name": "submit"} for _ in kernels))
        assert term.all() and list(info["episode"]["success"]) == [True, False, False, False]
        assert info["episode"]["speedup"].dtype.kind == "f" and list(info["episode"]["_speedup"]) == [
            True, False, False, False]
    finally:
        envs.close()
