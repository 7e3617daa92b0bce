"""bfloat16 helpers shared by the task references and input generators.

The NPU stores bf16 and rounds every vector result to bf16, so references must round at
the same points and inputs must already be bf16 values (float32 arrays holding them), or
the first load would silently change the data a reference was computed from.
"""

from __future__ import annotations

from collections.abc import Sequence

import ml_dtypes
import numpy as np

BF16_MANTISSA_BITS = 8  # significant bits, the implicit leading one included
_BF16_MIN_EXP = -125  # frexp exponent of the smallest normal bf16, 2**-126 = 0.5 * 2**-125


def round_bf16(x: np.ndarray | float) -> np.ndarray:
    """Round to the nearest bfloat16 (ties to even) and return the values as float32.

    float32 (and narrower) input goes through ``ml_dtypes.bfloat16``. Wider input is rounded
    directly from its own precision: ml_dtypes casts float64 via float32, and that double
    rounding gives a wrong answer when float32 lands exactly on a bf16 tie.
    """
    a = np.asarray(x)
    if a.dtype.kind in "fc" and a.dtype.itemsize <= 4 or a.dtype == ml_dtypes.bfloat16:
        return a.astype(ml_dtypes.bfloat16).astype(np.float32)
    a = a.astype(np.float64)
    _, exp = np.frexp(a)  # a = m * 2**exp, 0.5 <= |m| < 1
    quantum = np.ldexp(1.0, np.maximum(exp, _BF16_MIN_EXP) - BF16_MANTISSA_BITS)  # subnormals fixed
    with np.errstate(invalid="ignore", over="ignore"):
        rounded = np.rint(a / quantum) * quantum  # rint rounds half to even; inf/nan pass through
        return rounded.astype(np.float32)  # exact, or inf past the bf16 range (as RNE requires)


def is_bf16(x: np.ndarray) -> bool:
    """True when every element of ``x`` is exactly a bfloat16 value (NaNs count as such)."""
    a = np.asarray(x, dtype=np.float32)
    r = round_bf16(a)
    return bool(np.all((r == a) | (np.isnan(r) & np.isnan(a))))


def random_bf16(
    rng: np.random.Generator,
    shape: int | Sequence[int],
    *,
    low: float | None = None,
    high: float | None = None,
    scale: float | None = None,
) -> np.ndarray:
    """Random bf16 values as float32: uniform on ``[low, high)``, or normal with std ``scale``.

    Give either ``low`` and ``high`` or ``scale``. Rounding may move a value by half a bf16
    ulp, so a uniform sample can touch ``high``.
    """
    uniform = low is not None or high is not None
    if uniform == (scale is not None) or uniform and (low is None or high is None):
        raise ValueError("give either low and high (uniform) or scale (normal)")
    if low is not None and high is not None:
        return round_bf16(rng.uniform(low, high, size=shape))
    assert scale is not None  # checked above
    return round_bf16(rng.standard_normal(size=shape) * scale)
