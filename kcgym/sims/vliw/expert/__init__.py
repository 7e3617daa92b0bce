"""Hand-optimised VLIW kernels: bundles packed, several vectors in flight, DMAs double-buffered.

Each module emits a kernel for every configuration of its tasks (or None where it has none).
They are readable references for agents and users, and regression tests of the timing model.
Each module declares the tasks it serves in its own ``EXPERTS`` table, found by discovery
(:func:`kcgym.discovery.collect`): a new expert is a new module, with nothing to add here.
"""

from __future__ import annotations

from kcgym.discovery import collect
from kcgym.sims.base import MemoryLayout
from kcgym.sims.vliw.config import VLIWConfig
from kcgym.tasks.base import Task, TaskConfig

EXPERTS = collect(__name__, "EXPERTS")


def expert_kernel(task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout) -> str | None:
    """The expert kernel for ``task`` at ``cfg``, or None where none exists."""
    fn = EXPERTS.get(task.name)
    return None if fn is None else fn(task, cfg, hw, layout)
