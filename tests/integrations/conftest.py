"""A registered env id on the fake accelerator, so adapters are tested through ids without the NPU.

Registered before every test (not at import): other test modules may pop ids from Gymnasium's
registry when they finish.
"""

from __future__ import annotations

import gymnasium as gym
import pytest

from kcgym.envs.kernel_env import KernelCraftEnv
from tests.envs.fake_accelerator import COPY_TASK, FAKE

FAKE_ID = "KernelCraftRLTest-FAKE-copy"


@pytest.fixture(autouse=True)
def _register_fake_id():
    if FAKE_ID not in gym.registry:
        gym.register(FAKE_ID, entry_point=KernelCraftEnv, kwargs={"accelerator": FAKE, "task": COPY_TASK})
    yield
