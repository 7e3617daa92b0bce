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


MACHINE_MODE = ("pmp",)  # writes machine CSRs and traps: QEMU's user mode cannot run it (tests/sims/cpu/test_pmp.py)


@pytest.mark.parametrize(("name", "index"), [(n, i) for n in RUNNING if n not in MACHINE_MODE for i in (1, 3, 5)])
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


# ---- through the CPU machine: the baseline scores 1.0 at every config, the experts beat it ------------------
HIDDEN_SEED = 17
FAST = [(n, 1) for n in RUNNING]
EVERY = [pytest.param(n, i, marks=pytest.mark.slow) for n in RUNNING for i in range(2, 6)]
EXPERT_TASKS = ["multiply", "vvadd", "copy", "median", "dotprod", "towers", "rsort", "qsort"]


def _evaluator(name, index):
    from kcgym.evaluation import Evaluator
    from kcgym.registry import ACCELERATORS

    acc = ACCELERATORS["CPU"]
    task = TASKS[name]
    return acc, Evaluator(acc, task, task.config("CPU", index), acc.make_hw(None))


@pytest.mark.parametrize(("name", "index"), FAST + EVERY)
def test_gcc_kernel_is_correct_on_the_hidden_sets_within_its_step_budget(name, index):
    """Default and stress sets alike, under the step budget the baseline's own default run sets."""
    _, ev = _evaluator(name, index)
    inputs, names = ev.hidden_input_sets(HIDDEN_SEED, 2)
    rep = ev.evaluate(ev.baseline().source, inputs, set_names=names)
    assert rep.correct and rep.fault is None, (name, index, rep.fault and rep.fault.render())
    assert rep.speedup is not None and 0.9 < rep.speedup < 1.1 and not rep.below_roofline and not rep.beats_sol


@pytest.mark.parametrize(("name", "index"), [(n, i) for n in EXPERT_TASKS for i in (1, 3)])
def test_expert_is_correct_and_faster_than_gcc(name, index):
    acc, ev = _evaluator(name, index)
    source = acc.expert(ev.task, ev.cfg, ev.hw)
    if source is None:  # an expert may leave a config to the baseline (qsort's radix sort below 128 keys)
        assert (name, index) == ("qsort", 1)
        return
    inputs, names = ev.hidden_input_sets(HIDDEN_SEED, 2)
    rep = ev.evaluate(source, inputs, set_names=names)
    assert rep.correct, (name, index, rep.fault and rep.fault.render())
    assert rep.cycles < ev.baseline().cycles and rep.cycles >= ev.speed_of_light().cycles


@pytest.mark.parametrize("name", EXPERT_TASKS)
def test_expert_matches_the_reference_under_qemu(name):
    if (why := _qemu_reason()) is not None:
        pytest.skip(why)
    from kcgym.sims.cpu.expert import expert_kernel
    from kcgym.sims.rvv.accelerator import ACCELERATOR as RVV
    from kcgym.sims.rvv.config import RVVConfig
    from kcgym.sims.rvv.qemu import run_qemu

    task, hw = TASKS[name], RVVConfig()
    cfg = task.config("CPU", 3)
    layout = RVV.layout(task, cfg, hw)
    for inputs in [task.generate_inputs(cfg, np.random.default_rng(2))] + [
            task.stress_inputs(cfg, np.random.default_rng(2), s) for s in task.stress_sets]:
        state = run_qemu(expert_kernel(task, cfg, hw, layout), RVV.ext_image(task, cfg, hw, inputs, layout), hw)
        for r in layout.regions:
            if r.role == "output":
                got = state.ext[r.offset: r.offset + r.extent].view(np.int32).reshape(r.shape)
                np.testing.assert_array_equal(got, task.reference(cfg, inputs)[r.name], err_msg=name)


def test_speed_of_light_is_below_every_kernel_and_physical():
    acc, ev = _evaluator("copy", 1)
    sol = ev.speed_of_light()
    assert all(t.physical for t in sol.terms) and sol.binding is not None
    assert sol.cycles <= ev.baseline().cycles
    wide = acc.make_hw({"mem_units": 2})  # twice the load/store units: the access term halves (about)
    assert acc.speed_of_light(ev.task, ev.cfg, wide).cycles < sol.cycles
