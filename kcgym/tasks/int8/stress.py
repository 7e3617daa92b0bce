"""Stress draws of the int8 tasks: the edges of the int8 range, where integer shortcuts wrap.

- extremes: operands of only -128 and 127, so accumulators reach their worst case, requantised
  outputs saturate (a narrowing without saturation, or a missing clip, wraps) and ReLU or a table
  index meets -128 (where ``-x`` and ``x + 128`` in 8 bits overflow);
- full-range rows: softmax rows holding both -128 and 127, so ``max - x`` reaches 255 and an
  8-bit difference wraps (the default rows span at most about 136); the other entries sit near
  the max, so most outputs stay non-zero;
- offset rows: norm rows near the ends of the range with a small spread (mean ~ +-110, std ~2),
  where the deviations are small beside the mean.
"""

from __future__ import annotations

import numpy as np

from kcgym.tasks.base import StressSet
from kcgym.tasks.int8.quant import INT8_MAX, INT8_MIN

FULL_RANGE_BULK = 32  # full-range rows: the other entries lie within this of the max (so most outputs are > 0)
OFFSET_CENTRE = (100.0, 120.0)  # |row centre| of the offset rows
OFFSET_SPREAD = (1.0, 4.0)  # half-width of their uniform spread


def extremes(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Every entry -128 or 127, each with probability 1/2."""
    return np.where(rng.random(x.shape) < 0.5, INT8_MIN, INT8_MAX).astype(np.int8)


def full_range_rows(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Rows holding one -128 and one 127 (at random places), the rest uniform within 32 of the max."""
    rows = rng.integers(INT8_MAX - FULL_RANGE_BULK, INT8_MAX + 1, x.shape, dtype=np.int64).reshape(-1, x.shape[-1])
    n, hidden = rows.shape
    lo = rng.integers(hidden, size=n)
    hi = (lo + 1 + rng.integers(hidden - 1, size=n)) % hidden  # another place in the row
    rows[np.arange(n), lo] = INT8_MIN
    rows[np.arange(n), hi] = INT8_MAX
    return rows.reshape(x.shape).astype(np.int8)


def offset_rows(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Rows centred at +-U(100, 120) (either sign) with a uniform spread of half-width U(1, 4)."""
    rows = x.reshape(-1, x.shape[-1])
    n, hidden = rows.shape
    centre = rng.uniform(*OFFSET_CENTRE, (n, 1)) * rng.choice([-1.0, 1.0], (n, 1))
    spread = rng.uniform(*OFFSET_SPREAD, (n, 1))
    vals = np.round(centre + spread * rng.uniform(-1.0, 1.0, (n, hidden)))
    return np.clip(vals, INT8_MIN, INT8_MAX).reshape(x.shape).astype(np.int8)


def extremes_in(*names: str) -> StressSet:
    """Only -128 and 127 in the named int8 operands."""
    return StressSet(
        "extremes", f"{', '.join(names)} hold only -128 and 127: worst-case accumulators, saturating outputs",
        dict.fromkeys(names, extremes),
    )


FULL_RANGE_ROWS = StressSet(
    "full_range_rows", "rows spanning the whole int8 range (each holds -128 and 127), so max - x reaches 255",
    {"X": full_range_rows},
)
OFFSET_ROWS = StressSet(
    "offset_rows", "rows centred near +-100..120 with a spread of 1..4: small deviations beside a large mean",
    {"X": offset_rows},
)

INT8_DOMAIN = "int8, uniform on the full range [-128, 127]; one hidden stress set draws only -128 and 127"
TABLE_DOMAIN = "constant lookup table (the same in every input set)"
