"""Registration tables found by discovery: a package's modules each declare their own rows.

A compiler or expert package imports every one of its modules (``pkgutil``) and merges the
module-level tables they define (``TEMPLATES``, ``SCRATCH``, ``EXPERTS``: task name -> function),
so a new template or expert is one new module (or one more row in its module) and no
registration line in an ``__init__``. Two modules claiming one task is an error, not a silent
override.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any


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
