"""The tolerance separates right from wrong: hardware-style kernels pass, trivial outputs fail.

The emulations below compute each task the way an NPU kernel would: bf16 storage, every
vector and scalar operation rounded to bf16 (PLENA's scalar FP registers are bf16), row sums
and matrix products accumulated in fp32. If they pass on every config, the paper's atol/rtol
is achievable by real arithmetic; if zeros, a copy of the input or a constant also pass
somewhere, the inputs do not test the kernel.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
import pytest

from kcgym.tasks import TASKS
from kcgym.tasks import composite_math as cm
from kcgym.tasks.base import Task, TaskConfig
from kcgym.tasks.compare import compare_outputs
from kcgym.tasks.numerics import round_bf16 as bf
from kcgym.tasks.spatial import im2col, pad_same

SEEDS = (0, 1, 2)
ALL_CONFIGS = [(name, i) for name in TASKS for i in range(1, 6)]
Inputs = dict[str, np.ndarray]


@functools.cache
def case(name: str, index: int, seed: int) -> tuple[Task, TaskConfig, Inputs, Inputs]:
    task = TASKS[name]
    cfg = task.config("NPU", index)
    inputs = task.generate_inputs(cfg, np.random.default_rng([seed, 0, index]))
    return task, cfg, inputs, task.reference(cfg, inputs)


def match_rate(task: Task, actual: Inputs, expected: Inputs) -> float:
    """Fraction of matching elements over all outputs; 1.0 means the kernel is correct."""
    comps = compare_outputs(actual, expected, task.tolerance)
    return sum(c.n_match for c in comps) / sum(c.n_elements for c in comps)


# --- hardware-style kernels ----------------------------------------------------------------------


def row_sum_fp32(a: np.ndarray) -> np.ndarray:
    """A vector reduction: fp32 adds, then the bf16 scalar register it lands in."""
    return bf(a.astype(np.float32).sum(axis=-1, keepdims=True, dtype=np.float32))


def hw_silu(x: np.ndarray) -> np.ndarray:
    return bf(x * bf(1.0 / bf(1.0 + bf(np.exp(bf(-x))))))


def hw_gelu_tanh(x: np.ndarray) -> np.ndarray:
    c, k = bf(0.044715), bf(math.sqrt(2.0 / math.pi))
    x3 = bf(bf(x * x) * x)
    t = bf(np.tanh(bf(k * bf(x + bf(c * x3)))))
    return bf(0.5 * bf(x * bf(1.0 + t)))


def hw_softmax(x: np.ndarray) -> np.ndarray:
    e = bf(np.exp(bf(x - x.max(axis=-1, keepdims=True))))
    return bf(e * bf(1.0 / row_sum_fp32(e)))


def hw_rsqrt(mean_square: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    return bf(1.0 / bf(np.sqrt(bf(mean_square + bf(eps)))))


def hw_layernorm(x: np.ndarray) -> np.ndarray:
    inv_h = bf(1.0 / x.shape[-1])
    d = bf(x - bf(row_sum_fp32(x) * inv_h))
    return bf(d * hw_rsqrt(bf(row_sum_fp32(bf(d * d)) * inv_h)))


def hw_rmsnorm(x: np.ndarray) -> np.ndarray:
    inv_h = bf(1.0 / x.shape[-1])
    return bf(x * hw_rsqrt(bf(row_sum_fp32(bf(x * x)) * inv_h)))


def hw_matmul(x: np.ndarray, w: np.ndarray, tile: int = 64) -> np.ndarray:
    """fp32 accumulation over K tiles in the systolic array's order, one bf16 write-out."""
    if w.ndim == 1:  # GEMV as a one-column GEMM
        return hw_matmul(x, w[:, None], tile)[:, 0]
    acc = np.zeros((*x.shape[:-1], w.shape[-1]), dtype=np.float32)
    for k0 in range(0, x.shape[-1], tile):
        acc += np.matmul(x[..., k0 : k0 + tile], w[..., k0 : k0 + tile, :], dtype=np.float32)
    return bf(acc)


