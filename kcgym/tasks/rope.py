"""RoPE (paper task 13): rotary position encoding of one head's queries or keys."""

from __future__ import annotations

import numpy as np

from kcgym.tasks import composite_math as cm
from kcgym.tasks.base import Task, TaskConfig
from kcgym.tasks.families import matmul_bf16, unit_activations
from kcgym.tasks.stress import outliers_in

# Positions start at a random offset below this (tokens appended after a KV cache): from position 0
# the slow frequencies barely rotate and a copy of X would match a fifth of Y.
MAX_START = 4096


class RoPE(Task):
    formula = "Y = X * cos + rotate_half(X) * sin,  rotate_half(X) = X @ P = concat(-X[:, d/2:], X[:, :d/2])"
    description = (
        "Rotary position encoding of X, shape (s, d_head), in the rotate-half (LLaMA/NeoX) convention: "
        "Y = X * cos + rotate_half(X) * sin with the bf16 tables cos, sin (s, d_head) given as inputs "
        "(base 10000) for positions p0 .. p0 + s - 1, p0 random below 4096. The NPU has no lane "
        "permute, so the signed permutation P (d_head x d_head) with "
        "X @ P = rotate_half(X) is given too (one matrix product, exact in bf16). The reference rounds "
        "X * cos and rotate_half(X) * sin to bf16, then their sum, as three vector ops do."
    )

    stress_sets = (outliers_in("X"),)

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        s, d = cfg["s"], cfg["d"]
        cos, sin = cm.rope_tables(s, d, start=int(rng.integers(MAX_START)))
        return {"X": unit_activations(rng, (s, d)), "cos": cos, "sin": sin, "P": cm.rotate_half_matrix(d)}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        x = inputs["X"]
        rotated = matmul_bf16(x, inputs["P"])
        return {"Y": cm.add(cm.mul(x, inputs["cos"]), cm.mul(rotated, inputs["sin"]))}

    def macs(self, cfg: TaskConfig) -> int:
        """The two elementwise products per element; the permutation is data movement, not arithmetic."""
        return 2 * cfg["s"] * cfg["d"]
