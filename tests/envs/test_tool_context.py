"""Tool handlers see only :class:`EpisodeContext`: they run against a small object that is not an env."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from kcgym.envs.kernel_env import KernelCraftEnv
from kcgym.envs.tools import TOOLS, EpisodeContext
from kcgym.evaluation import Evaluator, KernelReport
from kcgym.sims.base import Accelerator, DocSection
from kcgym.tasks.base import Tolerance
from tests.envs import fake_accelerator as fa

MEMBERS = {n for n in vars(EpisodeContext) if not n.startswith("_")} | set(EpisodeContext.__annotations__)


@dataclass(slots=True)
class Context:
    """The protocol's members plus its own bookkeeping, nothing of an env (slots: no attribute appears)."""

    accelerator: Accelerator
    hw: BaseModel
    visible_inputs: int
    kernel: str | None
    last_run: tuple[str, KernelReport] | None
    evaluator: Evaluator
    runs: list[int] = field(default_factory=list)

    def set_kernel(self, source: str) -> None:
        self.kernel = source

    @property
    def max_source_chars(self) -> int:
        return 100

    @property
    def tolerance(self) -> Tolerance:
        return fa.COPY_TASK.tolerance

    @property
    def docs(self) -> list[DocSection]:
        return list(self.accelerator.docs(self.hw))

    def evaluate_visible(self, attribute: bool = False) -> KernelReport:
        report = self.evaluator.evaluate(self.kernel or "", self.evaluator.input_sets(0, self.visible_inputs))
        self.last_run = (self.kernel or "", report)
        self.runs.append(report.cycles or 0)
        return report

    def score_of(self, report: KernelReport) -> float:
        return 1.0 if report.correct else 0.0


def context() -> Context:
    hw = fa.FAKE.make_hw(None)
    cfg = fa.COPY_TASK.config(fa.FAKE.name, 1)
    return Context(fa.FAKE, hw, 1, None, None, Evaluator(fa.FAKE, fa.COPY_TASK, cfg, hw))


def run(ctx: Any, tool: str, **args: Any):
    defaults = {p.name: p.default for p in TOOLS[tool].params}
    return TOOLS[tool].handler(ctx, defaults | args)


def test_the_protocol_is_narrow():
    assert len(MEMBERS) <= 12, sorted(MEMBERS)
    assert "task" not in MEMBERS and "evaluator" not in MEMBERS and "reset" not in MEMBERS


def test_the_env_implements_the_protocol():
    env = KernelCraftEnv(fa.FAKE, fa.COPY_TASK)
    env.reset(seed=0)
    assert all(hasattr(env, m) for m in MEMBERS), sorted(m for m in MEMBERS if not hasattr(env, m))


def test_every_tool_runs_against_the_small_context():
    ctx = context()
    assert run(ctx, "view_output").error  # nothing simulated yet
    assert "limit is 100" in run(ctx, "write_kernel", source="X" * 101).text and ctx.kernel is None
    assert run(ctx, "write_kernel", source=fa.FAST).info == {"lines": 1, "chars": len(fa.FAST)}
    assert run(ctx, "assemble").info["assembled"] is True
    sim = run(ctx, "simulate")
    assert sim.info["correct"] is True and sim.info["visible_score"] == 1.0 and ctx.runs == [100]
    assert run(ctx, "view_output").error is None
    assert run(ctx, "profile").info["cycles"] == 100
    assert run(ctx, "read_docs").error is None
    assert run(ctx, "submit").ends_episode
