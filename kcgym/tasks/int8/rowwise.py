"""Softmax, LayerNorm and RMSNorm on int8 rows, defined exactly in integer arithmetic.

Rows have ``hidden = 64`` elements (X and Y of shape ``(n / 64, 64)``), each normalised on
its own. The definitions use only what RVV computes exactly: sums, shifts, a table lookup,
an integer square root (scalar code) and truncating division.
"""

from __future__ import annotations

import math

import numpy as np

from kcgym.tasks.base import TaskConfig
from kcgym.tasks.int8 import quant as Q
from kcgym.tasks.int8.base import Int8Task
from kcgym.tasks.int8.stress import FULL_RANGE_ROWS, OFFSET_ROWS

EXP_TABLE_SCALE = 32767  # E[d] = round(32767 * exp(-d / 16))
EXP_INPUT_SCALE = 16
NORM_OUTPUT_SCALE = 32  # normalised outputs carry 32 units per standard deviation


def _row_inputs(rng: np.random.Generator, shape: tuple[int, int], spread: tuple[float, float]) -> np.ndarray:
    """Rows with their own centre and spread, so per-row statistics differ."""
    rows, hidden = shape
    centre = rng.uniform(-60, 60, (rows, 1))
    scale = rng.uniform(*spread, (rows, 1))
    return np.clip(np.round(centre + scale * rng.uniform(-1.7, 1.7, (rows, hidden))), -128, 127).astype(np.int8)


def _log2(cfg: TaskConfig) -> int:
    return int(math.log2(cfg["hidden"]))


def _scaled_by_rms(v: np.ndarray, cfg: TaskConfig) -> np.ndarray:
    """``clip(trunc_div(32 v, isqrt(sum v^2 >> log2 hidden) + 1))`` per row: LayerNorm's and RMSNorm's last step."""
    s = Q.isqrt((v * v).sum(axis=1, keepdims=True) >> _log2(cfg))
    return np.clip(Q.trunc_div(NORM_OUTPUT_SCALE * v, s + 1), -128, 127).astype(np.int8)


class RowwiseInt8(Int8Task):
    stress_sets = (OFFSET_ROWS,)

    @staticmethod
    def shape(cfg: TaskConfig) -> tuple[int, int]:
        return cfg["n"] // cfg["hidden"], cfg["hidden"]

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"X": _row_inputs(rng, self.shape(cfg), (4.0, 40.0))}


class SoftmaxInt8(RowwiseInt8):
    formula = "Y = (E[max(X) - X] * 127) // sum(E[max(X) - X])"
    stress_sets = (FULL_RANGE_ROWS,)
    description = (
        "Row-wise softmax in integers. For each row r: m = max_i X[r, i]; d_i = m - X[r, i] (0..255); "
        "e_i = E[d_i] with the int32 table E[d] = round(32767 * exp(-d / 16)) supplied in memory; "
        "S = sum_i e_i; Y[r, i] = (e_i * 127) // S (unsigned floor division). Exact."
    )

    @staticmethod
    def exp_table() -> np.ndarray:
        return np.round(EXP_TABLE_SCALE * np.exp(-np.arange(256) / EXP_INPUT_SCALE)).astype(np.int32)

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"X": _row_inputs(rng, self.shape(cfg), (4.0, 30.0)), "E": self.exp_table()}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        x = inputs["X"].astype(np.int64)
        e = inputs["E"].astype(np.int64)[x.max(axis=1, keepdims=True) - x]
        return {"Y": (e * 127 // e.sum(axis=1, keepdims=True)).astype(np.int8)}


class LayerNormInt8(RowwiseInt8):
    formula = "c = X - (sum X >> 6); Y = clip(trunc(32 c / (isqrt(sum c^2 >> 6) + 1)))"
    description = (
        "Row-wise LayerNorm in integers (hidden = 64 = 2^6). For each row: mean = (sum_i X[i]) >> 6 (arithmetic "
        "shift, i.e. floor); c_i = X[i] - mean; var = (sum_i c_i^2) >> 6; s = isqrt(var) (floor of the square "
        "root, computed in scalar code); Y[i] = clip(trunc_div(32 * c_i, s + 1), -128, 127), where trunc_div "
        "rounds toward zero like div/vdiv. Exact."
    )

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        x = inputs["X"].astype(np.int64)
        return {"Y": _scaled_by_rms(x - (x.sum(axis=1, keepdims=True) >> _log2(cfg)), cfg)}


class RMSNormInt8(RowwiseInt8):
    formula = "Y = clip(trunc(32 X / (isqrt(sum X^2 >> 6) + 1)))"
    description = (
        "Row-wise RMSNorm in integers (hidden = 64 = 2^6). For each row: ms = (sum_i X[i]^2) >> 6; s = isqrt(ms) "
        "(floor of the square root, computed in scalar code); Y[i] = clip(trunc_div(32 * X[i], s + 1), -128, 127), "
        "where trunc_div rounds toward zero like div/vdiv. Exact."
    )

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"Y": _scaled_by_rms(inputs["X"].astype(np.int64), cfg)}
