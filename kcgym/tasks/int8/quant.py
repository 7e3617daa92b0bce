"""Integer numerics of the int8 family: requantisation, integer square root, lookup tables.

Everything here is exact integer arithmetic (NumPy int64), chosen so that the natural RVV
idioms compute it bit for bit: a rounding shift is ``vssra`` (rounding mode rnu: add
``2^(shift-1)`` then shift arithmetically), saturation to int8 is ``vnclip`` or
``vmax``/``vmin``, division truncates toward zero like ``vdiv``.
"""

from __future__ import annotations

import math

import numpy as np

INT8_MIN, INT8_MAX = -128, 127
REQUANT_SHIFT = 16
REQUANT_ZERO_POINT = 3  # non-zero, so a kernel that forgets it cannot pass
OUTPUT_STD = 40.0  # target spread of requantised outputs (int8 units)
INT8_STD = 74.0  # std of uniform int8 on [-128, 127]
LUT_INPUT_SCALE = 32  # LUT activations: x_real = x / 32 (int8 covers [-4, 4)), y = round(32 * f(x_real))


def rounding_shift(v: np.ndarray, shift: int) -> np.ndarray:
    """``(v + 2^(shift-1)) >> shift`` (arithmetic): RVV's vssra with vxrm = rnu."""
    v = np.asarray(v, np.int64)
    return (v + (1 << (shift - 1))) >> shift if shift > 0 else v


def requantize(acc: np.ndarray, mult: int, shift: int = REQUANT_SHIFT, zero_point: int = REQUANT_ZERO_POINT
               ) -> np.ndarray:
    """int32 accumulator -> int8: ``clip(rounding_shift(acc * mult, shift) + zero_point, -128, 127)``.

    ``acc * mult`` must fit in int32 (kernels multiply at e32); the multipliers chosen by
    :func:`requant_multiplier` guarantee it for int8 operands.
    """
    prod = np.asarray(acc, np.int64) * mult
    assert np.all(np.abs(prod) < 2**31), "requantisation product overflows int32"
    return np.clip(rounding_shift(prod, shift) + zero_point, INT8_MIN, INT8_MAX).astype(np.int8)


def requant_multiplier(fan_in: int, operand_std: float = INT8_STD * INT8_STD) -> int:
    """Multiplier (with :data:`REQUANT_SHIFT`) mapping a sum of ``fan_in`` int8 products to std ~40.

    Also capped so that ``|acc| * mult < 2^31`` for the worst-case accumulator.
    """
    mult = round(OUTPUT_STD * (1 << REQUANT_SHIFT) / (operand_std * math.sqrt(fan_in)))
    cap = (2**31 - 1) // (fan_in * 128 * 128 + 2**20)
    return int(max(1, min(mult, cap)))


def isqrt(v: np.ndarray) -> np.ndarray:
    """Floor of the square root of non-negative integers."""
    v = np.asarray(v, np.int64)
    r = np.floor(np.sqrt(v.astype(np.float64))).astype(np.int64)
    r = np.where(r * r > v, r - 1, r)
    return np.where((r + 1) * (r + 1) <= v, r + 1, r)


def trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer division rounding toward zero (RISC-V ``div``/``vdiv``)."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def activation_table(fn) -> np.ndarray:
    """int8[256]: entry ``j`` is ``clip(round(32 * fn((j - 128) / 32)))``, indexed by ``x + 128``."""
    x = (np.arange(256) - 128) / LUT_INPUT_SCALE
    return np.clip(np.round(LUT_INPUT_SCALE * fn(x)), INT8_MIN, INT8_MAX).astype(np.int8)


def silu(x: np.ndarray) -> np.ndarray:
    return x / (1.0 + np.exp(-x))


def gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


def random_int8(rng: np.random.Generator, shape: tuple[int, ...] | int) -> np.ndarray:
    return rng.integers(INT8_MIN, INT8_MAX + 1, shape, dtype=np.int64).astype(np.int8)


def random_bias(rng: np.random.Generator, n: int, fan_in: int) -> np.ndarray:
    """int32 biases about as large as the accumulator's spread (so they matter but do not dominate)."""
    bound = int(INT8_STD * INT8_STD * math.sqrt(fan_in))
    return rng.integers(-bound, bound + 1, n).astype(np.int32)
