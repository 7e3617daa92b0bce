"""Agents that submit one known kernel: the template compiler's and the hand-written expert's.

They are the sanity anchors of every report: the compiler must score success 100% and
speedup 1.0 (else the harness or a simulator is broken), and the expert shows the headroom.
"""

from __future__ import annotations

from typing import Any, ClassVar

from baselines.base import Agent
from baselines.session import Session


def submit_kernel(session: Session, source: str) -> None:
    """write_kernel, simulate (so the first correct turn is recorded), submit."""
    session.call("write_kernel", {"source": source})
    if not session.done:
        session.call("simulate", {})
    if not session.done:
        session.call("submit", {})


class CompilerAgent(Agent):
    """Submits the accelerator's template-compiler kernel: the speedup baseline itself."""

    name: ClassVar[str] = "compiler"

    def play(self, session: Session) -> None:
        session.start()
        # the evaluator's cached baseline is this very kernel (compiled once per process and config), so the
        # agent does not pay a second compile (the VLIW -O2 back end takes seconds on the decoder blocks)
        submit_kernel(session, session.unwrapped.evaluator.baseline().source)


class ExpertAgent(Agent):
    """Submits the accelerator's hand-optimised kernel where one exists."""

    name: ClassVar[str] = "expert"

    def excluded(self, env: Any) -> str | None:
        u = env.unwrapped
        try:
            source = u.accelerator.expert(u.task, u.cfg, u.hw)
        except ValueError as e:  # the expert's template does not fit this machine (e.g. a `kcgym sweep` point)
            return f"no expert for this hw config: {e}"
        return None if source is not None else "no expert"

    def play(self, session: Session) -> None:
        session.start()
        env = session.unwrapped
        source = env.accelerator.expert(env.task, env.cfg, env.hw)
        if source is None:  # excluded() is checked first by the runner; this is defensive
            session.fail("tool_use", "no expert kernel for this task and configuration")
            return
        submit_kernel(session, source)
