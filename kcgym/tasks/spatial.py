"""Shared shapes and references of the spatial (convolution) tasks.

All three spatial tasks use one convention so a kernel written for one reads the others:
a single square image, channels last (NHWC without the batch axis: ``X[h, w, c]``), stride
1 and zero "same" padding of ``k // 2`` on every side, so the output has the input's
spatial size. With channels last, the channel vector of a pixel is contiguous: on a machine
whose vector rows hold 64 elements, pixel ``(h, w)``'s channels ``64j .. 64j + 63`` are one
aligned row, and a convolution becomes an implicit GEMM over (tap, channel) without any
data rearrangement in memory.
"""

from __future__ import annotations

import numpy as np

from kcgym.tasks.base import TaskConfig
from kcgym.tasks.numerics import round_bf16


def image_size(cfg: TaskConfig) -> int:
    """Height = width of the (square) image."""
    return cfg["H"]


def pad_same(x: np.ndarray, k: int) -> np.ndarray:
    """Zero-pad the two spatial axes of ``x[h, w, c]`` by ``k // 2`` (odd ``k``: output size = input size)."""
    if k % 2 != 1:
        raise ValueError(f"'same' padding needs an odd kernel size, got k={k}")
    p = k // 2
    return np.pad(x, ((p, p), (p, p), (0, 0)))


def im2col(x: np.ndarray, k: int) -> np.ndarray:
    """Rows ``h * W + w`` of ``[x_pad[h + kh, w + kw, :] for kh, kw]``: the (H*W, k*k*C) patch matrix.

    Column order (kh, kw, c) matches a weight tensor stored (k, k, cin, cout), so
    ``im2col(x, k) @ w.reshape(-1, cout)`` is the convolution.
    """
    h, w, c = x.shape
    xp = pad_same(x, k)
    cols = [xp[kh : kh + h, kw : kw + w, :] for kh in range(k) for kw in range(k)]
    return np.concatenate(cols, axis=-1).reshape(h * w, k * k * c)


def conv2d_bf16(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Same-padded stride-1 convolution, fp32 accumulation over all taps and channels, rounded once.

    ``x``: (H, W, cin), ``w``: (k, k, cin, cout); returns (H, W, cout). This is what a matrix
    unit that accumulates all k*k*cin products before its bf16 write-out produces.
    """
    h, wd, _ = x.shape
    k, cout = w.shape[0], w.shape[-1]
    y = im2col(x.astype(np.float32), k) @ w.reshape(-1, cout).astype(np.float32)
    return round_bf16(y.reshape(h, wd, cout))


def depthwise_bf16(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Per-channel same-padded convolution as a vector unit computes it: every op rounded to bf16.

    ``x``: (H, W, c), ``w``: (k, k, c). Taps are visited in row-major (kh, kw) order:
    ``acc = bf16(x0 * w0)``, then ``acc = bf16(acc + bf16(x_t * w_t))``. Padding taps add an
    exact zero, so a kernel that skips them gets the same bits.
    """
    h, wd, _ = x.shape
    k = w.shape[0]
    xp = pad_same(x.astype(np.float32), k)
    w = w.astype(np.float32)
    acc = None
    for kh in range(k):
        for kw in range(k):
            prod = round_bf16(xp[kh : kh + h, kw : kw + wd, :] * w[kh, kw])
            acc = prod if acc is None else round_bf16(acc + prod)
    assert acc is not None
    return acc
