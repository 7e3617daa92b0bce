"""FFN and SwiGLU blocks on int8: two or three requantised matrix products with an activation between.

The paper's Table 14 gives no Coral shapes for them; kcgym uses (tokens T, model width d,
hidden width f) = (4, 32, 64), (8, 32, 64), (8, 64, 64), (16, 64, 64), (16, 64, 128): each
matrix product is no larger than the paper's GEMM C5 (32 x 64 x 128).
"""

from __future__ import annotations

import numpy as np

from kcgym.tasks.base import TaskConfig
from kcgym.tasks.int8 import quant as Q
from kcgym.tasks.int8.base import Int8Task
from kcgym.tasks.int8.stress import extremes_in

MLP_CONFIGS = ({"T": 4, "d": 32, "f": 64}, {"T": 8, "d": 32, "f": 64}, {"T": 8, "d": 64, "f": 64},
               {"T": 16, "d": 64, "f": 64}, {"T": 16, "d": 64, "f": 128})
GATE_SHIFT = 6  # SwiGLU: h = clip(rounding_shift(g * u, 6)) keeps the product in int8 range


class FFNInt8(Int8Task):
    formula = "Y = requant2(relu(requant1(X @ W1 + b1)) @ W2 + b2)"
    description = ("Feed-forward block: H = max(requant(X @ W1 + b1, mult1), 0) of shape (T, f), then Y = "
                   "requant(H @ W2 + b2, mult2). X (T, d), W1 (d, f), W2 (f, d) int8 row-major; b1 (f,), b2 (d,) "
                   "int32; requant(acc, m) = clip(((acc * m + 32768) >> 16) + zero_point, -128, 127). H is not an "
                   "output: keep it where you like (the DTCM is a good place). Exact.")
    stress_sets = (extremes_in("X", "W1", "W2"),)

    def constants(self, cfg: TaskConfig) -> dict[str, float]:
        return {"mult1": Q.requant_multiplier(cfg["d"]), "mult2": Q.requant_multiplier(cfg["f"], Q.INT8_STD * 30),
                "shift": Q.REQUANT_SHIFT, "zero_point": Q.REQUANT_ZERO_POINT}

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        t, d, f = cfg["T"], cfg["d"], cfg["f"]
        return {"X": Q.random_int8(rng, (t, d)), "W1": Q.random_int8(rng, (d, f)),
                "b1": Q.random_bias(rng, f, d), "W2": Q.random_int8(rng, (f, d)),
                "b2": Q.random_bias(rng, d, f)}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        c = self.constants(cfg)
        x = inputs["X"].astype(np.int64)
        h = np.maximum(Q.requantize(x @ inputs["W1"].astype(np.int64) + inputs["b1"], int(c["mult1"])), 0)
        y = Q.requantize(h.astype(np.int64) @ inputs["W2"].astype(np.int64) + inputs["b2"], int(c["mult2"]))
        return {"Y": y}

    def macs(self, cfg: TaskConfig) -> int:
        return 2 * cfg["T"] * cfg["d"] * cfg["f"]


class SwiGLUInt8(Int8Task):
    formula = "Y = requant_d(sat(rshift(S[requant_g(X Wg) + 128] * requant_u(X Wu), 6)) @ Wd)"
    description = ("Gated MLP: G = S[requant(X @ Wg, mult_g) + 128] (S: the int8 SiLU table, scale 1/32, supplied in "
                   "memory); U = requant(X @ Wu, mult_u); H = clip((G * U + 32) >> 6, -128, 127) of shape (T, f); "
                   "Y = requant(H @ Wd, mult_d). X (T, d), Wg and Wu (d, f), Wd (f, d) int8 row-major; "
                   "requant(acc, m) = clip(((acc * m + 32768) >> 16) + zero_point, -128, 127). H, G and U are not "
                   "outputs (the DTCM is a good place for them). Exact.")
    stress_sets = (extremes_in("X", "Wg", "Wu", "Wd"),)

    def constants(self, cfg: TaskConfig) -> dict[str, float]:
        return {"mult_g": Q.requant_multiplier(cfg["d"]), "mult_u": Q.requant_multiplier(cfg["d"]),
                "mult_d": Q.requant_multiplier(cfg["f"], Q.INT8_STD * 20), "shift": Q.REQUANT_SHIFT,
                "zero_point": Q.REQUANT_ZERO_POINT}

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        t, d, f = cfg["T"], cfg["d"], cfg["f"]
        return {"X": Q.random_int8(rng, (t, d)), "Wg": Q.random_int8(rng, (d, f)), "Wu": Q.random_int8(rng, (d, f)),
                "Wd": Q.random_int8(rng, (f, d)), "S": Q.activation_table(Q.silu)}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        c = self.constants(cfg)
        x = inputs["X"].astype(np.int64)
        g_idx = Q.requantize(x @ inputs["Wg"].astype(np.int64), int(c["mult_g"])).astype(np.int64) + 128
        g = inputs["S"].astype(np.int64)[g_idx]
        u = Q.requantize(x @ inputs["Wu"].astype(np.int64), int(c["mult_u"])).astype(np.int64)
        h = np.clip(Q.rounding_shift(g * u, GATE_SHIFT), -128, 127)
        return {"Y": Q.requantize(h @ inputs["Wd"].astype(np.int64), int(c["mult_d"]))}

    def macs(self, cfg: TaskConfig) -> int:
        return 3 * cfg["T"] * cfg["d"] * cfg["f"]
