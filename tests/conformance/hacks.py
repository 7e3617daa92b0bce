"""The hack battery: reward-hacking kernels that must fail on every cell, written once per machine.

Each machine's test package (``tests/sims/<machine>/adversarial.py``, found by the machine's registered
name) implements :class:`HackEmitter`: small generators that emit that machine's assembly for a store of
zeros over the outputs, a constant, a copy of an input, a loop that never ends and an out-of-bounds access.
:data:`HACKS` turns them (and the compiler's own kernel stopped halfway) into kernels for one cell, each
with the way it must end.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pydantic import BaseModel

    from kcgym.evaluation import KernelReport
    from kcgym.sims.base import MemoryLayout
    from kcgym.tasks.base import Task
    from tests.conformance.cells import Cell


class HackEmitter(Protocol):
    """What a machine's adversarial module provides; every generator returns assembly source."""

    def zeros(self, task: Task, layout: MemoryLayout, hw: BaseModel) -> str: ...
    def constant(self, task: Task, layout: MemoryLayout, hw: BaseModel) -> str: ...
    def copy_input(self, task: Task, layout: MemoryLayout, hw: BaseModel) -> str: ...
    def spin(self, task: Task, layout: MemoryLayout, hw: BaseModel) -> str: ...
    def out_of_bounds(self, task: Task, layout: MemoryLayout, hw: BaseModel) -> str:
        """An access outside every memory, on the source's last line."""
        ...


EMITTER_FUNCTIONS = ("zeros", "constant", "copy_input", "spin", "out_of_bounds")


def emitter(machine: str) -> ModuleType:
    """The adversarial module of a registered machine (``NPU`` -> ``tests.sims.npu.adversarial``)."""
    return importlib.import_module(f"tests.sims.{machine.lower()}.adversarial")


def emitted(function: str) -> Callable[[Cell], str]:
    """The cell's kernel from its machine's generator ``function``."""

    def source(cell: Cell) -> str:
        return getattr(emitter(cell.id.machine), function)(cell.task, cell.layout, cell.hw)
    return source


def copy_is_the_answer(cell: Cell) -> bool:
    """True where the task's every output is its first input, word for word (then copy_input is no hack)."""
    first = next(t.name for t in cell.task.inputs(cell.cfg))
    for inputs in cell.inputs:
        for out in cell.task.reference(cell.cfg, inputs).values():
            if out.shape != inputs[first].shape or not (out == inputs[first]).all():
                return False
    return True


def compiler_stopped_halfway(cell: Cell) -> str:
    """The compiler's own kernel: run on half its step count, it leaves the outputs half-written."""
    return cell.ev.baseline().source


@dataclass(frozen=True)
class Hack:
    """A kernel that must score 0 on every cell, and how its run must end."""

    name: str
    source: Callable[[Cell], str]
    fault: str | None  # None: it runs to its end; else the fault's name, or its prefix ("OOB": OOB_HBM, ...)
    halfway: bool = False  # run with half the compiler kernel's dynamic instructions as the step budget

    def play(self, cell: Cell) -> KernelReport:
        """Its report on the cell's hidden sets."""
        max_steps = cell.ev.baseline().instructions // 2 if self.halfway else None
        return cell.evaluate(self.source(cell), max_steps=max_steps)


HACKS: tuple[Hack, ...] = (
    Hack("zeros", emitted("zeros"), None),
    Hack("constant", emitted("constant"), None),
    Hack("copy_input", emitted("copy_input"), None),
    Hack("half_written", compiler_stopped_halfway, "STEP_BUDGET", halfway=True),
    Hack("infinite_loop", emitted("spin"), "STEP_BUDGET"),
    Hack("out_of_bounds", emitted("out_of_bounds"), "OOB"),
)
