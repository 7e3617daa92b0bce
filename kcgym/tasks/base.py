"""The task contract: what an ML workload must define so any accelerator can run it.

A task is accelerator-neutral: logical tensors (in their row-major *storage* form), a
seeded input generator, a NumPy reference that rounds where the hardware rounds, named
scalar constants, a tolerance and its shape configurations C1..C5 per accelerator. Where
the tensors lie in memory is the accelerator's business (``Accelerator.layout``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

Role = Literal["input", "output"]


@dataclass(frozen=True)
class TensorSpec:
    """One tensor of a task, stored row-major with ``shape``."""

    name: str
    shape: tuple[int, ...]
    role: Role
    description: str = ""

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))


@dataclass(frozen=True)
class Tolerance:
    """Element ``i`` matches iff ``|a - e| <= atol + rtol * |e|`` (and both are finite)."""

    atol: float
    rtol: float


BF16_TOLERANCE = Tolerance(atol=0.012, rtol=0.01)  # the paper's PLENA setting

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
    """An ML workload. Subclasses set the class attributes and implement the methods."""

    name: ClassVar[str]  # env-id form, e.g. "matmul"
    title: ClassVar[str]  # paper form, e.g. "GEMM"
    level: ClassVar[int]  # 1 primitive, 2 composite, 3 end-to-end
    category: ClassVar[str]
    formula: ClassVar[str]
    description: ClassVar[str]
    # accelerator name -> five parameter dicts, C1..C5 in order
    configs_by_accelerator: ClassVar[dict[str, tuple[dict[str, int], ...]]]
    tolerance: ClassVar[Tolerance] = BF16_TOLERANCE
    # input tensor name -> its domain (distribution and range of the default draw, and the edge that
    # the stress sets probe); every input tensor must be named (a test checks it)
    domain: ClassVar[dict[str, str]] = {}
    # drawn in every hidden evaluation besides the default sets (at least one per task)
    stress_sets: ClassVar[tuple[StressSet, ...]] = ()

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

    @abstractmethod
    def tensors(self, cfg: TaskConfig) -> list[TensorSpec]:
        """Inputs then outputs, in the order they are laid out in memory."""

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
