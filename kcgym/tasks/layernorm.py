"""LayerNorm (paper task 5): per-row standardisation, without the learned scale and shift."""

from __future__ import annotations

import numpy as np

from kcgym.tasks.families import EpsNormTask


class LayerNorm(EpsNormTask):
    formula = "Y[r] = (X[r] - mean(X[r])) / sqrt(var(X[r]) + eps)"
    description = (
        "Row-wise LayerNorm over the last axis of X, shape (rows, hidden) = (n / 64, 64): the paper gives "
        "only the element count n, so kcgym uses rows of 64, the NPU vector width. "
        "Y[r] = (X[r] - mean) / sqrt(var + eps) with the biased variance (divide by 64), eps = 1e-5 and no "
        "affine weight or bias; eps and inv_hidden = 1/64 are provided as constants. Each row is uniform "
        "with its own std (0.25 to 4) and mean (within one std), so |Y| stays below about 2.6. The "
        "reference rounds the exact result once to bf16; a two-pass kernel (mean, then the mean of squared "
        "deviations) with fp32 row sums and every other operation rounded to bf16 stays within tolerance."
    )

    def function(self, x: np.ndarray) -> np.ndarray:
        d = x - x.mean(axis=-1, keepdims=True)
        return d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + self.eps)
