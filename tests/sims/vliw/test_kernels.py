"""Shipped VLIW kernels on the tasks and configs: compiler, expert, and the hack battery.

The matrix products of the largest configs still run over a million bundles (the naive compiler
issues one VMMUL every two or three bundles), so the compiler check covers them up to the config
that stays fast and leaves the rest to ``-m slow`` and ``benchmarks/bench_vliw.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.evaluation import Evaluator
from kcgym.sims.vliw import ACCELERATOR
from kcgym.sims.vliw.accelerator import EXT_BUCKET
from kcgym.tasks import TASKS
from kcgym.tasks.compare import compare_outputs
from tests.sims.vliw.adversarial import copy_input_kernel, zeros_kernel

HW = ACCELERATOR.make_hw()
HIDDEN_SEED = 20261130
# task -> first config taking minutes
HEAVY = {"matmul": 5, "linear": 5, "batch_matmul": 3, "ffn": 5, "swiglu": 5, "mha": 5, "gqa": 5, "mqa": 5,
         "decoder_llama": 4, "decoder_t5": 4}
CASES = [(name, i) for name, t in TASKS.items() if ACCELERATOR.supports(t) for i in range(1, 6)]
FAST = [pytest.param(n, i, marks=pytest.mark.slow) if i >= HEAVY.get(n, 9) else (n, i) for n, i in CASES]

def _ext_fits_one_bucket(name: str, index: int) -> bool:
    task = TASKS[name]
    return ACCELERATOR.ext_size(ACCELERATOR.layout(task, task.config("VLIW", index), HW)) <= EXT_BUCKET


# larger EXT images compile the interpreter anew (a few seconds each), so they join the slow tier
BATTERY = [(n, i) if _ext_fits_one_bucket(n, i) else pytest.param(n, i, marks=pytest.mark.slow) for n, i in CASES]


def _ev(name: str, index: int) -> Evaluator:
    task = TASKS[name]
    return Evaluator(ACCELERATOR, task, task.config("VLIW", index), HW)


@pytest.mark.parametrize("name, index", FAST)
def test_compiler_kernel_is_correct_on_hidden_inputs(name, index):
    ev = _ev(name, index)
    base = ev.baseline()
    rep = ev.evaluate(base.source, ev.input_sets(HIDDEN_SEED, 2))
    assert rep.correct, rep.fault or rep.comparisons
    assert rep.speedup == 1.0
    assert rep.cycles >= rep.roofline_cycles and not rep.below_roofline


@pytest.mark.parametrize("name, index", BATTERY)
def test_hack_battery_fails(name, index):
    ev = _ev(name, index)
    layout = ACCELERATOR.layout(ev.task, ev.cfg, HW)
    inputs = ev.input_sets(HIDDEN_SEED, 1)
    for kernel in (zeros_kernel(layout, HW), copy_input_kernel(layout, HW)):
        rep = ev.evaluate(kernel, inputs, with_baseline=False)
        assert rep.assembled and rep.fault is None, rep.fault
        assert not rep.correct and rep.match_rate < 1.0


@pytest.mark.parametrize("name, index", FAST)
def test_half_written_output_fails(name, index):
    """A kernel stopped halfway leaves poisoned (NaN) outputs that can never match."""
    ev = _ev(name, index)
    base = ev.baseline()
    program = ACCELERATOR.assemble(base.source, HW)
    inputs = ev.input_sets(HIDDEN_SEED, 1)
    (res,) = ACCELERATOR.run(program, ev.task, ev.cfg, HW, inputs, max_steps=base.instructions // 2)
    comps = compare_outputs(res.outputs, ev.task.reference(ev.cfg, inputs[0]), ev.task.tolerance)
    assert not all(c.correct for c in comps)
    assert any(c.n_nonfinite > 0 for c in comps)
    assert res.fault is not None and res.fault.name == "STEP_BUDGET"


def test_vmap_over_inputs_equals_one_at_a_time():
    ev = _ev("linear", 1)
    program = ACCELERATOR.assemble(ev.baseline().source, HW)
    inputs = ev.input_sets(3, 2)
    together = ACCELERATOR.run(program, ev.task, ev.cfg, HW, inputs, 100_000)
    for inp, res in zip(inputs, together, strict=True):
        (alone,) = ACCELERATOR.run(program, ev.task, ev.cfg, HW, [inp], 100_000)
        assert alone.cycles == res.cycles and alone.instructions == res.instructions
        np.testing.assert_array_equal(alone.outputs["Y"], res.outputs["Y"])
    assert not np.array_equal(together[0].outputs["Y"], together[1].outputs["Y"])


EXPERT_CASES = [(n, i) for n in ("relu", "silu", "gelu", "softmax", "layernorm", "rmsnorm") for i in (1, 3, 5)]
EXPERT_CASES += [("matmul", 1), ("matmul", 2), ("linear", 1), ("linear", 2), ("batch_matmul", 1), ("gemv", 1),
                 ("gemv", 5), ("ffn", 1), ("ffn", 2), ("swiglu", 1), ("depthwise_conv", 1), ("depthwise_conv", 4),
                 ("conv2d", 1), ("conv_block", 1),
                 pytest.param("conv2d", 5, marks=pytest.mark.slow)]  # W streams per tap; its baseline takes minutes
# a little below the measured speedups (README), so a timing-model regression shows up
MIN_SPEEDUP = {"matmul": 5.0, "linear": 5.0, "batch_matmul": 7.0, "gemv": 4.0, "ffn": 5.5, "swiglu": 5.5,
               "depthwise_conv": 4.5, "conv2d": 6.0, "conv_block": 6.0}


@pytest.mark.parametrize("name, index", EXPERT_CASES)
def test_expert_kernels_correct_and_faster(name, index):
    ev = _ev(name, index)
    src = ACCELERATOR.expert(ev.task, ev.cfg, HW)
    rep = ev.evaluate(src, ev.input_sets(HIDDEN_SEED, 2))
    assert rep.correct, rep.fault or rep.comparisons
    assert rep.cycles >= rep.roofline_cycles
    assert rep.speedup > (MIN_SPEEDUP[name] if name in MIN_SPEEDUP else {1: 1.2, 3: 1.5, 5: 2.5}[index])


def test_the_gemm_expert_single_buffers_where_two_buffers_do_not_fit():
    """Linear C5 (K = 1024: one W slab is 32 KB) and a small DM take the one-buffer variant, still correct."""
    task = TASKS["linear"]
    assert "one buffer" in ACCELERATOR.expert(task, task.config("VLIW", 5), HW)
    small = ACCELERATOR.make_hw({"dm_bytes": 16384, "dma_max_bytes": 16384})
    ev = Evaluator(ACCELERATOR, TASKS["matmul"], TASKS["matmul"].config("VLIW", 2), small)
    src = ACCELERATOR.expert(ev.task, ev.cfg, small)
    assert "one buffer" in src
    rep = ev.evaluate(src, ev.input_sets(HIDDEN_SEED, 1))
    assert rep.correct and rep.speedup > 4.0


@pytest.mark.parametrize("name, index", [("gelu", 5), ("matmul", 2)])
def test_an_expert_keeps_the_vector_slot_half_busy(name, index):
    ev = _ev(name, index)
    rep = ev.evaluate(ACCELERATOR.expert(ev.task, ev.cfg, HW), ev.input_sets(HIDDEN_SEED, 1))
    assert rep.correct and rep.unit_busy["VECTOR"] / rep.cycles >= 0.5


@pytest.mark.parametrize("name", sorted({n for n, _ in CASES}))
def test_every_shipped_kernel_assembles_at_every_config(name):
    """Cheap (no simulation): catches templates that break a static rule at a large config."""
    task = TASKS[name]
    for cfg in task.configs("VLIW"):
        for src in (ACCELERATOR.compile(task, cfg, HW), ACCELERATOR.expert(task, cfg, HW)):
            if src is not None:
                assert ACCELERATOR.assemble(src, HW).length <= HW.imem_bundles
