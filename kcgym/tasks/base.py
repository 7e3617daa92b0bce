"""The task contract: what an ML workload must define so any accelerator can run it.

A task is accelerator-neutral: logical tensors (in their row-major *storage* form), a
seeded input generator, a NumPy reference that rounds where the hardware rounds, named
scalar constants, a tolerance and its shape configurations C1..C5 per accelerator. Where
the tensors lie in memory is the accelerator's business (``Accelerator.layout``).

The declarative half (name, title, level, tensors, dtypes, domains, tolerance, shapes) is the
task's entry in :mod:`kcgym.tasks.manifest`, bound to the instance by the loader; a task
class holds only code (inputs, reference, constants, stress sets) and prose. A task defined
outside the manifest (a test double) may set the same names as class attributes instead.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict

from kcgym.tasks.manifest import BF16_TOLERANCE, EXACT
from kcgym.tasks.schema import Role, TaskEntry, Tolerance, Variant, evaluate, resolve


@dataclass(frozen=True)
class TensorSpec:
    """One tensor of a task, stored row-major with ``shape``."""

    name: str
    shape: tuple[int, ...]
    role: Role
    description: str = ""
    dtype: str = "bf16"

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))


# a declared element type -> the NumPy type that stores it (float32 arrays hold bf16 values)
STORAGE_DTYPES = {"bf16": np.float32, "int8": np.int8, "int32": np.int32}

UNSTATED_DOMAIN = "the input generator's default distribution (no wider domain stated)"
# (default draw of one tensor, rng) -> that tensor redrawn from the edge of the domain
StressTransform = Callable[[np.ndarray, np.random.Generator], np.ndarray]


@dataclass(frozen=True)
class StressSet:
    """A hidden input set from the edge of a task's stated domain, chosen so that shortcuts fail.

    A stress set is the task's default draw with some tensors redrawn by ``transforms``
    (tensor name -> function of the default values and the rng); every other tensor keeps
    its default distribution. ``description`` is shown in the prompt and the final report.
    """

    name: str
    description: str
    transforms: Mapping[str, StressTransform] = field(default_factory=dict)


class TaskConfig(BaseModel):
    """One shape configuration (C1..C5) of a task on one accelerator."""

    model_config = ConfigDict(frozen=True)

    index: int
    params: dict[str, int]

    @property
    def label(self) -> str:
        return f"C{self.index} (" + ", ".join(f"{k}={v}" for k, v in self.params.items()) + ")"

    def __getitem__(self, key: str) -> int:
        return self.params[key]


class Task(ABC):
    """An ML workload. Subclasses implement the methods; the manifest entry supplies the declarations."""

    formula: ClassVar[str]
    description: ClassVar[str]
    # drawn in every hidden evaluation besides the default sets (at least one per task)
    stress_sets: ClassVar[tuple[StressSet, ...]] = ()
    # the manifest entry and the variant (number format) this instance is; None for a task from outside
    entry: TaskEntry | None = None
    variant: Variant | None = None
    family: str = "bf16"  # the number format of the variant

    def __init__(self, entry: TaskEntry | None = None, family: str = "bf16") -> None:
        if entry is not None:
            self.entry, self.variant, self.family = entry, entry.variants[family], family

    def _declared(self) -> tuple[TaskEntry, Variant]:
        if self.entry is None or self.variant is None:
            raise TypeError(f"{type(self).__name__} has no manifest entry; declare it in kcgym/tasks/manifest.py")
        return self.entry, self.variant

    # -- the declarations, read from the manifest entry -----------------------------------------
    @property
    def name(self) -> str:  # env-id form, e.g. "matmul"
        return self._declared()[0].name

    @property
    def title(self) -> str:  # paper form, e.g. "GEMM"
        return self._declared()[0].title

    @property
    def level(self) -> int:  # 1 primitive, 2 composite, 3 end-to-end
        return self._declared()[0].level

    @property
    def max_turns(self) -> int | None:
        """The task's own turn budget (the CPU case study's 10/10/15), or None for the per-level default."""
        return None if self.entry is None else self.entry.max_turns

    @property
    def category(self) -> str:
        return self._declared()[1].category

    @property
    def tolerance(self) -> Tolerance:
        return BF16_TOLERANCE if self.variant is None else self.variant.tolerance

    @property
    def domain(self) -> Mapping[str, str]:
        """Input tensor name -> its domain (distribution and range of the default draw, and the edge
        that the stress sets probe); every registered task names every input (a test checks it)."""
        return {} if self.variant is None else self.variant.domain

    @property
    def configs_by_accelerator(self) -> Mapping[str, tuple[Mapping[str, int], ...]]:
        """Accelerator name -> five parameter dicts, C1..C5 in order (the machines that run this variant)."""
        return self._declared()[1].shapes

    @property
    def tables(self) -> tuple[str, ...]:
        """The constant inputs (lookup tables, fixed permutations): the same in every input set."""
        return () if self.variant is None else tuple(t.name for t in self.variant.tensors if t.constant)

    def supports(self, accelerator: str) -> bool:
        """True where ``accelerator`` has configurations of this task."""
        return accelerator in self.configs_by_accelerator

    def configs(self, accelerator: str) -> list[TaskConfig]:
        rows = self.configs_by_accelerator.get(accelerator)
        if rows is None:
            raise KeyError(f"task {self.name!r} has no configurations for {accelerator!r}")
        return [TaskConfig(index=i + 1, params=dict(p)) for i, p in enumerate(rows)]

    def config(self, accelerator: str, index: int) -> TaskConfig:
        cfgs = self.configs(accelerator)
        if not 1 <= index <= len(cfgs):
            raise ValueError(f"config must be in 1..{len(cfgs)}, got {index}")
        return cfgs[index - 1]

    def tensors(self, cfg: TaskConfig) -> list[TensorSpec]:
        """Inputs then outputs, in the order they are laid out in memory (as the manifest declares them)."""
        variant = self._declared()[1]
        names = resolve(variant, cfg.params)
        return [TensorSpec(t.name, evaluate(t.shape, names), t.role, t.description.format(**names), t.dtype)
                for t in variant.tensors]

    def dtype_of(self, name: str) -> np.dtype:
        """The NumPy storage type of tensor ``name`` (float32 holds bf16 values); a name the task does not
        declare (a machine's scratch region) gets the element type of the task's number format."""
        variant = self._declared()[1]
        dtype = next((t.dtype for t in variant.tensors if t.name == name), self.family)
        return np.dtype(STORAGE_DTYPES[dtype])

    @abstractmethod
    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Seeded inputs (float32 holding bf16-representable values), outputs O(1)."""

    @abstractmethod
    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Expected outputs (float32), rounded to bf16 where the hardware rounds."""

    def input_domain(self, cfg: TaskConfig) -> dict[str, str]:
        """Each input tensor's stated domain, in tensor order (what the prompt shows).

        A task from outside the registry that states none still renders (every registered task
        states every tensor's domain; a test checks it).
        """
        return {t.name: self.domain.get(t.name, UNSTATED_DOMAIN) for t in self.inputs(cfg)}

    def stress_inputs(self, cfg: TaskConfig, rng: np.random.Generator, stress: StressSet) -> dict[str, np.ndarray]:
        """One input set of ``stress``: the default draw with the stress set's tensors redrawn."""
        inputs = self.generate_inputs(cfg, rng)
        for name, transform in stress.transforms.items():
            inputs[name] = transform(inputs[name], rng)
        return inputs

    def constants(self, cfg: TaskConfig) -> dict[str, float]:
        """Named scalar constants a kernel may need (eps, 1/n, scales); placed by the accelerator."""
        return {}

    def macs(self, cfg: TaskConfig) -> int:
        """Multiply-accumulates the workload needs (for the roofline bound); 0 if none."""
        return 0

    def inputs(self, cfg: TaskConfig) -> list[TensorSpec]:
        return [t for t in self.tensors(cfg) if t.role == "input"]

    def outputs(self, cfg: TaskConfig) -> list[TensorSpec]:
        return [t for t in self.tensors(cfg) if t.role == "output"]


__all__ = ["BF16_TOLERANCE", "EXACT", "StressSet", "Task", "TaskConfig", "TensorSpec", "Tolerance"]
