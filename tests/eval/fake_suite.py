"""A plugin for ``kcgym eval --import tests.eval.fake_suite``: the fake env and two test agents.

Importing it registers ``KernelCraft-FAKE-copy`` (the fake accelerator of tests/envs) with
Gymnasium, and the agents ``sleepy`` (submits the fast kernel after a pause, so a test can
kill a run mid-way) and ``broken`` (raises, to test that an agent bug becomes a record).
"""

from __future__ import annotations

import os
import time
from typing import ClassVar

import gymnasium

from baselines import register_agent
from baselines.base import Agent
from baselines.fixed import submit_kernel
from baselines.session import Session
from tests.envs.fake_accelerator import COPY_TASK, FAKE, FAST

FAKE_ENV_ID = "KernelCraft-FAKE-copy"


class SleepyAgent(Agent):
    name: ClassVar[str] = "sleepy"

    def play(self, session: Session) -> None:
        session.start()
        time.sleep(float(os.environ.get("KCGYM_TEST_SLEEP", "0")))
        submit_kernel(session, FAST)


class BrokenAgent(Agent):
    name: ClassVar[str] = "broken"

    def play(self, session: Session) -> None:
        session.start()
        session.call("write_kernel", {"source": FAST})
        raise RuntimeError("agent bug")


def register() -> None:
    if FAKE_ENV_ID not in gymnasium.registry:
        gymnasium.register(
            id=FAKE_ENV_ID,
            entry_point="kcgym.envs.kernel_env:KernelCraftEnv",
            kwargs={"accelerator": FAKE, "task": COPY_TASK},
        )
    register_agent("sleepy", "tests.eval.fake_suite:SleepyAgent")
    register_agent("broken", "tests.eval.fake_suite:BrokenAgent")


def unregister() -> None:
    from baselines import AGENTS

    gymnasium.registry.pop(FAKE_ENV_ID, None)
    AGENTS.pop("sleepy", None)
    AGENTS.pop("broken", None)


register()
