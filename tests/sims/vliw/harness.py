"""Run raw VLIW programs on the machine directly (no task), for unit tests."""

from __future__ import annotations

import numpy as np

from kcgym.sims.vliw import machine as M
from kcgym.sims.vliw.accelerator import ACCELERATOR, EXT_BUCKET
from kcgym.sims.vliw.config import VLIWConfig


def run(src: str, ext: np.ndarray | None = None, hw: VLIWConfig | None = None, max_steps: int = 100_000):
    """Assemble and run ``src`` on one EXT image; returns (state of that input set as numpy, program)."""
    hw = hw or VLIWConfig()
    prog = ACCELERATOR.assemble(src, hw)
    e = np.zeros(4096, np.float32) if ext is None else np.asarray(ext, np.float32)
    padded = np.full((1, M.bucket(e.size, EXT_BUCKET)), np.nan, np.float32)
    padded[0, : e.size] = e
    st = ACCELERATOR.execute(prog, padded, e.size, hw, max_steps)
    return M.State(*[np.asarray(x)[0] for x in st]), prog


def fault_name(st) -> str:
    return M.FAULT_NAMES[int(st.ctl[M.FAULT])]
