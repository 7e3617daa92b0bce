"""ConvBlock (paper task 21): Conv2D, BatchNorm, ReLU — the building block of a CNN.

BatchNorm is in inference form, folded into a per-channel affine map (scale = gamma /
sqrt(var + eps), shift = beta - mean * scale), as deployed CNNs run it; the unfused chain is
three operators (convolution, normalisation, activation), which a kernel can fuse. Shapes
are Conv2D's (the paper's Table 14 gives ConvBlock the Conv2D shapes).
"""

from __future__ import annotations

import numpy as np

from kcgym.tasks.base import TaskConfig
from kcgym.tasks.conv2d import ConvTask
from kcgym.tasks.numerics import random_bf16, round_bf16
from kcgym.tasks.spatial import conv2d_bf16


class ConvBlock(ConvTask):
    formula = "Y = relu(conv2d(X, W) * scale + shift)"
    description = (
        "Conv2D (same padding, stride 1, channels last, as in the conv2d task: X (H, W, cin), W (k, k, cin, "
        "cout)) followed by inference BatchNorm folded into per-channel scale and shift (cout,) and ReLU; "
        "Y (H, W, cout). Rounding: the convolution accumulates in fp32 and rounds once to bf16, then "
        "bf16(c * scale), then bf16(. + shift), then max(., 0). scale is uniform in [0.5, 1.5] and shift in "
        "[-1, 1], so about half of the outputs are positive and O(1)."
    )

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        cout = cfg["cout"]
        return {
            **self.conv_inputs(cfg, rng),
            "scale": random_bf16(rng, cout, low=0.5, high=1.5),
            "shift": random_bf16(rng, cout, low=-1.0, high=1.0),
        }

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        conv = conv2d_bf16(inputs["X"], inputs["W"])
        normed = round_bf16(round_bf16(conv * inputs["scale"]) + inputs["shift"])
        return {"Y": np.maximum(normed, np.float32(0.0))}
