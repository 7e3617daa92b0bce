"""The int8 task contract: exact integer references, int8 tensors (int32 where the manifest says so).

Constant lookup tables (``Task.tables``: not all entries need be read) are the manifest's constant inputs.
"""

from __future__ import annotations

from kcgym.tasks.base import Task, TaskConfig
from kcgym.tasks.int8.stress import INT8_DOMAIN, TABLE_DOMAIN

INT32_BIAS_DOMAIN = "int32 bias, uniform within +-74^2 sqrt(fan-in) (about the accumulator's spread)"


class Int8Task(Task):
    """A task of the int8 family: same names as the bf16 tasks, exact match required."""

    def input_domain(self, cfg: TaskConfig) -> dict[str, str]:
        """Declared domains first; otherwise tables are constant, int32 tensors biases, the rest full-range int8."""
        out = {}
        for t in self.inputs(cfg):
            if t.name in self.domain:
                out[t.name] = self.domain[t.name]
            elif t.name in self.tables:
                out[t.name] = TABLE_DOMAIN
            elif t.dtype == "int32":
                out[t.name] = INT32_BIAS_DOMAIN
            else:
                out[t.name] = INT8_DOMAIN
        return out
