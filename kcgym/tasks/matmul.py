"""GEMM (paper task 8): the dense matrix product every other matrix task builds on."""

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


class GEMM(Task):
    name = "matmul"
    title = "GEMM"
    level = 1
    category = "Matrix"
    formula = "Y = X @ W"
    description = (
        "Matrix product Y[i, j] = sum_k X[i, k] * W[k, j] with X of shape (M, K), W of shape (K, N) and "
        "Y of shape (M, N), all row-major. Products are accumulated in fp32 over all K and each output "
        "is rounded once to bf16 (rounding partial sums to bf16 between K tiles can exceed the tolerance). "
        "X has unit variance and W variance 1/K, so Y has std about 1."
    )
    configs_by_accelerator: ClassVar[ConfigTable] = {
        "NPU": (
            {"M": 4, "K": 64, "N": 64},
            {"M": 8, "K": 128, "N": 128},
            {"M": 16, "K": 128, "N": 256},
            {"M": 32, "K": 256, "N": 256},
            {"M": 64, "K": 256, "N": 512},
        ),
        "VLIW": (  # the paper's Table 13 (AMD NPU)
            {"M": 8, "K": 64, "N": 64},
            {"M": 16, "K": 256, "N": 128},
            {"M": 32, "K": 256, "N": 256},
            {"M": 64, "K": 512, "N": 256},
            {"M": 128, "K": 512, "N": 1024},
        ),
    }

    domain = {"X": OUTLIER_DOMAIN, "W": FAN_IN_DOMAIN}
    stress_sets = (outliers_in("X"),)

    def tensors(self, cfg: TaskConfig) -> list[TensorSpec]:
        m, k, n = cfg["M"], cfg["K"], cfg["N"]
        return [
            TensorSpec("X", (m, k), "input", "activations, row-major"),
            TensorSpec("W", (k, n), "input", "weights, row-major (K rows of N)"),
            TensorSpec("Y", (m, n), "output", "Y = X @ W"),
        ]

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        m, k, n = cfg["M"], cfg["K"], cfg["N"]
        return {"X": unit_activations(rng, (m, k)), "W": fan_in_weights(rng, (k, n), fan_in=k)}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"Y": matmul_bf16(inputs["X"], inputs["W"])}

    def macs(self, cfg: TaskConfig) -> int:
        return cfg["M"] * cfg["K"] * cfg["N"]
