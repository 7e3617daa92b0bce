"""Gymnasium's own checker, with warnings as failures, on the fake env (every registered cell: tests/conformance)."""

from __future__ import annotations

import warnings

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import kcgym
from tests.envs.fake_accelerator import COPY_TASK, FAKE

FAKE_ID = "KernelCraftTest-FAKE-copy"


@pytest.fixture(scope="module")
def fake_id():
    if FAKE_ID not in gym.registry:
        gym.register(
            id=FAKE_ID,
            entry_point="kcgym.envs.kernel_env:KernelCraftEnv",
            kwargs={"accelerator": FAKE, "task": COPY_TASK},
        )
    yield FAKE_ID
    gym.registry.pop(FAKE_ID, None)


def _check_without_warnings(env) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    messages = [str(w.message) for w in caught]
    assert messages == []


def test_check_env_fake(fake_id):
    env = gym.make(fake_id)
    _check_without_warnings(env)
    env.close()


def test_make_passes_kwargs_and_wrappers_are_transparent(fake_id):
    env = gym.make(fake_id, config=3, max_turns=4, reward={"mode": "dense"}, render_mode="ansi")
    obs, info = env.reset(seed=1)
    assert info["config_index"] == 3 and info["max_turns"] == 4 and info["env_id"] == fake_id
    assert env.unwrapped.tools == info["tools"]
    obs, r, term, trunc, info = env.step('{"name": "write_kernel", "arguments": {"source": "COPY"}}')
    assert env.unwrapped.kernel == "COPY" and env.render() == obs
    env.close()


def test_registered_ids_are_exported():
    assert kcgym.ENV_IDS and all(eid in gym.registry for eid in kcgym.ENV_IDS)
    assert "KernelCraft-NPU-relu" in kcgym.ENV_IDS
