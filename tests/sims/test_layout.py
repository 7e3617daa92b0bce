"""The one layout rule (kcgym/sims/layout.py), on every machine, task and configuration.

Inputs, then constants (where they share the memory), then the outputs from the first writable
boundary, then one scratch region; every region aligned, disjoint and inside the machine's image;
the template compiler's named intermediates carved inside the scratch region, never beside it.
"""

from __future__ import annotations

import pytest

from kcgym.registry import ACCELERATORS, SUPPORTED
from kcgym.sims.base import MemoryLayout, MemoryRegion, SimulatedAccelerator
from kcgym.sims.layout import SCRATCH, WORKSPACE_MIN_BYTES, Buffer, WorkspaceTooSmall, carve
from kcgym.tasks import tasks_for

MACHINES = list(SUPPORTED)
CASES = [(m, name, i) for m in MACHINES for name in SUPPORTED[m] for i in range(1, 6)]


def _case(machine: str, name: str, index: int):
    acc = ACCELERATORS[machine]
    task = tasks_for(acc.numerics)[name]
    cfg = task.config(machine, index)
    return acc, task, cfg, acc.make_hw()


def _image_units(acc, layout: MemoryLayout, task, cfg, hw) -> int:
    """How much of the data memory the machine's image spans (what the simulator bounds-checks)."""
    if acc.name == "NPU":
        return acc.hbm_size(layout)
    if acc.name == "VLIW":
        return acc.ext_size(layout)
    return acc.ext_size(task, cfg, hw, layout)


def test_every_machine_uses_the_shared_layout_builder():
    for m in MACHINES:
        acc = ACCELERATORS[m]
        assert isinstance(acc, SimulatedAccelerator)
        assert type(acc).layout is SimulatedAccelerator.layout, f"{m} overrides the one layout rule"


@pytest.mark.parametrize("machine,name,index", CASES)
def test_one_rule_aligned_disjoint_in_bounds(machine, name, index):
    acc, task, cfg, hw = _case(machine, name, index)
    rule = acc.layout_rule
    layout = acc.layout(task, cfg, hw)
    data = [r for r in layout.regions if r.space == rule.space]
    roles = [r.role for r in data]
    order = ["input", "constant", "output", "scratch"]
    assert roles == sorted(roles, key=order.index), roles
    assert roles.count("scratch") == 1 and data[-1].name == SCRATCH
    assert [r.name for r in data if r.role == "input"] == [t.name for t in task.inputs(cfg)]
    assert [r.name for r in data if r.role == "output"] == [t.name for t in task.outputs(cfg)]
    for r in data:
        assert r.offset % rule.align == 0, r
    first_out = next(r for r in data if r.role == "output")
    assert first_out.offset % (rule.writable_align or rule.align) == 0
    for a, b in zip(data, data[1:], strict=False):
        assert a.offset + a.extent <= b.offset, (a, b)
    assert data[-1].offset + data[-1].extent <= _image_units(acc, layout, task, cfg, hw)
    tensor_units = sum(r.extent for r in data if r.role in ("input", "output"))
    assert data[-1].extent >= max(tensor_units, WORKSPACE_MIN_BYTES // rule.unit_bytes)
    consts = [r for r in layout.regions if r.role == "constant"]
    assert [r.name for r in consts] == list(task.constants(cfg))
    if rule.constant_space is not None:
        assert all(r.space == rule.constant_space for r in consts)
        cells = [c for r in consts for c in range(r.offset, r.offset + r.extent)]
        assert len(cells) == len(set(cells))


@pytest.mark.parametrize("machine", ["NPU", "VLIW"])
def test_compiler_scratch_is_carved_inside_the_workspace(machine):
    acc = ACCELERATORS[machine]
    hw = acc.make_hw()
    carved = 0
    for name in SUPPORTED[machine]:
        task = tasks_for(acc.numerics)[name]
        for cfg in task.configs(machine):
            layout, kernel = acc.layout(task, cfg, hw), acc.kernel_layout(task, cfg, hw)
            assert kernel.regions[: len(layout.regions)] == layout.regions  # the agent's view is a prefix
            ws = layout.region(SCRATCH)
            extra = kernel.regions[len(layout.regions):]
            carved += len(extra)
            for r in extra:
                assert ws.offset <= r.offset and r.offset + r.size <= ws.offset + ws.size, (name, cfg.label, r)
            for a, b in zip(extra, extra[1:], strict=False):
                assert a.offset + a.size <= b.offset
    assert carved > 0


def test_a_plan_larger_than_the_workspace_is_a_clear_error():
    ws = MemoryRegion(SCRATCH, "HBM", 64, (128,), "scratch")
    layout = MemoryLayout((MemoryRegion("X", "HBM", 0, (64,), "input"), ws))
    ok = carve(layout, [Buffer("A", (64,)), Buffer("B", (60,))], 64)
    assert [(r.name, r.offset) for r in ok.regions[2:]] == [("A", 64), ("B", 128)]
    with pytest.raises(WorkspaceTooSmall, match="needs 192 elements; scratch holds 128"):
        carve(layout, [Buffer("A", (65,)), Buffer("B", (64,))], 64)
    assert carve(layout, [], 64) is layout


def test_byte_addressed_layout_describes_absolute_addresses():
    acc, task, cfg, hw = _case("RVV", "softmax", 1)
    text = acc.layout(task, cfg, hw).describe()
    assert text.startswith("- X (input): bytes 0x20000000..") and f"{SCRATCH} (scratch): bytes 0x2000" in text
