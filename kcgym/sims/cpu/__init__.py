"""The CPU machine (a BOOM-like out-of-order RV32IM + Zicsr core). ``ACCELERATOR`` is its registry entry."""

from kcgym.sims.cpu.accelerator import ACCELERATOR, CPUAccelerator
from kcgym.sims.cpu.config import CPUConfig

__all__ = ["ACCELERATOR", "CPUAccelerator", "CPUConfig"]
