"""The RVV core's speed of light (see :mod:`kcgym.sims.sol`), from its config and timing model.

Timing facts used (machine.py): external memory is one channel; an access holds it for
``ceil(bytes / ext_bytes_per_cycle)`` (indexed and strided: per element) and its data arrives, or
its store completes, ``ext_latency`` later. The vector unit takes one cycle per 128-bit chunk of an
instruction's widest operand: VLENB int8 or VLENB / 4 int32 elements per cycle. Exact int8 dot
products need int32 accumulators (an int16 sum of int8 products overflows), so MACs run at
VLENB / 4 per cycle on the vector unit, plus at most one per two cycles on the scalar core (a
multiply and an add).
"""

from __future__ import annotations

from kcgym.sims.rvv.accelerator import tensor_dtype
from kcgym.sims.rvv.config import ELEN, VLENB, RVVConfig
from kcgym.sims.sol import SolBound, SolTerm, ceil_div
from kcgym.tasks.base import Task, TaskConfig

SCALAR_MACS_PER_CYCLE = 0.5  # a scalar MAC is a mul and an add, one instruction per cycle
# Tasks that produce every output element by a table lookup: (table name, lookups per output element).
TABLE_LOOKUPS = {"silu": ("T", 1), "gelu": ("T", 1), "softmax": ("E", 1)}
ELEMENTWISE_E8 = {"relu": 1}  # vector passes at int8 width per output element


def speed_of_light(task: Task, cfg: TaskConfig, hw: RVVConfig) -> SolBound:
    L, bw = hw.ext_latency, hw.ext_bytes_per_cycle
    tables = set(getattr(task, "tables", ()))

    # every input element must be read, but only one byte of it for sure: where the input domain allows, a
    # kernel may read only the low bytes of an int32 input (a bias); every output byte must be written
    b_in = sum(t.size for t in task.inputs(cfg) if t.name not in tables)
    b_out = sum(t.size * tensor_dtype(task, t.name).itemsize for t in task.outputs(cfg))
    t_in, t_out = ceil_div(b_in, bw), ceil_div(b_out, bw)
    # the first data arrives latency + 1 after the start (a one-cycle scalar load); a store completes latency
    # cycles after its (at least one-cycle) transfer
    entry, exit_ = L + 1, L + 1
    terms = [
        SolTerm(name="ext_traffic", physical=True, cycles=t_in + t_out + L,
                explanation=f"{b_in + b_out:,} bytes of inputs and outputs cross the one external-memory channel "
                            f"({bw} B/cycle; lookup tables left out), the last access completing {L} cycles later"),
        SolTerm(name="ext_latency_chain", physical=True, cycles=t_in + L + 1 + L,
                explanation="the last input arrives after all input transfers; an output that depends on it "
                            f"must then be stored ({L} cycles more)"),
    ]
    macs = task.macs(cfg)
    if macs:
        rate = VLENB * 8 / ELEN + SCALAR_MACS_PER_CYCLE
        terms.append(SolTerm(name="int32_macs", cycles=ceil_div(macs, rate) + entry + exit_,
                             explanation=f"{macs:,} int8 MACs need int32 accumulation: {VLENB * 8 // ELEN} per "
                                         f"cycle on the vector unit (e32) + {SCALAR_MACS_PER_CYCLE:g} on the scalar "
                                         "core"))
    n_out = sum(t.size for t in task.outputs(cfg))
    if task.name in TABLE_LOOKUPS:
        table, per = TABLE_LOOKUPS[task.name]
        width = task.tensors(cfg)  # the table's element width sets how many lookups fit a chunk
        size = next(tensor_dtype(task, t.name).itemsize for t in width if t.name == table)
        rate = VLENB // size
        terms.append(SolTerm(name="table_lookups", cycles=ceil_div(per * n_out, rate) + entry + exit_,
                             explanation=f"{per * n_out:,} lookups in the {size * 8}-bit table {table} "
                                         f"(gathers or permutes, at most {rate} per cycle)"))
    if task.name in ELEMENTWISE_E8:
        passes = ELEMENTWISE_E8[task.name]
        terms.append(SolTerm(name="vector_passes", cycles=ceil_div(passes * n_out, VLENB) + entry + exit_,
                             explanation=f"{passes} int8 vector op(s) per output element, {VLENB} per cycle"))
    return SolBound.of(terms)
