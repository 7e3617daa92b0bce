"""A ``benchmarks/`` script as a module for the tests that check its results files and README blocks
(``benchmarks/`` is not a package), under the name ``benchmarks/readme_tables.py`` loads it by, so both share it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def load(script: str, name: str | None = None) -> ModuleType:
    """``benchmarks/<script>.py`` imported once (importing it runs no benchmark)."""
    name = name or f"_kcgym_bench_{script}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{script}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]
