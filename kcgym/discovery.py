"""Registration tables found by discovery: a package's modules each declare their own rows.

A compiler or expert package imports every one of its modules (``pkgutil``) and merges the
module-level tables they define (``TEMPLATES``, ``SCRATCH``, ``EXPERTS``: task name -> function),
so a new template or expert is one new module (or one more row in its module) and no
registration line in an ``__init__``. Two modules claiming one task is an error, not a silent
override. The lookups every package makes in its merged table (a compiler's template, where a
missing one is an error; an expert, where a missing one means "no expert") live here too.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

T = TypeVar("T")


def collect(package: str, attr: str) -> dict[str, Any]:
    """The union of the ``attr`` tables of every module of ``package``, in module-name order.

    Raises:
        ValueError: where two modules register the same task name.
    """
    pkg = importlib.import_module(package)
    table: dict[str, Any] = {}
    owner: dict[str, str] = {}
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{package}.{info.name}")
        for name, value in getattr(module, attr, {}).items():
            if name in table:
                raise ValueError(f"{package}: {attr}[{name!r}] is defined by both {owner[name]} and {info.name}")
            table[name], owner[name] = value, info.name
    return table


def template(table: Mapping[str, T], task_name: str, compiler: str) -> T:
    """``table[task_name]``: the template a compiler registered for the task.

    Raises:
        KeyError: naming ``compiler`` (e.g. ``"the NPU compiler"``) and the task, where none is registered.
    """
    try:
        return table[task_name]
    except KeyError as e:
        raise KeyError(f"{compiler} has no template for {task_name!r}") from e


def expert_dispatch(table: Mapping[str, Callable[..., str | None]]) -> Callable[..., str | None]:
    """``expert_kernel(task, cfg, hw, layout)`` over an ``EXPERTS`` table: the task's expert, or None where none."""

    def expert_kernel(task: Any, *args: Any) -> str | None:
        """The expert kernel for ``task`` (then cfg, hw, layout), or None where none exists."""
        fn = table.get(task.name)
        return None if fn is None else fn(task, *args)

    return expert_kernel
