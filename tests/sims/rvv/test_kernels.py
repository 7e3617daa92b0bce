"""Every shipped RVV kernel on every task and config: the compiler, the experts, and the hack battery."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from kcgym.sims.rvv import ACCELERATOR
from kcgym.sims.rvv.expert import EXPERTS
from kcgym.tasks import tasks_for
from kcgym.tasks.compare import compare_outputs
from tests.sims.rvv.adversarial import copy_input_kernel, zeros_kernel

HW = ACCELERATOR.make_hw()
TASKS = tasks_for("int8")
HIDDEN_SEED = 20261130
CASES = [(name, i) for name in TASKS for i in range(1, 6)]
EXPERT_TASKS = tuple(EXPERTS)


def _setup(name: str, index: int, seed: int = HIDDEN_SEED):
    task = TASKS[name]
    cfg = task.config("RVV", index)
    return task, cfg, task.generate_inputs(cfg, np.random.default_rng(seed + index))


def _correct(task, cfg, inputs, result) -> bool:
    return all(c.correct for c in compare_outputs(result.outputs, task.reference(cfg, inputs), task.tolerance))


@functools.cache
def _compiler_run(name: str, index: int):
    """The compiler kernel on the hidden inputs (shared by the correctness and the expert tests)."""
    task, cfg, inputs = _setup(name, index)
    program = ACCELERATOR.assemble(ACCELERATOR.compile(task, cfg, HW), HW)
    (res,) = ACCELERATOR.run(program, task, cfg, HW, [inputs], 2_000_000)
    return res


@pytest.mark.parametrize(("name", "index"), CASES)
def test_compiler_kernel_is_correct_on_hidden_inputs(name, index):
    task, cfg, inputs = _setup(name, index)
    res = _compiler_run(name, index)
    assert res.fault is None, res.fault.render()
    assert _correct(task, cfg, inputs, res)
    assert res.cycles >= ACCELERATOR.roofline_cycles(task, cfg, HW)


@pytest.mark.parametrize(("name", "index"), CASES)
def test_hack_battery_fails(name, index):
    task, cfg, inputs = _setup(name, index)
    layout = ACCELERATOR.layout(task, cfg, HW)
    for kernel in (zeros_kernel(task, layout), copy_input_kernel(task, layout)):
        (res,) = ACCELERATOR.run(ACCELERATOR.assemble(kernel, HW), task, cfg, HW, [inputs], 200_000)
        assert res.fault is None, res.fault.render()
        assert not _correct(task, cfg, inputs, res)


@pytest.mark.parametrize("name", list(TASKS))
def test_half_written_output_fails(name):
    """A kernel stopped halfway leaves poisoned outputs that do not match."""
    task, cfg, inputs = _setup(name, 1)
    program = ACCELERATOR.assemble(ACCELERATOR.compile(task, cfg, HW), HW)
    (half,) = ACCELERATOR.run(program, task, cfg, HW, [inputs], _compiler_run(name, 1).instructions // 2)
    assert half.fault is not None and half.fault.name == "STEP_BUDGET"
    assert not _correct(task, cfg, inputs, half)


def test_unwritten_outputs_are_poisoned_differently_for_different_inputs():
    task, cfg, a = _setup("relu", 1)
    _, _, b = _setup("relu", 1, seed=7)
    layout = ACCELERATOR.layout(task, cfg, HW)
    ia, ib = ACCELERATOR.ext_image(task, cfg, HW, a, layout), ACCELERATOR.ext_image(task, cfg, HW, b, layout)
    out = layout.region("Y").offset
    assert not np.array_equal(ia[out:], ib[out:])


@pytest.mark.parametrize(("name", "index"), [(n, i) for n in EXPERT_TASKS for i in range(1, 6)])
def test_expert_kernels_correct_and_faster(name, index):
    task, cfg, inputs = _setup(name, index)
    expert = ACCELERATOR.assemble(ACCELERATOR.expert(task, cfg, HW), HW)
    (res,) = ACCELERATOR.run(expert, task, cfg, HW, [inputs], 2_000_000)
    ref = _compiler_run(name, index)
    assert res.fault is None, res.fault.render()
    assert _correct(task, cfg, inputs, res)
    assert ACCELERATOR.roofline_cycles(task, cfg, HW) <= res.cycles < ref.cycles / 1.5
