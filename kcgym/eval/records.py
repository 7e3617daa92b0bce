"""What one evaluated episode leaves behind: one :class:`EpisodeRecord` per JSONL line.

A record carries everything a report needs (and everything needed to reproduce the
episode: suite version, hw config, agent, model, seed), so reports never re-run anything.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# Why an episode failed. syntax/functional/below_roofline come from the env's final evaluation;
# tool_use: the agent stopped calling tools or never produced a kernel; api: the model endpoint
# failed (retries exhausted, timeout, context overflow); harness: a bug outside the agent.
ErrorClass = Literal["syntax", "functional", "below_roofline", "tool_use", "api", "harness", "internal_error"]
# excluded: the agent does not play this env (e.g. no expert kernel); invalid: a hardware-sweep point the hw
# model rejects or the compiler cannot map the task to. Neither counts in any rate.
Status = Literal["done", "excluded", "invalid"]
HwPoint = tuple[tuple[str, Any], ...]  # a sweep point's overrides, sorted by field: hashable, so it can key


def hw_point(overrides: dict[str, Any]) -> HwPoint:
    """The canonical (sorted) form of a point's hw overrides."""
    return tuple(sorted(overrides.items()))


def point_text(point: HwPoint) -> str:
    """``BLEN=8,MLEN=32``: a point as people write it on the command line."""
    return ",".join(f"{k}={v}" for k, v in point)


class EpisodeKey(BaseModel):
    """Identifies an episode of a run; ``--resume`` skips keys already in the file."""

    model_config = ConfigDict(frozen=True)

    agent: str
    model: str | None = None
    env_id: str
    config: int
    run: int
    one_shot: bool = False  # the prompt carried a demonstration kernel: a different run from zero-shot
    hw: HwPoint = ()  # the hardware-sweep point (overrides); () = the default machine

    @property
    def text(self) -> str:
        text = f"{self.agent}|{self.model or '-'}|{self.env_id}|C{self.config}|run{self.run}"
        return text + ("|one-shot" if self.one_shot else "") + (f"|{point_text(self.hw)}" if self.hw else "")


class TokenCounts(BaseModel):
    prompt: int = 0
    completion: int = 0
    reasoning: int = 0
    api_calls: int = 0

    @property
    def total(self) -> int:
        return self.prompt + self.completion


class EpisodeRecord(BaseModel):
    """One episode's outcome. ``status="excluded"`` (e.g. no expert kernel) is left out of rates."""

    model_config = ConfigDict(extra="ignore")

    agent: str
    model: str | None = None
    env_id: str
    accelerator: str
    task: str
    level: int
    config: int
    run: int
    seed: int
    suite_version: str
    hw: dict[str, Any] = Field(default_factory=dict)
    hw_overrides: dict[str, Any] = Field(default_factory=dict)  # of a `kcgym sweep` point; {} = default machine
    one_shot: bool = False  # the prompt carried a demonstration kernel (gym.make(..., example_in_prompt=True))
    max_turns: int = 0
    status: Status = "done"
    excluded_reason: str | None = None
    success: bool = False
    score: float = 0.0
    reward: float = 0.0
    cycles: int | None = None
    baseline_cycles: int | None = None
    speedup: float | None = None
    sol_cycles: int | None = None  # the speed of light of this (accelerator, task, config, hw)
    beats_sol: bool = False  # the final kernel was faster than sol_cycles (scored as if at it; a bound bug)
    turns: int = 0
    first_correct_turn: int | None = None
    tool_counts: dict[str, int] = Field(default_factory=dict)
    tokens: TokenCounts = Field(default_factory=TokenCounts)
    error_class: ErrorClass | None = None
    error: str | None = None
    wall_s: float = 0.0
    transcript: str | None = None  # path relative to the run directory
    # Set by `kcgym report A B` when one agent label occurs in several run dirs; never written to a file.
    run_tag: str | None = Field(default=None, exclude=True)

    @property
    def key(self) -> EpisodeKey:
        return EpisodeKey(agent=self.agent, model=self.model, env_id=self.env_id, config=self.config, run=self.run,
                          one_shot=self.one_shot, hw=hw_point(self.hw_overrides))

    @property
    def point(self) -> HwPoint:
        return hw_point(self.hw_overrides)

    @property
    def sol_share(self) -> float | None:
        """sol_cycles / cycles of a successful episode: 1.0 = at the speed of light (capped there)."""
        if not self.success or not self.sol_cycles or not self.cycles:
            return None
        return min(1.0, self.sol_cycles / self.cycles)

    @property
    def evaluations(self) -> int:
        """Simulator runs the agent asked for (the paper's "evaluations")."""
        return int(self.tool_counts.get("simulate", 0) + self.tool_counts.get("profile", 0))

    @property
    def tool_calls(self) -> int:
        return int(sum(self.tool_counts.values()))

    @property
    def label(self) -> str:
        """How reports name the agent: ``llm:gpt-5.2``, ``llm:gpt-5.2 one-shot`` or ``compiler`` (``compiler [runA]``
        across runs): zero-shot and one-shot runs of one agent are separate rows."""
        base = f"{self.agent}:{self.model}" if self.model else self.agent
        base += " one-shot" if self.one_shot else ""
        return f"{base} [{self.run_tag}]" if self.run_tag else base
