"""XLA:CPU compile options for the simulators' step loops: the older (non-MLIR) fusion emitters.

A simulator's loop body is a few hundred small fused kernels per step, so what costs is each kernel's call
and the compile, not the arithmetic: with XLA:CPU's older emitters such a body compiles in about half the
time (the CPU machine's interpreter: the first simulate of a fresh process, most of it the compile) and its
kernels cost no more per call (the RVV data path's cost less). Only integer machines use them (the RVV data
path, the CPU interpreter), whose semantics are XLA's either way; the differential tests compare every bit.
"""

from __future__ import annotations

import functools

import jax
import numpy as np

OLDER_FUSION_EMITTERS = {"xla_cpu_use_fusion_emitters": False}


@functools.lru_cache(maxsize=1)
def older_fusion_emitters() -> dict:
    """:data:`OLDER_FUSION_EMITTERS` where this XLA knows them (an older or newer one may not: then none)."""
    try:
        jax.jit(lambda v: v + 1, compiler_options=OLDER_FUSION_EMITTERS).lower(np.int32(0)).compile()
    except Exception:  # "No such compile option": the defaults, which give the same results
        return {}
    return dict(OLDER_FUSION_EMITTERS)
