"""A tiny pure-Python accelerator and task, so env mechanics are tested without the NPU.

ISA (one instruction per line, ``#`` comments):

    COPY          Y = X                      100 cycles
    COPYROW r     Y[r] = X[r]                 40 cycles
    ZERO          Y = 0                       10 cycles
    SLOW n        burn n cycles
    NOP           1 cycle (assembler warning W001)
    NAN r         Y[r, 0] = NaN                1 cycle
    OOB           runtime fault OOB_MEM
    HANG          loops forever (STEP_BUDGET fault)
    WARP          Y = X in 1 cycle: below the roofline, i.e. an "exploit"
    LOOP n / END  repeat the body n times

Task ``copy``: Y = X with X of shape (R, C); outputs are poisoned (NaN) before each run.
Baseline (the "compiler"): one COPYROW per row = 40 R cycles. Roofline: 50 cycles.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict

from kcgym.isa.diagnostics import AssemblyError, Diagnostic
from kcgym.sims.base import Accelerator, DocSection, FaultInfo, MemoryLayout, MemoryRegion, RunResult
from kcgym.tasks.base import Task, TaskConfig, TensorSpec

MNEMONICS = ("COPY", "COPYROW", "ZERO", "SLOW", "NOP", "NAN", "OOB", "HANG", "WARP", "LOOP", "END")
_ARITY = {"COPYROW": 1, "SLOW": 1, "NAN": 1, "LOOP": 1}


class FakeHW(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    copy_cycles: int = 100
    row_cycles: int = 40
    roofline: int = 50


@dataclass
class FakeProgram:
    """Duck-types :class:`kcgym.isa.program.Program` (``length``, ``warnings``)."""

    instrs: list[tuple[str, int, int]]  # (mnemonic, operand, source line)
    source: str
    warnings: list[Diagnostic] = field(default_factory=list)

    @property
    def length(self) -> int:
        return len(self.instrs)


class CopyTask(Task):
    name = "copy"
    title = "Copy"
    level = 1
    category = "Test"
    formula = "Y = X"
    description = "Copy X (R x C) to Y \u2014 a test task (\u00d7 and \u2014 exercise sanitising)."
    configs_by_accelerator: ClassVar = {
        "FAKE": (
            {"R": 4, "C": 8},
            {"R": 8, "C": 8},
            {"R": 8, "C": 16},
            {"R": 16, "C": 16},
            {"R": 32, "C": 16},
        )
    }

    def tensors(self, cfg: TaskConfig) -> list[TensorSpec]:
        shape = (cfg["R"], cfg["C"])
        return [TensorSpec("X", shape, "input", "the input"), TensorSpec("Y", shape, "output", "Y = X")]

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        x = rng.uniform(0.5, 2.0, size=(cfg["R"], cfg["C"])) * rng.choice(
            [-1.0, 1.0], size=(cfg["R"], cfg["C"])
        )
        return {"X": x.astype(np.float32)}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"Y": inputs["X"].astype(np.float32).copy()}

    def constants(self, cfg: TaskConfig) -> dict[str, float]:
        return {"one": 1.0}


class FakeAccelerator(Accelerator):
    name = "FAKE"
    modelled_on = "nothing (a test double)"
    summary = "A pretend accelerator with a copy engine."
    hw_model = FakeHW

    def supports(self, task: Task) -> bool:
        return task.name == "copy"

    def assemble(self, source: str, hw: BaseModel) -> FakeProgram:
        diags: list[Diagnostic] = []
        instrs: list[tuple[str, int, int]] = []
        depth = 0
        for ln, raw in enumerate(source.splitlines(), start=1):
            text = raw.split("#", 1)[0].strip()
            if not text:
                continue
            op, *args = text.split()
            op = op.upper()
            col = raw.index(text) + 1
            if op not in MNEMONICS:
                close = difflib.get_close_matches(op, MNEMONICS, n=1)
                diags.append(
                    Diagnostic.error(
                        "E001",
                        f"unknown instruction {op!r}",
                        line=ln,
                        col=col,
                        length=len(op),
                        source_line=raw,
                        hint=f"did you mean {close[0]}?" if close else None,
                    )
                )
                continue
            want = _ARITY.get(op, 0)
            if len(args) != want or (want and not args[0].lstrip("-").isdigit()):
                diags.append(
                    Diagnostic.error(
                        "E002", f"{op} takes {want} integer operand(s)", line=ln, col=col, source_line=raw
                    )
                )
                continue
            if op == "NOP":
                diags.append(
                    Diagnostic.warning("W001", "NOP has no effect", line=ln, col=col, source_line=raw)
                )
            if op == "LOOP":
                depth += 1
            if op == "END":
                if depth == 0:
                    diags.append(
                        Diagnostic.error("E003", "END without LOOP", line=ln, col=col, source_line=raw)
                    )
                    continue
                depth -= 1
            instrs.append((op, int(args[0]) if args else 0, ln))
        if depth:
            diags.append(Diagnostic.error("E004", "LOOP without END", line=max(1, source.count("\n") + 1)))
        if any(d.severity == "error" for d in diags):
            raise AssemblyError(diags)
        return FakeProgram(
            instrs=instrs, source=source, warnings=[d for d in diags if d.severity == "warning"]
        )

    def layout(self, task: Task, cfg: TaskConfig, hw: BaseModel) -> MemoryLayout:
        r, c = cfg["R"], cfg["C"]
        return MemoryLayout(
            (
                MemoryRegion("X", "MEM", 0, (r, c), "input"),
                MemoryRegion("Y", "MEM", r * c, (r, c), "output", "written by the kernel"),
                MemoryRegion("one", "CONST", 0, (1,), "constant"),
            )
        )

    def run(self, program, task, cfg, hw, inputs, max_steps):  # type: ignore[override]
        return [self._run_one(program, cfg, hw, inp, max_steps) for inp in inputs]

    def _run_one(self, program: FakeProgram, cfg: TaskConfig, hw: FakeHW, inp, max_steps: int) -> RunResult:
        x = inp["X"]
        y = np.full_like(x, np.nan)  # poisoned: unwritten outputs fail
        cycles = steps = 0
        counts: dict[str, int] = {}
        busy = {"COPY": 0, "SCALAR": 0}
        fault = None
        nonfinite_line = None
        stack: list[tuple[int, int]] = []  # (loop start pc, remaining)
        pc = 0
        lines = program.source.splitlines()
        while pc < len(program.instrs):
            op, arg, ln = program.instrs[pc]
            steps += 1
            if steps > max_steps:
                fault = FaultInfo(
                    code=3, name="STEP_BUDGET", pc=pc, line=ln, source=lines[ln - 1], message="too many"
                )
                break
            cat = (
                "copy"
                if op in ("COPY", "COPYROW", "WARP", "ZERO")
                else "control"
                if op in ("LOOP", "END")
                else "other"
            )
            counts[cat] = counts.get(cat, 0) + 1
            if op == "COPY":
                y[:] = x
                cycles += hw.copy_cycles
                busy["COPY"] += hw.copy_cycles
            elif op == "COPYROW":
                if not 0 <= arg < x.shape[0]:
                    fault = FaultInfo(
                        code=1, name="OOB_MEM", pc=pc, line=ln, source=lines[ln - 1], message="bad row"
                    )
                    break
                y[arg] = x[arg]
                cycles += hw.row_cycles
                busy["COPY"] += hw.row_cycles
            elif op == "ZERO":
                y[:] = 0.0
                cycles += 10
            elif op == "SLOW":
                cycles += arg
                busy["SCALAR"] += arg
            elif op == "NOP":
                cycles += 1
            elif op == "NAN":
                y[arg % x.shape[0], 0] = np.nan
                cycles += 1
                if nonfinite_line is None:
                    nonfinite_line = ln
            elif op == "OOB":
                fault = FaultInfo(
                    code=1, name="OOB_MEM", pc=pc, line=ln, source=lines[ln - 1], message="out of range"
                )
                break
            elif op == "HANG":
                cycles += 1
                continue  # pc never advances
            elif op == "WARP":
                y[:] = x
                cycles += 1
            elif op == "LOOP":
                stack.append((pc, arg))
                if arg <= 0:  # skip the body
                    depth = 1
                    while depth:
                        pc += 1
                        depth += {"LOOP": 1, "END": -1}.get(program.instrs[pc][0], 0)
                    stack.pop()
            elif op == "END":
                start, remaining = stack[-1]
                if remaining > 1:
                    stack[-1] = (start, remaining - 1)
                    pc = start
                else:
                    stack.pop()
            pc += 1
        return RunResult(
            outputs={"Y": y},
            cycles=cycles,
            instructions=steps,
            fault=fault,
            counts_by_category=counts,
            unit_busy=busy,
            first_nonfinite_line=nonfinite_line,
        )

    def compile(self, task: Task, cfg: TaskConfig, hw: BaseModel) -> str:
        return "# baseline: one row at a time\n" + "".join(f"COPYROW {r}\n" for r in range(cfg["R"]))

    def docs(self, hw: BaseModel) -> list[DocSection]:
        return [
            DocSection(
                id="guide",
                title="Programming guide",
                text="The machine copies memory.\nX lies at MEM[0].\nY lies after X \u2192 write it.\n",
            ),
            DocSection(
                id="isa",
                title="Instruction reference",
                text="\n".join(f"{m}: see the module docstring" for m in MNEMONICS)
                + "\nCOPY moves all rows at once.\nCOPYROW r copies one row.\n",
            ),
        ]

    def hardware_summary(self, hw: BaseModel) -> str:
        return f"- copy engine: {hw.copy_cycles} cycles per COPY, {hw.row_cycles} per COPYROW"

    def roofline_cycles(self, task: Task, cfg: TaskConfig, hw: BaseModel) -> int:
        return hw.roofline


FAKE = FakeAccelerator()
COPY_TASK = CopyTask()

# kernels with known outcomes (config 1: R=4 -> baseline 160 cycles)
FAST = "COPY\n"  # 100 cycles, speedup 1.6
BASELINE_LIKE = "COPYROW 0\nCOPYROW 1\nCOPYROW 2\nCOPYROW 3\n"
SLOW = "SLOW 5000\nCOPY\n"  # correct but ~0.03x
WRONG = "ZERO\n"  # every element wrong
PARTIAL = "COPY\nNAN 1\n"  # one row has a NaN
FAULTY = "COPY\nOOB\n"
HANGS = "HANG\n"
EXPLOIT = "WARP\n"
SYNTAX = "CPY\nCOPYROW\n"
WARNS = "NOP\nCOPY\n"
