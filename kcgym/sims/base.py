"""Common machinery of the simulated accelerators: results, faults, layouts, the plug-in base.

An accelerator is one package under ``kcgym/sims/`` whose ``ACCELERATOR`` object subclasses
:class:`Accelerator` (the interface, generic over the machine's pydantic hardware config).
Everything the env, the CLI and the evaluation harness need from a machine goes through this
interface, so adding a machine never touches them. A JAX-simulated machine subclasses
:class:`SimulatedAccelerator`, which owns what every simulator shares: the layout
(:mod:`kcgym.sims.layout`), running the input sets, fault and result extraction (the
step-budget fault included) and output collection; the machine supplies its images, its
interpreter and how to read its final state.
"""

from __future__ import annotations

import typing
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict

from kcgym.limits import CYCLE_LIMIT, step_budget
from kcgym.sims.layout import MemoryLayout as MemoryLayout  # re-exported: machines import it from here
from kcgym.sims.layout import MemoryRegion as MemoryRegion
from kcgym.sims.layout import build_layout

if TYPE_CHECKING:
    from kcgym.isa.program import Program
    from kcgym.sims.layout import LayoutRule
    from kcgym.sims.profiling import PcProfile
    from kcgym.sims.sol import SolBound
    from kcgym.tasks.base import Task, TaskConfig


class FaultInfo(BaseModel):
    """A runtime fault, located in the source. Faults are results, never exceptions."""

    model_config = ConfigDict(frozen=True)

    code: int
    name: str  # e.g. "OOB_VSRAM", "MISALIGNED", "STEP_BUDGET"
    pc: int
    line: int | None = None  # 1-based source line of the faulting instruction
    source: str | None = None  # the source text of that line
    message: str = ""

    def render(self) -> str:
        where = f"line {self.line}" if self.line is not None else f"pc {self.pc}"
        text = f"runtime fault {self.name} at {where} (pc {self.pc}): {self.message}"
        if self.source:
            text += f"\n    {self.source.strip()}"
        return text


@dataclass
class RunResult:
    """What one simulation of one input set produced."""

    outputs: dict[str, np.ndarray]
    cycles: int
    instructions: int  # dynamic instruction count
    fault: FaultInfo | None
    counts_by_category: dict[str, int] = field(default_factory=dict)
    unit_busy: dict[str, int] = field(default_factory=dict)  # busy cycles per unit
    first_nonfinite_line: int | None = None  # first source line that produced NaN/Inf
    profile: PcProfile | None = None  # per-PC cycle attribution, from a ``run(..., profile=True)``


