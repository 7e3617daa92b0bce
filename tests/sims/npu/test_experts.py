"""Every NPU expert kernel: correct on hidden inputs at all five configs, never below the roofline,
and as much faster than the compiler as when it was measured — a regression test of the timing model."""

from __future__ import annotations

import math

import pytest

from kcgym.evaluation import Evaluator
from kcgym.sims.npu import ACCELERATOR
from kcgym.sims.npu.expert import EXPERTS, expert_kernel
from kcgym.tasks import TASKS

HW = ACCELERATOR.make_hw()
HIDDEN_SEED = 424242  # two fresh input sets

# Geometric mean of the expert's speedup over the compiler across C1..C5, as measured by
# benchmarks/bench_npu_experts.py (cycles do not depend on the input values).
MEASURED_GEOMEAN = {
    "silu": 2.91,
    "relu": 3.36,
    "gelu": 2.46,
    "softmax": 2.93,
    "layernorm": 2.36,
    "rmsnorm": 2.57,
    "gemv": 1.90,
    "matmul": 1.34,
    "linear": 1.33,
    "conv2d": 1.16,
    "conv_block": 1.47,
    "depthwise_conv": 1.61,
    "rope": 1.99,
    "ffn": 1.63,
    "swiglu": 1.76,
    "sdpa": 2.29,
    "flash_attention": 2.29,
}
MARGIN = 0.03  # relative: a timing-model change that costs the experts more than 3% fails here
# the GEMMs' expert must beat the compiler by this much from C3 on, where its tiling pays
GEMM_MIN_SPEEDUP = {"matmul": 1.15, "linear": 1.15}


def test_every_expert_has_a_measured_speedup_and_levels_are_covered():
    assert set(MEASURED_GEOMEAN) == set(EXPERTS)
    assert {TASKS[name].level for name in EXPERTS} == {1, 2, 3}
    assert expert_kernel(TASKS["mha"], TASKS["mha"].config("NPU", 1), HW, None) is None  # type: ignore[arg-type]


@pytest.mark.parametrize("name", sorted(EXPERTS))
def test_expert_is_correct_bounded_and_keeps_its_speedup(name):
    task = TASKS[name]
    speedups = []
    for cfg in task.configs("NPU"):
        ev = Evaluator(ACCELERATOR, task, cfg, HW)
        rep = ev.evaluate(ACCELERATOR.expert(task, cfg, HW), ev.input_sets(HIDDEN_SEED, 2))
        assert rep.correct, (cfg.label, rep.fault, rep.match_rate)
        assert rep.cycles >= rep.roofline_cycles and not rep.below_roofline, cfg.label
        if cfg.index >= 3:
            assert rep.speedup > GEMM_MIN_SPEEDUP.get(name, 0.0), cfg.label
        speedups.append(rep.speedup)
    geomean = math.exp(sum(math.log(s) for s in speedups) / len(speedups))
    assert geomean >= MEASURED_GEOMEAN[name] * (1 - MARGIN), [round(s, 3) for s in speedups]


@pytest.mark.parametrize("name", sorted(EXPERTS))
def test_expert_on_a_machine_too_small_says_why(name):
    """On a machine with a quarter of the SRAM an expert either still emits a kernel or raises a ValueError
    naming the resource; never another exception."""
    small = HW.model_copy(update={"msram_tiles": 4, "vsram_rows": 256})
    task = TASKS[name]
    for cfg in task.configs("NPU"):
        try:
            src = ACCELERATOR.expert(task, cfg, small)
        except ValueError as e:
            assert any(word in str(e) for word in ("MSRAM", "VSRAM", "tiles", "DMA")), str(e)
        else:
            assert isinstance(src, str) and src.strip()
