"""Random tool calls, some malformed: a robustness probe for the env and the harness.

A random agent must never crash an evaluation: every episode ends (by submit or by the turn
budget) with a record, whatever garbage it sends.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import numpy as np

from baselines.base import Agent
from baselines.session import Session
from kcgym import seeding

_GARBAGE_ARGS = ('{"source": ', "not json", '{"rows": "many"}', "[]", '{"unknown": 1}')


class RandomAgent(Agent):
    """Picks a tool at random each turn (seeded by the episode seed); a fifth of calls are malformed."""

    name: ClassVar[str] = "random"

    def play(self, session: Session) -> None:
        session.start()
        rng = seeding.generator(session.seed)
        env = session.unwrapped
        names = [t["function"]["name"] for t in session.tools]
        compiler = env.accelerator.compile(env.task, env.cfg, env.hw)
        lines = compiler.splitlines()
        while not session.done:
            name = str(rng.choice(names + ["no_such_tool"]))
            if rng.random() < 0.2:
                session.call(name, str(rng.choice(_GARBAGE_ARGS)))
                continue
            session.call(name, self._arguments(name, rng, lines))

    @staticmethod
    def _arguments(name: str, rng: np.random.Generator, lines: list[str]) -> dict[str, Any] | str:
        if name == "write_kernel":
            # a shuffled or truncated compiler kernel: sometimes right, mostly wrong
            keep = list(lines)
            if rng.random() < 0.7 and keep:
                cut = int(rng.integers(0, len(keep)))
                keep = keep[:cut] if rng.random() < 0.5 else [x for i, x in enumerate(keep) if i != cut]
            return {"source": "\n".join(keep) + "\n"}
        if name == "view_output":
            return {"rows": int(rng.integers(-2, 80))}
        if name == "read_docs":
            return {"query": str(rng.choice(["loop", "prefetch", "zzz", ""]))}
        return json.dumps({}) if rng.random() < 0.5 else {}
