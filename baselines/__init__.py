"""Policies that play kcgym envs: the OpenAI-compatible LLM agent, compiler, expert, random, search.

They live outside the ``kcgym`` package because they are users of the env contract, not
part of it: anything here could be written by a third party against the public API. A new
agent is one module and one row of :data:`AGENTS` (or :func:`register_agent` from a plugin
module loaded with ``kcgym eval --import MODULE``).
"""

from __future__ import annotations

import importlib

from baselines.base import Agent, AgentOptions

# agent name -> "module:class"; imported on first use (the LLM agent pulls in openai)
AGENTS: dict[str, str] = {
    "llm": "baselines.llm:LLMAgent",
    "compiler": "baselines.fixed:CompilerAgent",
    "expert": "baselines.fixed:ExpertAgent",
    "random": "baselines.random_agent:RandomAgent",
    "search": "baselines.search:SearchAgent",
}

OFFLINE_AGENTS = ("compiler", "expert", "search")  # no network, deterministic: the main job


def register_agent(name: str, path: str) -> None:
    """Make ``kcgym eval --agent NAME`` find a third-party agent class at ``"module:Class"``."""
    AGENTS[name] = path


def make_agent(name: str, options: AgentOptions | None = None) -> Agent:
    """An agent by name; ``KeyError`` with a did-you-mean for an unknown one."""
    from kcgym.registry import unknown_name_message

    if name not in AGENTS:
        raise KeyError(unknown_name_message("agent", name, list(AGENTS)))
    module, _, cls = AGENTS[name].partition(":")
    return getattr(importlib.import_module(module), cls)(options)


__all__ = ["AGENTS", "OFFLINE_AGENTS", "Agent", "AgentOptions", "make_agent", "register_agent"]
