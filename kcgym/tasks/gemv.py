"""GEMV (paper task 7): matrix-vector product, the memory-bound shape of LLM decoding."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from kcgym.tasks.base import Task, TaskConfig, TensorSpec
from kcgym.tasks.families import (
    FAN_IN_DOMAIN,
    OUTLIER_DOMAIN,
    ConfigTable,
    fan_in_weights,
    matmul_bf16,
    unit_activations,
)
from kcgym.tasks.stress import outliers_in


class GEMV(Task):
    name = "gemv"
    title = "GEMV"
    level = 1
    category = "Matrix"
    formula = "y = A @ x"
    description = (
        "Matrix-vector product y[i] = sum_j A[i, j] * x[j] with A of shape (M, N) stored row-major, "
        "x of shape (N,) and y of shape (M,). Products are accumulated in fp32 over all N and each y[i] "
        "is rounded once to bf16. A has variance 1/N and x unit variance, so y has std about 1."
    )
    configs_by_accelerator: ClassVar[ConfigTable] = {
        "NPU": (
            {"M": 64, "N": 512},
            {"M": 128, "N": 512},
            {"M": 256, "N": 512},
            {"M": 512, "N": 512},
            {"M": 512, "N": 1024},
        ),
        "VLIW": (  # the paper's Table 13 (AMD NPU)
            {"M": 64, "N": 64},
            {"M": 128, "N": 256},
            {"M": 256, "N": 256},
            {"M": 512, "N": 256},
            {"M": 512, "N": 1024},
        ),
    }

    domain = {"x": OUTLIER_DOMAIN, "A": FAN_IN_DOMAIN}
    stress_sets = (outliers_in("x"),)

    def tensors(self, cfg: TaskConfig) -> list[TensorSpec]:
        m, n = cfg["M"], cfg["N"]
        return [
            TensorSpec("A", (m, n), "input", "matrix, row-major"),
            TensorSpec("x", (n,), "input", "vector"),
            TensorSpec("y", (m,), "output", "y = A @ x"),
        ]

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        m, n = cfg["M"], cfg["N"]
        return {"A": fan_in_weights(rng, (m, n), fan_in=n), "x": unit_activations(rng, (n,))}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"y": matmul_bf16(inputs["A"], inputs["x"])}

    def macs(self, cfg: TaskConfig) -> int:
        return cfg["M"] * cfg["N"]
