"""The RVV baseline is clang-14 -O2 output of C kernels: committed, regenerable, and what the compiler returns."""

from __future__ import annotations

import os

import numpy as np
import pytest

from kcgym.sims.rvv import ACCELERATOR
from kcgym.sims.rvv import clang_baseline as CB
from kcgym.sims.rvv.assembler import assemble
from kcgym.sims.rvv.config import DTCM_BASE
from kcgym.tasks import tasks_for

TASKS = tasks_for("int8")
HW = ACCELERATOR.make_hw()


def test_every_rvv_task_has_a_c_kernel_and_every_c_file_serves_one():
    rvv = sorted(n for n, t in TASKS.items() if ACCELERATOR.supports(t))
    assert sorted(CB.KERNELS) == rvv
    used = {CB.KERNELS[n](*_operands(n))[0] for n in rvv}
    assert used == set(CB.stems())
    for stem in CB.stems():
        assert (CB.BASELINE_DIR / f"{stem}.s").exists()


def _operands(name: str):
    from kcgym.sims.rvv.compiler import kernel_operands

    task = TASKS[name]
    cfg = task.config("RVV", 1)
    return kernel_operands(task, cfg, ACCELERATOR.kernel_layout(task, cfg, HW))


@pytest.mark.skipif(CB.clang_unavailable() is not None and os.environ.get("KCGYM_REQUIRE_CLANG") != "1",
                    reason=str(CB.clang_unavailable()))
@pytest.mark.parametrize("stem", CB.stems())
def test_committed_assembly_is_what_clang_14_emits(stem):
    """scripts/regen_rvv_baseline.py reproduces every committed .s (clang's .ident build string aside)."""
    assert CB.without_ident(CB.compile_c(stem)) == CB.without_ident(CB.assembly(stem)), \
        f"{stem}.s is stale: run python scripts/regen_rvv_baseline.py"


@pytest.mark.parametrize("name", sorted(CB.KERNELS))
def test_the_compiler_returns_clangs_code_after_a_stub(name):
    task = TASKS[name]
    cfg = task.config("RVV", 1)
    source = ACCELERATOR.compile(task, cfg, HW)
    stem = CB.KERNELS[name](*_operands(name))[0]
    assert source.endswith(CB.assembly(stem))  # clang's output exactly as committed
    program = assemble(source, HW)
    assert program.symbols["kcgym_stub"] == 0 and "kernel" in program.symbols


def test_stub_passes_blocks_and_scratch_by_address():
    source = CB.stub([5, CB.Block((7, -1)), CB.Scratch(40), 0x20000000]) + ".text\nkernel: ret\n"
    p = assemble(source)
    assert p.symbols["kcgym_args1"] == DTCM_BASE and p.data[:8] == np.array([7, -1], "<i4").tobytes()
    assert p.symbols["kcgym_scratch2"] == DTCM_BASE + 16 and len(p.data) == 16 + 40  # .bss after .rodata, aligned
    with pytest.raises(ValueError, match="at most 8"):
        CB.stub(list(range(9)))
