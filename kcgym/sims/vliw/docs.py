"""VLIW documentation data: its assembler's error codes and the guide fields its config derives."""

from __future__ import annotations

from kcgym.isa.reference_docs import instruction_reference
from kcgym.sims.base import DocSection
from kcgym.sims.docs import machine_docs
from kcgym.sims.vliw.config import VLIWConfig
from kcgym.sims.vliw.isa import make_isa

VLIW_ERROR_CODES = {
    "E110": "loop end label does not follow the LOOP with a body of at least one bundle",
    "E111": "branch target past the end of the program",
    "E112": "DMA larger than DMA_MAX_BYTES",
    "E113": "loops not properly nested, or nested loops ending at the same label",
    "E114": "loops nested deeper than the hardware loop stack",
    "E115": "tiled DMA whose rowbytes is not a multiple of its strip width tbytes",
    "W001": "write to r0 (hardwired to zero)",
}


def vliw_docs(hw: VLIWConfig) -> list[DocSection]:
    from kcgym.sims.vliw.accelerator import LAYOUT  # the accelerator imports these docs

    derived = dict(bank_bytes=hw.bank_bytes, peak_macs=hw.peak_macs_per_cycle, dma512=hw.dma_cycles(512),
                   layout_rule=LAYOUT.describe())
    return machine_docs("kcgym.sims.vliw", hw, derived, instruction_reference(make_isa(hw), hw, VLIW_ERROR_CODES))
