"""GEMV, GEMM, batched GEMM and Linear on int8 with int32 accumulation and requantisation.

Every output is ``requantize(acc, mult)`` = ``clip(((acc * mult + 2^15) >> 16) + 3, -128, 127)``
with a per-configuration ``mult`` (a task constant) that maps the accumulator to std ~40.
Shapes: the paper's Table 14.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from kcgym.tasks.base import TaskConfig, TensorSpec
from kcgym.tasks.int8 import quant as Q
from kcgym.tasks.int8.base import Int8Task
from kcgym.tasks.int8.stress import extremes_in


class RequantTask(Int8Task):
    """A task whose outputs are requantised accumulators of ``fan_in`` int8 products."""

    level: ClassVar[int] = 1
    category: ClassVar[str] = "Matrix"
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
    name = "gemv"
    title = "GEMV"
    formula = "y = requant(A @ x)"
    description = ("Matrix-vector product acc[i] = sum_j A[i, j] * x[j], A (M, N) int8 row-major, x (N,) int8, "
                   "y (M,) int8." + RequantTask.requant_doc)
    stress_sets = (extremes_in("A", "x"),)
    configs_by_accelerator: ClassVar[dict] = {"RVV": (
        {"M": 64, "N": 32}, {"M": 64, "N": 64}, {"M": 128, "N": 64}, {"M": 64, "N": 256}, {"M": 256, "N": 64})}

    def fan_in(self, cfg: TaskConfig) -> int:
        return cfg["N"]

    def tensors(self, cfg: TaskConfig) -> list[TensorSpec]:
        m, n = cfg["M"], cfg["N"]
        return [TensorSpec("A", (m, n), "input", "int8 matrix"), TensorSpec("x", (n,), "input", "int8 vector"),
                TensorSpec("y", (m,), "output", "requant(A @ x)")]

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"A": Q.random_int8(rng, (cfg["M"], cfg["N"])), "x": Q.random_int8(rng, cfg["N"])}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        acc = inputs["A"].astype(np.int64) @ inputs["x"].astype(np.int64)
        return {"y": self.requant(cfg, acc)}

    def macs(self, cfg: TaskConfig) -> int:
        return cfg["M"] * cfg["N"]


class GEMMInt8(RequantTask):
    name = "matmul"
    title = "GEMM"
    formula = "Y = requant(X @ W)"
    description = ("Matrix product acc[i, j] = sum_k X[i, k] * W[k, j]; X (M, K), W (K, N), Y (M, N), int8 "
                   "row-major." + RequantTask.requant_doc)
    stress_sets = (extremes_in("X", "W"),)
    configs_by_accelerator: ClassVar[dict] = {"RVV": (
        {"M": 32, "K": 32, "N": 32}, {"M": 32, "K": 64, "N": 64}, {"M": 64, "K": 64, "N": 64},
        {"M": 128, "K": 32, "N": 64}, {"M": 32, "K": 64, "N": 128})}

    def fan_in(self, cfg: TaskConfig) -> int:
        return cfg["K"]

    def tensors(self, cfg: TaskConfig) -> list[TensorSpec]:
        m, k, n = cfg["M"], cfg["K"], cfg["N"]
        return [TensorSpec("X", (m, k), "input", "int8 activations"),
                TensorSpec("W", (k, n), "input", "int8 weights, K rows of N"),
                TensorSpec("Y", (m, n), "output", "requant(X @ W)")]

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"X": Q.random_int8(rng, (cfg["M"], cfg["K"])), "W": Q.random_int8(rng, (cfg["K"], cfg["N"]))}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"Y": self.requant(cfg, inputs["X"].astype(np.int64) @ inputs["W"].astype(np.int64))}

    def macs(self, cfg: TaskConfig) -> int:
        return cfg["M"] * cfg["K"] * cfg["N"]


class BatchMatMulInt8(RequantTask):
    name = "batch_matmul"
    title = "BatchMatMul"
    formula = "Y[b] = requant(X[b] @ W[b])"
    description = ("Batched matrix product: for each b, acc[b, i, j] = sum_k X[b, i, k] * W[b, k, j]; X (B, M, K), "
                   "W (B, K, N), Y (B, M, N), int8 row-major." + RequantTask.requant_doc)
    stress_sets = (extremes_in("X", "W"),)
    configs_by_accelerator: ClassVar[dict] = {"RVV": (
        {"B": 2, "M": 32, "K": 32, "N": 32}, {"B": 4, "M": 32, "K": 32, "N": 32}, {"B": 2, "M": 64, "K": 64, "N": 32},
        {"B": 4, "M": 32, "K": 64, "N": 32}, {"B": 2, "M": 32, "K": 64, "N": 64})}

    def fan_in(self, cfg: TaskConfig) -> int:
        return cfg["K"]

    def tensors(self, cfg: TaskConfig) -> list[TensorSpec]:
        b, m, k, n = cfg["B"], cfg["M"], cfg["K"], cfg["N"]
        return [TensorSpec("X", (b, m, k), "input", "int8"), TensorSpec("W", (b, k, n), "input", "int8"),
                TensorSpec("Y", (b, m, n), "output", "requant(X[b] @ W[b])")]

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        b, m, k, n = cfg["B"], cfg["M"], cfg["K"], cfg["N"]
        return {"X": Q.random_int8(rng, (b, m, k)), "W": Q.random_int8(rng, (b, k, n))}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"Y": self.requant(cfg, np.matmul(inputs["X"].astype(np.int64), inputs["W"].astype(np.int64)))}

    def macs(self, cfg: TaskConfig) -> int:
        return cfg["B"] * cfg["M"] * cfg["K"] * cfg["N"]


class LinearInt8(RequantTask):
    name = "linear"
    title = "Linear"
    formula = "Y = requant(X @ W + bias)"
    int32_tensors: ClassVar[tuple[str, ...]] = ("bias",)
    description = ("Fully connected layer: acc[i, j] = sum_k X[i, k] * W[k, j] + bias[j]; X (batch, hin) int8, "
                   "W (hin, hout) int8, bias (hout,) int32, Y (batch, hout) int8." + RequantTask.requant_doc)
    stress_sets = (extremes_in("X", "W"),)
    configs_by_accelerator: ClassVar[dict] = {"RVV": (
        {"batch": 4, "hin": 32, "hout": 64}, {"batch": 8, "hin": 64, "hout": 64}, {"batch": 4, "hin": 256, "hout": 64},
        {"batch": 8, "hin": 64, "hout": 256}, {"batch": 12, "hin": 128, "hout": 128})}

    def fan_in(self, cfg: TaskConfig) -> int:
        return cfg["hin"]

    def tensors(self, cfg: TaskConfig) -> list[TensorSpec]:
        b, hi, ho = cfg["batch"], cfg["hin"], cfg["hout"]
        return [TensorSpec("X", (b, hi), "input", "int8"), TensorSpec("W", (hi, ho), "input", "int8"),
                TensorSpec("bias", (ho,), "input", "int32"), TensorSpec("Y", (b, ho), "output", "int8")]

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        b, hi, ho = cfg["batch"], cfg["hin"], cfg["hout"]
        return {"X": Q.random_int8(rng, (b, hi)), "W": Q.random_int8(rng, (hi, ho)),
                "bias": Q.random_bias(rng, ho, hi)}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        acc = inputs["X"].astype(np.int64) @ inputs["W"].astype(np.int64) + inputs["bias"].astype(np.int64)
        return {"Y": self.requant(cfg, acc)}

    def macs(self, cfg: TaskConfig) -> int:
        return cfg["batch"] * cfg["hin"] * cfg["hout"]
