"""One episode as an OpenAI chat transcript: every agent plays through a :class:`Session`.

Recording every tool call as an assistant message and every observation as a tool message
gives all agents (LLM or not) the same transcript shape, so any run can be exported as
training data and read back by the same code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from kcgym.integrations.trajectories import KICKOFF, opening_messages

__all__ = ["KICKOFF", "Session", "Tokens"]


@dataclass
class Tokens:
    """Token usage summed over an episode's model calls (zero for non-LLM agents)."""

    prompt: int = 0
    completion: int = 0
    reasoning: int = 0
    calls: int = 0

    def add(self, usage: Any) -> None:
        self.calls += 1
        if usage is None:
            return
        self.prompt += int(getattr(usage, "prompt_tokens", 0) or 0)
        self.completion += int(getattr(usage, "completion_tokens", 0) or 0)
        details = getattr(usage, "completion_tokens_details", None)
        self.reasoning += int(getattr(details, "reasoning_tokens", 0) or 0) if details is not None else 0


@dataclass
class Session:
    """Drives one env episode and records it; ``done`` once the env has ended the episode.

    Args:
        env: a KernelCraft env (wrapped or not), not yet reset.
        seed: the episode seed passed to ``reset``.
    """

    env: Any
    seed: int
    messages: list[dict[str, Any]] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    prompt: str = ""
    reset_info: dict[str, Any] = field(default_factory=dict)
    last_info: dict[str, Any] = field(default_factory=dict)
    episode: dict[str, Any] | None = None  # the env's end-of-episode summary
    reward: float = 0.0
    done: bool = False
    tokens: Tokens = field(default_factory=Tokens)
    failure: str | None = None  # agent-side failure: "tool_use" or "api"
    failure_message: str | None = None
    _calls: int = 0

    def start(self, system_prompt: str | None = None) -> str:
        """Reset the env; the prompt becomes the system message (the paper's system prompt)."""
        obs, info = self.env.reset(seed=self.seed)
        self.prompt = obs
        self.reset_info = info
        self.tools = list(info.get("tools") or self.env.unwrapped.tools)
        self.messages = opening_messages(obs if system_prompt is None else system_prompt)
        return obs

    @property
    def unwrapped(self) -> Any:
        return self.env.unwrapped

    def new_call_id(self) -> str:
        self._calls += 1
        return f"call_{self._calls}"

    def call(
        self,
        name: str,
        arguments: dict[str, Any] | str | None = None,
        *,
        call_id: str | None = None,
        content: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> tuple[str, dict[str, Any]]:
        """Record an assistant tool call, step the env with it, record the tool's answer.

        ``arguments`` may be a raw JSON string (as a model sent it, possibly malformed): the env
        judges it, exactly as it would for an RL policy.
        """
        if self.done:
            raise RuntimeError("the episode is over; no further tool calls")
        call_id = call_id or self.new_call_id()
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
        assistant: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": raw}}],
        }
        if extra:
            assistant.update(extra)
        self.messages.append(assistant)
        action = {"id": call_id, "type": "function", "function": {"name": name, "arguments": raw}}
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.reward += float(reward)
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": obs})
        self.last_info = info
        if terminated or truncated:
            self.done = True
            self.episode = info.get("episode")
        return obs, info

    def say(self, role: str, content: str | None, **extra: Any) -> None:
        """Record a message that is not a tool call (a model's text reply, a nudge)."""
        self.messages.append({"role": role, "content": content, **extra})

    def fail(self, kind: str, message: str) -> None:
        """End the episode on the agent's side (no submit): recorded as a failure of ``kind``."""
        self.failure = kind
        self.failure_message = message
        self.done = True

    def transcript(self, *, env_id: str, config: int, agent: str, model: str | None) -> dict[str, Any]:
        """The transcript file's object (the contract the RL exporter reads)."""
        success = bool(self.episode and self.episode.get("success"))
        return {
            "env_id": env_id,
            "config": int(config),
            "seed": int(self.seed),
            "agent": agent,
            "model": model,
            "tools": self.tools,
            "messages": self.messages,
            "reward": float(self.reward),
            "success": success,
        }
