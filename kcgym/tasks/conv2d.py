"""Conv2D (paper task 11): a same-padded 2-D convolution, the GEMM of vision models.

Shapes follow the paper's Table 14 (Coral NPU, H=8, k in {1, 3}) scaled to each machine's
vector width. On the NPU every channel count is a multiple of 64, so a pixel's channels are
whole 64-element rows, and cin stays 64 for k=3: the weights of one 64-channel output strip
are then k*k*cin/64 = 9 matrix tiles, which fit the 16-tile matrix SRAM, so one output block
can accumulate all k*k*cin products before its single bf16 rounding (cin=128 would need 18).
Coral's C5 grows cin instead; here C5 grows the image to 16x16 (the largest workload).
"""

from __future__ import annotations

import numpy as np

from kcgym.tasks.base import Task, TaskConfig
from kcgym.tasks.families import fan_in_weights, unit_activations
from kcgym.tasks.spatial import conv2d_bf16
from kcgym.tasks.stress import outliers_in


class ConvTask(Task):
    """Shared tensors and inputs of Conv2D and ConvBlock: X (H, H, cin), W (k, k, cin, cout)."""

    stress_sets = (outliers_in("X"),)

    def conv_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        h, cin, cout, k = cfg["H"], cfg["cin"], cfg["cout"], cfg["k"]
        return {
            "X": unit_activations(rng, (h, h, cin)),
            "W": fan_in_weights(rng, (k, k, cin, cout), fan_in=k * k * cin),
        }

    def macs(self, cfg: TaskConfig) -> int:
        return cfg["H"] ** 2 * cfg["k"] ** 2 * cfg["cin"] * cfg["cout"]


class Conv2D(ConvTask):
    formula = "Y[h, w, co] = sum_{kh, kw, ci} Xpad[h + kh, w + kw, ci] * W[kh, kw, ci, co]"
    description = (
        "2-D convolution of one square image, stride 1, zero 'same' padding of k // 2 (Y has X's spatial "
        "size). Channels last: X (H, W, cin), W (k, k, cin, cout), Y (H, W, cout), row-major, W = H. "
        "Equivalently Y = im2col(X) @ W.reshape(k*k*cin, cout) with patch columns in (kh, kw, ci) order. "
        "All k*k*cin products are accumulated in fp32 and each output is rounded once to bf16. X has unit "
        "variance and W variance 1/(k*k*cin), so interior outputs have std about 1."
    )

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return self.conv_inputs(cfg, rng)

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"Y": conv2d_bf16(inputs["X"], inputs["W"])}
