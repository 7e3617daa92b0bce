"""NPU documentation: the hand-written programming guide plus the generated ISA reference."""

from __future__ import annotations

from kcgym.isa.reference_docs import instruction_reference
from kcgym.sims.base import DocSection
from kcgym.sims.guide import guide_sections as guide_sections_of
from kcgym.sims.npu.config import NPUConfig
from kcgym.sims.npu.isa import make_isa

NPU_ERROR_CODES = {
    "E101": "bad hardware-loop counter (gp0, or reused by an enclosing loop)",
    "E102": "C_LOOP_END does not match the innermost C_LOOP_START",
    "E103": "C_LOOP_START without C_LOOP_END",
    "W001": "write to a hardwired-zero register (gp0 / f0)",
    "W101": "loop body writes its own loop counter",
    "W102": "empty loop body",
}



def guide_sections(hw: NPUConfig) -> list[DocSection]:
    """Split guide.md at '## ' headings; ``{MLEN}``-style fields are filled from the config."""
    fields = {k: str(v) for k, v in hw.model_dump().items()}
    fields.update(vsram_size=str(hw.vsram_size), msram_size=str(hw.msram_size), msram_rows=str(hw.msram_rows),
                  peak=str(int(hw.peak_macs_per_cycle)), mv_occupancy=str(hw.mv_occupancy),
                  vdma=str(hw.dma_cycles(hw.v_prefetch_rows * hw.VLEN)), mdma=str(hw.dma_cycles(hw.MLEN * hw.MLEN)))
    return guide_sections_of("kcgym.sims.npu", fields)


def npu_docs(hw: NPUConfig) -> list[DocSection]:
    ref = instruction_reference(make_isa(hw), hw, NPU_ERROR_CODES)
    return [*guide_sections(hw), DocSection(id="isa", title="Instruction reference (generated)", text=ref)]
