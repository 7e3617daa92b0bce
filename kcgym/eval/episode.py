"""Play one episode with one agent and turn it into a record and a transcript.

A pure function of its arguments (no shared state), so the local thread pool and Ray
workers run exactly the same code; the driver alone writes to the run directory.
"""

from __future__ import annotations

import importlib
import time
import traceback
from collections.abc import Sequence
from typing import Any

import gymnasium

from kcgym.eval.records import EpisodeRecord, TokenCounts
from kcgym.eval.suite import EpisodeSpec


def import_plugins(modules: Sequence[str]) -> None:
    """Import modules that register extra envs or agents (``kcgym eval --import``)."""
    for name in modules:
        importlib.import_module(name)


def run_episode(
    spec: EpisodeSpec, agent_name: str, options: dict[str, Any], plugins: Sequence[str] = ()
) -> tuple[EpisodeRecord, dict[str, Any] | None]:
    """``(record, transcript or None)`` of one episode; agent and harness errors become records."""
    import_plugins(plugins)
    import kcgym  # noqa: F401  (registers the envs in a fresh worker process)
    from kcgym.agents import agent_options, make_agent, session_class

    start = time.perf_counter()
    agent = make_agent(agent_name, agent_options(**options))
    setting: dict[str, Any] = {"example_in_prompt": True} if spec.one_shot else {}
    setting |= {"hw": dict(spec.hw)} if spec.hw else {}
    env = gymnasium.make(spec.env_id, config=spec.config, **setting, **agent.env_kwargs())
    u: Any = env.unwrapped  # the KernelCraftEnv (Gymnasium types it as a plain Env)
    base = dict(
        agent=agent.name, model=agent.model, env_id=spec.env_id, accelerator=spec.accelerator, task=spec.task,
        level=spec.level, config=spec.config, run=spec.run, seed=spec.seed, suite_version=_suite_version(),
        hw=u.hw.model_dump(mode="json"), hw_overrides=dict(spec.hw), one_shot=spec.one_shot, max_turns=u.max_turns,
    )
    try:
        reason = agent.excluded(env)
        if reason is not None:
            return EpisodeRecord(**base, status="excluded", excluded_reason=reason), None
        session = session_class()(env=env, seed=spec.seed)
        crash = None
        try:
            agent.play(session)
        except Exception as e:  # an agent bug must not end a long evaluation
            crash = f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=4)}"
        error_class, error = _outcome(session)
        if crash is not None and error_class is not None:  # a crash after a successful submit keeps the verdict
            error_class, error = "harness", crash
        ep = session.episode or {}
        tokens = session.tokens
        success = bool(ep.get("success")) and error_class is None
        record = EpisodeRecord(
            **base,
            success=success,
            score=float(ep.get("score") or 0.0),
            reward=session.reward,
            cycles=ep.get("cycles"),
            baseline_cycles=ep.get("baseline_cycles"),
            speedup=ep.get("speedup") if success else None,
            sol_cycles=ep.get("sol_cycles"),
            beats_sol=bool(ep.get("beats_sol")),
            turns=int(ep.get("turns") or session.last_info.get("turn") or 0),
            first_correct_turn=ep.get("first_correct_turn"),
            tool_counts=dict(ep.get("tool_counts") or _count_calls(session.messages)),
            tokens=TokenCounts(
                prompt=tokens.prompt, completion=tokens.completion, reasoning=tokens.reasoning,
                api_calls=tokens.calls,
            ),
            error_class=error_class,
            error=error,
            wall_s=round(time.perf_counter() - start, 3),
        )
        transcript = session.transcript(env_id=spec.env_id, config=spec.config, agent=agent.name, model=agent.model)
        return record, transcript
    finally:
        env.close()


def _outcome(session: Any) -> tuple[str | None, str | None]:
    """The error class and message of a played episode (None, None on success)."""
    if session.failure is not None:
        return session.failure, session.failure_message
    ep = session.episode
    if ep is None:
        return "tool_use", "the agent stopped before the episode ended"
    if ep.get("success"):
        return None, None
    cls = ep.get("error_class") or "functional"
    messages = {
        "syntax": "the final kernel did not assemble",
        "functional": "the final kernel was wrong or faulted on the hidden inputs",
        "below_roofline": "the final kernel reported fewer cycles than the roofline bound",
        "tool_use": "no kernel was ever written",
        "internal_error": "kcgym hit an internal error scoring the final kernel (a kcgym bug; see the log)",
    }
    return cls, messages.get(cls, cls)


def _count_calls(messages: list[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for m in messages:
        for call in m.get("tool_calls") or ():
            name = call["function"]["name"]
            counts[name] = counts.get(name, 0) + 1
    return counts


def _suite_version() -> str:
    from kcgym import __version__

    return __version__
