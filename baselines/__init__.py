"""Policies that play kcgym envs: the OpenAI-compatible LLM agent, compiler, expert, random, search.

They live outside the ``kcgym`` package because they are users of the env contract, not
part of it: anything here could be written by a third party against the public API. The
package reaches them only through the registry :mod:`kcgym.agents` (name -> ``"module:class"``,
imported on first use), re-exported here: a new agent is one module and one row of
``kcgym.agents.BUILTIN_AGENTS``, or :func:`register_agent` from a plugin module loaded with
``kcgym eval --import MODULE``, or an entry point in the ``kcgym.agents`` group.
"""

from __future__ import annotations

from baselines.base import Agent, AgentOptions
from kcgym.agents import AGENTS, OFFLINE_AGENTS, make_agent, register_agent

__all__ = ["AGENTS", "OFFLINE_AGENTS", "Agent", "AgentOptions", "make_agent", "register_agent"]
