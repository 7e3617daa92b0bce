"""The VLIW tile's speed of light (see :mod:`kcgym.sims.sol`), from its config and slot table.

Timing facts used (machine.py): two DMA engines (in, out), each in issue order, a DMA of b bytes
taking ``dma_latency + ceil(b / dma_bytes_per_cycle)``; the run ends when every DMA has finished.
Tensor data reaches registers only through the LD slots (one 64-byte vector each) and leaves
through the ST slot; all arithmetic is in the one VEC slot, whose VMMUL does MMUL_MACS MACs
with fp32 accumulation per bundle and whose elementwise ops cover LANES elements.
"""

from __future__ import annotations

from kcgym.sims.sol import SolBound, SolTerm, ceil_div, elements, elementwise_passes, exact_macs, inexact_macs
from kcgym.sims.vliw.config import LANES, MMUL_MACS, VECTOR_BYTES, VLIWConfig
from kcgym.sims.vliw.isa import SLOTS
from kcgym.tasks.base import Task, TaskConfig


def speed_of_light(task: Task, cfg: TaskConfig, hw: VLIWConfig) -> SolBound:
    L = hw.dma_latency
    b_in, b_out = 2 * elements(task.inputs(cfg)), 2 * elements(task.outputs(cfg))
    dma_in, dma_out = hw.dma_cycles(b_in), hw.dma_cycles(b_out)
    entry = L + 1 + hw.load_latency  # the first input DMA lands, then a vector load reads it
    exit_ = L + 1  # the last result leaves by one output DMA
    # n ops of one slot issue over n bundles: the last one issues n - 1 bundles after the first
    span = entry + exit_ - 1
    terms = [
        SolTerm(name="dma_in", physical=True, cycles=dma_in + L,
                explanation=f"{b_in:,} input bytes cross the in-engine ({hw.dma_bytes_per_cycle} B/cycle), the last "
                            f"DMA finishing {L} cycles after it starts moving"),
        SolTerm(name="dma_out", physical=True, cycles=L + 1 + dma_out + L,
                explanation=f"{b_out:,} output bytes cross the out-engine, after the first input has landed"),
        SolTerm(name="dma_latency_chain", physical=True, cycles=dma_in + L + hw.load_latency + exit_,
                explanation="the last input lands after all input DMA; a vector load reads it and an output "
                            "that depends on it leaves by one more DMA"),
        SolTerm(name="ld_slots", physical=True,
                cycles=ceil_div(b_in, SLOTS["LD"] * VECTOR_BYTES) + span,
                explanation=f"every input byte enters registers through the {SLOTS['LD']} LD slots "
                            f"({VECTOR_BYTES} B each per bundle)"),
        SolTerm(name="st_slot", physical=True, cycles=ceil_div(b_out, SLOTS["ST"] * VECTOR_BYTES) + span,
                explanation=f"every output byte leaves registers through the ST slot ({VECTOR_BYTES} B per bundle)"),
    ]
    macs, loose = exact_macs(task, cfg), inexact_macs(task, cfg)
    passes = elementwise_passes(task)
    vec_ops = ceil_div(macs + loose, MMUL_MACS) + passes * ceil_div(elements(task.outputs(cfg)), LANES)
    if vec_ops:
        what = []
        if macs + loose:
            what.append(f"{macs + loose:,} MACs at {MMUL_MACS}/bundle (VMMUL, fp32 accumulators)")
        if passes:
            what.append(f"{passes} pass(es) of {LANES} lanes per output vector")
        terms.append(SolTerm(name="vec_slot", cycles=vec_ops + span,
                             explanation="the one VEC slot does all arithmetic: " + " + ".join(what)))
    return SolBound.of(terms)
