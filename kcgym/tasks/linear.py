"""Linear (paper task 10): a fully connected layer, a GEMM followed by a bias add."""

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
from kcgym.tasks.numerics import random_bf16, round_bf16
from kcgym.tasks.stress import outliers_in


class Linear(Task):
    name = "linear"
    title = "Linear"
    level = 1
    category = "Matrix"
    formula = "Y = X @ W + b"
    description = (
        "Fully connected layer Y = X @ W + b for n tokens: X of shape (n, hin), W of shape (hin, hout) "
        "(input-major, i.e. already transposed relative to torch's weight), b of shape (hout,) added to "
        "every row, Y of shape (n, hout), all row-major. X @ W is accumulated in fp32 and rounded to "
        "bf16, then the bias is added by a vector operation and the sum rounded to bf16 again. X has "
        "unit variance, W variance 1/hin and b is uniform in [-1, 1]."
    )
    configs_by_accelerator: ClassVar[ConfigTable] = {
        "NPU": (
            {"n": 4, "hin": 64, "hout": 64},
            {"n": 8, "hin": 128, "hout": 128},
            {"n": 16, "hin": 128, "hout": 256},
            {"n": 32, "hin": 256, "hout": 256},
            {"n": 64, "hin": 256, "hout": 512},
        ),
        "VLIW": (  # the paper's Table 13 (AMD NPU)
            {"n": 8, "hin": 64, "hout": 64},
            {"n": 16, "hin": 256, "hout": 128},
            {"n": 32, "hin": 256, "hout": 256},
            {"n": 64, "hin": 256, "hout": 512},
            {"n": 128, "hin": 1024, "hout": 512},
        ),
    }

    domain = {"X": OUTLIER_DOMAIN, "W": FAN_IN_DOMAIN, "b": "bf16, uniform on [-1, 1)"}
    stress_sets = (outliers_in("X"),)

    def tensors(self, cfg: TaskConfig) -> list[TensorSpec]:
        n, hin, hout = cfg["n"], cfg["hin"], cfg["hout"]
        return [
            TensorSpec("X", (n, hin), "input", "activations, one token per row"),
            TensorSpec("W", (hin, hout), "input", "weights, row-major (hin rows of hout)"),
            TensorSpec("b", (hout,), "input", "bias, added to every row"),
            TensorSpec("Y", (n, hout), "output", "Y = X @ W + b"),
        ]

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        n, hin, hout = cfg["n"], cfg["hin"], cfg["hout"]
        return {
            "X": unit_activations(rng, (n, hin)),
            "W": fan_in_weights(rng, (hin, hout), fan_in=hin),
            "b": random_bf16(rng, hout, low=-1.0, high=1.0),
        }

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"Y": round_bf16(matmul_bf16(inputs["X"], inputs["W"]) + inputs["b"])}

    def macs(self, cfg: TaskConfig) -> int:
        return cfg["n"] * cfg["hin"] * cfg["hout"]
