"""The shared simulator core (kcgym/sims/base.py): one typed base, one result and fault path.

A tiny machine whose "interpreter" is a table of final states exercises SimulatedAccelerator's
result extraction without JAX: the implicit halt, uncounted classes, the step-budget fault, a
hardware fault located at its slot's line, and output collection from the layout.
"""

from __future__ import annotations

import re
import typing
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict

from kcgym.isa.program import Program
from kcgym.registry import ACCELERATORS
from kcgym.sims.base import FinalState, MemoryRegion, SimulatedAccelerator, StateFormat
from kcgym.sims.layout import LayoutRule
from kcgym.tasks.base import Task, TaskConfig, TensorSpec

SIMS = Path(__file__).resolve().parents[2] / "kcgym" / "sims"


class TinyHW(BaseModel):
    model_config = ConfigDict(frozen=True)
    size: int = 8


class CopyTask(Task):
    name, title, level, category, formula, description = "copy", "Copy", 1, "test", "Y = X", "copy"
    configs_by_accelerator: ClassVar = {"TINY": ({"n": 4},)}

    def tensors(self, cfg: TaskConfig) -> list[TensorSpec]:
        return [TensorSpec("X", (cfg["n"],), "input"), TensorSpec("Y", (cfg["n"],), "output")]

    def generate_inputs(self, cfg, rng):
        return {"X": np.arange(cfg["n"], dtype=np.float32)}

    def reference(self, cfg, inputs):
        return {"Y": inputs["X"]}

    def constants(self, cfg):
        return {"k": 2.0}


class Tiny(SimulatedAccelerator[TinyHW]):
    name, modelled_on, summary = "TINY", "nothing", "a table of final states"
    issue_unit: ClassVar[str] = "steps"
    layout_rule: ClassVar[LayoutRule] = LayoutRule(space="MEM", align=4, unit_bytes=2)
    state_format: ClassVar[StateFormat] = StateFormat(("NONE", "OOB", "STEP_BUDGET"), 2,
                                                      {"ALU": "alu", "CTL": "control", "NOP": "nop"},
                                                      uncounted=frozenset({"NOP"}), implicit_halt=("CTL", "CORE"))

    def __init__(self, states: list[FinalState]):
        self.states = states

    def simulate(self, program, task, cfg, hw, layout, inputs, max_steps, profile) -> Any:
        mem = np.full((len(inputs), 64), np.nan, np.float32)
        out = layout.region("Y")
        for b, inp in enumerate(inputs):
            mem[b, out.offset : out.offset + out.size] = inp["X"] * 2
        return mem

    def final_state(self, st, b, program) -> FinalState:
        return self.states[b]

    def read_region(self, st, b, region: MemoryRegion, task, hw) -> np.ndarray:
        return st[b, region.offset : region.offset + region.size].reshape(region.shape).copy()

    def fault_message(self, name, detail, hw) -> str:
        return f"{name} at {detail} (memory holds {hw.size})"

    def locate(self, program, pc, slot):
        line = program.line_of(pc) if slot < 0 else 100 + slot
        return line, f"text of {line}"

    def supports(self, task):
        return True

    def assemble(self, source, hw):
        raise NotImplementedError

    def compile(self, task, cfg, hw):
        return ""

    def docs(self, hw):
        return []

    def hardware_summary(self, hw):
        return ""

    def roofline_cycles(self, task, cfg, hw):
        return 0


def _state(**kw) -> FinalState:
    base = dict(halted=True, fault=0, fault_pc=0, fault_detail=0, pc=3, steps=4, cycles=10,
                class_counts={"ALU": 3, "CTL": 1, "NOP": 5}, unit_busy={"CORE": 4})
    return FinalState(**{**base, **kw})


def _run(*states: FinalState):
    program = Program("tiny", np.zeros((3, 2), np.int32), [1, 2, 3], [None] * 3, "a\nb\nc\n")
    task = CopyTask()
    cfg = task.config("TINY", 1)
    inputs = [task.generate_inputs(cfg, np.random.default_rng(0)) for _ in states]
    return Tiny(list(states)).run(program, task, cfg, TinyHW(), inputs, max_steps=50)


def test_clean_halt_off_the_end_drops_the_implicit_halt_and_uncounted_classes():
    (res,) = _run(_state(ran_off_end=True))
    assert res.fault is None and res.cycles == 10
    assert res.instructions == 3 and res.counts_by_category == {"alu": 3, "control": 0}
    assert res.unit_busy == {"CORE": 3}
    np.testing.assert_array_equal(res.outputs["Y"], [0, 2, 4, 6])


def test_step_budget_and_hardware_faults_are_results():
    budget, oob = _run(_state(halted=False, pc=1), _state(fault=1, fault_pc=2, fault_detail=99, fault_slot=1))
    assert budget.fault.name == "STEP_BUDGET" and budget.fault.code == 2 and budget.fault.line == 2
    assert "ran 50 steps without finishing" in budget.fault.message and budget.instructions == 4
    assert oob.fault.name == "OOB" and oob.fault.pc == 2 and oob.fault.line == 101
    assert oob.fault.message == "OOB at 99 (memory holds 8)" and oob.fault.source == "text of 101"


def test_every_machine_is_typed_over_its_own_hardware_config():
    for name in ACCELERATORS:
        acc = ACCELERATORS[name]
        (base,) = [b for b in type(acc).__orig_bases__ if typing.get_origin(b) is SimulatedAccelerator]
        assert typing.get_args(base) == (acc.hw_model,), name
    assert Tiny.hw_model is TinyHW and isinstance(Tiny([]).make_hw({"size": 4}), TinyHW)


def test_parts_are_found_by_name_in_the_machine_package():
    for name in ACCELERATORS:
        acc = ACCELERATORS[name]
        package = f"kcgym.sims.{name.lower()}"
        assert acc.part("compiler", "compile_task").__module__.startswith(package)
        assert acc.part("docs", f"{name.lower()}_docs").__module__ == f"{package}.docs"
        assert acc.part("speed_of_light", "speed_of_light").__module__ == f"{package}.speed_of_light"


def test_no_override_is_silenced():
    silenced = [str(p) for p in SIMS.rglob("*.py") if re.search(r"type:\s*ignore\[override\]", p.read_text())]
    assert silenced == []
