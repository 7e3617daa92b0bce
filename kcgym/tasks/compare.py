"""Output checking: tolerance match, match rate and per-row error statistics.

Correct means every element of every output matches (finite, within tolerance): one
wrong element fails the kernel, as in the paper's match_rate == 100% target.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kcgym.tasks.base import Tolerance


@dataclass
class OutputComparison:
    name: str
    shape: tuple[int, ...]
    n_elements: int
    n_match: int
    n_nonfinite: int
    max_abs_error: float
    mean_abs_error: float
    first_mismatch: tuple[int, ...] | None  # index of the first mismatching element
    # worst tolerance margin max |err| / (atol + rtol |expected|): <= 1 passes, 1 is one step from failing;
    # inf where an element is non-finite or an exact tolerance is missed
    max_margin: float = 0.0

    @property
    def match_rate(self) -> float:
        return self.n_match / self.n_elements if self.n_elements else 1.0

    @property
    def correct(self) -> bool:
        return self.n_match == self.n_elements


class _Errors:
    """What every check derives from one (actual, expected) pair, computed once: both as float64, the
    absolute errors, the tolerance bound per element and which actual elements are finite."""

    __slots__ = ("bound", "err", "finite")

    def __init__(self, actual: np.ndarray, expected: np.ndarray, tol: Tolerance):
        a = np.asarray(actual, dtype=np.float64)
        e = np.asarray(expected, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            self.err = np.abs(a - e)
        self.bound = tol.atol + tol.rtol * np.abs(e)
        self.finite = np.isfinite(a)

    def ok(self) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return (self.err <= self.bound) & self.finite

    def margin(self) -> float:
        if self.err.size == 0:
            return 0.0
        if not self.finite.all():
            return float("inf")
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(self.err == 0, 0.0, self.err / self.bound)  # err > 0 over a zero bound: inf
        return float(ratio.max())


def match_mask(actual: np.ndarray, expected: np.ndarray, tol: Tolerance) -> np.ndarray:
    return _Errors(actual, expected, tol).ok()


def tolerance_margin(actual: np.ndarray, expected: np.ndarray, tol: Tolerance) -> float:
    """``max |a - e| / (atol + rtol |e|)`` over the elements: how close the worst one is to failing.

    Below 1 every element is within tolerance (the match test itself is :func:`match_mask`); a
    non-finite element, or any error under an exact (zero) tolerance, gives inf; no error gives 0.
    """
    return _Errors(np.asarray(actual).reshape(np.shape(expected)), expected, tol).margin()


def compare_output(name: str, actual: np.ndarray, expected: np.ndarray, tol: Tolerance) -> OutputComparison:
    actual = np.asarray(actual).reshape(expected.shape)
    errors = _Errors(actual, expected, tol)
    ok, finite = errors.ok(), errors.finite
    n_match = int(np.count_nonzero(ok))
    all_finite = bool(finite.all())
    err_f = errors.err.ravel() if all_finite else errors.err[finite]  # the same elements, in the same order
    return OutputComparison(
        name=name,
        shape=tuple(expected.shape),
        n_elements=int(expected.size),
        n_match=n_match,
        n_nonfinite=0 if all_finite else int(finite.size - np.count_nonzero(finite)),
        max_abs_error=float(err_f.max()) if err_f.size else float("inf"),
        mean_abs_error=float(err_f.mean()) if err_f.size else float("inf"),
        first_mismatch=None if n_match == ok.size else tuple(int(i) for i in np.argwhere(~ok)[0]),
        max_margin=errors.margin(),
    )


def compare_outputs(
    actual: dict[str, np.ndarray], expected: dict[str, np.ndarray], tol: Tolerance
) -> list[OutputComparison]:
    return [compare_output(k, actual[k], v, tol) for k, v in expected.items()]


@dataclass
class RowStats:
    """One row of the memory-level diff shown by ``view_output``."""

    row: int
    n_match: int
    n: int
    max_abs_error: float
    actual_min: float
    actual_max: float
    expected_min: float
    expected_max: float
    n_nonfinite: int


def row_stats(actual: np.ndarray, expected: np.ndarray, tol: Tolerance) -> list[RowStats]:
    """Per-row statistics of a 2-D view (last axis = columns) of one output."""
    e2 = expected.reshape(-1, expected.shape[-1]) if expected.ndim > 1 else expected.reshape(1, -1)
    a2 = np.asarray(actual).reshape(e2.shape)
    ok = match_mask(a2, e2, tol)
    rows = []
    for i in range(e2.shape[0]):
        a, e = a2[i], e2[i]
        fin = np.isfinite(a)
        with np.errstate(invalid="ignore"):
            err = np.abs(a.astype(np.float64) - e)[fin]
        rows.append(
            RowStats(
                row=i,
                n_match=int(ok[i].sum()),
                n=int(e.size),
                max_abs_error=float(err.max()) if err.size else float("inf"),
                actual_min=float(a[fin].min()) if fin.any() else float("nan"),
                actual_max=float(a[fin].max()) if fin.any() else float("nan"),
                expected_min=float(e.min()),
                expected_max=float(e.max()),
                n_nonfinite=int((~fin).sum()),
            )
        )
    return rows
