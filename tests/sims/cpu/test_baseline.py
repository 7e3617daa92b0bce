"""The CPU baseline: committed GCC -O2 output that a fresh compile reproduces, correct on real RISC-V (QEMU).

The functional check runs each task's baseline kernel (stub + GCC output) under qemu-riscv32 with the
tensors at the RVV harness's external-memory addresses (the kernel takes them as arguments, so any
layout does), against the task's Python model, on default and stress inputs; it needs no CPU machine.
"""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.sims.cpu import compiler as C
from kcgym.tasks import manifest, tasks_for

TASKS = tasks_for(manifest.CPU_FAMILY)
RUNNING = [name for name, t in TASKS.items() if t.supports("CPU")]


def test_every_task_has_a_c_source_its_gcc_output_and_an_argument_row():
    assert set(C.TEMPLATES) == set(TASKS)
    for name in TASKS:
        assert C.c_source(name).exists() and "kernel:" in C.gcc_output(name), name
        assert "\tcall\tmemcpy" not in C.gcc_output(name) and "memset" not in C.gcc_output(name), name


@pytest.mark.skipif(not C.gcc_available(), reason=f"{C.GCC} not installed (apt-get install gcc-riscv64-unknown-elf)")
@pytest.mark.parametrize("name", sorted(C.TEMPLATES))
def test_committed_assembly_is_what_gcc_emits(name):
    assert C.code_lines(C.gcc_output(name)) == C.code_lines(C.run_gcc(name)), (
        f"{name}.s is stale: run scripts/regen_cpu_baseline.py")


def for_gnu_as(source: str) -> str:
    """The harness's prologue comes first, and GNU as wants ``.attribute arch`` before any instruction: drop it
    (it only names the ISA string, rv32im, which the harness's -march already covers)."""
    return "\n".join("# " + line if line.lstrip().startswith(".attribute") else line for line in source.splitlines())


def _qemu_outputs(task, cfg, inputs):
    from kcgym.sims.rvv.accelerator import ACCELERATOR as RVV
    from kcgym.sims.rvv.config import RVVConfig
    from kcgym.sims.rvv.qemu import run_qemu

    hw = RVVConfig()
    layout = RVV.layout(task, cfg, hw)
    state = run_qemu(for_gnu_as(C.compile_task(task, cfg, hw, layout)), RVV.ext_image(task, cfg, hw, inputs, layout),
                     hw)
    return {r.name: state.ext[r.offset: r.offset + r.extent].view(np.int32).reshape(r.shape)
            for r in layout.regions if r.role == "output"}


def _qemu_reason() -> str | None:
    from kcgym.sims.rvv.qemu import unavailable_reason

    return unavailable_reason()


@pytest.mark.parametrize(("name", "index"), [(n, i) for n in RUNNING for i in (1, 3, 5)])
def test_gcc_kernel_matches_the_reference_under_qemu(name, index):
    if (why := _qemu_reason()) is not None:
        pytest.skip(why)
    task = TASKS[name]
    cfg = task.config("CPU", index)
    sets = [task.generate_inputs(cfg, np.random.default_rng(index))]
    sets += [task.stress_inputs(cfg, np.random.default_rng(index), s) for s in task.stress_sets] if index == 1 else []
    for inputs in sets:
        got, want = _qemu_outputs(task, cfg, inputs), task.reference(cfg, inputs)
        for k in want:
            np.testing.assert_array_equal(got[k], want[k], err_msg=f"{name} {cfg.label} {k}")
