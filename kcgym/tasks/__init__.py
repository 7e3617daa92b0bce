"""The task registry: every task, one instance each, in the paper's task-id order."""

from __future__ import annotations

import difflib

from kcgym.tasks.base import Task
from kcgym.tasks.batch_matmul import BatchMatMul
from kcgym.tasks.gelu import GELU
from kcgym.tasks.gemv import GEMV
from kcgym.tasks.layernorm import LayerNorm
from kcgym.tasks.linear import Linear
from kcgym.tasks.matmul import GEMM
from kcgym.tasks.relu import ReLU
from kcgym.tasks.rmsnorm import RMSNorm
from kcgym.tasks.silu import SiLU
from kcgym.tasks.softmax import Softmax

_ALL: tuple[Task, ...] = (
    SiLU(),
    ReLU(),
    GELU(),
    Softmax(),
    LayerNorm(),
    RMSNorm(),
    GEMV(),
    GEMM(),
    BatchMatMul(),
    Linear(),
)

TASKS: dict[str, Task] = {t.name: t for t in _ALL}


def get_task(name: str) -> Task:
    """The task called ``name`` (env-id form, e.g. ``"matmul"``).

    Raises:
        KeyError: for an unknown name; the message lists the valid names and, where one is
            close (by name or paper title, e.g. ``"GEMM"``), suggests it.
    """
    task = TASKS.get(name)
    if task is not None:
        return task
    aliases = {t.name: t.name for t in _ALL} | {t.title.lower(): t.name for t in _ALL}
    close = difflib.get_close_matches(name.lower().replace("-", "_"), list(aliases), n=1, cutoff=0.6)
    hint = f" (did you mean {aliases[close[0]]!r}?)" if close else ""
    raise KeyError(f"unknown task {name!r}{hint}; valid tasks: {', '.join(TASKS)}")


__all__ = ["TASKS", "Task", "get_task"]
