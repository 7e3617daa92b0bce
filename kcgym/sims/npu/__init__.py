"""The NPU accelerator (modelled on PLENA). ``ACCELERATOR`` is its registry entry."""

from kcgym.sims.npu.accelerator import ACCELERATOR, NPUAccelerator
from kcgym.sims.npu.config import NPUConfig

__all__ = ["ACCELERATOR", "NPUAccelerator", "NPUConfig"]
