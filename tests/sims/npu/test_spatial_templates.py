"""The spatial templates refuse shapes and machines they cannot lay out, with a message saying why."""

from __future__ import annotations

import pytest

from kcgym.sims.npu import ACCELERATOR
from kcgym.sims.npu.config import NPUConfig
from kcgym.tasks import TASKS
from kcgym.tasks.base import TaskConfig


def test_too_small_msram_for_one_output_strip_is_named():
    task = TASKS["conv2d"]
    with pytest.raises(ValueError, match="9 MSRAM tiles; this NPU has 8"):
        ACCELERATOR.compile(task, task.config("NPU", 2), NPUConfig(msram_tiles=8))


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("conv2d", {"H": 8, "cin": 32, "cout": 64, "k": 3}, "cin to be a multiple of VLEN"),
        ("conv_block", {"H": 6, "cin": 64, "cout": 64, "k": 3}, "multiple of BLEN"),
        ("depthwise_conv", {"H": 8, "c": 96, "k": 3}, "c to be a multiple of VLEN"),
        ("depthwise_conv", {"H": 8, "c": 64, "k": 2}, "odd kernel size"),
    ],
)
def test_unsupported_shapes_are_refused(name, params, message):
    with pytest.raises(ValueError, match=message):
        ACCELERATOR.compile(TASKS[name], TaskConfig(index=1, params=params), ACCELERATOR.make_hw())


def test_conv_block_template_composes_three_operators_through_hbm():
    task = TASKS["conv_block"]
    src = ACCELERATOR.compile(task, task.config("NPU", 1), ACCELERATOR.make_hw())
    assert src.index("operator 1") < src.index("operator 2") < src.index("operator 3")
    assert src.count("H_STORE_V") >= 3  # every operator writes its result back
