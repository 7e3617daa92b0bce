"""The composite tasks (levels 2 and 3) on the NPU: the scratch layout, the stage templates' checks,
program sizes, and the interpreter's several-steps-per-iteration loop. Their kernels' correctness, the
hack battery and the rest of every (task, config) are the conformance suite's (tests/conformance/).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from kcgym.sims.npu import ACCELERATOR
from kcgym.sims.npu import machine as M
from kcgym.sims.npu.compiler import SCRATCH, stages
from kcgym.sims.npu.compiler.emit import Asm
from kcgym.sims.npu.compiler.stages import View
from kcgym.sims.npu.config import NPUConfig
from kcgym.tasks import TASKS
from tests.sims.npu.harness import run

HW = ACCELERATOR.make_hw()
COMPOSITES = ("rope", "ffn", "swiglu", "sdpa", "flash_attention", "mha", "gqa", "mqa", "decoder_llama", "decoder_t5")


def test_every_composite_has_a_template_and_scratch():
    assert set(COMPOSITES) <= set(SCRATCH)
    assert {n for n, t in TASKS.items() if t.level >= 2 and n in SCRATCH} == set(COMPOSITES)


@pytest.mark.parametrize("name", COMPOSITES)
def test_scratch_follows_the_outputs_aligned_and_disjoint(name):
    task = TASKS[name]
    for index in (1, 5):
        cfg = task.config("NPU", index)
        regions = [r for r in ACCELERATOR.layout(task, cfg, HW).regions if r.space == "HBM"]
        roles = [r.role for r in regions]
        assert roles == sorted(roles, key=["input", "output", "scratch"].index)  # inputs, outputs, then scratch
        assert "scratch" in roles
        for a, b in zip(regions, regions[1:], strict=False):
            assert a.offset % 64 == 0 and a.offset + a.size <= b.offset
        # the roofline counts the task's own tensors only: an optimal kernel needs no scratch
        nbytes = 2 * sum(t.size for t in task.tensors(cfg))
        peak = HW.peak_macs_per_cycle + HW.VLEN / 2
        assert ACCELERATOR.roofline_cycles(task, cfg, HW) == math.floor(max(task.macs(cfg) / peak, nbytes / 64))


def test_level_one_layouts_have_only_the_agents_workspace():
    """Every layout has the one ``scratch`` region (kcgym/sims/layout.py); level-one templates carve nothing."""
    for name in ("matmul", "softmax", "gemv"):
        task = TASKS[name]
        cfg = task.config("NPU", 3)
        layout = ACCELERATOR.layout(task, cfg, HW)
        assert [r.name for r in layout.regions if r.role == "scratch"] == ["scratch"]
        assert ACCELERATOR.kernel_layout(task, cfg, HW) == layout


@pytest.mark.parametrize("name", COMPOSITES)
def test_compiler_programs_fit_instruction_memory(name):
    task = TASKS[name]
    for cfg in task.configs("NPU"):
        program = ACCELERATOR.assemble(ACCELERATOR.compile(task, cfg, HW), HW)
        assert 0 < program.length <= HW.imem_size
        assert not program.warnings


def test_gemm_stage_rejects_shapes_it_cannot_tile():
    asm = Asm("t")
    x, w, y = View(0, 4, 100, 100), View(0, 100, 64, 64), View(0, 4, 64, 64)
    with pytest.raises(ValueError, match="K % 64 == 0"):
        stages.gemm(asm, HW, x, w, y)
    with pytest.raises(ValueError, match="inner dimensions differ"):
        stages.gemm(asm, HW, View(0, 4, 128, 128), w, y)
    small = NPUConfig(msram_tiles=2)
    with pytest.raises(ValueError, match="needs 4 MSRAM tiles; this NPU has 2"):
        stages.gemm(asm, small, View(0, 4, 256, 256), View(0, 256, 64, 64), y)
    with pytest.raises(ValueError, match="narrower than MLEN needs pad_fill"):
        stages.gemm(asm, HW, View(0, 4, 64, 64), View(0, 64, 32, 32), View(0, 4, 32, 32))
    with pytest.raises(ValueError, match="contiguous"):
        stages.unary(asm, HW, "silu", View(0, 4, 64, 128), View(0, 4, 64, 64))
    with pytest.raises(ValueError, match="columns 64..127 outside"):
        View(0, 4, 64, 64).columns(64, 64)


@pytest.mark.parametrize("budget", [5, 6, 7])
def test_step_budget_is_exact_with_several_steps_per_iteration(budget):
    assert M.STEPS_PER_ITERATION >= 2  # what this test is about
    st, _ = run("C_LOOP_START gp1, 100\nS_ADDI_INT gp2, gp2, 1\nC_LOOP_END gp1\n", max_steps=budget)
    ctl = np.asarray(st.ctl)[0]
    assert ctl[M.STEPS] == budget and not ctl[M.HALTED]
    assert np.asarray(st.gp)[0][2] == budget // 2  # the body runs on steps 2, 4, 6, ...


@pytest.mark.parametrize("length", [3, 4])
def test_a_halt_mid_iteration_stops_the_clock(length):
    """A program ending on either step of an iteration: counts and cycles as if run one at a time."""
    src = "\n".join(["S_ADDI_INT gp2, gp2, 1"] * (length - 1) + ["C_HALT"]) + "\n"
    st, _ = run(src)
    ctl = np.asarray(st.ctl)[0]
    assert ctl[M.HALTED] and ctl[M.STEPS] == length and ctl[M.FAULT] == 0
    assert ctl[M.T_END] == length  # one scalar cycle each, nothing after the halt
    assert np.asarray(st.gp)[0][2] == length - 1
