"""Hand-optimised VLIW kernels: bundles packed, loops software-pipelined, DMAs double-buffered."""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.vliw.config import VLIWConfig
from kcgym.tasks.base import Task, TaskConfig

EXPERTS: dict = {}


def expert_kernel(task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout) -> str | None:
    """The expert kernel for ``task`` at ``cfg``, or None where none exists."""
    fn = EXPERTS.get(task.name)
    return None if fn is None else fn(task, cfg, hw, layout)
