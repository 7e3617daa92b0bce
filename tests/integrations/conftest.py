"""A registered env id on the fake accelerator, so adapters are tested through ids without the NPU."""

from __future__ import annotations

import gymnasium as gym

from kcgym.envs.kernel_env import KernelCraftEnv
from tests.envs.fake_accelerator import COPY_TASK, FAKE

FAKE_ID = "KernelCraftTest-FAKE-copy"
if FAKE_ID not in gym.registry:
    gym.register(FAKE_ID, entry_point=KernelCraftEnv, kwargs={"accelerator": FAKE, "task": COPY_TASK})
