"""The two MLP blocks (paper tasks 14 and 15): FFN (Linear, SiLU, Linear) and SwiGLU."""

from __future__ import annotations

import numpy as np

from kcgym.tasks import composite_math as cm
from kcgym.tasks.base import Task, TaskConfig
from kcgym.tasks.families import matmul_bf16, mlp_weights, unit_activations
from kcgym.tasks.stress import MLP_OUTLIER_GAIN, outliers_in


class FFN(Task):
    formula = "Y = SiLU(X @ W1) @ W2"
    description = (
        "Feed-forward block without biases: X (n, h) @ W1 (h, hi), SiLU, then @ W2 (hi, h); all "
        "row-major, weights input-major. Stages round as the NPU writes them: H = bf16(X @ W1) "
        "(fp32 accumulation), A = bf16(SiLU(H)) (exact, rounded once), Y = bf16(A @ W2). X has unit "
        "variance, weights variance 1/fan-in, so Y has std about 0.6."
    )
    stress_sets = (outliers_in("X", gain=MLP_OUTLIER_GAIN),)

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"X": unit_activations(rng, (cfg["n"], cfg["h"])), **mlp_weights(rng, cfg["h"], cfg["hi"])}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        a = cm.silu(matmul_bf16(inputs["X"], inputs["W1"]))
        return {"Y": matmul_bf16(a, inputs["W2"])}

    def macs(self, cfg: TaskConfig) -> int:
        return 2 * cfg["n"] * cfg["h"] * cfg["hi"]


class SwiGLU(Task):
    formula = "Y = (SiLU(X @ W1) * (X @ W3)) @ W2"
    description = (
        "Gated feed-forward block of LLaMA without biases: gate X @ W1 and up X @ W3 (both (h, hi)), "
        "A = SiLU(gate) * up elementwise, Y = A @ W2 with W2 (hi, h); all row-major, weights "
        "input-major. Stages round as the NPU writes them: G = bf16(X @ W1), U = bf16(X @ W3), "
        "bf16(SiLU(G)) (exact, rounded once), A = bf16(SiLU(G) * U), Y = bf16(A @ W2). X has unit "
        "variance, weights variance 1/fan-in."
    )
    stress_sets = (outliers_in("X", gain=MLP_OUTLIER_GAIN),)

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"X": unit_activations(rng, (cfg["n"], cfg["h"])), **mlp_weights(rng, cfg["h"], cfg["hi"], gated=True)}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        x = inputs["X"]
        a = cm.mul(cm.silu(matmul_bf16(x, inputs["W1"])), matmul_bf16(x, inputs["W3"]))
        return {"Y": matmul_bf16(a, inputs["W2"])}

    def macs(self, cfg: TaskConfig) -> int:
        return 3 * cfg["n"] * cfg["h"] * cfg["hi"]
