"""The two MLP blocks (paper tasks 14 and 15): FFN (Linear, SiLU, Linear) and SwiGLU."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from kcgym.tasks import composite_math as cm
from kcgym.tasks.base import Task, TaskConfig
from kcgym.tasks.families import matmul_bf16, mlp_weights, unit_activations
from kcgym.tasks.stress import MLP_OUTLIER_GAIN, outliers_in


class _MLP(Task):
    """FFN and SwiGLU: unit activations, fan-in weights, one (or, gated, two) up projections and the down one."""

    gated: ClassVar[bool] = False
    stress_sets = (outliers_in("X", gain=MLP_OUTLIER_GAIN),)

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"X": unit_activations(rng, (cfg["n"], cfg["h"])),
                **mlp_weights(rng, cfg["h"], cfg["hi"], gated=self.gated)}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        x = inputs["X"]
        a = cm.silu(matmul_bf16(x, inputs["W1"]))
        if self.gated:
            a = cm.mul(a, matmul_bf16(x, inputs["W3"]))
        return {"Y": matmul_bf16(a, inputs["W2"])}

    def macs(self, cfg: TaskConfig) -> int:
        return (3 if self.gated else 2) * cfg["n"] * cfg["h"] * cfg["hi"]


class FFN(_MLP):
    formula = "Y = SiLU(X @ W1) @ W2"
    description = (
        "Feed-forward block without biases: X (n, h) @ W1 (h, hi), SiLU, then @ W2 (hi, h); all "
        "row-major, weights input-major. Stages round as the NPU writes them: H = bf16(X @ W1) "
        "(fp32 accumulation), A = bf16(SiLU(H)) (exact, rounded once), Y = bf16(A @ W2). X has unit "
        "variance, weights variance 1/fan-in, so Y has std about 0.6."
    )


class SwiGLU(_MLP):
    formula = "Y = (SiLU(X @ W1) * (X @ W3)) @ W2"
    description = (
        "Gated feed-forward block of LLaMA without biases: gate X @ W1 and up X @ W3 (both (h, hi)), "
        "A = SiLU(gate) * up elementwise, Y = A @ W2 with W2 (hi, h); all row-major, weights "
        "input-major. Stages round as the NPU writes them: G = bf16(X @ W1), U = bf16(X @ W3), "
        "bf16(SiLU(G)) (exact, rounded once), A = bf16(SiLU(G) * U), Y = bf16(A @ W2). X has unit "
        "variance, weights variance 1/fan-in."
    )
    gated = True
