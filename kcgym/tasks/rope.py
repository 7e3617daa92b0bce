"""RoPE (paper task 13): rotary position encoding of one head's queries or keys."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from kcgym.tasks import composite_math as cm
from kcgym.tasks.base import Task, TaskConfig, TensorSpec
from kcgym.tasks.families import OUTLIER_DOMAIN, ConfigTable, matmul_bf16, unit_activations
from kcgym.tasks.stress import outliers_in

# Positions start at a random offset below this (tokens appended after a KV cache): from position 0
# the slow frequencies barely rotate and a copy of X would match a fifth of Y.
MAX_START = 4096


class RoPE(Task):
    name = "rope"
    title = "RoPE"
    level = 2
    category = "Encoding"
    formula = "Y = X * cos + rotate_half(X) * sin,  rotate_half(X) = X @ P = concat(-X[:, d/2:], X[:, :d/2])"
    description = (
        "Rotary position encoding of X, shape (s, d_head), in the rotate-half (LLaMA/NeoX) convention: "
        "Y = X * cos + rotate_half(X) * sin with the bf16 tables cos, sin (s, d_head) given as inputs "
        "(base 10000) for positions p0 .. p0 + s - 1, p0 random below 4096. The NPU has no lane "
        "permute, so the signed permutation P (d_head x d_head) with "
        "X @ P = rotate_half(X) is given too (one matrix product, exact in bf16). The reference rounds "
        "X * cos and rotate_half(X) * sin to bf16, then their sum, as three vector ops do."
    )
    configs_by_accelerator: ClassVar[ConfigTable] = {
        "NPU": tuple({"s": s, "d": d} for s, d in ((32, 64), (64, 128), (128, 64), (128, 128), (256, 128))),
        "VLIW": tuple({"s": s, "d": d} for s, d in ((8, 16), (16, 64), (32, 16), (64, 64), (128, 64))),
    }

    domain = {
        "X": OUTLIER_DOMAIN,
        "cos": "bf16 table cos(p * theta_i) for positions p0 .. p0 + s - 1, p0 uniform below 4096 (in [-1, 1])",
        "sin": "bf16 table sin(p * theta_i), as cos",
        "P": "the fixed signed permutation (entries 0, 1, -1)",
    }
    stress_sets = (outliers_in("X"),)

    def tensors(self, cfg: TaskConfig) -> list[TensorSpec]:
        s, d = cfg["s"], cfg["d"]
        return [
            TensorSpec("X", (s, d), "input", "one head's queries (or keys), one position per row"),
            TensorSpec("cos", (s, d), "input", "cos(p * theta_i), both halves of a row alike"),
            TensorSpec("sin", (s, d), "input", "sin(p * theta_i), both halves of a row alike"),
            TensorSpec("P", (d, d), "input", "signed permutation: X @ P = rotate_half(X)"),
            TensorSpec("Y", (s, d), "output", "Y = X * cos + rotate_half(X) * sin"),
        ]

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
