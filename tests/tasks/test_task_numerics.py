"""bf16 rounding and random bf16 inputs."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from kcgym.tasks.numerics import is_bf16, random_bf16, round_bf16


def test_round_to_nearest_even() -> None:
    ulp = 2.0**-7  # spacing of bf16 in [1, 2)
    x = np.array(
        [1 + ulp / 2, 1 + 3 * ulp / 2, 1 + ulp / 4, 1 + 3 * ulp / 4, -(1 + ulp / 2)], dtype=np.float32
    )
    np.testing.assert_array_equal(round_bf16(x), [1.0, 1 + 2 * ulp, 1.0, 1 + ulp, -1.0])
    assert round_bf16(x).dtype == np.float32
    assert round_bf16(1.0 + ulp / 2 + 2.0**-30).dtype == np.float32  # scalars become 0-d arrays


def test_float64_is_rounded_once() -> None:
    # float32 would first round this to the tie 1 + 2**-8, then bf16 to even (1.0): wrong.
    x = 1 + 2.0**-8 + 2.0**-30
    assert float(np.float64(x).astype(np.float32).astype(ml_dtypes.bfloat16)) == 1.0
    assert float(round_bf16(np.float64(x))) == 1 + 2.0**-7
    assert float(round_bf16(-x)) == -(1 + 2.0**-7)


def test_float32_and_float64_paths_agree() -> None:
    rng = np.random.default_rng(0)
    for scale in (1.0, 1e-3, 1e30, 1e-38, 1e-40):  # normal, large, tiny and bf16-subnormal values
        x = (rng.standard_normal(100_000) * scale).astype(np.float32)
        np.testing.assert_array_equal(round_bf16(x), round_bf16(x.astype(np.float64)))
        np.testing.assert_array_equal(round_bf16(x), x.astype(ml_dtypes.bfloat16).astype(np.float32))


def test_special_values() -> None:
    bf16_max = float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, bf16_max, 3.5e38, 2.0**-133, 2.0**-134])
    got = round_bf16(x)
    np.testing.assert_array_equal(got[:4], [0.0, -0.0, np.inf, -np.inf])
    assert np.signbit(got[1])
    assert np.isnan(got[4])
    assert got[5] == bf16_max
    assert got[6] == np.inf
    assert got[7] == 2.0**-133  # the smallest bf16 subnormal
    assert got[8] == 0.0  # half of it ties to even: zero


def test_is_bf16() -> None:
    assert is_bf16(np.array([1.0, 1.0078125, np.nan, -np.inf], dtype=np.float32))
    assert not is_bf16(np.array([1.0, 1.001], dtype=np.float32))


def test_random_bf16() -> None:
    u = random_bf16(np.random.default_rng(1), (64, 32), low=-2.0, high=3.0)
    assert u.shape == (64, 32) and u.dtype == np.float32 and is_bf16(u)
    assert u.min() >= -2.0 and u.max() <= 3.0
    n = random_bf16(np.random.default_rng(1), 10_000, scale=2.0)
    assert n.shape == (10_000,) and is_bf16(n)
    assert n.std() == pytest.approx(2.0, rel=0.05)
    np.testing.assert_array_equal(n, random_bf16(np.random.default_rng(1), 10_000, scale=2.0))
    for bad in ({}, {"low": 0.0}, {"low": 0.0, "high": 1.0, "scale": 1.0}):
        with pytest.raises(ValueError):
            random_bf16(np.random.default_rng(1), 4, **bad)
