"""NPU documentation data: its assembler's error codes and the guide fields its config derives."""

from __future__ import annotations

from kcgym.isa.reference_docs import instruction_reference
from kcgym.sims.base import DocSection
from kcgym.sims.docs import machine_docs
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


def npu_docs(hw: NPUConfig) -> list[DocSection]:
    from kcgym.sims.npu.accelerator import LAYOUT  # the accelerator imports these docs

    derived = dict(vsram_size=hw.vsram_size, msram_size=hw.msram_size, msram_rows=hw.msram_rows,
                   peak=int(hw.peak_macs_per_cycle), mv_occupancy=hw.mv_occupancy,
                   vdma=hw.dma_cycles(hw.v_prefetch_rows * hw.VLEN), mdma=hw.dma_cycles(hw.MLEN * hw.MLEN),
                   layout_rule=LAYOUT.describe())
    return machine_docs("kcgym.sims.npu", hw, derived, instruction_reference(make_isa(hw), hw, NPU_ERROR_CODES))
