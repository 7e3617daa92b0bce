"""The one memory-layout rule every machine uses: where a task's tensors, scratch and constants lie.

The agent reads this layout in its prompt, so it must not depend on any kernel, the template
compiler's included. One rule, parametrised per machine by a :class:`LayoutRule`:

1. the inputs, in the task's order;
2. the constants (in the same memory, or in the machine's own constant memory);
3. the outputs, from the next ``writable_align`` boundary (the first writable byte);
4. one ``scratch`` region, free workspace of ``max(task tensor bytes, WORKSPACE_MIN_BYTES)``.

Every region starts on an ``align`` boundary, so the regions are disjoint and in bounds by
construction (tests/sims/test_layout.py checks it on every machine, task and config).

Kernels that need named intermediates (the template compiler's stage results) ask for them with
:func:`carve`: named sub-regions of ``scratch``, handed out in order. A plan that does not fit is a
clear error, never a silent overlap.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from kcgym.tasks.base import Task, TaskConfig


@dataclass(frozen=True)
class MemoryRegion:
    """Where one tensor (or constant table) lies in one memory space."""

    name: str
    space: str  # e.g. "HBM", "FPSRAM"
    offset: int  # in elements of that space
    shape: tuple[int, ...]
    role: str  # "input" | "output" | "constant" | "scratch"
    description: str = ""
    itemsize: int = 1  # offset units one element takes (1 where offsets count elements)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def extent(self) -> int:
        """Offset units the region spans."""
        return self.size * self.itemsize


@dataclass(frozen=True)
class MemoryLayout:
    regions: tuple[MemoryRegion, ...]
    origin: int | None = None  # set for a byte-addressed memory: the address of offset 0

    def region(self, name: str) -> MemoryRegion:
        for r in self.regions:
            if r.name == name:
                return r
        raise KeyError(name)

    def describe(self) -> str:
        lines = []
        for r in self.regions:
            shape = "x".join(str(s) for s in r.shape)
            if self.origin is not None:
                start = self.origin + r.offset
                lines.append(f"- {r.name} ({r.role}): bytes {start:#010x}..{start + r.extent - 1:#010x}, "
                             f"shape [{shape}], {r.description}")
                continue
            desc = f" - {r.description}" if r.description else ""
            end = r.offset + r.extent - 1
            lines.append(f"- {r.name} ({r.role}): {r.space}[{r.offset}..{end}], shape [{shape}]{desc}")
        return "\n".join(lines)


SCRATCH = "scratch"  # the name of the workspace region on every machine
# the workspace holds as many bytes as the task's own tensors, and at least this many (small tasks
# still get room): every template compiler's stage buffers fit it on every supported task and
# config (the largest plan, VLIW rope at C1, needs 1.33x the tensors; tests/sims/test_layout.py)
WORKSPACE_MIN_BYTES = 4096


@dataclass(frozen=True)
class LayoutRule:
    """What differs between machines: the memory, its addressing unit and alignments, constants' form."""

    space: str  # the memory the task's tensors live in ("HBM", "EXT")
    align: int  # every region starts at a multiple of this many offset units
    unit_bytes: int  # bytes per offset unit (bf16 elements: 2; a byte-addressed memory: 1)
    writable_align: int | None = None  # the outputs start at a multiple of this (default: ``align``)
    constant_space: str | None = None  # a memory of its own for constants (NPU: FPSRAM); else ``space``
    constant_lanes: int = 1  # elements one constant fills (a VLIW constant is a whole vector)
    constant_units: int = 1  # offset units per constant element (an int32 word in a byte memory: 4)
    itemsize: Callable[[Task, str], int] = lambda task, name: 1  # offset units per element of a tensor
    # (task, tensor name, its description, offset) -> the description the agent reads
    describe_tensor: Callable[[Task, str, str, int], str] = lambda task, name, desc, offset: desc
    describe_constant: Callable[[str, float, int], str] = lambda name, value, offset: f"= {value!r}"
    scratch_note: str = "free workspace"
    constant_note: str = "one per constant"  # how a constant is stored, for the guide
    origin: int | None = None  # a byte-addressed memory's base address: the layout shows absolute addresses

    @property
    def unit(self) -> str:
        return "bytes" if self.unit_bytes == 1 else "elements"

    def describe(self) -> str:
        """The rule in words, for the machine's guide (``{{layout_rule}}``): generated, so it stays exact."""
        where = f"in {self.constant_space} ({self.constant_note})" if self.constant_space else f"({self.constant_note})"
        outputs = (f"from the next multiple of {self.writable_align} {self.unit}" if self.writable_align
                   else "right after them")
        return (f"The layout follows one rule on every kcgym machine: the inputs, in the order your prompt lists "
                f"them; then the task's constants {where}; then the outputs, {outputs}; then one region named "
                f"`{SCRATCH}` (role `scratch`): free workspace for any kernel, as large as the task's tensors "
                f"together and at least {WORKSPACE_MIN_BYTES} bytes. Every region starts at a multiple of "
                f"{self.align} {self.unit}, and no two overlap. Offsets count {self.unit}.")

    def aligned(self, n: int, to: int | None = None) -> int:
        a = to or self.align
        return math.ceil(n / a) * a


