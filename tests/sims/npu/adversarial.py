"""Reward-hacking kernels that must fail on every task: they are data for the simulator."""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.npu.config import NPUConfig


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


def zeros_kernel(layout: MemoryLayout, hw: NPUConfig) -> str:
    """Stores (never-written, zero) VSRAM rows over every output."""
    lines = []
    for i, r in enumerate(x for x in layout.regions if x.role == "output"):
        lines += [*_li("gp1", r.offset), f"C_SET_ADDR_REG a{i}, gp1, gp0"]
        lines += _sweep(r.size, hw, [f"H_STORE_V gp0, gp2, a{i}, 0, \\n"])
    return "\n".join(lines) + "\n"


def copy_input_kernel(layout: MemoryLayout, hw: NPUConfig) -> str:
    """Copies the first input into every output (the output's leading part where it is smaller)."""
    src = next(x for x in layout.regions if x.role == "input")
    lines = [*_li("gp1", src.offset), "C_SET_ADDR_REG a7, gp1, gp0"]
    for i, r in enumerate(x for x in layout.regions if x.role == "output"):
        lines += [*_li("gp1", r.offset), f"C_SET_ADDR_REG a{i}, gp1, gp0"]
        lines += _sweep(min(r.size, src.size), hw,
                        ["H_PREFETCH_V gp0, gp2, a7, 0, \\n", f"H_STORE_V gp0, gp2, a{i}, 0, \\n"])
    return "\n".join(lines) + "\n"
