"""Softmax (paper task 4): a row-wise max, exp, sum and scale; the core of attention."""

from __future__ import annotations

import numpy as np

from kcgym.tasks.base import TaskConfig
from kcgym.tasks.families import RowwiseTask
from kcgym.tasks.numerics import random_bf16
from kcgym.tasks.stress import LARGE_LOGITS

LOGIT_STD = 2.5  # peaky rows, yet most of a row still carries visible probability


class Softmax(RowwiseTask):
    formula = "Y[r, j] = exp(X[r, j] - max_k X[r, k]) / sum_k exp(X[r, k] - max_k X[r, k])"
    description = (
        "Row-wise softmax over the last axis of X, shape (rows, hidden) = (n / 64, 64): the paper gives "
        "only the element count n, so kcgym uses rows of 64, the NPU vector width; every row of Y sums "
        "to 1. Logits are normal with std 2.5, so rows are peaky (a row's largest probability is "
        "typically 0.15 to 0.8); subtract the row max before exp, as the reference does. The reference "
        "rounds the exact result once to bf16; exp(x - max), an fp32 row sum and a multiply by its "
        "reciprocal, each rounded to bf16, stay within tolerance."
    )

    stress_sets = (LARGE_LOGITS,)

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"X": random_bf16(rng, self.shape(cfg), scale=LOGIT_STD)}

    def function(self, x: np.ndarray) -> np.ndarray:
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
