"""The NPU template compiler: the deterministic baseline every speedup is measured against.

Like PLENA's compiler it is a set of per-operator templates emitted from Python: each
prefetch is issued right before the instruction that consumes it (no prefetch-ahead, no
double buffering), intermediates go through a single scratch buffer, and there is no fusion
across operators. The result is correct on every configuration and deliberately leaves the
optimisations the hardware rewards to the agent.

One module per family of templates, each with its own ``TEMPLATES`` (and ``SCRATCH``) table;
the package discovers them (:func:`kcgym.discovery.collect`), so a new task adds its template
and a row in its module's table, and nothing here.
"""

from __future__ import annotations

from collections.abc import Callable

from kcgym.discovery import collect, template
from kcgym.sims.base import MemoryLayout
from kcgym.sims.npu.compiler.emit import Asm
from kcgym.sims.npu.compiler.scratch import ScratchSpec
from kcgym.sims.npu.config import NPUConfig
from kcgym.tasks.base import Task, TaskConfig

Template = Callable[[Task, TaskConfig, NPUConfig, MemoryLayout], str]

# task name -> template; each family module exports its own TEMPLATES
TEMPLATES: dict[str, Template] = collect(__name__, "TEMPLATES")

# task name -> the HBM scratch regions its template passes intermediates through (none: no entry)
SCRATCH: dict[str, Callable[[Task, TaskConfig, NPUConfig], list[ScratchSpec]]] = collect(__name__, "SCRATCH")


def scratch_regions(task: Task, cfg: TaskConfig, hw: NPUConfig) -> list[ScratchSpec]:
    """The HBM workspace the NPU layout appends after the task's outputs (empty for most tasks)."""
    spec = SCRATCH.get(task.name)
    return spec(task, cfg, hw) if spec else []


def compile_task(task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout) -> str:
    """The baseline kernel for ``task`` at ``cfg``; raises KeyError for a task without a template."""
    return template(TEMPLATES, task.name, "the NPU compiler")(task, cfg, hw, layout)


__all__ = ["SCRATCH", "TEMPLATES", "Asm", "compile_task", "scratch_regions"]
