"""The level-one template table every compiler shares: which primitive task runs which loop.

Each machine's compiler has one elementwise loop (parametrised by the per-element operation), one
rowwise loop (by the per-row operation), a matrix product and a GEMV; the table that binds the
ten level-one tasks to them is the same on every machine and lives here once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

ELEMENTWISE = ("relu", "silu", "gelu")
ROWWISE = ("softmax", "rmsnorm", "layernorm")
MATMULS = ("matmul", "linear", "batch_matmul")  # one matrix-product template serves all three

Template = Callable[..., str]  # (task, cfg, hw, layout) -> assembly source


def _bound(loop: Callable[..., str], op: Any) -> Template:
    return lambda task, cfg, hw, layout: loop(task, cfg, hw, layout, op)


def primitive_templates(elementwise: Callable[..., str], rowwise: Callable[..., str], ops: Mapping[str, Any],
                        matmul: Template, gemv: Template) -> dict[str, Template]:
    """``task -> template`` for the level-one tasks; ``ops`` gives each elementwise / rowwise task its operation."""
    table: dict[str, Template] = {n: _bound(elementwise, ops[n]) for n in ELEMENTWISE}
    table.update({n: _bound(rowwise, ops[n]) for n in ROWWISE})
    table.update({n: matmul for n in MATMULS})
    table["gemv"] = gemv
    return table
