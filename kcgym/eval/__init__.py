"""The evaluation harness behind ``kcgym eval`` / ``kcgym report``.

One concept per module: :mod:`~kcgym.eval.suite` (which episodes), :mod:`~kcgym.eval.episode`
(play one), :mod:`~kcgym.eval.runner` (play many, concurrently, resumably), :mod:`~kcgym.eval.sweep`
(play them over a grid of hw configs), :mod:`~kcgym.eval.store` (the run directory),
:mod:`~kcgym.eval.records` (what an episode leaves), :mod:`~kcgym.eval.metrics`,
:mod:`~kcgym.eval.report` (Markdown tables) and :mod:`~kcgym.eval.plots` (PNG). The agents themselves
live in the top-level ``baselines`` package.
"""

from kcgym.eval.records import EpisodeKey, EpisodeRecord
from kcgym.eval.runner import run_eval
from kcgym.eval.suite import EpisodeSpec, plan

__all__ = ["EpisodeKey", "EpisodeRecord", "EpisodeSpec", "plan", "run_eval"]
