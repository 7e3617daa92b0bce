"""What is RVV-specific about its shipped kernels: unwritten outputs are poisoned per input set (an integer
machine has no NaN), and the experts' speedups over the compiler. Correctness, the hack battery,
determinism and batching of every (task, config) are the conformance suite's (tests/conformance/).
"""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.sims.rvv import ACCELERATOR
from kcgym.tasks import tasks_for
from tests.conformance.cells import CellId, cell

HW = ACCELERATOR.make_hw()
TASKS = tasks_for("int8")
EXPERT_TASKS = ("gemv", "matmul", "conv2d", "depthwise_conv")
MIN_SPEEDUP = 1.5  # every expert beats the compiler at least this much, at every config


def test_unwritten_outputs_are_poisoned_differently_for_different_inputs():
    task = TASKS["relu"]
    cfg = task.config("RVV", 1)
    a, b = (task.generate_inputs(cfg, np.random.default_rng(seed)) for seed in (1, 7))
    layout = ACCELERATOR.layout(task, cfg, HW)
    ia, ib = ACCELERATOR.ext_image(task, cfg, HW, a, layout), ACCELERATOR.ext_image(task, cfg, HW, b, layout)
    out = layout.region("Y").offset
    assert not np.array_equal(ia[out:], ib[out:])


@pytest.mark.parametrize(("name", "index"), [(n, i) for n in EXPERT_TASKS for i in range(1, 6)])
def test_expert_kernels_are_faster(name, index):
    rep = cell(CellId("RVV", name, index)).expert  # the conformance cell's report: its compiles are shared
    assert rep.correct, [(s.name, s.match_rate) for s in rep.sets if not s.correct]
    assert rep.speedup > MIN_SPEEDUP
