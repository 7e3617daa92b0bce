"""The NPU GEMM template at a small MLEN: more k-tiles than address registers (was an IndexError at MLEN=16)."""

from __future__ import annotations

import pytest

from kcgym.eval.sweep import invalid_reason
from kcgym.evaluation import Evaluator
from kcgym.registry import ACCELERATORS, task_for
from kcgym.sims.npu.compiler.primitives import X_TILE_REGS

NPU = ACCELERATORS["NPU"]


@pytest.mark.parametrize(("task_name", "index", "mlen"), [("matmul", 3, 16), ("linear", 1, 8)])
def test_more_k_tiles_than_registers_compile_to_a_correct_kernel(task_name, index, mlen):
    task = task_for("NPU", task_name)
    cfg = task.config("NPU", index)
    small = {"MLEN": mlen, "VLEN": mlen}
    hw = NPU.make_hw(small)
    K = cfg["K"] if task_name == "matmul" else cfg["hin"]
    assert len(X_TILE_REGS) < K // hw.MLEN  # the case the registers cannot hold
    assert invalid_reason(NPU, task, cfg, tuple(small.items())) is None  # a sweep plays this point
    source = NPU.compile(task, cfg, hw)
    ev = Evaluator(NPU, task, cfg, hw)
    rep = ev.evaluate(source, ev.input_sets(0, 1), with_baseline=False, max_steps=10_000_000)
    assert rep.correct and rep.fault is None, rep.fault
    assert f"{mlen}-column strips of W and Y" in source  # the comments follow MLEN


def test_a_matmul_that_does_not_fit_msram_is_a_clear_invalid_configuration():
    task = task_for("NPU", "matmul")
    cfg = task.config("NPU", 3)
    reason = invalid_reason(NPU, task, cfg, (("MLEN", 16), ("VLEN", 16), ("msram_tiles", 4)))
    assert reason == (f"the compiler cannot map matmul C3 to it: K={cfg['K']} needs {cfg['K'] // 16} MSRAM tiles; "
                      "this NPU has 4")
