"""The two MLP blocks (paper tasks 14 and 15): FFN (Linear, SiLU, Linear) and SwiGLU."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from kcgym.tasks import composite_math as cm
from kcgym.tasks.base import Task, TaskConfig, TensorSpec
from kcgym.tasks.families import (
    FAN_IN_DOMAIN,
    MILD_OUTLIER_DOMAIN,
    ConfigTable,
    fan_in_weights,
    matmul_bf16,
    unit_activations,
)
from kcgym.tasks.stress import MLP_OUTLIER_GAIN, outliers_in

# (n, h, hi) of the paper's Table 12 (PLENA) and Table 13 (AMD NPU, our VLIW machine)
MLP_CONFIGS: ConfigTable = {
    "NPU": tuple({"n": n, "h": h, "hi": hi} for n, h, hi in (
        (4, 64, 128), (8, 128, 256), (16, 128, 512), (32, 256, 512), (64, 256, 1024))),
    "VLIW": tuple({"n": n, "h": h, "hi": hi} for n, h, hi in (
        (8, 64, 128), (16, 128, 256), (32, 256, 512), (64, 256, 512), (128, 512, 1024))),
}


class FFN(Task):
    name = "ffn"
    title = "FFN"
    level = 2
    category = "MLP"
    formula = "Y = SiLU(X @ W1) @ W2"
    description = (
        "Feed-forward block without biases: X (n, h) @ W1 (h, hi), SiLU, then @ W2 (hi, h); all "
        "row-major, weights input-major. Stages round as the NPU writes them: H = bf16(X @ W1) "
        "(fp32 accumulation), A = bf16(SiLU(H)) (exact, rounded once), Y = bf16(A @ W2). X has unit "
        "variance, weights variance 1/fan-in, so Y has std about 0.6."
    )
    configs_by_accelerator: ClassVar[ConfigTable] = MLP_CONFIGS
    domain = {"X": MILD_OUTLIER_DOMAIN, "W1": FAN_IN_DOMAIN, "W2": FAN_IN_DOMAIN}
    stress_sets = (outliers_in("X", gain=MLP_OUTLIER_GAIN),)

    def tensors(self, cfg: TaskConfig) -> list[TensorSpec]:
        n, h, hi = cfg["n"], cfg["h"], cfg["hi"]
        return [
            TensorSpec("X", (n, h), "input", "activations, one token per row"),
            TensorSpec("W1", (h, hi), "input", "up projection, row-major (h rows of hi)"),
            TensorSpec("W2", (hi, h), "input", "down projection, row-major (hi rows of h)"),
            TensorSpec("Y", (n, h), "output", "Y = SiLU(X @ W1) @ W2"),
        ]

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        n, h, hi = cfg["n"], cfg["h"], cfg["hi"]
        return {
            "X": unit_activations(rng, (n, h)),
            "W1": fan_in_weights(rng, (h, hi), fan_in=h),
            "W2": fan_in_weights(rng, (hi, h), fan_in=hi),
        }

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        a = cm.silu(matmul_bf16(inputs["X"], inputs["W1"]))
        return {"Y": matmul_bf16(a, inputs["W2"])}

    def macs(self, cfg: TaskConfig) -> int:
        return 2 * cfg["n"] * cfg["h"] * cfg["hi"]


class SwiGLU(Task):
    name = "swiglu"
    title = "SwiGLU"
    level = 2
    category = "MLP"
    formula = "Y = (SiLU(X @ W1) * (X @ W3)) @ W2"
    description = (
        "Gated feed-forward block of LLaMA without biases: gate X @ W1 and up X @ W3 (both (h, hi)), "
        "A = SiLU(gate) * up elementwise, Y = A @ W2 with W2 (hi, h); all row-major, weights "
        "input-major. Stages round as the NPU writes them: G = bf16(X @ W1), U = bf16(X @ W3), "
        "bf16(SiLU(G)) (exact, rounded once), A = bf16(SiLU(G) * U), Y = bf16(A @ W2). X has unit "
        "variance, weights variance 1/fan-in."
    )
    configs_by_accelerator: ClassVar[ConfigTable] = MLP_CONFIGS
    domain = {"X": MILD_OUTLIER_DOMAIN, "W1": FAN_IN_DOMAIN, "W3": FAN_IN_DOMAIN, "W2": FAN_IN_DOMAIN}
    stress_sets = (outliers_in("X", gain=MLP_OUTLIER_GAIN),)

    def tensors(self, cfg: TaskConfig) -> list[TensorSpec]:
        n, h, hi = cfg["n"], cfg["h"], cfg["hi"]
        return [
            TensorSpec("X", (n, h), "input", "activations, one token per row"),
            TensorSpec("W1", (h, hi), "input", "gate projection, row-major (h rows of hi)"),
            TensorSpec("W3", (h, hi), "input", "up projection, row-major (h rows of hi)"),
            TensorSpec("W2", (hi, h), "input", "down projection, row-major (hi rows of h)"),
            TensorSpec("Y", (n, h), "output", "Y = (SiLU(X @ W1) * (X @ W3)) @ W2"),
        ]

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        n, h, hi = cfg["n"], cfg["h"], cfg["hi"]
        return {
            "X": unit_activations(rng, (n, h)),
            "W1": fan_in_weights(rng, (h, hi), fan_in=h),
            "W3": fan_in_weights(rng, (h, hi), fan_in=h),
            "W2": fan_in_weights(rng, (hi, h), fan_in=hi),
        }

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        x = inputs["X"]
        a = cm.mul(cm.silu(matmul_bf16(x, inputs["W1"])), matmul_bf16(x, inputs["W3"]))
        return {"Y": matmul_bf16(a, inputs["W2"])}

    def macs(self, cfg: TaskConfig) -> int:
        return 3 * cfg["n"] * cfg["h"] * cfg["hi"]
