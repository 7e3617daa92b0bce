"""NumPy building blocks of the composite tasks (levels 2 and 3), rounded where the NPU rounds.

Every stage rounds its result to bf16 once, as the hardware writes it out: a matrix product
accumulates in fp32 and rounds at the write-out; an activation, softmax or normalisation is
evaluated exactly and rounded once (an NPU kernel's per-operation rounding stays within
tolerance of that, which the compiler tests measure); residual adds and products of two
stored tensors round their result. Later stages consume the *rounded* earlier stages, so a
reference drifts from the exact float64 model exactly as the hardware does.
"""

from __future__ import annotations

import math

import numpy as np

from kcgym.tasks.families import SQRT3, fan_in_weights, matmul_bf16
from kcgym.tasks.numerics import random_bf16, round_bf16

NORM_EPS = 1e-5
ROPE_BASE = 10000.0
# Gain of the query projection (and of Q in the core attention tasks): logits with std ~2.5
# make softmax rows peaky enough that the attention output is O(1) rather than a flat mean.
QUERY_GAIN = 2.5
# The decoder blocks use unit logits instead: their output is O(1) through the residual anyway, and
# bf16 logits near 10 (ulp 1/16) turn a one-ulp difference upstream (an RMSNorm rounded by another
# route) into a 6% change of an attention weight, a drift that compounds through the later stages.
DECODER_QUERY_GAIN = 1.0


def silu(x: np.ndarray) -> np.ndarray:
    """bf16(x * sigmoid(x)), evaluated in float64 and rounded once."""
    x = x.astype(np.float64)
    return round_bf16(x / (1.0 + np.exp(-x)))


def relu(x: np.ndarray) -> np.ndarray:
    return round_bf16(np.maximum(x, 0.0))


def add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise a + b of two stored bf16 tensors, rounded (a vector add)."""
    return round_bf16(a.astype(np.float32) + b.astype(np.float32))


def mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise a * b of two stored bf16 tensors, rounded (a vector multiply)."""
    return round_bf16(a.astype(np.float32) * b.astype(np.float32))


def rmsnorm(x: np.ndarray, eps: float = NORM_EPS) -> np.ndarray:
    """Row-wise x / sqrt(mean(x^2) + eps) over the last axis, without a learned gain, rounded once."""
    x = x.astype(np.float64)
    return round_bf16(x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps))


def softmax(s: np.ndarray) -> np.ndarray:
    """Row-wise softmax over the last axis, exact and rounded once."""
    s = s.astype(np.float64)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return round_bf16(e / e.sum(axis=-1, keepdims=True))


def attention_scores(q: np.ndarray, k: np.ndarray, scale: float) -> np.ndarray:
    """bf16(bf16(q @ k^T) * scale): the matrix unit writes q @ k^T out, a vector op scales it."""
    return round_bf16(matmul_bf16(q, k.T) * np.float32(scale))


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float) -> np.ndarray:
    """softmax(q @ k^T * scale) @ v for one head, with the stage roundings above."""
    return matmul_bf16(softmax(attention_scores(q, k, scale)), v)


def grouped_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, nh: int, nkv: int) -> np.ndarray:
    """Attention of ``nh`` query heads over ``nkv`` K/V heads (head h uses K/V head h // (nh / nkv)).

    q is (s, nh * d), k and v are (t, nkv * d); the head outputs are concatenated to (s, nh * d).
    The scale is 1/sqrt(d).
    """
    d = q.shape[1] // nh
    group = nh // nkv
    heads = []
    for h in range(nh):
        g = h // group
        heads.append(attention(q[:, h * d : (h + 1) * d], k[:, g * d : (g + 1) * d], v[:, g * d : (g + 1) * d],
                               1.0 / math.sqrt(d)))
    return np.concatenate(heads, axis=1)


def projected_attention(x: np.ndarray, ctx: np.ndarray, w: dict[str, np.ndarray], nh: int, nkv: int,
                        suffix: str = "") -> np.ndarray:
    """Q = x @ Wq, K = ctx @ Wk, V = ctx @ Wv, multi-head attention, then the output projection Wo.

    ``suffix`` selects a second set of weights (``Wq_cross`` ...) for cross-attention.
    """
    q = matmul_bf16(x, w["Wq" + suffix])
    k = matmul_bf16(ctx, w["Wk" + suffix])
    v = matmul_bf16(ctx, w["Wv" + suffix])
    return matmul_bf16(grouped_attention(q, k, v, nh, nkv), w["Wo" + suffix])


def attention_weights(rng: np.random.Generator, h: int, nh: int, nkv: int, suffix: str = "",
                      query_gain: float = QUERY_GAIN) -> dict[str, np.ndarray]:
    """Wq (h, h) with gain ``query_gain``, Wk and Wv (h, nkv * d), Wo (h, h); fan-in scaled."""
    d = h // nh
    return {
        "Wq" + suffix: round_bf16(fan_in_weights(rng, (h, h), fan_in=h) * query_gain),
        "Wk" + suffix: fan_in_weights(rng, (h, nkv * d), fan_in=h),
        "Wv" + suffix: fan_in_weights(rng, (h, nkv * d), fan_in=h),
        "Wo" + suffix: fan_in_weights(rng, (h, h), fan_in=h),
    }


def query_activations(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Uniform queries with std QUERY_GAIN, so unit keys give logits (after 1/sqrt(d)) with std ~2.5."""
    bound = SQRT3 * QUERY_GAIN
    return random_bf16(rng, shape, low=-bound, high=bound)


def rope_tables(s: int, d: int, start: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """bf16 cos and sin tables (s, d) of rotary embeddings in the rotate-half convention.

    Position p (``start`` .. ``start + s - 1``) and frequency i (i < d/2) have angle
    p * base^(-2i/d); both halves of a row use the same d/2 frequencies, as in GPT-NeoX / LLaMA
    (HuggingFace) RoPE.
    """
    inv_freq = ROPE_BASE ** (-np.arange(0, d // 2, dtype=np.float64) * 2.0 / d)
    angles = np.outer(np.arange(start, start + s, dtype=np.float64), inv_freq)
    angles = np.concatenate([angles, angles], axis=1)
    return round_bf16(np.cos(angles)), round_bf16(np.sin(angles))


def rotate_half_matrix(d: int) -> np.ndarray:
    """The signed permutation P with x @ P = rotate_half(x) = concat(-x[d/2:], x[:d/2])."""
    half = d // 2
    p = np.zeros((d, d), np.float32)
    p[half + np.arange(half), np.arange(half)] = -1.0
    p[np.arange(half), half + np.arange(half)] = 1.0
    return p