def build_layout(rule: LayoutRule, task: Task, cfg: TaskConfig) -> MemoryLayout:
    """The task's layout on a machine with ``rule`` (the steps in the module docstring)."""
    regions: list[MemoryRegion] = []
    offset = 0

    def place(name: str, shape: tuple[int, ...], role: str, desc: str, units: int, space: str | None = None) -> None:
        nonlocal offset
        regions.append(MemoryRegion(name, space or rule.space, offset, shape, role, desc, units))
        offset = rule.aligned(offset + math.prod(shape) * units)

    tensors = task.tensors(cfg)
    for t in tensors:
        if t.role == "input":
            place(t.name, t.shape, "input", rule.describe_tensor(task, t.name, t.description or "", offset),
                  rule.itemsize(task, t.name))
    constants = task.constants(cfg)
    if rule.constant_space is None:
        for name, value in constants.items():
            place(name, (rule.constant_lanes,), "constant", rule.describe_constant(name, value, offset),
                  rule.constant_units)
    offset = rule.aligned(offset, rule.writable_align)
    for t in tensors:
        if t.role == "output":
            place(t.name, t.shape, "output", rule.describe_tensor(task, t.name, t.description or "", offset),
                  rule.itemsize(task, t.name))
    tensor_units = sum(math.prod(t.shape) * rule.itemsize(task, t.name) for t in tensors)
    scratch = rule.aligned(max(tensor_units, WORKSPACE_MIN_BYTES // rule.unit_bytes))
    place(SCRATCH, (scratch,), "scratch", rule.describe_tensor(task, SCRATCH, rule.scratch_note, offset), 1)
    if rule.constant_space is not None:
        for i, (name, value) in enumerate(constants.items()):
            regions.append(MemoryRegion(name, rule.constant_space, i * rule.constant_lanes, (rule.constant_lanes,),
                                        "constant", rule.describe_constant(name, value, i), rule.constant_units))
    return MemoryLayout(tuple(regions), origin=rule.origin)


@dataclass(frozen=True)
class Buffer:
    """One named intermediate a kernel asks the workspace for."""

    name: str
    shape: tuple[int, ...]
    description: str = ""


class WorkspaceTooSmall(ValueError):
    """A kernel's scratch plan does not fit the layout's ``scratch`` region."""


def carve(layout: MemoryLayout, buffers: Sequence[Buffer], align: int) -> MemoryLayout:
    """``layout`` plus ``buffers`` as named regions inside its ``scratch`` region, in order, each on an
    ``align`` boundary. The agent's layout is unchanged; this is the kernel's own view of the workspace."""
    if not buffers:
        return layout
    ws = layout.region(SCRATCH)
    offset, end = ws.offset, ws.offset + ws.size
    named = []
    for b in buffers:
        named.append(MemoryRegion(b.name, ws.space, offset, b.shape, "scratch", b.description))
        offset = math.ceil((offset + math.prod(b.shape)) / align) * align
    if named[-1].offset + named[-1].size > end:
        raise WorkspaceTooSmall(f"the scratch plan ({', '.join(b.name for b in buffers)}) needs "
                                f"{named[-1].offset + named[-1].size - ws.offset} elements; {SCRATCH} holds {ws.size}")
    return replace(layout, regions=layout.regions + tuple(named))
