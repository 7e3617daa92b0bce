"""The int8 task family: shapes, dtypes, exactness and outputs that a trivial kernel cannot fake."""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.registry import task_for
from kcgym.tasks import manifest, tasks_for
from kcgym.tasks.int8 import quant as Q

TASKS = tasks_for("int8")
CASES = [(name, i) for name in TASKS for i in range(1, 6)]


def test_the_family_is_the_papers_coral_set_and_resolves_for_rvv():
    assert list(TASKS) == list(manifest.tasks_on("RVV"))  # the manifest's int8 variants, in its order
    paper = [e for e in manifest.MANIFEST if e.paper_id is not None]
    # the paper's 15 Coral tasks: every primitive (Table 4's level 1), FFN, SwiGLU and ConvBlock
    assert len(TASKS) == 15 and {e.name for e in paper if e.level == 1} | {"ffn", "swiglu", "conv_block"} == set(TASKS)
    assert task_for("RVV", "matmul") is TASKS["matmul"] and task_for("NPU", "matmul") is not TASKS["matmul"]


@pytest.mark.parametrize(("name", "index"), CASES)
def test_inputs_and_reference_are_exact_int8(name, index):
    task = TASKS[name]
    cfg = task.config("RVV", index)
    assert task.tolerance.atol == 0 and task.tolerance.rtol == 0
    inputs = task.generate_inputs(cfg, np.random.default_rng(index))
    for spec in task.inputs(cfg):
        assert inputs[spec.name].shape == spec.shape and inputs[spec.name].dtype == task.dtype_of(spec.name)
    out = task.reference(cfg, inputs)
    again = task.reference(cfg, task.generate_inputs(cfg, np.random.default_rng(index)))
    for spec in task.outputs(cfg):
        y = out[spec.name]
        assert y.shape == spec.shape and y.dtype == np.int8
        np.testing.assert_array_equal(y, again[spec.name])
        assert len(np.unique(y)) >= 8, "outputs must not be (nearly) constant"


@pytest.mark.parametrize(("name", "index"), [(n, i) for n, i in CASES if "mult" in str(TASKS[n].constants(
    TASKS[n].config("RVV", i)))])
def test_requantisation_never_overflows_int32_for_extreme_inputs(name, index):
    task = TASKS[name]
    cfg = task.config("RVV", index)
    inputs = task.generate_inputs(cfg, np.random.default_rng(0))
    for k, v in inputs.items():
        if v.dtype == np.int8 and k not in task.tables:
            inputs[k] = np.full_like(v, -128)
    task.reference(cfg, inputs)  # requantize asserts |acc * mult| < 2^31


def test_rounding_shift_and_trunc_div_match_riscv():
    assert Q.rounding_shift(np.array([5, 6, -5, -6]), 2).tolist() == [1, 2, -1, -1]
    assert Q.trunc_div(np.array([7, -7, 7, -7]), np.array([2, 2, -2, -2])).tolist() == [3, -3, -3, 3]
    assert Q.isqrt(np.array([0, 1, 3, 4, 65025, 65535])).tolist() == [0, 1, 1, 2, 255, 255]
