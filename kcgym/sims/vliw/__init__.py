"""The VLIW accelerator (modelled on an AMD AIE-ML tile). ``ACCELERATOR`` is its registry entry."""

from kcgym.sims.vliw.accelerator import ACCELERATOR, VLIWAccelerator
from kcgym.sims.vliw.config import VLIWConfig

__all__ = ["ACCELERATOR", "VLIWAccelerator", "VLIWConfig"]
