"""The RVV machine's hardware configuration (Coral-NPU-like defaults). A changed config is a new machine."""

from __future__ import annotations

from pydantic import model_validator

from kcgym.sims.hwconfig import HWConfig, hw_field

ITCM_BASE = 0x0000_0000
DTCM_BASE = 0x0001_0000
EXT_BASE = 0x2000_0000
VLEN_BITS = 128  # fixed: the assembler, the simulator's lane layout and the docs assume it
VLENB = VLEN_BITS // 8
ELEN = 32


class RVVConfig(HWConfig):
    """Memory sizes and timing constants of the RV32IM + Zve32x core. Frozen; override via ``gym.make(hw=...)``.

    Timing follows the issue's cost model: an in-order scalar pipeline, a vector unit behind a
    FIFO, single-cycle DTCM and an external memory with latency and limited bandwidth, so that
    staging data in DTCM (and keeping loads in flight) pays.
    """

    itcm_bytes: int = hw_field(
        8192, "instruction memory (ITCM) at 0x0; a larger program is rejected", "multiple of 4; >= 64"
    )
    dtcm_bytes: int = hw_field(32768, "single-cycle data memory (DTCM) at 0x10000", "multiple of 16; 1024..0x1FFF0000")
    ext_latency: int = hw_field(20, "cycles from an external-memory access to its data", ">= 0")
    ext_bytes_per_cycle: int = hw_field(4, "external-memory (AXI) bandwidth in bytes per cycle", ">= 1")
    vector_queue_depth: int = hw_field(8, "vector instructions the scalar core may run ahead", "1..64")
    load_use_latency: int = hw_field(2, "cycles from a DTCM scalar load to its use")
    mul_latency: int = hw_field(3, "cycles from a scalar multiply to its use")
    div_cycles: int = hw_field(34, "cycles a scalar divide blocks the pipeline")
    branch_penalty: int = hw_field(3, "extra cycles of a mispredicted branch (static: backward taken)")
    jump_penalty: int = hw_field(1, "extra cycles of jal; jalr pays one more")
    vmul_latency: int = hw_field(3, "extra result latency of vector multiplies")
    vdiv_cycles_per_chunk: int = hw_field(8, "vector divide occupancy per 128-bit chunk")

    @model_validator(mode="after")
    def _check(self) -> RVVConfig:
        if self.itcm_bytes < 64 or self.itcm_bytes % 4:
            raise ValueError("itcm_bytes must be a multiple of 4 and at least 64")
        if not 1024 <= self.dtcm_bytes <= EXT_BASE - DTCM_BASE or self.dtcm_bytes % 16:
            raise ValueError("dtcm_bytes must be a multiple of 16 in 1024..0x1FFF0000")
        if self.ext_bytes_per_cycle < 1 or self.ext_latency < 0 or self.vector_queue_depth < 1:
            raise ValueError("ext_bytes_per_cycle and vector_queue_depth must be >= 1, ext_latency >= 0")
        if self.vector_queue_depth > 64:
            raise ValueError("vector_queue_depth must be <= 64")
        return self

    @property
    def itcm_instructions(self) -> int:
        return self.itcm_bytes // 4
