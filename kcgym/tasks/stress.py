"""Stress draws of the bf16 tasks: the edge of each stated input domain, where shortcuts fail.

Each function redraws one tensor (see :class:`kcgym.tasks.base.StressSet`) so that a kernel
that is correct only for the default distribution fails, while the reference stays finite
and the outputs meaningful (O(1), not all zero):

- large logits: softmax without the max subtraction overflows exp (bf16 and fp32 share the
  exponent range, exp overflows past 88.7), and rows far apart in magnitude break a max that
  is carried over from the previous row;
- offset rows: a small spread (down to a variance below eps, so a kernel that drops eps fails)
  and a mean large beside it (the bf16 rounding of a subtracted mean shows);
- tails: activations beyond the default range, where a polynomial fit of the default range fails;
- outliers: a few large activations (as in LLM activation outliers), so partial sums and
  products grow well past the default spread.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from kcgym.tasks.base import StressSet
from kcgym.tasks.numerics import round_bf16

_SQRT3 = math.sqrt(3.0)  # U(-sqrt 3, sqrt 3) has unit variance

# softmax rows: |offset| of the row's logits, past exp's overflow point (88.7) on the positive side
LOGIT_OFFSET = (88.0, 100.0)
# attention: query gain multiplier, from logits with std ~2.5 to std ~40 (row maxima near and past 88)
LOGIT_GAIN = 16.0
# norm rows: std log-uniform on 2**NORM_LOG2_STD, mean NORM_MEAN_RATIO std away from zero (either sign)
NORM_LOG2_STD = (-9.0, 2.0)
NORM_MEAN_RATIO = (1.5, 2.5)
# activations: |x| uniform on TAIL_RANGE, random sign (the default range is [-4, 4))
TAIL_RANGE = (4.0, 32.0)
# outliers: this share of the entries, scaled by a factor uniform on OUTLIER_GAIN (random sign kept)
OUTLIER_SHARE = 1.0 / 32.0
OUTLIER_GAIN = (8.0, 32.0)
# The MLP blocks (and the projected attention tasks, see kcgym/tasks/attention.py) get milder outliers:
# their SiLU stage is rounded per operation on the hardware and once in the reference, and (for SwiGLU)
# multiplied by the up projection, so that drift grows with the activation scale (squared) while atol does
# not. Measured worst margins of the compiler kernels at C1-C3: x2..4 up to 0.99 (NPU swiglu C3), x4..8 up
# to 2.15, x8..32 up to 2.02 at C1 alone; x2..3 keeps a margin.
MLP_OUTLIER_GAIN = (2.0, 3.0)


def large_logits(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each row shifted by +-U(88, 100), signs alternating row by row (the first row positive)."""
    rows = x.reshape(-1, x.shape[-1])
    sign = np.where(np.arange(rows.shape[0]) % 2 == 0, 1.0, -1.0)[:, None]
    offset = sign * rng.uniform(*LOGIT_OFFSET, size=(rows.shape[0], 1))
    return round_bf16(rows.astype(np.float64) + offset).reshape(x.shape)


def query_gain(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Queries (or the query projection) scaled by LOGIT_GAIN: logits with std ~40, peaky rows."""
    return round_bf16(x.astype(np.float64) * LOGIT_GAIN)


def offset_rows(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Uniform rows with a small std (2^-9 .. 2^2) and a mean 1.5-2.5 std from zero, either sign."""
    rows = x.reshape(-1, x.shape[-1])
    n, hidden = rows.shape
    std = np.exp2(rng.uniform(*NORM_LOG2_STD, size=(n, 1)))
    mean = std * rng.uniform(*NORM_MEAN_RATIO, size=(n, 1)) * rng.choice([-1.0, 1.0], size=(n, 1))
    return round_bf16(mean + std * rng.uniform(-_SQRT3, _SQRT3, size=(n, hidden))).reshape(x.shape)


def tails(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Values of magnitude U(4, 32), random sign: the activation's tails, past the default range."""
    magnitude = rng.uniform(*TAIL_RANGE, size=x.shape)
    return round_bf16(magnitude * rng.choice([-1.0, 1.0], size=x.shape))


def outliers(
    x: np.ndarray, rng: np.random.Generator, gain_range: tuple[float, float] = OUTLIER_GAIN
) -> np.ndarray:
    """The default values with 1/32 of the entries scaled by a factor uniform on ``gain_range``."""
    hit = rng.random(x.shape) < OUTLIER_SHARE
    gain = np.where(hit, rng.uniform(*gain_range, size=x.shape), 1.0)
    return round_bf16(x.astype(np.float64) * gain)


# --- the stress sets the bf16 tasks declare --------------------------------------------------
LARGE_LOGITS = StressSet(
    "large_logits",
    "rows of logits shifted by +-88..100 (alternating sign): exp overflows without the row max subtracted, "
    "and rows far apart break a max carried over from another row",
    {"X": large_logits},
)
OFFSET_ROWS = StressSet(
    "offset_rows",
    "rows with a small std (2^-9 .. 4) and a mean 1.5-2.5 std from zero: eps matters (a kernel without it fails) "
    "and the mean is large beside the spread",
    {"X": offset_rows},
)
TAILS = StressSet("tails", "|X| uniform in 4..32 (random sign), past the default range", {"X": tails})


def outliers_in(*names: str, gain: tuple[float, float] = OUTLIER_GAIN) -> StressSet:
    """Outliers (1/32 of the entries scaled by ``gain``, default x8..32) in the named activation tensors."""
    return StressSet(
        "outliers", f"1/32 of the entries of {', '.join(names)} scaled by {gain[0]:g}..{gain[1]:g} (activation "
        "outliers)", dict.fromkeys(names, partial(outliers, gain_range=gain)),
    )


def large_logits_via(name: str) -> StressSet:
    """Attention logits with std ~40 (peaky rows, maxima near and past 88) by scaling ``name`` x16."""
    return StressSet(
        "large_logits", f"{name} scaled x16, so the attention logits have std ~40 and row maxima near or past 88: "
        "exp overflows without the row max subtracted", {name: query_gain},
    )
