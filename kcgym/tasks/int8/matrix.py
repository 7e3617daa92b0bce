"""GEMV, GEMM, batched GEMM and Linear on int8 with int32 accumulation and requantisation.

Every output is ``requantize(acc, mult)`` = ``clip(((acc * mult + 2^15) >> 16) + 3, -128, 127)``
with a per-configuration ``mult`` (a task constant) that maps the accumulator to std ~40.
Shapes: the paper's Table 14.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from kcgym.tasks.base import TaskConfig
from kcgym.tasks.int8 import quant as Q
from kcgym.tasks.int8.base import Int8Task
from kcgym.tasks.int8.stress import extremes_in


class RequantTask(Int8Task):
    """A task whose outputs are requantised accumulators of ``fan_in`` int8 products."""

    requant_doc: ClassVar[str] = (" Requantisation: Y = clip(((acc * mult + 32768) >> 16) + zero_point, -128, 127) "
                                  "with acc the int32 sum, mult and zero_point the task constants (shift = 16); "
                                  "acc * mult fits in int32. Exact.")

    def fan_in(self, cfg: TaskConfig) -> int:
        raise NotImplementedError

    def constants(self, cfg: TaskConfig) -> dict[str, float]:
        return {"mult": Q.requant_multiplier(self.fan_in(cfg)), "shift": Q.REQUANT_SHIFT,
                "zero_point": Q.REQUANT_ZERO_POINT}

    def requant(self, cfg: TaskConfig, acc: np.ndarray) -> np.ndarray:
        return Q.requantize(acc, int(self.constants(cfg)["mult"]))


class GEMVInt8(RequantTask):
    formula = "y = requant(A @ x)"
    description = ("Matrix-vector product acc[i] = sum_j A[i, j] * x[j], A (M, N) int8 row-major, x (N,) int8, "
                   "y (M,) int8." + RequantTask.requant_doc)
    stress_sets = (extremes_in("A", "x"),)

    def fan_in(self, cfg: TaskConfig) -> int:
        return cfg["N"]

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"A": Q.random_int8(rng, (cfg["M"], cfg["N"])), "x": Q.random_int8(rng, cfg["N"])}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        acc = inputs["A"].astype(np.int64) @ inputs["x"].astype(np.int64)
        return {"y": self.requant(cfg, acc)}

    def macs(self, cfg: TaskConfig) -> int:
        return cfg["M"] * cfg["N"]


class GEMMInt8(RequantTask):
    formula = "Y = requant(X @ W)"
    description = ("Matrix product acc[i, j] = sum_k X[i, k] * W[k, j]; X (M, K), W (K, N), Y (M, N), int8 "
                   "row-major." + RequantTask.requant_doc)
    stress_sets = (extremes_in("X", "W"),)

    def fan_in(self, cfg: TaskConfig) -> int:
        return cfg["K"]

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"X": Q.random_int8(rng, (cfg["M"], cfg["K"])), "W": Q.random_int8(rng, (cfg["K"], cfg["N"]))}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"Y": self.requant(cfg, inputs["X"].astype(np.int64) @ inputs["W"].astype(np.int64))}

    def macs(self, cfg: TaskConfig) -> int:
        return cfg["M"] * cfg["K"] * cfg["N"]


class BatchMatMulInt8(RequantTask):
    formula = "Y[b] = requant(X[b] @ W[b])"
    description = ("Batched matrix product: for each b, acc[b, i, j] = sum_k X[b, i, k] * W[b, k, j]; X (B, M, K), "
                   "W (B, K, N), Y (B, M, N), int8 row-major." + RequantTask.requant_doc)
    stress_sets = (extremes_in("X", "W"),)

    def fan_in(self, cfg: TaskConfig) -> int:
        return cfg["K"]

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        b, m, k, n = cfg["B"], cfg["M"], cfg["K"], cfg["N"]
        return {"X": Q.random_int8(rng, (b, m, k)), "W": Q.random_int8(rng, (b, k, n))}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"Y": self.requant(cfg, np.matmul(inputs["X"].astype(np.int64), inputs["W"].astype(np.int64)))}

    def macs(self, cfg: TaskConfig) -> int:
        return cfg["B"] * cfg["M"] * cfg["K"] * cfg["N"]


class LinearInt8(RequantTask):
    formula = "Y = requant(X @ W + bias)"
    description = ("Fully connected layer: acc[i, j] = sum_k X[i, k] * W[k, j] + bias[j]; X (batch, hin) int8, "
                   "W (hin, hout) int8, bias (hout,) int32, Y (batch, hout) int8." + RequantTask.requant_doc)
    stress_sets = (extremes_in("X", "W"),)

    def fan_in(self, cfg: TaskConfig) -> int:
        return cfg["hin"]

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        b, hi, ho = cfg["batch"], cfg["hin"], cfg["hout"]
        return {"X": Q.random_int8(rng, (b, hi)), "W": Q.random_int8(rng, (hi, ho)),
                "bias": Q.random_bias(rng, ho, hi)}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        acc = inputs["X"].astype(np.int64) @ inputs["W"].astype(np.int64) + inputs["bias"].astype(np.int64)
        return {"Y": self.requant(cfg, acc)}

    def macs(self, cfg: TaskConfig) -> int:
        return cfg["batch"] * cfg["hin"] * cfg["hout"]
