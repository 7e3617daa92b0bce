"""DepthwiseConv (paper task 12): a per-channel convolution, the cheap half of a MobileNet block.

Each channel is filtered by its own k x k kernel: no channel mixing, so no matrix product,
only k*k multiply-adds per output on the vector unit. Shapes follow the paper's Table 14
(Coral NPU: H, c, k) with channels x8 on the NPU (multiples of its 64-wide vector rows) and
x4 on the VLIW machine (multiples of 32).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from kcgym.tasks.base import Task, TaskConfig, TensorSpec
from kcgym.tasks.families import FAN_IN_DOMAIN, OUTLIER_DOMAIN, ConfigTable, fan_in_weights, unit_activations
from kcgym.tasks.spatial import depthwise_bf16
from kcgym.tasks.stress import outliers_in

NPU_DEPTHWISE_SHAPES = ((8, 128, 3), (16, 64, 3), (16, 128, 3), (16, 128, 5), (16, 256, 5))
VLIW_DEPTHWISE_SHAPES = ((8, 64, 3), (16, 32, 3), (16, 64, 3), (16, 64, 5), (16, 128, 5))


class DepthwiseConv(Task):
    name = "depthwise_conv"
    title = "DepthwiseConv"
    level = 1
    category = "Spatial"
    formula = "Y[h, w, c] = sum_{kh, kw} Xpad[h + kh, w + kw, c] * W[kh, kw, c]"
    description = (
        "Depthwise 2-D convolution of one square image, stride 1, zero 'same' padding of k // 2, channels "
        "last: X (H, W, c), W (k, k, c), Y (H, W, c), row-major, W = H. Each channel has its own filter. "
        "Rounding as a vector unit does it: taps in row-major (kh, kw) order, acc = bf16(x * w) for the "
        "first tap, then acc = bf16(acc + bf16(x * w)); padding taps add exact zeros and may be skipped. "
        "X has unit variance and W variance 1/(k*k), so interior outputs have std about 1."
    )
    configs_by_accelerator: ClassVar[ConfigTable] = {
        "NPU": tuple({"H": h, "c": c, "k": k} for h, c, k in NPU_DEPTHWISE_SHAPES),
        "VLIW": tuple({"H": h, "c": c, "k": k} for h, c, k in VLIW_DEPTHWISE_SHAPES),
    }

    domain = {"X": OUTLIER_DOMAIN, "W": FAN_IN_DOMAIN}
    stress_sets = (outliers_in("X"),)

    def tensors(self, cfg: TaskConfig) -> list[TensorSpec]:
        h, c, k = cfg["H"], cfg["c"], cfg["k"]
        return [
            TensorSpec("X", (h, h, c), "input", "image, channels last: X[h, w, ch] at (h*W + w)*c + ch"),
            TensorSpec("W", (k, k, c), "input", "per-channel filters: W[kh, kw, ch] at (kh*k + kw)*c + ch"),
            TensorSpec("Y", (h, h, c), "output", "Y[h, w, c], channels last"),
        ]

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        h, c, k = cfg["H"], cfg["c"], cfg["k"]
        return {"X": unit_activations(rng, (h, h, c)), "W": fan_in_weights(rng, (k, k, c), fan_in=k * k)}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"Y": depthwise_bf16(inputs["X"], inputs["W"])}

    def macs(self, cfg: TaskConfig) -> int:
        return cfg["H"] ** 2 * cfg["k"] ** 2 * cfg["c"]
