"""The reward: a documented, configurable score of a kernel, and how it is paid out.

Score of a kernel = 0 if it is incorrect, else ``correct_base + clip(log2(speedup), lo, hi)``
with speedup = baseline (template compiler) cycles / kernel cycles. With the defaults a
correct kernel scores in [0.1, 4.0], so a correct-but-slow kernel always beats an incorrect
one (validated: ``correct_base + lo`` must be > 0).

Two ways of paying it out (``mode``):

- ``terminal`` (default, as in the paper): 0 on every step; at the end (submit, or the turn
  limit, where the current kernel is evaluated as if submitted) the final score.
- ``dense``: potential-based shaping with potential Phi = the best score of any kernel
  verified correct on the visible inputs so far (0 if none). Each step pays Phi' - Phi; at
  the end Phi' is the final (hidden-input) score. The return telescopes to the final
  score, so both modes rank policies identically; dense only spreads the signal out.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class RewardSpec(BaseModel):
    """How kernels are scored and how the score is paid out over an episode."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Literal["terminal", "dense"] = "terminal"
    correct_base: float = Field(1.0, description="score of a correct kernel exactly as fast as the baseline")
    log_speedup_clip: tuple[float, float] = Field(
        (-0.9, 3.0), description="bounds on log2(speedup): -0.9 keeps slow kernels above incorrect ones"
    )

    @model_validator(mode="after")
    def _correct_beats_incorrect(self) -> RewardSpec:
        lo, hi = self.log_speedup_clip
        if not lo <= hi:
            raise ValueError(f"log_speedup_clip must be (lo, hi) with lo <= hi, got {self.log_speedup_clip}")
        if self.correct_base + lo <= 0:
            raise ValueError(
                "correct_base + log_speedup_clip[0] must be > 0 so that any correct kernel scores "
                f"above an incorrect one (got {self.correct_base} + {lo})"
            )
        return self

    @classmethod
    def of(cls, spec: RewardSpec | dict | None) -> RewardSpec:
        """Accept the forms ``gym.make(..., reward=...)`` takes: None, a dict, or a spec."""
        if spec is None:
            return cls()
        if isinstance(spec, cls):
            return spec
        if isinstance(spec, dict):
            return cls(**spec)
        raise TypeError(f"reward must be a RewardSpec, a dict or None, got {type(spec).__name__}")

    def score(self, correct: bool, speedup: float | None) -> float:
        """The score of one kernel; incorrect (or unmeasurable) kernels score 0."""
        if not correct or speedup is None or not math.isfinite(speedup) or speedup <= 0:
            return 0.0
        lo, hi = self.log_speedup_clip
        return float(self.correct_base + min(max(math.log2(speedup), lo), hi))

    @property
    def max_score(self) -> float:
        return self.correct_base + self.log_speedup_clip[1]

    def describe(self) -> str:
        """One paragraph for the prompt: agents optimise better when they know the objective."""
        lo, hi = self.log_speedup_clip
        return (
            f"Scoring: an incorrect kernel scores 0. A correct kernel scores {self.correct_base:g} + "
            f"log2(speedup), with log2(speedup) clipped to [{lo:g}, {hi:g}], where speedup = baseline "
            "cycles / your cycles. So any correct kernel beats any incorrect one, and each halving of "
            "the cycle count adds 1."
        )
