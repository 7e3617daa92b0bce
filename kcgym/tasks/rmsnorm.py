"""RMSNorm (paper task 6): scale each row to unit root-mean-square, as LLaMA does."""

from __future__ import annotations

import numpy as np

from kcgym.tasks.families import EpsNormTask


class RMSNorm(EpsNormTask):
    formula = "Y[r] = X[r] / sqrt(mean(X[r]^2) + eps)"
    description = (
        "Row-wise RMSNorm over the last axis of X, shape (rows, hidden) = (n / 64, 64): the paper gives "
        "only the element count n, so kcgym uses rows of 64, the NPU vector width. "
        "Y[r] = X[r] / sqrt(mean(X[r]^2) + eps) with eps = 1e-5 and no learned weight; eps and "
        "inv_hidden = 1/64 are provided as constants. Each row is uniform with its own std (0.25 to 4) "
        "and mean (within one std). The reference rounds the exact result once to bf16; an fp32 sum of "
        "squares with every other operation rounded to bf16 stays within tolerance."
    )

    def function(self, x: np.ndarray) -> np.ndarray:
        return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + self.eps)