class DocSection(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str  # short id used by read_docs(section=...)
    title: str
    text: str  # Markdown


HW = TypeVar("HW", bound=BaseModel)  # a machine's frozen pydantic hardware config


class Accelerator(ABC, Generic[HW]):
    """A simulated accelerator: hardware config, ISA, simulator, compiler and docs."""

    name: ClassVar[str]  # "NPU"
    modelled_on: ClassVar[str]
    summary: ClassVar[str]
    hw_model: type[HW]  # frozen pydantic model with defaults: the class's type argument (``Accelerator[Config]``)
    numerics: ClassVar[str] = "bf16"  # which task family it runs (see kcgym.tasks.tasks_for)
    # True where cycles can depend on the data (branches or loop counts from loaded values): the
    # baseline is then timed on the very input set the kernel is timed on, so speedups stay fair.
    data_dependent_timing: ClassVar[bool] = False
    issue_unit: ClassVar[str] = "instructions"  # what one issue slot holds (a VLIW issues bundles)
    # True where ``run(..., profile=True)`` fills ``RunResult.profile`` (the per-line cycle attribution)
    supports_profile: ClassVar[bool] = False
    # distinct programs one ``run_many`` call simulates together where that pays (1: one at a time)
    merged_programs: ClassVar[int] = 1

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """``hw_model`` is the type argument the class was declared with: the config is named once."""
        super().__init_subclass__(**kwargs)
        for base in getattr(cls, "__orig_bases__", ()):
            args = typing.get_args(base)
            if args and isinstance(args[0], type) and issubclass(args[0], BaseModel) and "hw_model" not in vars(cls):
                cls.hw_model = typing.cast(Any, args[0])  # the declared type argument: a config class

    def make_hw(self, overrides: dict[str, Any] | BaseModel | None = None) -> HW:
        """The default hardware config, updated by ``overrides`` (validated)."""
        if overrides is None:
            return self.hw_model()
        if isinstance(overrides, self.hw_model):
            return overrides
        if isinstance(overrides, BaseModel):
            overrides = overrides.model_dump()
        from pydantic import ValidationError

        from kcgym.sims.hwconfig import override_error

        try:
            return self.hw_model(**dict(overrides))
        except ValidationError as e:  # kcgym's wording (did you mean, valid names), not pydantic's text
            raise ValueError(override_error(self.name, self.hw_model, e)) from None

    @abstractmethod
    def supports(self, task: Task) -> bool: ...

    @abstractmethod
    def assemble(self, source: str, hw: HW) -> Program:
        """Assemble or raise :class:`kcgym.isa.diagnostics.AssemblyError` (all errors at once)."""

    @abstractmethod
    def layout(self, task: Task, cfg: TaskConfig, hw: HW) -> MemoryLayout: ...

    @abstractmethod
    def run(
        self,
        program: Program,
        task: Task,
        cfg: TaskConfig,
        hw: HW,
        inputs: list[dict[str, np.ndarray]],
        max_steps: int,
        profile: bool = False,
    ) -> list[RunResult]:
        """Simulate ``program`` once per input set (batched with vmap); one result each.

        ``profile``: run the profiling interpreter (same cycles and outputs) and fill ``RunResult.profile``."""

    def run_many(self, programs: list[Program], task: Task, cfg: TaskConfig, hw: HW,
                 inputs: list[dict[str, np.ndarray]], max_steps: int) -> list[list[RunResult]]:
        """:meth:`run` of each program on the same input sets, the same results; a machine that can simulate
        several programs in one call (``merged_programs`` > 1) overrides it."""
        return [self.run(p, task, cfg, hw, inputs, max_steps) for p in programs]

    def loop_ranges(self, program: Program) -> list[tuple[int, int]]:
        """The PC range ``(first, last)`` of every loop body of ``program``, for the profiler's loop table."""
        return []

    @abstractmethod
    def compile(self, task: Task, cfg: TaskConfig, hw: HW) -> str:
        """The template compiler's kernel (assembly source): the speedup baseline."""

    def expert(self, task: Task, cfg: TaskConfig, hw: HW) -> str | None:
        """A hand-optimised reference kernel, where one exists."""
        return None

    @abstractmethod
    def docs(self, hw: HW) -> list[DocSection]:
        """Programming guide sections plus the generated instruction reference."""

    @abstractmethod
    def hardware_summary(self, hw: HW) -> str:
        """A short Markdown description of the hardware config, for prompts."""

    @abstractmethod
    def roofline_cycles(self, task: Task, cfg: TaskConfig, hw: HW) -> int:
        """Lower bound: max(MACs / peak MAC rate, bytes moved / memory bandwidth)."""

    def speed_of_light(self, task: Task, cfg: TaskConfig, hw: HW) -> SolBound:
        """The fewest cycles any correct kernel can take (kcgym.sims.sol); machines derive it from their
        own cost tables. The default is the roofline alone, as a single physical term."""
        from kcgym.sims.sol import SolBound, SolTerm

        roof = self.roofline_cycles(task, cfg, hw)
        return SolBound.of([SolTerm(name="roofline", cycles=roof, physical=True,
                                    explanation="max(MACs / peak MAC rate, bytes / memory bandwidth)")])

    def default_max_steps(self, baseline_instructions: int) -> int:
        """Step budget for kernels of a task, from the compiler kernel's dynamic count (:mod:`kcgym.limits`)."""
        return step_budget(baseline_instructions)


@dataclass(frozen=True)
class StateFormat:
    """How a machine's interpreter reports: its fault codes, opcode classes and profiler columns."""

    fault_names: Sequence[str]  # fault code -> name
    step_budget_code: int  # the fault code reported when the step budget runs out
    category: Mapping[str, str]  # opcode class -> reported category
    uncounted: frozenset[str] = frozenset()  # classes left out of the categories (NOP, HALT)
    # (opcode class, unit) the implicit halt after the last instruction was charged to: not the kernel's
    implicit_halt: tuple[str, str] | None = None
    profile_stalls: tuple[str, ...] = ()  # the profiler's stall columns
    profile_issue_col: int = 0  # the state's ``ctl`` column with the front end's final issue time


@dataclass
class FinalState:
    """One input set's final machine state, in the terms every machine shares (read by ``final_state``)."""

    halted: bool
    fault: int  # the machine's fault code; 0: none
    fault_pc: int
    fault_detail: int
    pc: int
    steps: int  # dynamic issue count, the implicit halt included
    cycles: int
    class_counts: Mapping[str, int]  # dynamic count per opcode class
    unit_busy: Mapping[str, int]  # busy cycles per unit
    nan_pc: int = -1  # first PC that produced NaN/Inf (-1: none, or not tracked)
    fault_slot: int = -1  # the faulting operation's slot of a bundle (-1: not a bundle machine)
    ran_off_end: bool = False  # stopped by the implicit halt after the last instruction


class SimulatedAccelerator(Accelerator[HW]):
    """An accelerator simulated in JAX: the shared core of running, results, faults and layout.

    A machine supplies its layout rule, its memory images and interpreter (:meth:`simulate`), and how
    to read one input set's final state (:attr:`state_format`, :meth:`final_state`, :meth:`read_region`,
    :meth:`fault_message`); everything else about a run is the same on every machine. Its compiler,
    experts, docs and speed-of-light bound are found by name in its package (:meth:`part`).
    """

    layout_rule: ClassVar[LayoutRule]
    state_format: ClassVar[StateFormat]
    supports_profile: ClassVar[bool] = True

    def layout(self, task: Task, cfg: TaskConfig, hw: HW) -> MemoryLayout:
        """The task's layout by the one rule of :mod:`kcgym.sims.layout` (independent of any kernel)."""
        return build_layout(self.layout_rule, task, cfg)

    def kernel_layout(self, task: Task, cfg: TaskConfig, hw: HW) -> MemoryLayout:
        """What the compiler and the experts see: the layout plus the named buffers they carve from ``scratch``."""
        return self.layout(task, cfg, hw)

    def part(self, module: str, function: str) -> Any:
        """``function`` of the machine package's ``module``, imported on first use (it imports the machine)."""
        import importlib

        package = type(self).__module__.rpartition(".")[0]
        return getattr(importlib.import_module(f"{package}.{module}"), function)

    def compile(self, task: Task, cfg: TaskConfig, hw: HW) -> str:
        """``compiler.compile_task`` of the machine package, on the kernel layout."""
        return str(self.part("compiler", "compile_task")(task, cfg, hw, self.kernel_layout(task, cfg, hw)))

    def expert(self, task: Task, cfg: TaskConfig, hw: HW) -> str | None:
        """``expert.expert_kernel`` of the machine package, on the kernel layout."""
        source = self.part("expert", "expert_kernel")(task, cfg, hw, self.kernel_layout(task, cfg, hw))
        return None if source is None else str(source)

    def docs(self, hw: HW) -> list[DocSection]:
        """``docs.<name>_docs`` of the machine package (guide sections plus the instruction reference)."""
        return list(self.part("docs", f"{self.name.lower()}_docs")(hw))

    def speed_of_light(self, task: Task, cfg: TaskConfig, hw: HW) -> SolBound:
        """``speed_of_light.speed_of_light`` of the machine package."""
        bound: SolBound = self.part("speed_of_light", "speed_of_light")(task, cfg, hw)
        return bound

    @abstractmethod
    def simulate(self, program: Program, task: Task, cfg: TaskConfig, hw: HW, layout: MemoryLayout,
                 inputs: list[dict[str, np.ndarray]], max_steps: int, profile: bool) -> Any:
        """Build one memory image per input set, run the interpreter on the batch: the final state (numpy)."""

    @abstractmethod
    def final_state(self, st: Any, b: int, program: Program) -> FinalState:
        """Batch row ``b`` of ``st`` in the shared terms."""

    @abstractmethod
    def read_region(self, st: Any, b: int, region: MemoryRegion, task: Task, hw: HW) -> np.ndarray:
        """The final contents of ``region`` in batch row ``b`` (shape ``region.shape``, a copy)."""

    @abstractmethod
    def fault_message(self, name: str, detail: int, hw: HW) -> str:
        """What a hardware fault means, with its detail word (an address, a lane, ...)."""

    def locate(self, program: Program, pc: int, slot: int) -> tuple[int | None, str | None]:
        """Source line number and text of the instruction at ``pc`` (slot: of a bundle)."""
        return program.line_of(pc), program.source_line(pc)

    def run(self, program: Program, task: Task, cfg: TaskConfig, hw: HW, inputs: list[dict[str, np.ndarray]],
            max_steps: int, profile: bool = False) -> list[RunResult]:
        layout = self.layout(task, cfg, hw)
        st = self.simulate(program, task, cfg, hw, layout, inputs, max_steps, profile)
        results = [self.result(st, b, program, task, layout, hw, max_steps) for b in range(len(inputs))]
        if profile:
            from kcgym.sims.profiling import PcProfile

            fmt = self.state_format
            PcProfile.attach(results, st, program.length, fmt.profile_stalls, fmt.profile_issue_col)
        return results

    def result(self, st: Any, b: int, program: Program, task: Task, layout: MemoryLayout, hw: HW,
               max_steps: int) -> RunResult:
        """One input set's :class:`RunResult`: counts, the fault (if any) and the outputs."""
        fs, fmt = self.final_state(st, b, program), self.state_format
        steps, counts, busy = fs.steps, dict(fs.class_counts), dict(fs.unit_busy)
        if fmt.implicit_halt and fs.halted and fs.fault == 0 and fs.ran_off_end:
            cls, unit = fmt.implicit_halt
            steps, counts[cls], busy[unit] = steps - 1, counts[cls] - 1, busy[unit] - 1
        by_category: dict[str, int] = {}
        for cls, n in counts.items():
            if cls not in fmt.uncounted:
                by_category[fmt.category[cls]] = by_category.get(fmt.category[cls], 0) + int(n)
        outputs = {r.name: self.read_region(st, b, r, task, hw) for r in layout.regions if r.role == "output"}
        return RunResult(outputs=outputs, cycles=fs.cycles, instructions=steps,
                         fault=self.fault(fs, program, hw, max_steps), counts_by_category=by_category,
                         unit_busy={u: int(v) for u, v in busy.items()},
                         first_nonfinite_line=program.line_of(fs.nan_pc) if fs.nan_pc >= 0 else None)

    def fault(self, fs: FinalState, program: Program, hw: HW, max_steps: int) -> FaultInfo | None:
        """The hardware fault, or the step-budget fault of a run that did not halt, located in the source."""
        if fs.fault == 0 and fs.halted:
            return None
        if fs.fault == 0:
            line, source = self.locate(program, fs.pc, -1)
            return FaultInfo(code=self.state_format.step_budget_code, name="STEP_BUDGET", pc=fs.pc, line=line,
                             source=source, message=f"the kernel ran {max_steps} {self.issue_unit} without finishing "
                             "(an infinite or far too long loop?); it was executing this line when stopped")
        name = self.state_format.fault_names[fs.fault]
        line, source = self.locate(program, fs.fault_pc, fs.fault_slot)
        message = cycle_limit_message(fs.fault_detail, self.issue_unit) if name == "CYCLE_LIMIT" else \
            self.fault_message(name, fs.fault_detail, hw)
        return FaultInfo(code=fs.fault, name=name, pc=fs.fault_pc, line=line, source=source, message=message)


def cycle_limit_message(cycle: int, issue_unit: str) -> str:
    """The CYCLE_LIMIT fault's message (every machine's); ``cycle``: the clock the machine's check saw (its guide
    says which: the stopped step's completion, or the clock before it)."""
    return (f"the simulated clock reached cycle {cycle:,} at this {issue_unit.removesuffix('s')}, past the limit of "
            f"{CYCLE_LIMIT:,} cycles (kcgym.limits.CYCLE_LIMIT), so it did not execute; the kernel is far too slow "
            "(a long loop of stalls, taken branches or DMAs?)")
