"""ReLU, SiLU and GELU on int8: ReLU exactly, the two smooth activations through a 256-entry table."""

from __future__ import annotations

import numpy as np

from kcgym.tasks.base import TaskConfig
from kcgym.tasks.int8 import quant as Q
from kcgym.tasks.int8.base import Int8Task
from kcgym.tasks.int8.stress import extremes_in


class ElementwiseInt8(Int8Task):
    stress_sets = (extremes_in("X"),)


class ReLUInt8(ElementwiseInt8):
    formula = "Y = max(X, 0)"
    description = "Elementwise Y[i] = max(X[i], 0) over n int8 elements (X, Y of shape (n,)); exact."

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"X": Q.random_int8(rng, cfg["n"])}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"Y": np.maximum(inputs["X"], 0).astype(np.int8)}


class TableActivation(ElementwiseInt8):
    """``Y[i] = T[X[i] + 128]``: the activation quantised with scale 1/32 on both sides, as a table."""


    @staticmethod
    def function(x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def table(self) -> np.ndarray:
        return Q.activation_table(self.function)

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"X": Q.random_int8(rng, cfg["n"]), "T": self.table()}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"Y": inputs["T"][inputs["X"].astype(np.int64) + 128].astype(np.int8)}


class SiLUInt8(TableActivation):
    formula = "Y = T[X + 128], T = round(32 * silu(j/32))"
    description = ("SiLU x * sigmoid(x) on n int8 elements with scale 1/32 (X in [-4, 4)), evaluated through the "
                   "256-entry int8 table T supplied in memory: Y[i] = T[X[i] + 128]. Exact.")
    function = staticmethod(Q.silu)


class GELUInt8(TableActivation):
    formula = "Y = T[X + 128], T = round(32 * gelu(j/32))"
    description = ("GELU (erf form) on n int8 elements with scale 1/32 (X in [-4, 4)), evaluated through the "
                   "256-entry int8 table T supplied in memory: Y[i] = T[X[i] + 128]. Exact.")
    function = staticmethod(Q.gelu)
