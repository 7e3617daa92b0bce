"""GELU (paper task 3): x * Phi(x), the activation of BERT/GPT-style MLPs."""

from __future__ import annotations

import math

import numpy as np

from kcgym.tasks.base import TaskConfig
from kcgym.tasks.families import ElementwiseTask

GELU_COEFF = 0.044715
# numpy has no erf and scipy is not a dependency; math.erf is exact to double precision.
_erf = np.vectorize(math.erf, otypes=[np.float64])


class GELU(ElementwiseTask):
    formula = "Y = X * Phi(X) = 0.5 * X * (1 + erf(X / sqrt(2)))"
    description = (
        "Elementwise exact GELU, Y[i] = 0.5 * X[i] * (1 + erf(X[i] / sqrt(2))), over a flat vector of "
        "n bf16 elements (X and Y both have shape (n,)); inputs lie in [-4, 4]. "
        "The reference rounds the exact function once to bf16. The tanh approximation "
        "0.5 * X * (1 + tanh(sqrt(2/pi) * (X + 0.044715 * X^3))), with every vector operation rounded "
        "to bf16, stays within tolerance; its constants are provided as sqrt_2_over_pi and gelu_coeff."
    )

    def function(self, x: np.ndarray) -> np.ndarray:
        return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))

    def constants(self, cfg: TaskConfig) -> dict[str, float]:
        return {"sqrt_2_over_pi": math.sqrt(2.0 / math.pi), "gelu_coeff": GELU_COEFF}
