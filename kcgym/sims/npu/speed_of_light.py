"""The NPU's speed of light (see :mod:`kcgym.sims.sol`), from its config and ISA cost table.

Timing facts used (machine.py): one DMA unit, in order; a DMA of n elements occupies it for
``hw.dma_cycles(n)`` and its data lands (or its store completes) ``hbm_latency`` after that; the
matrix unit does ``peak_macs_per_cycle`` MACs with fp32 accumulation; the vector unit runs one
VLEN row per instruction. A kernel's cycles end when its last DMA completes.
"""

from __future__ import annotations

from kcgym.sims.npu.config import NPUConfig
from kcgym.sims.npu.isa import make_isa
from kcgym.sims.sol import SolBound, SolTerm, ceil_div, elements, elementwise_passes, exact_macs, inexact_macs
from kcgym.tasks.base import Task, TaskConfig

SCALAR_MACS_PER_CYCLE = 0.5  # S_MUL_FP + S_ADD_FP: fp32, exact, one instruction per cycle


def speed_of_light(task: Task, cfg: TaskConfig, hw: NPUConfig) -> SolBound:
    isa = make_isa(hw)
    vec_occ = min(s.cost("occupancy", hw) for s in isa.instructions if s.unit == "VECTOR")
    L = hw.hbm_latency
    row_dma = hw.dma_cycles(hw.VLEN)  # the smallest DMA: one row
    n_in, n_out = elements(task.inputs(cfg)), elements(task.outputs(cfg))
    dma_in, dma_out = hw.dma_cycles(n_in), hw.dma_cycles(n_out)
    # work can start only once a first row has landed, and its result is out only after a store
    entry, exit_ = L + row_dma, L + row_dma
    terms = [
        SolTerm(name="hbm_traffic", physical=True, cycles=dma_in + dma_out + L,
                explanation=f"every input and output element crosses the one DMA unit "
                            f"({hw.hbm_bytes_per_cycle} B/cycle), and the last transfer completes {L} cycles "
                            "after it leaves the queue"),
        SolTerm(name="hbm_latency_chain", physical=True, cycles=dma_in + L + L + row_dma,
                explanation=f"the last input lands {L} cycles after all input DMA, and an output that depends "
                            f"on it must then be stored ({L} cycles more)"),
    ]
    macs = exact_macs(task, cfg)
    if macs:
        rate = hw.peak_macs_per_cycle + SCALAR_MACS_PER_CYCLE
        terms.append(SolTerm(name="matrix_macs", cycles=ceil_div(macs, rate) + entry + exit_,
                             explanation=f"{macs:,} MACs need fp32 accumulation: the matrix unit "
                                         f"({hw.peak_macs_per_cycle:g} MACs/cycle; the fp32 scalar unit adds "
                                         f"{SCALAR_MACS_PER_CYCLE:g}), between the first load and the last store"))
    loose = inexact_macs(task, cfg)
    if loose:
        rate = hw.peak_macs_per_cycle + hw.VLEN / 2  # the vector unit too: one multiply and one add per row
        terms.append(SolTerm(name="macs", cycles=ceil_div(loose, rate) + entry + exit_,
                             explanation=f"{loose:,} MACs on the matrix and vector units together "
                                         f"({rate:g} MACs/cycle)"))
    passes = elementwise_passes(task)
    if passes:
        rows = ceil_div(n_out, hw.VLEN)
        terms.append(SolTerm(name="vector_passes", cycles=passes * rows * vec_occ + entry + exit_,
                             explanation=f"{passes} vector op(s) per output row ({rows:,} rows of {hw.VLEN}) that no "
                                         "correct kernel can skip, between the first load and the last store"))
    return SolBound.of(terms)
