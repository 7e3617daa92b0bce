"""Fixtures: KernelCraftEnv on the fake accelerator, and a helper to make tool calls."""

from __future__ import annotations

from typing import Any

import pytest

from kcgym.envs.kernel_env import KernelCraftEnv
from tests.envs.fake_accelerator import COPY_TASK, FAKE


def fake_env(**kwargs: Any) -> KernelCraftEnv:
    kwargs.setdefault("config", 1)
    return KernelCraftEnv(accelerator=FAKE, task=COPY_TASK, **kwargs)


def call(env, name: str, **arguments: Any):
    """One tool call, as an agent would make it."""
    return env.step({"name": name, "arguments": arguments})


@pytest.fixture
def env() -> KernelCraftEnv:
    e = fake_env()
    e.reset(seed=0)
    return e
