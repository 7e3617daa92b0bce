"""The one agent interface: ``play(session)`` drives an episode through tool calls.

An episode-level interface (rather than ``act(obs) -> action``) fits every agent here: an LLM
keeps a conversation, a search keeps its best kernel, and both only ever act through
:meth:`Session.call`, so the env sees exactly what an RL policy would send.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from baselines.session import Session


class AgentOptions(BaseModel):
    """Options every agent accepts; each agent reads the ones that concern it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str | None = None
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float | None = None
    reasoning_effort: str | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    timeout_s: float = Field(default=600.0, gt=0)
    max_retries: int = Field(default=6, ge=0)  # the openai SDK's retries of a transient failure, per call
    max_nudges: int = Field(default=1, ge=0)  # replies without a tool call tolerated before giving up
    search_budget: int = Field(default=30, ge=1)


class Agent(ABC):
    """A policy for KernelCraft envs. Instances are used from one thread at a time per episode."""

    name: ClassVar[str]

    def __init__(self, options: AgentOptions | None = None):
        self.options = options or AgentOptions()

    @property
    def model(self) -> str | None:
        """The model recorded with each episode (``None`` for non-LLM agents)."""
        return None

    def env_kwargs(self) -> dict[str, Any]:
        """Extra ``gym.make`` kwargs this agent needs (e.g. a larger turn budget for search)."""
        return {}

    def excluded(self, env: Any) -> str | None:
        """Why this agent does not play this env (recorded, not failed), or None."""
        return None

    @abstractmethod
    def play(self, session: Session) -> None:
        """Play one episode: ``session.start()``, then tool calls until ``session.done``."""
