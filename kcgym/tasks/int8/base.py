"""The int8 task contract: exact integer references, int8 tensors (int32 where documented)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from kcgym.tasks.base import Task, Tolerance

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

    def dtype_of(self, name: str) -> np.dtype:
        return np.dtype(np.int32 if name in self.int32_tensors else np.int8)
