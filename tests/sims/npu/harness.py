"""Run raw NPU programs on the machine directly (no task), for unit tests."""

from __future__ import annotations

import jax
import numpy as np

from kcgym.sims.npu import machine as M
from kcgym.sims.npu import trace
from kcgym.sims.npu.accelerator import ACCELERATOR
from kcgym.sims.npu.config import NPUConfig


def run(src: str, hbm: np.ndarray | None = None, fpm: np.ndarray | None = None, hw: NPUConfig | None = None,
        max_steps: int = 100_000, batch: np.ndarray | None = None):
    """Assemble and run ``src``; returns (state of input set 0 as numpy, program)."""
    hw = hw or NPUConfig()
    prog = ACCELERATOR.assemble(src, hw)
    if batch is None:
        h = np.zeros(4096, np.float32) if hbm is None else np.asarray(hbm, np.float32)
        batch = h[None]
    f = np.zeros(hw.fpsram_size, np.float32) if fpm is None else np.asarray(fpm, np.float32)
    H = M.bucket(batch.shape[1], 4096)
    padded = np.full((batch.shape[0], H), np.nan, np.float32)
    padded[:, : batch.shape[1]] = batch
    machine, runner = trace.batched_runner(hw.model_dump_json())
    words = prog.padded(M.bucket(prog.length, 1024), machine.halt_row)
    st = jax.device_get(runner(words, padded, f, np.int32(batch.shape[1]), np.int32(max_steps)))
    return st, prog


def at(st, b: int = 0):
    """Slice input set ``b`` out of a batched state."""
    return type(st)(*[np.asarray(x)[b] for x in st])


def vsram(st, hw: NPUConfig | None = None) -> np.ndarray:
    hw = hw or NPUConfig()
    return np.asarray(st.vs)[0, : hw.vsram_rows].reshape(-1)
