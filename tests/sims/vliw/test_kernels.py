"""What is VLIW-specific about its shipped kernels: the experts' speedups over the compiler (a timing-model
regression), the GEMM expert's one-buffer variant, vector-slot occupancy, and that every kernel fits the
instruction memory at every config. Correctness, the hack battery, determinism and batching of every
(task, config) are the conformance suite's (tests/conformance/).
"""

from __future__ import annotations

import pytest

from kcgym.evaluation import Evaluator
from kcgym.sims.vliw import ACCELERATOR
from kcgym.tasks import TASKS
from tests.conformance.cells import CellId, cell

HW = ACCELERATOR.make_hw()
HIDDEN_SEED = 20261130
NAMES = [name for name, t in TASKS.items() if ACCELERATOR.supports(t)]


EXPERT_CASES = [(n, i) for n in ("relu", "silu", "gelu", "softmax", "layernorm", "rmsnorm") for i in (1, 3, 5)]
EXPERT_CASES += [("matmul", 1), ("matmul", 2), ("linear", 1), ("linear", 2), ("batch_matmul", 1), ("gemv", 1),
                 ("gemv", 5), ("ffn", 1), ("ffn", 2), ("swiglu", 1), ("depthwise_conv", 1), ("depthwise_conv", 4),
                 ("conv2d", 1), ("conv_block", 1),
                 pytest.param("conv2d", 5, marks=pytest.mark.slow)]  # W streams per tap; its baseline takes minutes
# a little below the measured speedups over the -O2 compiler (README, benchmarks/results/vliw.jsonl), so a
# timing-model regression shows up. The elementwise experts lose to it by 1-3% at C1 (0.97x) and tie at C3.
MIN_SPEEDUP = {"matmul": 3.8, "linear": 3.7, "batch_matmul": 5.4, "gemv": 1.5, "ffn": 4.0, "swiglu": 4.1,
               "depthwise_conv": 1.0, "conv2d": 4.3, "conv_block": 4.2}
ELEMENTWISE_MIN_SPEEDUP = {1: 0.9, 3: 0.95, 5: 1.4}


@pytest.mark.parametrize("name, index", EXPERT_CASES)
def test_expert_kernels_correct_and_faster(name, index):
    rep = cell(CellId("VLIW", name, index)).expert  # the conformance cell's report: its compiles are shared
    assert rep.correct, rep.fault or rep.comparisons
    assert rep.cycles >= rep.roofline_cycles
    assert rep.speedup > (MIN_SPEEDUP[name] if name in MIN_SPEEDUP else ELEMENTWISE_MIN_SPEEDUP[index])


def test_the_gemm_expert_single_buffers_where_two_buffers_do_not_fit():
    """Linear C5 (K = 1024: one W slab is 32 KB) and a small DM take the one-buffer variant, still correct."""
    task = TASKS["linear"]
    assert "one buffer" in ACCELERATOR.expert(task, task.config("VLIW", 5), HW)
    small = ACCELERATOR.make_hw({"dm_bytes": 16384, "dma_max_bytes": 16384})
    ev = Evaluator(ACCELERATOR, TASKS["matmul"], TASKS["matmul"].config("VLIW", 2), small)
    src = ACCELERATOR.expert(ev.task, ev.cfg, small)
    assert "one buffer" in src
    rep = ev.evaluate(src, ev.input_sets(HIDDEN_SEED, 1))
    assert rep.correct and rep.speedup > 3.0  # 3.16x the -O2 compiler


@pytest.mark.parametrize("name, index", [("gelu", 5), ("matmul", 2)])
def test_an_expert_keeps_the_vector_slot_half_busy(name, index):
    rep = cell(CellId("VLIW", name, index)).expert
    assert rep.correct and rep.unit_busy["VECTOR"] / rep.cycles >= 0.5


@pytest.mark.parametrize("name", sorted(NAMES))
def test_every_shipped_kernel_assembles_at_every_config(name):
    """Cheap (no simulation): catches templates that break a static rule at a large config."""
    task = TASKS[name]
    for cfg in task.configs("VLIW"):
        for src in (ACCELERATOR.compile(task, cfg, HW), ACCELERATOR.expert(task, cfg, HW)):
            if src is not None:
                assert ACCELERATOR.assemble(src, HW).length <= HW.imem_bundles
