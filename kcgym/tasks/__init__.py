"""The task tables: one instance per manifest entry and number format, in the paper's task order.

Tasks come in *families* by number format. The bf16 family (:data:`TASKS`) serves the
floating-point machines; an integer machine (``Accelerator.numerics == "int8"``) gets its
own family with the same task names, exact references and integer inputs. Both are built
from :mod:`kcgym.tasks.manifest` on first use (each entry names its reference class), so a
task is added by its module and its manifest entry, and ``import kcgym`` stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from kcgym.suggest import closest
from kcgym.tasks import manifest

if TYPE_CHECKING:
    from kcgym.tasks.base import Task

_TABLES: dict[str, dict[str, Task]] = {}  # number format -> name -> Task, built on first use


def _load(reference: str) -> type[Task]:
    module, _, attr = reference.partition(":")
    return getattr(importlib.import_module(module), attr)


def tasks_for(numerics: str) -> dict[str, Task]:
    """The task table of one number format (``"bf16"``, ...), in manifest order."""
    if numerics not in _TABLES:
        known = manifest.families()
        if numerics not in known:
            raise KeyError(f"no task family for number format {numerics!r}; known: {', '.join(known)}")
        _TABLES[numerics] = {e.name: _load(e.variants[numerics].reference)(e, numerics)
                             for e in manifest.entries(numerics)}
    return _TABLES[numerics]


def get_task(name: str) -> Task:
    """The bf16 task called ``name`` (env-id form, e.g. ``"matmul"``).

    Raises:
        KeyError: for an unknown name; the message lists the valid names and, where one is
            close (by name or paper title, e.g. ``"GEMM"``), suggests it.
    """
    table = tasks_for("bf16")
    task = table.get(name)
    if task is not None:
        return task
    aliases = {t.name: t.name for t in table.values()} | {t.title.lower(): t.name for t in table.values()}
    close = closest(name.lower().replace("-", "_"), aliases)
    hint = f" (did you mean {aliases[close]!r}?)" if close else ""
    raise KeyError(f"unknown task {name!r}{hint}; valid tasks: {', '.join(table)}")


def __getattr__(name: str) -> Any:
    # TASKS and Task are imported on first use (PEP 562): the registry reads the manifest through this
    # package, and `import kcgym` must not import NumPy-heavy task modules.
    if name == "TASKS":
        return tasks_for("bf16")
    if name == "Task":
        from kcgym.tasks.base import Task

        return Task
    raise AttributeError(f"module 'kcgym.tasks' has no attribute {name!r}")


if TYPE_CHECKING:
    TASKS: dict[str, Task]

__all__ = ["TASKS", "Task", "get_task", "tasks_for"]
