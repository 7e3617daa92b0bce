"""The reward: a documented, configurable score of a kernel, and how it is paid out.

Score of a kernel = 0 if it is incorrect (or below the physical floor), else by ``kind``:

- ``sol`` (default): ``correct_base + sol_weight * q`` with
  ``q = clip(log(baseline / cycles) / log(headroom), lo, 1)`` and headroom = baseline cycles /
  speed-of-light cycles (:mod:`kcgym.sims.sol`). With the defaults the template compiler's kernel
  scores 1.0 and a kernel at the speed of light 4.0 on every task, so equal scores mean equal
  shares of the available headroom; correct-but-slow kernels stay above 0 (q >= -0.3: 0.1). A
  kernel that beats the bound (``beats_sol``) gets q = 1, no more. Where the compiler is already
  within ``min_headroom`` of the bound, headroom is taken as ``min_headroom`` (5%): the last few
  percent then earn the full range rather than dividing by log(1) = 0.
- ``paper``: the paper's ``correct_base + clip(log2(speedup), lo, hi)`` (0.1..4.0 by default).

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

    kind: Literal["sol", "paper"] = Field("sol", description="sol: share of the headroom to the speed of light; "
                                          "paper: 1 + clip(log2(speedup))")
    mode: Literal["terminal", "dense"] = "terminal"
    correct_base: float = Field(1.0, description="score of a correct kernel exactly as fast as the baseline")
    # kind="paper"
    log_speedup_clip: tuple[float, float] = Field(
        (-0.9, 3.0), description="paper: bounds on log2(speedup): -0.9 keeps slow kernels above incorrect ones"
    )
    # kind="sol"
    sol_weight: float = Field(3.0, description="sol: score added at the speed of light (q = 1)")
    sol_clip_low: float = Field(-0.3, description="sol: lower bound on q (a slow kernel's share of the headroom)")
    min_headroom: float = Field(1.05, description="sol: baseline / sol is taken as at least this")

    @model_validator(mode="after")
    def _correct_beats_incorrect(self) -> RewardSpec:
        lo, hi = self.log_speedup_clip
        if not lo <= hi:
            raise ValueError(f"log_speedup_clip must be (lo, hi) with lo <= hi, got {self.log_speedup_clip}")
        if self.kind == "paper" and self.correct_base + lo <= 0:
            raise ValueError(
                "correct_base + log_speedup_clip[0] must be > 0 so that any correct kernel scores "
                f"above an incorrect one (got {self.correct_base} + {lo})"
            )
        if self.sol_weight <= 0 or self.sol_clip_low > 0 or self.min_headroom <= 1:
            raise ValueError("sol_weight must be > 0, sol_clip_low <= 0 and min_headroom > 1")
        if self.kind == "sol" and self.correct_base + self.sol_weight * self.sol_clip_low <= 0:
            raise ValueError(
                "correct_base + sol_weight * sol_clip_low must be > 0 so that any correct kernel scores "
                f"above an incorrect one (got {self.correct_base} + {self.sol_weight} * {self.sol_clip_low})"
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

    def headroom(self, baseline_cycles: float | None, sol_cycles: float | None) -> float:
        """baseline / sol, at least ``min_headroom`` (the denominator of q)."""
        if not baseline_cycles or not sol_cycles or sol_cycles <= 0:
            return self.min_headroom
        return max(self.min_headroom, baseline_cycles / sol_cycles)

    def share(self, speedup: float, headroom: float) -> float:
        """q: the clipped share of the log-headroom a kernel with ``speedup`` closes."""
        return min(max(math.log(speedup) / math.log(max(headroom, self.min_headroom)), self.sol_clip_low), 1.0)

    def score(self, correct: bool, speedup: float | None, headroom: float | None = None) -> float:
        """The score of one kernel; incorrect (or unmeasurable) kernels score 0.

        ``headroom`` (baseline / sol cycles, see :meth:`headroom`) is needed by ``kind="sol"``.
        """
        if not correct or speedup is None or not math.isfinite(speedup) or speedup <= 0:
            return 0.0
        if self.kind == "paper":
            lo, hi = self.log_speedup_clip
            return float(self.correct_base + min(max(math.log2(speedup), lo), hi))
        if headroom is None:
            raise ValueError("kind='sol' scores need headroom = baseline_cycles / sol_cycles")
        return float(self.correct_base + self.sol_weight * self.share(speedup, headroom))

    @property
    def max_score(self) -> float:
        return self.correct_base + (self.log_speedup_clip[1] if self.kind == "paper" else self.sol_weight)

    def describe(self) -> str:
        """One paragraph for the prompt: agents optimise better when they know the objective."""
        if self.kind == "paper":
            lo, hi = self.log_speedup_clip
            return (
                f"Scoring: an incorrect kernel scores 0. A correct kernel scores {self.correct_base:g} + "
                f"log2(speedup), with log2(speedup) clipped to [{lo:g}, {hi:g}], where speedup = baseline "
                "cycles / your cycles. So any correct kernel beats any incorrect one, and each halving of "
                "the cycle count adds 1."
            )
        return (
            f"Scoring: an incorrect kernel scores 0. A correct kernel scores {self.correct_base:g} + "
            f"{self.sol_weight:g} * q, where q = log(baseline cycles / your cycles) / log(baseline cycles / "
            f"speed-of-light cycles), clipped to [{self.sol_clip_low:g}, 1]: {self.correct_base:g} at the "
            f"template compiler's speed, {self.max_score:g} at the speed of light (the lower bound that simulate "
            "and profile report). So any correct kernel beats any incorrect one, and each equal share of the "
            "headroom to the bound is worth the same on every task."
        )
