"""ReLU (paper task 2): the simplest activation, exact in any number format."""

from __future__ import annotations

import numpy as np

from kcgym.tasks.families import ElementwiseTask


class ReLU(ElementwiseTask):
    formula = "Y = max(X, 0)"
    description = (
        "Elementwise Y[i] = max(X[i], 0) over a flat vector of n bf16 elements "
        "(X and Y both have shape (n,)); inputs lie in [-4, 4], so about half are negative. "
        "The result is exact in bf16: no rounding is involved."
    )

    def function(self, x: np.ndarray) -> np.ndarray:
        return np.maximum(x, 0.0)
