"""The trace cache's budget-free entries (:func:`kcgym.sims.rvv.trace._halted`): a run that halted (or faulted)
within its step budget serves any budget above its final steps -- the Evaluator's baseline run (one input
set, a 50M budget) and a scoring of the same kernel (every input set, a smaller budget) share one pre-pass --
bit for bit against the interpreter at each budget; a smaller budget, and a run that ran out of steps, do not
share it."""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.sims.rvv import ACCELERATOR, trace
from kcgym.sims.rvv import machine as M
from kcgym.sims.rvv.accelerator import machine_inputs, simulate_images
from tests.sims.rvv import adversarial
from tests.sims.rvv.test_trace_differential import HW, _kernel_images

BIG = 50_000_000  # the Evaluator's baseline budget


def _program(which: str):
    task, cfg, layout, images = _kernel_images("matmul", 1)
    source = ACCELERATOR.compile(task, cfg, HW) if which == "kernel" else adversarial.out_of_bounds(task, layout, HW)
    return ACCELERATOR.assemble(source, HW), images


def _run(program, images, max_steps: int) -> tuple[M.State, trace.RunInfo]:
    words, mems = machine_inputs(program, images, HW)
    return trace.run_info(HW.model_dump_json(), words, program.length, mems, images.shape[1], max_steps)


def _same_as_oracle(monkeypatch, st: M.State, program, images, max_steps: int) -> None:
    monkeypatch.setenv(trace.SIM_ENV, "oracle")
    old = simulate_images(program, images, HW, max_steps)
    for field in old._fields:
        np.testing.assert_array_equal(np.asarray(getattr(st, field)), np.asarray(getattr(old, field)), err_msg=field)


@pytest.mark.parametrize("which", ["kernel", "fault"])
def test_a_halted_run_serves_every_budget_it_fits(monkeypatch, which):
    program, images = _program(which)
    trace._TRACES.clear()
    probe, info = _run(program, images[:1], BIG)
    assert info.path == "trace" and not info.cached and probe.ctl[0, M.HALTED]
    assert bool(probe.ctl[0, M.FAULT]) == (which == "fault")
    steps = int(probe.ctl[0, M.STEPS])
    for budget in (steps + 1, BIG, steps):
        st, info = _run(program, images, budget)
        assert info.cached == (budget > steps), budget  # (at ``steps`` HALT does not run: a run of its own)
        _same_as_oracle(monkeypatch, st, program, images, budget)


def test_a_smaller_budget_and_a_run_out_of_steps_get_their_own(monkeypatch):
    program, images = _program("kernel")
    trace._TRACES.clear()
    steps = int(_run(program, images[:1], BIG)[0].ctl[0, M.STEPS])
    st, info = _run(program, images, steps)  # HALT left out: out of steps, not halted
    assert not info.cached and not st.ctl[:, M.HALTED].any()
    _same_as_oracle(monkeypatch, st, program, images, steps)
    assert _run(program, images, steps)[1].cached  # under its own budget
    trace._TRACES.clear()
    _run(program, images, steps)
    st, info = _run(program, images, steps + 1)  # a run out of steps serves no other budget
    assert not info.cached and st.ctl[:, M.HALTED].all()
    _same_as_oracle(monkeypatch, st, program, images, steps + 1)
