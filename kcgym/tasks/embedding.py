"""Embedding lookup (a task of the paper's prose, level 1): gather the rows of a table by integer token ids.

The NPU has no path from data to an address (no indirect DMA; its gp registers take
immediates and INT SRAM, which only the scalar unit writes), so the ids live in HBM as exact
bf16 integers (V <= 256: every integer up to 256 is a bf16 value) and a kernel computes the
gather, e.g. as ``onehot(ids) @ table``, which is exact (one product ``1 * w`` per output).
The machine has no lane index either, so the positions 0 .. V-1 are given as a constant
input, as RoPE's permutation is.
"""

from __future__ import annotations

import numpy as np

from kcgym.tasks.base import StressSet, Task, TaskConfig
from kcgym.tasks.families import unit_activations


def repeated_id(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Every token takes one id of the default draw: all of Y is one row of the table."""
    return np.full_like(x, x[rng.integers(x.size)])


REPEATED_ID = StressSet("repeated_id", "every token has the same id: a kernel that assumes distinct ids (or sums "
                        "over tokens) fails", {"ids": repeated_id})


class Embedding(Task):
    formula = "Y[i, :] = table[ids[i], :]"
    description = (
        "Embedding lookup: Y[i, :] = table[ids[i], :] for n tokens, with table of shape (V, d) row-major, "
        "ids of shape (n,) holding integer token ids 0 .. V-1 stored as exact bf16 values, and Y of shape "
        "(n, d). The NPU cannot use a loaded value as an address, so compute the gather: for example as "
        "onehot(ids) @ table, with onehot[i, v] = max(0, 1 - |v - ids[i]|) built from the constant input "
        "positions = 0 .. V-1 (the machine has no lane index); every step is exact, and the reference is "
        "the exact gather."
    )
    stress_sets = (REPEATED_ID,)

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        n, v, d = cfg["n"], cfg["V"], cfg["d"]
        return {"table": unit_activations(rng, (v, d)), "ids": rng.integers(0, v, n).astype(np.float32),
                "positions": np.arange(v, dtype=np.float32)}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"Y": inputs["table"][inputs["ids"].astype(np.int64)]}
