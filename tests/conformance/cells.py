"""The cells of the conformance suite: every registered (machine, task, config), and what is computed once per cell.

The list comes from :mod:`kcgym.registry` (``SUPPORTED``, ``ACCELERATORS``) and each task's configs, so a
new machine, task or config joins the suite without an edit here. A cell's costly results (the env, the
hidden input sets, the compiler and expert reports) are built on first use and shared by every check of
the cell; ``conftest.py`` scopes the cell fixture so that pytest runs a cell's checks together.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pytest

from kcgym.envs.kernel_env import KernelCraftEnv
from kcgym.evaluation import KernelReport, _pad_batch
from kcgym.registry import ACCELERATORS, SUPPORTED, env_id, task_for
from kcgym.sims.base import RunResult

HIDDEN_SEED = 20261201  # the seed the hidden (default + stress) input sets are drawn from
DEFAULT_CONFIGS = (1,)  # every cell at these configs runs in the default tier
# C2 joins the default tier where its work is small: MACs plus tensor elements (a cost proxy that ranks the
# cells as their simulation time does), at most this much
CHEAP_WORK = 1 << 14


@dataclass(frozen=True)
class CellId:
    machine: str
    task: str
    index: int

    def __str__(self) -> str:
        return f"{self.machine}-{self.task}-C{self.index}"


def work(cid: CellId) -> int:
    """MACs plus the elements of every tensor: what a cell's simulations cost, roughly."""
    task = task_for(cid.machine, cid.task)
    cfg = task.config(cid.machine, cid.index)
    return task.macs(cfg) + sum(t.size for t in task.tensors(cfg))


def cell_ids() -> list[CellId]:
    """Every registered (machine, task, config), in registry order."""
    return [CellId(machine, name, cfg.index) for machine in ACCELERATORS for name in SUPPORTED[machine]
            for cfg in task_for(machine, name).configs(machine)]


def in_default_tier(cid: CellId) -> bool:
    return cid.index in DEFAULT_CONFIGS or (cid.index == 2 and work(cid) <= CHEAP_WORK)


def params() -> list:
    """The cells as pytest params: the default tier's plain, the rest under ``slow``."""
    return [pytest.param(c, id=str(c), marks=() if in_default_tier(c) else pytest.mark.slow) for c in cell_ids()]


class Cell:
    """One (machine, task, config) through the env's own scoring path, on fixed hidden input sets."""

    def __init__(self, cid: CellId):
        self.id = cid
        self.env_id = env_id(cid.machine, cid.task)
        self.env = KernelCraftEnv(cid.machine, cid.task, cid.index, docs_in_prompt=False)
        self.acc, self.task, self.cfg, self.hw = self.env.accelerator, self.env.task, self.env.cfg, self.env.hw
        self.ev = self.env.evaluator
        self.inputs, self.set_names = self.ev.hidden_input_sets(HIDDEN_SEED, self.env.hidden_inputs)
        self.layout = self.acc.layout(self.task, self.cfg, self.hw)

    def evaluate(self, source: str, **kwargs) -> KernelReport:
        """Score ``source`` on the hidden sets, as ``submit`` does."""
        return self.ev.evaluate(source, self.inputs, set_names=self.set_names, **kwargs)

    def reward(self, report: KernelReport) -> float:
        """The env's reward for ``report`` (its default RewardSpec)."""
        return self.env.score_of(report)

    @functools.cached_property
    def compiler(self) -> KernelReport:
        return self.evaluate(self.ev.baseline().source)

    @functools.cached_property
    def expert_source(self) -> str | None:
        return self.acc.expert(self.task, self.cfg, self.hw)

    @functools.cached_property
    def expert(self) -> KernelReport | None:
        return None if self.expert_source is None else self.evaluate(self.expert_source)

    def run_batched(self, source: str) -> list[RunResult]:
        """One simulation of every hidden set at once (padded as the Evaluator pads, so it shares its compile)."""
        program = self.acc.assemble(source, self.hw)
        results = self.acc.run(program, self.task, self.cfg, self.hw, _pad_batch(self.inputs), self.budget)
        return results[: len(self.inputs)]

    def run_alone(self, source: str, which: list[int]) -> list[RunResult]:
        """The hidden sets ``which``, each simulated on its own."""
        program = self.acc.assemble(source, self.hw)
        return [self.acc.run(program, self.task, self.cfg, self.hw, [self.inputs[i]], self.budget)[0] for i in which]

    @property
    def budget(self) -> int:
        """The step budget of a kernel on this cell."""
        return self.ev.max_steps(self.ev.baseline())


@functools.lru_cache(maxsize=2)  # pytest runs one cell's checks together (the fixture is module-scoped)
def cell(cid: CellId) -> Cell:
    return Cell(cid)


def same_result(a: RunResult, b: RunResult) -> bool:
    """Bit-identical outputs, cycles, instruction count and fault."""
    return (a.cycles == b.cycles and a.instructions == b.instructions and a.fault == b.fault
            and a.outputs.keys() == b.outputs.keys()
            and all(np.array_equal(a.outputs[k], b.outputs[k], equal_nan=True) for k in a.outputs))
