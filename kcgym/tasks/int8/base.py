"""The int8 task contract: exact integer references, int8 tensors (int32 where documented)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from kcgym.tasks.base import Task, TaskConfig, Tolerance
from kcgym.tasks.int8.stress import INT8_DOMAIN, TABLE_DOMAIN

EXACT = Tolerance(atol=0.0, rtol=0.0)
# Shapes of the activation and normalisation tasks: the paper's Table 14 gives ReLU's element
# counts only; kcgym uses them for every elementwise task, and rows of HIDDEN for the row-wise ones.
ELEMENT_COUNTS = (512, 2048, 4096, 8192, 14336)
HIDDEN = 64


class Int8Task(Task):
    """A task of the int8 family: same names as the bf16 tasks, exact match required."""

    tolerance: ClassVar[Tolerance] = EXACT
    int32_tensors: ClassVar[tuple[str, ...]] = ()  # tensors stored as int32 (biases, exp tables)
    tables: ClassVar[tuple[str, ...]] = ()  # constant lookup tables (not all entries need be read)

    def input_domain(self, cfg: TaskConfig) -> dict[str, str]:
        """Declared domains first; otherwise tables are constant, int32 tensors biases, the rest full-range int8."""
        out = {}
        for t in self.inputs(cfg):
            if t.name in self.domain:
                out[t.name] = self.domain[t.name]
            elif t.name in self.tables:
                out[t.name] = TABLE_DOMAIN
            elif t.name in self.int32_tensors:
                out[t.name] = "int32 bias, uniform within +-74^2 sqrt(fan-in) (about the accumulator's spread)"
            else:
                out[t.name] = INT8_DOMAIN
        return out

    def dtype_of(self, name: str) -> np.dtype:
        return np.dtype(np.int32 if name in self.int32_tensors else np.int8)
