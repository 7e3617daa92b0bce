"""The matrix-product tasks (paper tasks 7-10): GEMV, GEMM, BatchMatMul and Linear.

All four multiply unit-variance activations by fan-in-scaled weights, accumulate in fp32 and
round once to bf16 (Linear then adds its bias in a second, rounded step); one base class draws
the operands in the manifest's tensor order and computes the product.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from kcgym.tasks.base import Task, TaskConfig
from kcgym.tasks.families import fan_in_weights, matmul_bf16, unit_activations
from kcgym.tasks.numerics import random_bf16, round_bf16
from kcgym.tasks.stress import outliers_in


class MatrixProduct(Task):
    """``out = left @ right`` of two input tensors, one of them weights with variance 1/``fan_in``."""

    left: ClassVar[str] = "X"
    right: ClassVar[str] = "W"
    weights: ClassVar[str] = "W"
    fan_in: ClassVar[str] = "K"  # the config parameter the products sum over
    stress_sets = (outliers_in("X"),)

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """The two operands, drawn in the manifest's tensor order (the seeds' order)."""
        out = {}
        for t in self.inputs(cfg):
            if t.name == self.weights:
                out[t.name] = fan_in_weights(rng, t.shape, fan_in=cfg[self.fan_in])
            elif t.name in (self.left, self.right):
                out[t.name] = unit_activations(rng, t.shape)
        return out

    def product(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        return matmul_bf16(inputs[self.left], inputs[self.right])

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {self.outputs(cfg)[0].name: self.product(inputs)}

    def macs(self, cfg: TaskConfig) -> int:
        """Every config parameter is a dimension of the product, so the MACs are their product."""
        return math.prod(cfg.params.values())


class GEMV(MatrixProduct):
    formula = "y = A @ x"
    description = (
        "Matrix-vector product y[i] = sum_j A[i, j] * x[j] with A of shape (M, N) stored row-major, "
        "x of shape (N,) and y of shape (M,). Products are accumulated in fp32 over all N and each y[i] "
        "is rounded once to bf16. A has variance 1/N and x unit variance, so y has std about 1."
    )

    left, right, weights, fan_in = "A", "x", "A", "N"
    stress_sets = (outliers_in("x"),)


class GEMM(MatrixProduct):
    formula = "Y = X @ W"
    description = (
        "Matrix product Y[i, j] = sum_k X[i, k] * W[k, j] with X of shape (M, K), W of shape (K, N) and "
        "Y of shape (M, N), all row-major. Products are accumulated in fp32 over all K and each output "
        "is rounded once to bf16 (rounding partial sums to bf16 between K tiles can exceed the tolerance). "
        "X has unit variance and W variance 1/K, so Y has std about 1."
    )


class BatchMatMul(MatrixProduct):
    formula = "Y[i] = X[i] @ W[i]"
    description = (
        "b independent matrix products Y[i] = X[i] @ W[i] with X of shape (b, M, K), W of shape (b, K, N) "
        "and Y of shape (b, M, N), all row-major (batch outermost); every batch has its own W. Products "
        "are accumulated in fp32 over all K and each output is rounded once to bf16. X has unit variance "
        "and W variance 1/K, so Y has std about 1."
    )


class Linear(MatrixProduct):
    formula = "Y = X @ W + b"
    description = (
        "Fully connected layer Y = X @ W + b for n tokens: X of shape (n, hin), W of shape (hin, hout) "
        "(input-major, i.e. already transposed relative to torch's weight), b of shape (hout,) added to "
        "every row, Y of shape (n, hout), all row-major. X @ W is accumulated in fp32 and rounded to "
        "bf16, then the bias is added by a vector operation and the sum rounded to bf16 again. X has "
        "unit variance, W variance 1/hin and b is uniform in [-1, 1]."
    )

    fan_in = "hin"

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {**super().generate_inputs(cfg, rng), "b": random_bf16(rng, cfg["hout"], low=-1.0, high=1.0)}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"Y": round_bf16(self.product(inputs) + inputs["b"])}
