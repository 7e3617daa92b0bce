"""What is RVV-specific about its shipped kernels: unwritten outputs are poisoned per input set (an integer
machine has no NaN), and the experts' speedups over the compiler. Correctness, the hack battery,
determinism and batching of every (task, config) are the conformance suite's (tests/conformance/).
"""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.evaluation import Evaluator
from kcgym.sims.rvv import ACCELERATOR
from kcgym.sims.rvv.expert import EXPERTS
from kcgym.tasks import tasks_for
from kcgym.tasks.compare import compare_outputs

HW = ACCELERATOR.make_hw()
TASKS = tasks_for("int8")
EXPERT_TASKS = tuple(EXPERTS)
MIN_SPEEDUP = 1.5  # every expert beats the compiler at least this much, at every config
SEED = 20261130
NO_STEP_LIMIT = 2_000_000


def test_unwritten_outputs_are_poisoned_differently_for_different_inputs():
    task = TASKS["relu"]
    cfg = task.config("RVV", 1)
    a, b = (task.generate_inputs(cfg, np.random.default_rng(seed)) for seed in (1, 7))
    layout = ACCELERATOR.layout(task, cfg, HW)
    ia, ib = ACCELERATOR.ext_image(task, cfg, HW, a, layout), ACCELERATOR.ext_image(task, cfg, HW, b, layout)
    out = layout.region("Y").offset
    assert not np.array_equal(ia[out:], ib[out:])


@pytest.mark.parametrize(("name", "index"), [(n, i) for n in EXPERT_TASKS for i in range(1, 6)])
def test_expert_kernels_correct_and_faster(name, index):
    """One input set, simulated once per kernel (its timing depends on the data, so both see the same set)."""
    task = TASKS[name]
    cfg = task.config("RVV", index)
    inputs = Evaluator(ACCELERATOR, task, cfg, HW).input_sets(SEED, 1)

    def run(source: str):
        (res,) = ACCELERATOR.run(ACCELERATOR.assemble(source, HW), task, cfg, HW, inputs, NO_STEP_LIMIT)
        assert res.fault is None, res.fault.render()
        return res

    compiler, expert = run(ACCELERATOR.compile(task, cfg, HW)), run(ACCELERATOR.expert(task, cfg, HW))
    comps = compare_outputs(expert.outputs, task.reference(cfg, inputs[0]), task.tolerance)
    assert all(c.correct for c in comps)
    assert ACCELERATOR.roofline_cycles(task, cfg, HW) <= expert.cycles < compiler.cycles / MIN_SPEEDUP
