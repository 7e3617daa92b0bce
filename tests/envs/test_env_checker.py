"""Gymnasium's own checker, with warnings as failures: on the fake env and on every registered id."""

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


def _real_stack_available() -> bool:
    try:
        kcgym.ACCELERATORS["NPU"]
        from kcgym.tasks import TASKS  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.skipif(not _real_stack_available(), reason="the NPU simulator is not importable yet")
@pytest.mark.parametrize("eid", kcgym.ENV_IDS)
def test_check_env_registered(eid):
    """check_env only sends random (invalid) actions, so this never runs the simulator."""
    env = gym.make(eid)
    _check_without_warnings(env)
    env.close()
