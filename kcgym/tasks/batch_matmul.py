"""BatchMatMul (paper task 9): independent products per batch, as in attention heads."""

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


class BatchMatMul(Task):
    name = "batch_matmul"
    title = "BatchMatMul"
    level = 1
    category = "Matrix"
    formula = "Y[i] = X[i] @ W[i]"
    description = (
        "b independent matrix products Y[i] = X[i] @ W[i] with X of shape (b, M, K), W of shape (b, K, N) "
        "and Y of shape (b, M, N), all row-major (batch outermost); every batch has its own W. Products "
        "are accumulated in fp32 over all K and each output is rounded once to bf16. X has unit variance "
        "and W variance 1/K, so Y has std about 1."
    )
    configs_by_accelerator: ClassVar[ConfigTable] = {
        "NPU": (
            {"b": 2, "M": 4, "K": 64, "N": 64},
            {"b": 4, "M": 8, "K": 128, "N": 128},
            {"b": 8, "M": 16, "K": 128, "N": 256},
            {"b": 16, "M": 32, "K": 256, "N": 256},
            {"b": 32, "M": 64, "K": 256, "N": 512},
        ),
        "VLIW": (  # the paper's Table 13 (AMD NPU)
            {"b": 8, "M": 16, "K": 64, "N": 64},
            {"b": 16, "M": 32, "K": 256, "N": 128},
            {"b": 16, "M": 64, "K": 256, "N": 256},
            {"b": 32, "M": 64, "K": 512, "N": 256},
            {"b": 32, "M": 64, "K": 256, "N": 1024},
        ),
    }

    domain = {"X": OUTLIER_DOMAIN, "W": FAN_IN_DOMAIN}
    stress_sets = (outliers_in("X"),)

    def tensors(self, cfg: TaskConfig) -> list[TensorSpec]:
        b, m, k, n = cfg["b"], cfg["M"], cfg["K"], cfg["N"]
        return [
            TensorSpec("X", (b, m, k), "input", "b activation matrices, row-major"),
            TensorSpec("W", (b, k, n), "input", "b weight matrices, row-major"),
            TensorSpec("Y", (b, m, n), "output", "Y[i] = X[i] @ W[i]"),
        ]

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        b, m, k, n = cfg["b"], cfg["M"], cfg["K"], cfg["N"]
        return {"X": unit_activations(rng, (b, m, k)), "W": fan_in_weights(rng, (b, k, n), fan_in=k)}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"Y": matmul_bf16(inputs["X"], inputs["W"])}

    def macs(self, cfg: TaskConfig) -> int:
        return cfg["b"] * cfg["M"] * cfg["K"] * cfg["N"]