def hw_conv(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Implicit GEMM: the patch matrix times the (k*k*cin, cout) weights, fp32 over 64-wide k-tiles."""
    h, wd, _ = x.shape
    return hw_matmul(im2col(x, w.shape[0]), w.reshape(-1, w.shape[-1])).reshape(h, wd, -1)


def hw_depthwise(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Per-op bf16 multiply-adds in the task's row-major tap order.

    The order is part of the task: a chain of 9 to 25 bf16-rounded adds drifts from the exact
    sum by up to about twice the tolerance, and another order drifts differently (reversed:
    ~0.04% of the elements differ), so the reference fixes the order a vector unit would use.
    """
    k, h, wd = w.shape[0], x.shape[0], x.shape[1]
    xp, acc = pad_same(x, k), None
    for t in range(k * k):
        kh, kw = divmod(t, k)
        prod = bf(xp[kh : kh + h, kw : kw + wd] * w[kh, kw])
        acc = prod if acc is None else bf(acc + prod)
    return acc


HW_KERNELS: dict[str, Callable[[Inputs], Inputs]] = {
    "silu": lambda i: {"Y": hw_silu(i["X"])},
    "relu": lambda i: {"Y": np.maximum(i["X"], np.float32(0))},
    "gelu": lambda i: {"Y": hw_gelu_tanh(i["X"])},
    "softmax": lambda i: {"Y": hw_softmax(i["X"])},
    "layernorm": lambda i: {"Y": hw_layernorm(i["X"])},
    "rmsnorm": lambda i: {"Y": hw_rmsnorm(i["X"])},
    "gemv": lambda i: {"y": hw_matmul(i["A"], i["x"])},
    "matmul": lambda i: {"Y": hw_matmul(i["X"], i["W"])},
    "batch_matmul": lambda i: {"Y": hw_matmul(i["X"], i["W"])},
    "linear": lambda i: {"Y": bf(hw_matmul(i["X"], i["W"]) + i["b"])},
    "conv2d": lambda i: {"Y": hw_conv(i["X"], i["W"])},
    "depthwise_conv": lambda i: {"Y": hw_depthwise(i["X"], i["W"])},
    "conv_block": lambda i: {"Y": np.maximum(bf(bf(hw_conv(i["X"], i["W"]) * i["scale"]) + i["shift"]), 0)},
}


@pytest.mark.parametrize(("name", "index"), [(n, i) for n, i in ALL_CONFIGS if n in HW_KERNELS])
def test_hardware_style_kernel_passes(name: str, index: int) -> None:
    for seed in SEEDS:
        task, _, inputs, expected = case(name, index, seed)
        assert match_rate(task, HW_KERNELS[name](inputs), expected) == 1.0, f"seed {seed}"


# --- trivial and wrong kernels ---------------------------------------------------------------------

# Loose ceilings on the best match rate of a trivial output (the worst over 100 seeds is about
# two thirds of each): ReLU's zeros match every negative input, GELU's match its negative tail,
# most softmax probabilities are below atol, and an RMSNorm row whose RMS is near 1 is almost a copy.
TRIVIAL_CEILING = {"relu": 0.65, "gelu": 0.4, "softmax": 0.95, "rmsnorm": 0.4, "conv_block": 0.7}


def trivial_outputs(inputs: Inputs, expected: Inputs) -> dict[str, Inputs]:
    first = next(iter(inputs.values())).ravel()
    return {
        "zeros": {k: np.zeros_like(e) for k, e in expected.items()},
        "copy": {k: np.resize(first, e.shape) for k, e in expected.items()},
        "median": {k: np.full_like(e, np.median(e)) for k, e in expected.items()},
        "mean": {k: np.full_like(e, e.mean()) for k, e in expected.items()},
    }


@pytest.mark.parametrize(("name", "index"), ALL_CONFIGS)
def test_trivial_outputs_fail(name: str, index: int) -> None:
    for seed in SEEDS:
        task, _, inputs, expected = case(name, index, seed)
        for label, actual in trivial_outputs(inputs, expected).items():
            rate = match_rate(task, actual, expected)
            assert rate <= TRIVIAL_CEILING.get(name, 0.25), f"{label} matches {rate:.1%} (seed {seed})"


# Composites whose last stage averages (attention mixes value rows, an MLP's down projection sums
# SiLU outputs of mean ~0.2): std 0.4-0.6, still 30x the absolute tolerance. Their hardware-style
# kernels are the compiler's, run on the simulator (tests/sims/npu/test_composite_kernels.py).
OUTPUT_STD = {name: (0.35, 1.6) for name in ("ffn", "swiglu", "sdpa", "flash_attention", "mha", "gqa", "mqa")}


@pytest.mark.parametrize(("name", "index"), ALL_CONFIGS)
def test_outputs_are_order_one(name: str, index: int) -> None:
    for seed in SEEDS:
        _, _, _, expected = case(name, index, seed)
        (y,) = expected.values()
        if name == "softmax":  # probabilities: judge the rows' peaks instead
            peaks = y.max(axis=-1)
            assert peaks.min() > 0.05 and 0.15 < np.median(peaks) < 0.8
        elif name == "conv_block":  # after a ReLU: about half zeros, the rest O(1)
            assert 0.3 < (y > 0).mean() < 0.7 and 0.7 < y[y > 0].mean() < 1.6
        else:
            assert OUTPUT_STD.get(name, (0.7, 1.6))[0] < y.std() < OUTPUT_STD.get(name, (0.7, 1.6))[1]


def swap_axes_softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=0, keepdims=True))
    return bf(e / e.sum(axis=0, keepdims=True))


