"""The VLIW tile's hardware configuration (AIE-ML-like defaults). A changed config is a new machine."""

from __future__ import annotations

import math

from pydantic import model_validator

from kcgym.sims.hwconfig import Bound, HWConfig, bandwidth_bound, cycles_bound, entries_bound, hw_field

LANES = 32  # bf16 lanes of a 512-bit vector register (and fp32 lanes of a 1024-bit accumulator)
VECTOR_BYTES = 2 * LANES  # one vector load or store moves 64 bytes
LINE_BYTES = VECTOR_BYTES  # data memory is tracked (DMA readiness) in lines of one vector
MMUL_MACS = 4 * 8 * 4  # one VMMUL: a 4x8 bf16 block times an 8x4 block
MAX_DM_BYTES = 1 << 20  # a DM byte address is a 20-bit immediate (PMOVI, ADDI, ANDI)
MAX_BUNDLES = 4096  # a branch or loop target is a 12-bit bundle index (isa.TARGET)
DM = Bound(LINE_BYTES, MAX_DM_BYTES, "a DM byte address is a 20-bit immediate (PMOVI, ADDI, ANDI)")
CYCLES = cycles_bound()


class VLIWConfig(HWConfig):
    """Memory sizes, latencies and DMA timing of the VLIW tile. Frozen; override via ``gym.make(hw=...)``."""

    dm_bytes: int = hw_field(
        65536, "tile data memory (DM) in bytes", f"multiple of dm_banks * {LINE_BYTES}", DM
    )
    dm_banks: int = hw_field(
        8, "single-ported DM banks; bank = address // (dm_bytes / dm_banks)", bound=entries_bound()
    )
    imem_bundles: int = hw_field(
        1024, "program memory, in bundles", bound=Bound(1, MAX_BUNDLES, "a branch or loop target is a 12-bit index")
    )
    load_latency: int = hw_field(6, "cycles from a vector load to its register being usable", bound=CYCLES)
    alu_latency: int = hw_field(2, "vector add/sub/max/min", bound=CYCLES)
    mul_latency: int = hw_field(4, "vector multiply and the multiply-accumulate family", bound=CYCLES)
    reduce_latency: int = hw_field(4, "lane reductions", bound=CYCLES)
    nonlinear_latency: int = hw_field(8, "VEXP2 / VINV / VRSQRT", bound=CYCLES)
    move_latency: int = hw_field(2, "accumulator <-> vector conversions (VCONV / VUPS)", bound=CYCLES)
    branch_penalty: int = hw_field(3, "extra cycles of a taken branch (loop back-edges are free)", bound=CYCLES)
    loop_depth: int = hw_field(4, "nesting depth of zero-overhead loops", bound=entries_bound())
    dma_latency: int = hw_field(48, "cycles from DMA start to its first bytes", bound=CYCLES)
    dma_bytes_per_cycle: int = hw_field(32, "bandwidth of each DMA engine (one in, one out)", bound=bandwidth_bound())
    dma_max_bytes: int = hw_field(16384, "most bytes one DMA instruction moves", "even; <= dm_bytes", DM._replace(lo=2))

    @model_validator(mode="after")
    def _check(self) -> VLIWConfig:
        if self.dm_bytes % (self.dm_banks * LINE_BYTES):
            raise ValueError(f"dm_bytes must be a multiple of dm_banks * {LINE_BYTES}")
        if self.dma_max_bytes % 2 or self.dma_max_bytes > self.dm_bytes:
            raise ValueError("dma_max_bytes must be even and at most dm_bytes")
        return self

    def state_parts(self) -> dict[str, int]:
        """DM as the interpreter holds it: an fp32 word per bf16 element, two int32 DMA scoreboards per line."""
        return {"DM (dm_bytes)": 2 * self.dm_bytes + 2 * 4 * self.dm_lines}

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
