"""Every shipped NPU kernel on every task and config: compiler, expert, and the hack battery."""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.evaluation import Evaluator
from kcgym.sims.npu import ACCELERATOR
from kcgym.tasks import TASKS
from kcgym.tasks.compare import compare_outputs
from tests.sims.npu.adversarial import copy_input_kernel, zeros_kernel
from tests.sims.npu.test_composites import COMPOSITES

HW = ACCELERATOR.make_hw()
HIDDEN_SEED = 20261129
# the composites' (expensive) kernels are checked in test_composites.py, one simulate per case
LEVEL_ONE = [name for name, t in TASKS.items() if ACCELERATOR.supports(t) and name not in COMPOSITES]
CASES = [(name, i) for name in LEVEL_ONE for i in range(1, 6)]


def _ev(name: str, index: int) -> Evaluator:
    task = TASKS[name]
    return Evaluator(ACCELERATOR, task, task.config("NPU", index), HW)


@pytest.mark.parametrize("name, index", CASES)
def test_compiler_kernel_is_correct_on_hidden_inputs(name, index):
    ev = _ev(name, index)
    base = ev.baseline()
    rep = ev.evaluate(base.source, ev.input_sets(HIDDEN_SEED, 2))
    assert rep.correct, rep.fault or rep.comparisons
    assert rep.speedup == 1.0
    assert rep.cycles >= rep.roofline_cycles and not rep.below_roofline


@pytest.mark.parametrize("name, index", CASES)
def test_hack_battery_fails(name, index):
    ev = _ev(name, index)
    layout = ACCELERATOR.layout(ev.task, ev.cfg, HW)
    inputs = ev.input_sets(HIDDEN_SEED, 1)
    for kernel in (zeros_kernel(layout, HW), copy_input_kernel(layout, HW)):
        rep = ev.evaluate(kernel, inputs, with_baseline=False)
        assert rep.assembled and rep.fault is None
        assert not rep.correct and rep.match_rate < 1.0


@pytest.mark.parametrize("name", sorted(LEVEL_ONE))
def test_half_written_output_fails(name):
    """A kernel stopped halfway leaves poisoned (NaN) outputs that can never match."""
    ev = _ev(name, 2)
    base = ev.baseline()
    program = ACCELERATOR.assemble(base.source, HW)
    inputs = ev.input_sets(HIDDEN_SEED, 1)
    (res,) = ACCELERATOR.run(program, ev.task, ev.cfg, HW, inputs, max_steps=base.instructions // 2)
    comps = compare_outputs(res.outputs, ev.task.reference(ev.cfg, inputs[0]), ev.task.tolerance)
    assert not all(c.correct for c in comps)
    assert any(c.n_nonfinite > 0 for c in comps)
    assert res.fault is not None and res.fault.name == "STEP_BUDGET"


@pytest.mark.parametrize("name, index", [(n, i) for n in ("matmul", "linear") for i in range(1, 6)])
def test_expert_kernels_correct_and_faster(name, index):
    ev = _ev(name, index)
    src = ACCELERATOR.expert(ev.task, ev.cfg, HW)
    rep = ev.evaluate(src, ev.input_sets(HIDDEN_SEED, 2))
    assert rep.correct
    assert rep.cycles >= rep.roofline_cycles
    if index >= 3:
        assert rep.speedup > 1.15


def test_vmap_over_inputs_equals_one_at_a_time():
    ev = _ev("linear", 2)
    program = ACCELERATOR.assemble(ACCELERATOR.expert(ev.task, ev.cfg, HW), HW)
    inputs = ev.input_sets(3, 3)
    together = ACCELERATOR.run(program, ev.task, ev.cfg, HW, inputs, 100_000)
    for inp, res in zip(inputs, together, strict=True):
        (alone,) = ACCELERATOR.run(program, ev.task, ev.cfg, HW, [inp], 100_000)
        assert alone.cycles == res.cycles and alone.instructions == res.instructions
        np.testing.assert_array_equal(alone.outputs["Y"], res.outputs["Y"])


def test_cycles_do_not_depend_on_data():
    ev = _ev("softmax", 3)
    program = ACCELERATOR.assemble(ev.baseline().source, HW)
    results = ACCELERATOR.run(program, ev.task, ev.cfg, HW, ev.input_sets(1, 2) + ev.input_sets(99, 1), 100_000)
    assert len({r.cycles for r in results}) == 1
