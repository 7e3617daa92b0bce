"""Cold start (kcgym.sims.interpreter.COLD_START): a short program takes the trace path while the interpreter
the dispatch would pick is not compiled in the process, and the results are the interpreter's bit for bit."""

from __future__ import annotations

import importlib

import pytest

from kcgym.evaluation import Evaluator
from kcgym.limits import MAX_COLD_START_SHAPES
from kcgym.registry import ACCELERATORS
from kcgym.sims import interpreter
from kcgym.sims.interpreter import ColdStart
from kcgym.tasks import TASKS
from tests.sims.trace_contract import assert_same_results

MAX_STEPS = 1_000_000


def test_the_count_per_shape():
    cold = ColdStart()
    short = lambda: True  # noqa: E731
    runs = [cold.trace_instead("a", "auto", short) for _ in range(interpreter.INTERPRETER_AFTER_SHORT_RUNS + 2)]
    assert runs == [True] * interpreter.INTERPRETER_AFTER_SHORT_RUNS + [False, False]  # then compiled: it stays
    assert cold.trace_instead("b", "auto", short)  # another shape counts on its own
    assert not cold.trace_instead("c", "auto", lambda: False)  # long: the dispatch's trace path anyway
    assert not cold.trace_instead("d", "trace", short) and not cold.trace_instead("d", "oracle", short)
    assert not cold.trace_instead("d", "auto", short)  # the oracle run compiled it


def test_the_shapes_remembered_are_bounded():
    cold = ColdStart()
    for i in range(MAX_COLD_START_SHAPES + 10):
        cold.compiled(i)
    assert len(cold._runs) == MAX_COLD_START_SHAPES
    assert cold.trace_instead(0, "auto", lambda: True)  # forgotten: counted anew


@pytest.mark.parametrize("machine", ["NPU", "VLIW"])
def test_short_programs_take_the_trace_path_until_the_interpreter_pays(machine, monkeypatch):
    acc = ACCELERATORS[machine]
    trace = importlib.import_module(f"kcgym.sims.{machine.lower()}.trace")
    hw = acc.make_hw()
    task = TASKS["relu"]
    cfg = task.config(machine, 1)
    program = acc.assemble(acc.compile(task, cfg, hw), hw)
    inputs = Evaluator(acc, task, cfg, hw).input_sets(0, 2)
    monkeypatch.setenv(trace.SIM_ENV, "oracle")
    oracle = acc.run(program, task, cfg, hw, inputs, MAX_STEPS)

    monkeypatch.delenv(trace.SIM_ENV)
    monkeypatch.setattr(interpreter, "INTERPRETER_AFTER_SHORT_RUNS", 2)
    monkeypatch.setattr(importlib.import_module(f"kcgym.sims.{machine.lower()}.accelerator"), "COLD_START",
                        ColdStart())
    if machine == "VLIW":  # relu C1 must count as short (the tuned threshold may be 0: no program is)
        monkeypatch.setattr(trace, "ORACLE_MAX_BUNDLES", max(trace.ORACLE_MAX_BUNDLES, 64))
    calls = []
    inner = trace.run

    def counted(*args, **kwargs):
        calls.append(1)
        return inner(*args, **kwargs)

    monkeypatch.setattr(trace, "run", counted)
    for expect_calls in (1, 2, 2, 2):  # two runs on the trace path, then the interpreter compiles and stays
        assert_same_results(acc.run(program, task, cfg, hw, inputs, MAX_STEPS), oracle)
        assert len(calls) == expect_calls
    assert_same_results(acc.run(program, task, cfg, hw, inputs, MAX_STEPS, profile=True), oracle)
    assert len(calls) == 2  # profiling: the interpreter


def test_an_oracle_run_compiles_the_interpreter_for_later_short_programs(monkeypatch):
    acc = ACCELERATORS["NPU"]
    trace = importlib.import_module("kcgym.sims.npu.trace")
    hw = acc.make_hw()
    task = TASKS["relu"]
    cfg = task.config("NPU", 1)
    program = acc.assemble(acc.compile(task, cfg, hw), hw)
    inputs = Evaluator(acc, task, cfg, hw).input_sets(0, 1)
    monkeypatch.setattr(importlib.import_module("kcgym.sims.npu.accelerator"), "COLD_START", ColdStart())
    monkeypatch.setenv(trace.SIM_ENV, "oracle")
    oracle = acc.run(program, task, cfg, hw, inputs, MAX_STEPS)
    monkeypatch.delenv(trace.SIM_ENV)

    def boom(*args, **kwargs):
        raise AssertionError("a short program took the trace path though its interpreter is compiled")

    monkeypatch.setattr(trace, "run", boom)
    assert_same_results(acc.run(program, task, cfg, hw, inputs, MAX_STEPS), oracle)
