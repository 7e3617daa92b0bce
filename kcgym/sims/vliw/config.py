"""The VLIW tile's hardware configuration (AIE-ML-like defaults). A changed config is a new machine."""

from __future__ import annotations

import math

from pydantic import model_validator

from kcgym.sims.hwconfig import HWConfig, hw_field

LANES = 32  # bf16 lanes of a 512-bit vector register (and fp32 lanes of a 1024-bit accumulator)
VECTOR_BYTES = 2 * LANES  # one vector load or store moves 64 bytes
LINE_BYTES = VECTOR_BYTES  # data memory is tracked (DMA readiness) in lines of one vector
MMUL_MACS = 4 * 8 * 4  # one VMMUL: a 4x8 bf16 block times an 8x4 block


class VLIWConfig(HWConfig):
    """Memory sizes, latencies and DMA timing of the VLIW tile. Frozen; override via ``gym.make(hw=...)``."""

    dm_bytes: int = hw_field(
        65536, "tile data memory (DM) in bytes", "> 0; multiple of dm_banks * 64; <= 1 MiB (1048576)"
    )
    dm_banks: int = hw_field(8, "single-ported DM banks; bank = address // (dm_bytes / dm_banks)", "> 0")
    imem_bundles: int = hw_field(1024, "program memory, in bundles", "1..4096")
    load_latency: int = hw_field(6, "cycles from a vector load to its register being usable", "> 0")
    alu_latency: int = hw_field(2, "vector add/sub/max/min", "> 0")
    mul_latency: int = hw_field(4, "vector multiply and the multiply-accumulate family", "> 0")
    reduce_latency: int = hw_field(4, "lane reductions", "> 0")
    nonlinear_latency: int = hw_field(8, "VEXP2 / VINV / VRSQRT", "> 0")
    move_latency: int = hw_field(2, "accumulator <-> vector conversions (VCONV / VUPS)", "> 0")
    branch_penalty: int = hw_field(3, "extra cycles of a taken branch (loop back-edges are free)", "> 0")
    loop_depth: int = hw_field(4, "nesting depth of zero-overhead loops", "> 0")
    dma_latency: int = hw_field(48, "cycles from DMA start to its first bytes", "> 0")
    dma_bytes_per_cycle: int = hw_field(32, "bandwidth of each DMA engine (one in, one out)", "> 0")
    dma_max_bytes: int = hw_field(16384, "most bytes one DMA instruction moves", "> 0; even; <= dm_bytes")

    @model_validator(mode="after")
    def _check(self) -> VLIWConfig:
        self.require_positive(type(self).model_fields)
        if self.dm_bytes % (self.dm_banks * LINE_BYTES) or self.dm_bytes > (1 << 20):
            raise ValueError(f"dm_bytes must be a multiple of dm_banks * {LINE_BYTES} and at most 1 MiB")
        if self.dma_max_bytes % 2 or self.dma_max_bytes > self.dm_bytes:
            raise ValueError("dma_max_bytes must be even and at most dm_bytes")
        if self.imem_bundles > 4096:
            raise ValueError("imem_bundles must be at most 4096")
        return self

    # derived quantities -------------------------------------------------------------
    @property
    def dm_elements(self) -> int:
        return self.dm_bytes // 2

    @property
    def dm_lines(self) -> int:
        return self.dm_bytes // LINE_BYTES

    @property
    def bank_bytes(self) -> int:
        return self.dm_bytes // self.dm_banks

    @property
    def peak_macs_per_cycle(self) -> int:
        """The vector slot's multiply-accumulates per cycle: one VMMUL (a 4x8x4 block, 128 MACs) per bundle."""
        return MMUL_MACS

    def dma_cycles(self, nbytes: int) -> int:
        """Occupancy of one DMA moving ``nbytes`` bytes."""
        return math.ceil(nbytes / self.dma_bytes_per_cycle)
