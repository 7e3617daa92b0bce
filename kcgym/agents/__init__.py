"""The agent registry: the ONE place where the ``kcgym`` package reaches the policies that play it.

The policies themselves (the LLM agent, compiler, expert, random, search) live in the top-level
``baselines/`` package: they are users of the env contract, written against the public API like any
third-party agent. ``kcgym.eval`` and the CLI still have to start them by name, so the names map to
``"module:attr"`` strings that are imported on first use. Nothing in ``kcgym`` imports ``baselines``
(``tests/test_layers.py`` checks it), and ``import kcgym.agents`` imports no agent (the LLM agent pulls
in ``openai``).

Three ways to add an agent, all resolving the same way:

- a row of :data:`BUILTIN_AGENTS` (the baselines shipped with kcgym);
- :func:`register_agent` from a plugin module (``kcgym eval --import MODULE``);
- an entry point in the ``kcgym.agents`` group of an installed distribution, e.g. in its pyproject:
  ``[project.entry-points."kcgym.agents"] myagent = "mypkg.agent:MyAgent"``.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # types only; never imported at run time from here
    from baselines.base import Agent, AgentOptions
    from baselines.session import Session

ENTRY_POINT_GROUP = "kcgym.agents"

# agent name -> "module:class" of the baselines shipped with kcgym
BUILTIN_AGENTS: dict[str, str] = {
    "llm": "baselines.llm:LLMAgent",
    "compiler": "baselines.fixed:CompilerAgent",
    "expert": "baselines.fixed:ExpertAgent",
    "random": "baselines.random_agent:RandomAgent",
    "search": "baselines.search:SearchAgent",
}
OFFLINE_AGENTS = ("compiler", "expert", "search")  # no network, deterministic: the main job

# What the harness needs besides the agent classes: the options model, the episode session and the
# LLM agent's credential check (so `kcgym eval` fails before the first episode, not inside one).
_OPTIONS = "baselines.base:AgentOptions"
_SESSION = "baselines.session:Session"
_MISSING_CREDENTIALS = "baselines.llm:missing_credentials"

# The live table: built-ins, then entry points (loaded once, on first lookup), then register_agent().
AGENTS: dict[str, str] = dict(BUILTIN_AGENTS)
_entry_points_loaded = False


def resolve(path: str) -> Any:
    """The object at ``"module:attr"`` (``ValueError`` for a path without ``:``)."""
    module, sep, attr = path.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"an agent path is 'module:attr', got {path!r}")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        AGENTS.setdefault(ep.name, ep.value)  # a built-in or registered name is never shadowed


def agent_names() -> list[str]:
    """Every agent ``make_agent`` can build, built-ins first."""
    _load_entry_points()
    return list(AGENTS)


def unknown_agent_message(name: str) -> str:
    """The one wording for an unknown agent name (the registry's, with its did-you-mean)."""
    from kcgym.registry import unknown_name_message  # the registry loads the simulators: only on an error

    return unknown_name_message("agent", name, agent_names())


def register_agent(name: str, path: str) -> None:
    """Make ``kcgym eval --agent NAME`` find an agent class at ``"module:Class"`` (replacing any entry)."""
    if ":" not in path:
        raise ValueError(f"an agent path is 'module:Class', got {path!r}")
    _load_entry_points()
    AGENTS[name] = path


def agent_options(**options: Any) -> AgentOptions:
    """The validated options every agent takes (``pydantic.ValidationError`` on a bad one)."""
    return resolve(_OPTIONS)(**options)


def make_agent(name: str, options: AgentOptions | None = None) -> Agent:
    """An agent by name; ``KeyError`` with a did-you-mean for an unknown one."""
    if name not in agent_names():
        raise KeyError(unknown_agent_message(name))
    return resolve(AGENTS[name])(options)


def session_class() -> type[Session]:
    """The class that plays one episode between an agent and an env (transcript, tokens, outcome)."""
    return resolve(_SESSION)


def missing_credentials(base_url: str | None, key_env: str) -> str | None:
    """Why the LLM agent's endpoint cannot be called without a key, or None."""
    return resolve(_MISSING_CREDENTIALS)(base_url, key_env)


__all__ = [
    "AGENTS", "BUILTIN_AGENTS", "ENTRY_POINT_GROUP", "OFFLINE_AGENTS", "agent_names", "agent_options",
    "make_agent", "missing_credentials", "register_agent", "resolve", "session_class", "unknown_agent_message",
]
