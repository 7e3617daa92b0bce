"""VLIW documentation: the hand-written programming guide plus the generated ISA reference."""

from __future__ import annotations

from kcgym.isa.reference_docs import instruction_reference
from kcgym.sims.base import DocSection
from kcgym.sims.guide import guide_sections as guide_sections_of
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



def guide_sections(hw: VLIWConfig) -> list[DocSection]:
    """Split guide.md at '## ' headings; ``{{field}}`` placeholders are filled from the config."""
    fields = {k: str(v) for k, v in hw.model_dump().items()}
    fields.update(bank_bytes=str(hw.bank_bytes), peak_macs=str(hw.peak_macs_per_cycle), dma512=str(hw.dma_cycles(512)))
    return guide_sections_of("kcgym.sims.vliw", fields)


def vliw_docs(hw: VLIWConfig) -> list[DocSection]:
    ref = instruction_reference(make_isa(hw), hw, VLIW_ERROR_CODES)
    return [*guide_sections(hw), DocSection(id="isa", title="Instruction reference (generated)", text=ref)]
