"""Common machinery of the simulated accelerators: results, faults, layouts, the plug-in base.

An accelerator is one package under ``kcgym/sims/`` whose ``ACCELERATOR`` object subclasses
:class:`Accelerator`. Everything the env, the CLI and the evaluation harness need from a
machine goes through this interface, so adding a machine never touches them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict

from kcgym.limits import step_budget

if TYPE_CHECKING:
    from kcgym.isa.program import Program
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


@dataclass(frozen=True)
class MemoryRegion:
    """Where one tensor (or constant table) lies in one memory space."""

    name: str
    space: str  # e.g. "HBM", "FPSRAM"
    offset: int  # in elements of that space
    shape: tuple[int, ...]
    role: str  # "input" | "output" | "constant" | "scratch"
    description: str = ""

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))


@dataclass(frozen=True)
class MemoryLayout:
    regions: tuple[MemoryRegion, ...]

    def region(self, name: str) -> MemoryRegion:
        for r in self.regions:
            if r.name == name:
                return r
        raise KeyError(name)

    def describe(self) -> str:
        lines = []
        for r in self.regions:
            end = r.offset + r.size - 1
            shape = "x".join(str(s) for s in r.shape)
            desc = f" - {r.description}" if r.description else ""
            lines.append(f"- {r.name} ({r.role}): {r.space}[{r.offset}..{end}], shape [{shape}]{desc}")
        return "\n".join(lines)


class DocSection(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str  # short id used by read_docs(section=...)
    title: str
    text: str  # Markdown


class Accelerator(ABC):
    """A simulated accelerator: hardware config, ISA, simulator, compiler and docs."""

    name: ClassVar[str]  # "NPU"
    modelled_on: ClassVar[str]
    summary: ClassVar[str]
    hw_model: ClassVar[type[BaseModel]]  # frozen pydantic model with defaults
    numerics: ClassVar[str] = "bf16"  # which task family it runs (see kcgym.tasks.tasks_for)
    # True where cycles can depend on the data (branches or loop counts from loaded values): the
    # baseline is then timed on the very input set the kernel is timed on, so speedups stay fair.
    data_dependent_timing: ClassVar[bool] = False
    issue_unit: ClassVar[str] = "instructions"  # what one issue slot holds (a VLIW issues bundles)
    # True where ``run(..., profile=True)`` fills ``RunResult.profile`` (the per-line cycle attribution)
    supports_profile: ClassVar[bool] = False

    def make_hw(self, overrides: dict[str, Any] | BaseModel | None = None) -> BaseModel:
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
    def assemble(self, source: str, hw: BaseModel) -> Program:
        """Assemble or raise :class:`kcgym.isa.diagnostics.AssemblyError` (all errors at once)."""

    @abstractmethod
    def layout(self, task: Task, cfg: TaskConfig, hw: BaseModel) -> MemoryLayout: ...

    @abstractmethod
    def run(
        self,
        program: Program,
        task: Task,
        cfg: TaskConfig,
        hw: BaseModel,
        inputs: list[dict[str, np.ndarray]],
        max_steps: int,
        profile: bool = False,
    ) -> list[RunResult]:
        """Simulate ``program`` once per input set (batched with vmap); one result each.

        ``profile``: run the profiling interpreter (same cycles and outputs) and fill ``RunResult.profile``."""

    def loop_ranges(self, program: Program) -> list[tuple[int, int]]:
        """The PC range ``(first, last)`` of every loop body of ``program``, for the profiler's loop table."""
        return []

    @abstractmethod
    def compile(self, task: Task, cfg: TaskConfig, hw: BaseModel) -> str:
        """The template compiler's kernel (assembly source): the speedup baseline."""

    def expert(self, task: Task, cfg: TaskConfig, hw: BaseModel) -> str | None:
        """A hand-optimised reference kernel, where one exists."""
        return None

    @abstractmethod
    def docs(self, hw: BaseModel) -> list[DocSection]:
        """Programming guide sections plus the generated instruction reference."""

    @abstractmethod
    def hardware_summary(self, hw: BaseModel) -> str:
        """A short Markdown description of the hardware config, for prompts."""

    @abstractmethod
    def roofline_cycles(self, task: Task, cfg: TaskConfig, hw: BaseModel) -> int:
        """Lower bound: max(MACs / peak MAC rate, bytes moved / memory bandwidth)."""

    def speed_of_light(self, task: Task, cfg: TaskConfig, hw: BaseModel) -> SolBound:
        """The fewest cycles any correct kernel can take (kcgym.sims.sol); machines derive it from their
        own cost tables. The default is the roofline alone, as a single physical term."""
        from kcgym.sims.sol import SolBound, SolTerm

        roof = self.roofline_cycles(task, cfg, hw)
        return SolBound.of([SolTerm(name="roofline", cycles=roof, physical=True,
                                    explanation="max(MACs / peak MAC rate, bytes / memory bandwidth)")])

    def default_max_steps(self, baseline_instructions: int) -> int:
        """Step budget for kernels of a task, from the compiler kernel's dynamic count (:mod:`kcgym.limits`)."""
        return step_budget(baseline_instructions)
