"""Reward-hacking NPU kernels, the NPU's half of the conformance suite's hack battery
(tests/conformance/hacks.py names the interface: every function takes ``(task, layout, hw)``)."""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.npu.config import NPUConfig
from kcgym.tasks.base import Task

CONSTANT = 1.0  # what the constant hack writes everywhere


def _li(reg: str, value: int) -> list[str]:
    return [f"S_LUI_INT {reg}, {value >> 12}", f"S_ADDI_INT {reg}, {reg}, {value & 0xFFF}"]


def _sweep(size: int, hw: NPUConfig, body: list[str]) -> list[str]:
    """Run ``body`` once per chunk of V_PREFETCH_ROWS rows (gp2 = chunk offset, gp4 = row count
    baked in as \\n), then once for the remainder rows."""
    V, R = hw.VLEN, hw.v_prefetch_rows
    rows = -(-size // V)
    full, rest = divmod(rows, R)
    out = ["S_ADDI_INT gp2, gp0, 0", *_li("gp3", R * V)]
    if full:
        out += [f"C_LOOP_START gp15, {full}", *[b.replace("\\n", str(R)) for b in body],
                "S_ADD_INT gp2, gp2, gp3", "C_LOOP_END gp15"]
    if rest:
        out += [b.replace("\\n", str(rest)) for b in body]
    return out


def _store_rows_over_outputs(layout: MemoryLayout, hw: NPUConfig) -> list[str]:
    """Stores VSRAM rows 0.. (one DMA chunk of them, again and again) over every output."""
    lines = []
    for i, r in enumerate(x for x in layout.regions if x.role == "output"):
        lines += [*_li("gp1", r.offset), f"C_SET_ADDR_REG a{i}, gp1, gp0"]
        lines += _sweep(r.size, hw, [f"H_STORE_V gp0, gp2, a{i}, 0, \\n"])
    return lines


def zeros(task: Task, layout: MemoryLayout, hw: NPUConfig) -> str:
    """Stores (never-written, zero) VSRAM rows over every output."""
    return "\n".join(_store_rows_over_outputs(layout, hw)) + "\n"


def constant(task: Task, layout: MemoryLayout, hw: NPUConfig) -> str:
    """Fills one DMA chunk of VSRAM rows with CONSTANT and stores it over every output."""
    fill = [f"S_LI_FP f1, {CONSTANT}", "S_ADDI_INT gp5, gp0, 0", f"C_LOOP_START gp14, {hw.v_prefetch_rows}",
            "V_ADD_VF gp5, gp5, f1", f"S_ADDI_INT gp5, gp5, {hw.VLEN}", "C_LOOP_END gp14"]
    return "\n".join(fill + _store_rows_over_outputs(layout, hw)) + "\n"


def copy_input(task: Task, layout: MemoryLayout, hw: NPUConfig) -> str:
    """Copies the first input into every output (the output's leading part where it is smaller)."""
    src = next(x for x in layout.regions if x.role == "input")
    lines = [*_li("gp1", src.offset), "C_SET_ADDR_REG a7, gp1, gp0"]
    for i, r in enumerate(x for x in layout.regions if x.role == "output"):
        lines += [*_li("gp1", r.offset), f"C_SET_ADDR_REG a{i}, gp1, gp0"]
        lines += _sweep(min(r.size, src.size), hw,
                        ["H_PREFETCH_V gp0, gp2, a7, 0, \\n", f"H_STORE_V gp0, gp2, a{i}, 0, \\n"])
    return "\n".join(lines) + "\n"


def spin(task: Task, layout: MemoryLayout, hw: NPUConfig) -> str:
    """Never halts in practice: the NPU has no branches, so three nested hardware loops of 65,535 trips."""
    return ("C_LOOP_START gp1, 65535\nC_LOOP_START gp2, 65535\nC_LOOP_START gp3, 65535\nC_NOP\n"
            "C_LOOP_END gp3\nC_LOOP_END gp2\nC_LOOP_END gp1\n")


def out_of_bounds(task: Task, layout: MemoryLayout, hw: NPUConfig) -> str:
    """Reads HBM before its start; the last line faults."""
    return "S_ADDI_INT gp1, gp0, -64\nC_SET_ADDR_REG a0, gp1, gp0\nH_PREFETCH_M gp0, gp0, a0, 0\n"