def exact_rmsnorm(x: np.ndarray) -> np.ndarray:
    return bf(x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-5))


def exact_layernorm(x: np.ndarray) -> np.ndarray:
    return exact_rmsnorm(x - x.mean(axis=-1, keepdims=True))


def column_major(a: np.ndarray) -> np.ndarray:
    """The matrix a kernel sees when it reads row-major storage as column-major."""
    return a.reshape(a.shape[::-1]).T


def channels_first(x: np.ndarray) -> np.ndarray:
    """The image a kernel sees when it reads channels-last storage as (C, H, W)."""
    h, w, c = x.shape
    return x.reshape(c, h, w).transpose(1, 2, 0)


WRONG_KERNELS: dict[str, dict[str, Callable[[Inputs], Inputs]]] = {
    "silu": {"relu": lambda i: {"Y": np.maximum(i["X"], 0)}},
    "gelu": {"silu": lambda i: {"Y": hw_silu(i["X"])}},
    "softmax": {"columns": lambda i: {"Y": swap_axes_softmax(i["X"])}},
    "layernorm": {"rmsnorm": lambda i: {"Y": exact_rmsnorm(i["X"])}},
    "rmsnorm": {"layernorm": lambda i: {"Y": exact_layernorm(i["X"])}},
    "gemv": {"A column-major": lambda i: {"y": bf(column_major(i["A"]) @ i["x"])}},
    "matmul": {"W column-major": lambda i: {"Y": bf(i["X"] @ column_major(i["W"]))}},
    "batch_matmul": {"shared W[0]": lambda i: {"Y": bf(np.matmul(i["X"], i["W"][0]))}},
    "linear": {"no bias": lambda i: {"Y": bf(i["X"] @ i["W"])}},
    "conv2d": {"X read channels-first": lambda i: {"Y": hw_conv(channels_first(i["X"]), i["W"])}},
    "depthwise_conv": {"flipped filters": lambda i: {"Y": hw_depthwise(i["X"], i["W"][::-1, ::-1])}},
    "conv_block": {"no ReLU": lambda i: {"Y": bf(bf(hw_conv(i["X"], i["W"]) * i["scale"]) + i["shift"])}},
    "rope": {"rotated the other way": lambda i: {"Y": cm.add(cm.mul(i["X"], i["cos"]),
                                                             cm.mul(-hw_matmul(i["X"], i["P"]), i["sin"]))}},
    "ffn": {"ReLU for SiLU": lambda i: {"Y": hw_matmul(cm.relu(hw_matmul(i["X"], i["W1"])), i["W2"])}},
    "swiglu": {"no gate": lambda i: {"Y": hw_matmul(hw_matmul(i["X"], i["W3"]), i["W2"])}},
    "sdpa": {"unscaled": lambda i: {"O": cm.attention(i["Q"], i["K"], i["V"], 1.0)}},
    "flash_attention": {"unscaled": lambda i: {"O": cm.attention(i["Q"], i["K"], i["V"], 1.0)}},
}



@pytest.mark.parametrize(("name", "index"), [(n, i) for n, i in ALL_CONFIGS if n in WRONG_KERNELS])
def test_plausible_wrong_kernels_fail(name: str, index: int) -> None:
    task, _, inputs, expected = case(name, index, 0)
    for label, kernel in WRONG_KERNELS[name].items():
        assert match_rate(task, kernel(inputs), expected) < 0.9, label
