"""GEMV, GEMM, batched GEMM and Linear on int8 with int32 accumulation and requantisation.

Every output is ``requantize(acc, mult)`` = ``clip(((acc * mult + 2^15) >> 16) + 3, -128, 127)``
with a per-configuration ``mult`` (a task constant) that maps the accumulator to std ~40.
Shapes: the paper's Table 14.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from kcgym.tasks.base import TaskConfig
from kcgym.tasks.int8 import quant as Q
from kcgym.tasks.int8.base import Int8Task
from kcgym.tasks.int8.stress import extremes_in


class RequantTask(Int8Task):
    """A task whose outputs are requantised accumulators of ``fan_in`` int8 products (plus int32 biases).

    The inputs are drawn in the manifest's order, int8 operands over the full range and int32
    biases at the accumulator's spread; the accumulator is ``operands[0] @ operands[1]`` unless a
    subclass computes another (a convolution).
    """

    requant_doc: ClassVar[str] = (" Requantisation: Y = clip(((acc * mult + 32768) >> 16) + zero_point, -128, 127) "
                                  "with acc the int32 sum, mult and zero_point the task constants (shift = 16); "
                                  "acc * mult fits in int32. Exact.")
    operands: ClassVar[tuple[str, str]] = ("X", "W")
    fan_in_param: ClassVar[str] = "K"  # the config parameter the products sum over

    def fan_in(self, cfg: TaskConfig) -> int:
        return cfg[self.fan_in_param]

    def constants(self, cfg: TaskConfig) -> dict[str, float]:
        return {"mult": Q.requant_multiplier(self.fan_in(cfg)), "shift": Q.REQUANT_SHIFT,
                "zero_point": Q.REQUANT_ZERO_POINT}

    def requant(self, cfg: TaskConfig, acc: np.ndarray) -> np.ndarray:
        return Q.requantize(acc, int(self.constants(cfg)["mult"]))

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {t.name: Q.random_bias(rng, t.shape[0], self.fan_in(cfg)) if t.dtype == "int32"
                else Q.random_int8(rng, t.shape) for t in self.inputs(cfg)}

    def accumulate(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        a, b = (inputs[name].astype(np.int64) for name in self.operands)
        return np.matmul(a, b)

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        acc = self.accumulate(inputs)
        for t in self.inputs(cfg):
            if t.dtype == "int32":
                acc = acc + inputs[t.name].astype(np.int64)
        return {self.outputs(cfg)[0].name: self.requant(cfg, acc)}

    def macs(self, cfg: TaskConfig) -> int:
        """Every config parameter of a matrix product is one of its dimensions."""
        return math.prod(cfg.params.values())


class GEMVInt8(RequantTask):
    formula = "y = requant(A @ x)"
    description = ("Matrix-vector product acc[i] = sum_j A[i, j] * x[j], A (M, N) int8 row-major, x (N,) int8, "
                   "y (M,) int8." + RequantTask.requant_doc)
    stress_sets = (extremes_in("A", "x"),)
    operands, fan_in_param = ("A", "x"), "N"


class GEMMInt8(RequantTask):
    formula = "Y = requant(X @ W)"
    description = ("Matrix product acc[i, j] = sum_k X[i, k] * W[k, j]; X (M, K), W (K, N), Y (M, N), int8 "
                   "row-major." + RequantTask.requant_doc)
    stress_sets = (extremes_in("X", "W"),)


class BatchMatMulInt8(RequantTask):
    formula = "Y[b] = requant(X[b] @ W[b])"
    description = ("Batched matrix product: for each b, acc[b, i, j] = sum_k X[b, i, k] * W[b, k, j]; X (B, M, K), "
                   "W (B, K, N), Y (B, M, N), int8 row-major." + RequantTask.requant_doc)
    stress_sets = (extremes_in("X", "W"),)


class LinearInt8(RequantTask):
    formula = "Y = requant(X @ W + bias)"
    description = ("Fully connected layer: acc[i, j] = sum_k X[i, k] * W[k, j] + bias[j]; X (batch, hin) int8, "
                   "W (hin, hout) int8, bias (hout,) int32, Y (batch, hout) int8." + RequantTask.requant_doc)
    stress_sets = (extremes_in("X", "W"),)
    fan_in_param = "hin"
