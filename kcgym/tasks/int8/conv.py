"""Conv2D, depthwise convolution and a two-layer conv block on int8 NHWC images.

Stride 1, zero padding ``k // 2`` ("same"), channels last: X[y, x, c] at byte
``(y * H + x) * C + c``. Weights are ``(k, k, cin, cout)`` (depthwise: ``(k, k, c)``), biases
int32. Shapes: the paper's Table 14 (H = W).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import ClassVar

import numpy as np

from kcgym.tasks.base import TaskConfig
from kcgym.tasks.int8 import quant as Q
from kcgym.tasks.int8.matrix import RequantTask
from kcgym.tasks.int8.stress import extremes_in

CONV_CONFIGS = ({"H": 8, "cin": 4, "cout": 8, "k": 1}, {"H": 8, "cin": 8, "cout": 8, "k": 3},
                {"H": 8, "cin": 8, "cout": 16, "k": 3}, {"H": 8, "cin": 8, "cout": 32, "k": 3},
                {"H": 8, "cin": 32, "cout": 8, "k": 3})


def _taps(x: np.ndarray, w: np.ndarray, channels: int, tap: Callable[[np.ndarray, np.ndarray], np.ndarray]
          ) -> np.ndarray:
    """int64 sum over the k x k taps of ``tap(shifted x, w[ky, kx])``, 'same' zero padding of k // 2."""
    k = w.shape[0]
    p = k // 2
    h, wd = x.shape[:2]
    xp = np.pad(x.astype(np.int64), ((p, p), (p, p), (0, 0)))
    acc = np.zeros((h, wd, channels), np.int64)
    for ky in range(k):
        for kx in range(k):
            acc += tap(xp[ky : ky + h, kx : kx + wd, :], w[ky, kx].astype(np.int64))
    return acc


def conv2d(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """int64 'same' convolution: x (H, W, cin), w (k, k, cin, cout) -> (H, W, cout)."""
    return _taps(x, w, w.shape[3], np.matmul)


def depthwise(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """int64 'same' per-channel convolution: x (H, W, c), w (k, k, c) -> (H, W, c)."""
    return _taps(x, w, x.shape[2], np.multiply)


class _ConvInt8(RequantTask):
    """A requantised convolution of X by W: ``convolve`` sums k x k taps of the ``fan_in_channels``.

    ``mac_channels`` are the channel counts one output pixel's products run over (with the taps).
    """

    stress_sets = (extremes_in("X", "W"),)
    convolve: ClassVar[Callable[[np.ndarray, np.ndarray], np.ndarray]]
    fan_in_channels: ClassVar[tuple[str, ...]]
    mac_channels: ClassVar[tuple[str, ...]]

    def fan_in(self, cfg: TaskConfig) -> int:
        return cfg["k"] * cfg["k"] * math.prod(cfg[c] for c in self.fan_in_channels)

    def accumulate(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        return type(self).convolve(inputs["X"], inputs["W"])

    def macs(self, cfg: TaskConfig) -> int:
        return cfg["H"] ** 2 * cfg["k"] ** 2 * math.prod(cfg[c] for c in self.mac_channels)


class Conv2DInt8(_ConvInt8):
    formula = "Y = requant(conv2d(X, W) + bias)"
    description = ("2-D convolution, stride 1, zero padding k//2: acc[y, x, o] = bias[o] + sum_{ky, kx, c} "
                   "X[y + ky - k//2, x + kx - k//2, c] * W[ky, kx, c, o]; X (H, H, cin) int8 NHWC, W (k, k, cin, "
                   "cout) int8, bias (cout,) int32, Y (H, H, cout) int8." + RequantTask.requant_doc)
    convolve, fan_in_channels, mac_channels = conv2d, ("cin",), ("cin", "cout")


class DepthwiseConvInt8(_ConvInt8):
    formula = "Y = requant(depthwise(X, W) + bias)"
    description = ("Depthwise 2-D convolution, stride 1, zero padding k//2: acc[y, x, c] = bias[c] + sum_{ky, kx} "
                   "X[y + ky - k//2, x + kx - k//2, c] * W[ky, kx, c]; X (H, H, c) int8 NHWC, W (k, k, c) int8, "
                   "bias (c,) int32, Y (H, H, c) int8." + RequantTask.requant_doc)
    convolve, fan_in_channels, mac_channels = depthwise, (), ("c",)


class ConvBlockInt8(RequantTask):
    formula = "Y = relu(requant2(conv(relu(requant1(conv(X, W1) + b1)), W2) + b2))"
    description = ("Two conv layers with ReLU (a ResNet-style block without the skip): H1 = max(requant(conv2d(X, "
                   "W1) + b1, mult1), 0) of shape (H, H, cout), then Y = max(requant(conv2d(H1, W2) + b2, mult2), 0). "
                   "Both convolutions: stride 1, zero padding k//2, NHWC; W1 (k, k, cin, cout), W2 (k, k, cout, cout) "
                   "int8, b1, b2 (cout,) int32. requant(acc, m) = clip(((acc * m + 32768) >> 16) + zero_point, -128, "
                   "127). H1 is not an output: keep it where you like (the DTCM is a good place). Exact.")
    stress_sets = (extremes_in("X", "W1", "W2"),)

    def constants(self, cfg: TaskConfig) -> dict[str, float]:
        k2 = cfg["k"] ** 2
        return {"mult1": Q.requant_multiplier(k2 * cfg["cin"]), "mult2": Q.requant_multiplier(k2 * cfg["cout"]),
                "shift": Q.REQUANT_SHIFT, "zero_point": Q.REQUANT_ZERO_POINT}

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        h, ci, co, k = cfg["H"], cfg["cin"], cfg["cout"], cfg["k"]
        return {"X": Q.random_int8(rng, (h, h, ci)), "W1": Q.random_int8(rng, (k, k, ci, co)),
                "b1": Q.random_bias(rng, co, k * k * ci), "W2": Q.random_int8(rng, (k, k, co, co)),
                "b2": Q.random_bias(rng, co, k * k * co)}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        c = self.constants(cfg)
        h1 = np.maximum(Q.requantize(conv2d(inputs["X"], inputs["W1"]) + inputs["b1"], int(c["mult1"])), 0)
        y = np.maximum(Q.requantize(conv2d(h1, inputs["W2"]) + inputs["b2"], int(c["mult2"])), 0)
        return {"Y": y.astype(np.int8)}

    def macs(self, cfg: TaskConfig) -> int:
        return cfg["H"] ** 2 * cfg["k"] ** 2 * cfg["cout"] * (cfg["cin"] + cfg["cout"])
