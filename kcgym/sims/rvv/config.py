"""The RVV machine's hardware configuration (Coral-NPU-like defaults). A changed config is a new machine."""

from __future__ import annotations

from pydantic import model_validator

from kcgym.sims.hwconfig import Bound, HWConfig, bandwidth_bound, cycles_bound, entries_bound, hw_field, memory_bound

ITCM_BASE = 0x0000_0000
DTCM_BASE = 0x0001_0000
EXT_BASE = 0x2000_0000
VLEN_BITS = 128  # fixed: the assembler, the simulator's lane layout and the docs assume it
VLENB = VLEN_BITS // 8
ELEN = 32
ITCM = Bound(64, DTCM_BASE - ITCM_BASE, f"the ITCM at {ITCM_BASE:#x} ends where the DTCM begins, {DTCM_BASE:#x}")
# the simulator holds the DTCM byte for byte; the budget is also below EXT_BASE - DTCM_BASE (a test checks it),
# where the DTCM would run into external memory
DTCM = memory_bound(1, 1024, "DTCM byte")


class RVVConfig(HWConfig):
    """Memory sizes and timing constants of the RV32IM + Zve32x core. Frozen; override via ``gym.make(hw=...)``.

    Timing follows the issue's cost model: an in-order scalar pipeline, a vector unit behind a
    FIFO, single-cycle DTCM and an external memory with latency and limited bandwidth, so that
    staging data in DTCM (and keeping loads in flight) pays.
    """

    itcm_bytes: int = hw_field(
        8192, "instruction memory (ITCM) at 0x0; a larger program is rejected", "multiple of 4", ITCM
    )
    dtcm_bytes: int = hw_field(32768, "single-cycle data memory (DTCM) at 0x10000", "multiple of 16", DTCM)
    ext_latency: int = hw_field(20, "cycles from an external-memory access to its data", bound=cycles_bound(0))
    ext_bytes_per_cycle: int = hw_field(
        4, "external-memory (AXI) bandwidth in bytes per cycle", bound=bandwidth_bound()
    )
    vector_queue_depth: int = hw_field(8, "vector instructions the scalar core may run ahead", bound=entries_bound())
    load_use_latency: int = hw_field(2, "cycles from a DTCM scalar load to its use", bound=cycles_bound(0))
    mul_latency: int = hw_field(3, "cycles from a scalar multiply to its use", bound=cycles_bound(0))
    div_cycles: int = hw_field(34, "cycles a scalar divide blocks the pipeline", bound=cycles_bound())
    branch_penalty: int = hw_field(
        3, "extra cycles of a mispredicted branch (static: backward taken)", bound=cycles_bound(0)
    )
    jump_penalty: int = hw_field(1, "extra cycles of jal; jalr pays one more", bound=cycles_bound(0))
    vmul_latency: int = hw_field(3, "extra result latency of vector multiplies", bound=cycles_bound(0))
    vdiv_cycles_per_chunk: int = hw_field(8, "vector divide occupancy per 128-bit chunk", bound=cycles_bound())

    @model_validator(mode="after")
    def _check(self) -> RVVConfig:
        if self.itcm_bytes % 4:
            raise ValueError("itcm_bytes must be a multiple of 4")
        if self.dtcm_bytes % 16:
            raise ValueError("dtcm_bytes must be a multiple of 16")
        return self

    def state_parts(self) -> dict[str, int]:
        """Memories as the interpreter holds them: the DTCM byte for byte, the ITCM as one int32 per instruction."""
        return {"DTCM (dtcm_bytes)": self.dtcm_bytes, "ITCM (itcm_bytes)": self.itcm_bytes}

    @property
    def itcm_instructions(self) -> int:
        return self.itcm_bytes // 4
