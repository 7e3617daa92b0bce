"""The RVV accelerator (a Coral-NPU-like RV32IM + Zve32x core). ``ACCELERATOR`` is its registry entry."""

from kcgym.sims.rvv.accelerator import ACCELERATOR, RVVAccelerator
from kcgym.sims.rvv.config import RVVConfig

__all__ = ["ACCELERATOR", "RVVAccelerator", "RVVConfig"]
