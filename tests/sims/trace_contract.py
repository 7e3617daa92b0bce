"""Checks every trace-ahead path shares (NPU, VLIW): same results as the interpreter, the oracle switch, the cache."""

from __future__ import annotations

import numpy as np

from kcgym.evaluation import Evaluator
from kcgym.tasks import TASKS


def bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, np.float32).view(np.uint32)


def assert_same_results(new, old) -> None:
    assert len(new) == len(old)
    for a, b in zip(new, old, strict=True):
        assert (a.cycles, a.instructions) == (b.cycles, b.instructions)
        assert a.counts_by_category == b.counts_by_category
        assert a.unit_busy == b.unit_busy
        assert a.first_nonfinite_line == b.first_nonfinite_line
        fa = None if a.fault is None else (a.fault.code, a.fault.pc, a.fault.line, a.fault.message)
        fb = None if b.fault is None else (b.fault.code, b.fault.pc, b.fault.line, b.fault.message)
        assert fa == fb
        assert a.outputs.keys() == b.outputs.keys()
        for k in a.outputs:
            np.testing.assert_array_equal(bits(a.outputs[k]), bits(b.outputs[k]), err_msg=k)


def check_profiling_and_the_switch(monkeypatch, acc, trace, hw, max_steps: int) -> None:
    """``profile=True`` runs on the interpreter with the fast path's cycles; ``KCGYM_SIM=oracle`` keeps every
    run off the trace path."""
    task = TASKS["matmul"]
    cfg = task.config(acc.name, 1)
    program = acc.assemble(acc.compile(task, cfg, hw), hw)
    inputs = Evaluator(acc, task, cfg, hw).input_sets(0, 1)
    fast = acc.run(program, task, cfg, hw, inputs, max_steps)
    prof = acc.run(program, task, cfg, hw, inputs, max_steps, profile=True)
    assert prof[0].profile is not None and prof[0].profile.total_cycles == fast[0].cycles
    assert_same_results(fast, prof)

    def boom(*args, **kwargs):
        raise AssertionError("the trace path ran under KCGYM_SIM=oracle")

    monkeypatch.setattr(trace, "run", boom)
    monkeypatch.setenv(trace.SIM_ENV, "oracle")
    assert_same_results(acc.run(program, task, cfg, hw, inputs, max_steps), fast)


def check_trace_is_cached_across_input_sets(acc, trace, hw, max_steps: int) -> None:
    task = TASKS["softmax"]
    cfg = task.config(acc.name, 1)
    program = acc.assemble(acc.compile(task, cfg, hw), hw)
    ev = Evaluator(acc, task, cfg, hw)
    trace._TRACES.clear()
    acc.run(program, task, cfg, hw, ev.input_sets(0, 1), max_steps)
    acc.run(program, task, cfg, hw, ev.input_sets(1, 3), max_steps)
    assert len(trace._TRACES) == 1


def recorded(monkeypatch, owner, name: str, value) -> list:
    """``owner.name`` patched to record ``value(*args)`` of each call, and to work as before (streamed runs:
    what each part or send held)."""
    seen: list = []
    real = getattr(owner, name)

    def spy(*args):
        seen.append(value(*args))
        return real(*args)

    monkeypatch.setattr(owner, name, spy)
    return seen
