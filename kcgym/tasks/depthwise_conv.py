"""DepthwiseConv (paper task 12): a per-channel convolution, the cheap half of a MobileNet block.

Each channel is filtered by its own k x k kernel: no channel mixing, so no matrix product,
only k*k multiply-adds per output on the vector unit. Shapes follow the paper's Table 14
(Coral NPU: H, c, k) with channels x8 on the NPU (multiples of its 64-wide vector rows) and
x4 on the VLIW machine (multiples of 32).
"""

from __future__ import annotations

import numpy as np

from kcgym.tasks.base import Task, TaskConfig
from kcgym.tasks.families import fan_in_weights, unit_activations
from kcgym.tasks.spatial import depthwise_bf16
from kcgym.tasks.stress import outliers_in


class DepthwiseConv(Task):
    formula = "Y[h, w, c] = sum_{kh, kw} Xpad[h + kh, w + kw, c] * W[kh, kw, c]"
    description = (
        "Depthwise 2-D convolution of one square image, stride 1, zero 'same' padding of k // 2, channels "
        "last: X (H, W, c), W (k, k, c), Y (H, W, c), row-major, W = H. Each channel has its own filter. "
        "Rounding as a vector unit does it: taps in row-major (kh, kw) order, acc = bf16(x * w) for the "
        "first tap, then acc = bf16(acc + bf16(x * w)); padding taps add exact zeros and may be skipped. "
        "X has unit variance and W variance 1/(k*k), so interior outputs have std about 1."
    )

    stress_sets = (outliers_in("X"),)

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        h, c, k = cfg["H"], cfg["c"], cfg["k"]
        return {"X": unit_activations(rng, (h, h, c)), "W": fan_in_weights(rng, (k, k, c), fan_in=k * k)}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"Y": depthwise_bf16(inputs["X"], inputs["W"])}

    def macs(self, cfg: TaskConfig) -> int:
        return cfg["H"] ** 2 * cfg["k"] ** 2 * cfg["c"]
