"""The VLIW template compiler: the deterministic baseline every speedup is measured against.

Vectorised but naively scheduled — one operation per bundle, no unrolling, no software
pipelining, no DMA double buffering — like compiled C++ without a good scheduler. One
module per family of templates, each with its own ``TEMPLATES`` (and ``SCRATCH``) table, found by
discovery (:func:`kcgym.discovery.collect`): a new task adds its template and nothing here.
"""

from __future__ import annotations

from collections.abc import Callable

from kcgym.discovery import collect, template
from kcgym.sims.base import MemoryLayout
from kcgym.sims.vliw.compiler.emit import Asm
from kcgym.sims.vliw.config import VLIWConfig
from kcgym.tasks.base import Task, TaskConfig

Template = Callable[[Task, TaskConfig, VLIWConfig, MemoryLayout], str]

TEMPLATES: dict[str, Template] = collect(__name__, "TEMPLATES")
# task name -> (cfg -> [(name, shape, description)]): EXT scratch tensors the layout appends
SCRATCH = collect(__name__, "SCRATCH")


def compile_task(task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout) -> str:
    """The baseline kernel for ``task`` at ``cfg``; raises KeyError for a task without a template."""
    return template(TEMPLATES, task.name, "the VLIW compiler")(task, cfg, hw, layout)


__all__ = ["SCRATCH", "TEMPLATES", "Asm", "compile_task"]
