"""The VLIW template compiler: the deterministic baseline every speedup is measured against.

The templates write vectorised code one operation per line, in program order; the back end
(:mod:`kcgym.sims.vliw.compiler.optimize`) then does what an ``-O2`` VLIW compiler does: unrolls
innermost loops where registers allow and list-schedules every basic block into bundles (DMAs
as early as their dependences allow). No software pipelining, no double buffering, no fusion
across operators — the agent's job. One module per family of templates, each with its own
``TEMPLATES`` (and ``SCRATCH``) table, found by
discovery (:func:`kcgym.discovery.collect`): a new task adds its template and nothing here.
"""

from __future__ import annotations

from collections.abc import Callable

from kcgym.discovery import collect, template
from kcgym.sims.base import MemoryLayout
from kcgym.sims.vliw.compiler.emit import Asm
from kcgym.sims.vliw.compiler.optimize import optimize
from kcgym.sims.vliw.config import VLIWConfig
from kcgym.tasks.base import Task, TaskConfig

Template = Callable[[Task, TaskConfig, VLIWConfig, MemoryLayout], str]

TEMPLATES: dict[str, Template] = collect(__name__, "TEMPLATES")
# task name -> (cfg -> [(name, shape, description)]): EXT scratch tensors the layout appends
SCRATCH = collect(__name__, "SCRATCH")


def template_kernel(task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout) -> str:
    """The template's kernel before the back end: one operation per bundle (the baseline before -O2)."""
    return template(TEMPLATES, task.name, "the VLIW compiler")(task, cfg, hw, layout)


def compile_task(task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout) -> str:
    """The baseline kernel for ``task`` at ``cfg``; raises KeyError for a task without a template."""
    return optimize(template_kernel(task, cfg, hw, layout), hw)


__all__ = ["SCRATCH", "TEMPLATES", "Asm", "compile_task", "template_kernel"]
