"""SiLU (paper task 1): the sigmoid-weighted linear unit used in SwiGLU and LLaMA MLPs."""

from __future__ import annotations

import numpy as np

from kcgym.tasks.families import ElementwiseTask


class SiLU(ElementwiseTask):
    formula = "Y = X * sigmoid(X) = X / (1 + exp(-X))"
    description = (
        "Elementwise Y[i] = X[i] / (1 + exp(-X[i])) over a flat vector of n bf16 elements "
        "(X and Y both have shape (n,)); inputs lie in [-4, 4]. "
        "The reference is the exact function rounded once to bf16; computing X * (1 / (1 + exp(-X))) "
        "with every vector operation rounded to bf16 stays within tolerance."
    )

    def function(self, x: np.ndarray) -> np.ndarray:
        return x / (1.0 + np.exp(-x))
