"""The pre-pass's executed-operations-per-class counts (``trace._class_counts``) against the per-class masked
sums it replaced, on random bundles, hostile class fields (outside ``CLASSES``) and large execution counts."""

import numpy as np
import pytest

from kcgym.sims.vliw import trace
from kcgym.sims.vliw.isa import CLASSES


def _reference(cls: np.ndarray, used: np.ndarray, ex: np.ndarray) -> np.ndarray:
    return np.array([int(((cls == k) & used).sum(axis=1) @ ex) for k in range(len(CLASSES))], np.int64)


@pytest.mark.parametrize("seed", range(6))
def test_class_counts_match_the_per_class_sums(seed):
    rng = np.random.default_rng(seed)
    n, s = int(rng.integers(0, 300)), int(rng.integers(1, 8))
    lo, hi = (-3, len(CLASSES) + 3) if seed % 2 else (0, len(CLASSES))
    cls = rng.integers(lo, hi, (n, s)).astype(np.int32)
    used = cls != CLASSES.index("NOP")
    ex = rng.integers(0, 1 << 40 if seed > 3 else 1000, n).astype(np.int64)
    got = trace._class_counts(cls, used, ex)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, _reference(cls, used, ex))
