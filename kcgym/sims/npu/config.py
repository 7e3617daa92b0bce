"""The NPU hardware configuration (PLENA-like defaults). A changed config is a new machine."""

from __future__ import annotations

import math

from pydantic import model_validator

from kcgym.limits import MAX_EXPANDED_LINES
from kcgym.sims.hwconfig import (
    Bound,
    HWConfig,
    bandwidth_bound,
    cycles_bound,
    hw_field,
    memory_bound,
    tile_bound,
)

WORD = 4  # the simulator holds every SRAM element as one fp32 / int32 word
TILE = tile_bound()  # MLEN, VLEN, BLEN, HLEN
ROWS = memory_bound(WORD, what="row (at least one element)")
WORDS = memory_bound(WORD, what="word")
IMEM = Bound(1, MAX_EXPANDED_LINES, "the assembler expands at most that many lines, kcgym.limits.MAX_EXPANDED_LINES")


class NPUConfig(HWConfig):
    """Geometry, memory sizes and timing constants of the NPU. Frozen; override via ``gym.make(hw=...)``."""

    MLEN: int = hw_field(
        64, "matrix tile dimension (MSRAM row length, systolic depth)", "power of two; = VLEN; >= BLEN", TILE
    )
    VLEN: int = hw_field(64, "vector length in elements (VSRAM row length)", "= MLEN", TILE)
    BLEN: int = hw_field(
        4, "block size: M_MM computes a BLEN x BLEN output block", "power of two; <= MLEN; <= v_prefetch_rows", TILE
    )
    HLEN: int = hw_field(16, "head dimension of the paper's prompt (for per-head ops)", bound=TILE)
    vsram_rows: int = hw_field(1024, "VSRAM capacity in rows of VLEN elements", ">= v_prefetch_rows", ROWS)
    msram_tiles: int = hw_field(16, "MSRAM capacity in MLEN x MLEN tiles", bound=memory_bound(WORD, what="tile"))
    fpsram_size: int = hw_field(512, "FP SRAM words (fp32)", bound=WORDS)
    intsram_size: int = hw_field(512, "INT SRAM words (int32)", bound=WORDS)
    v_prefetch_rows: int = hw_field(
        4, "most rows one H_PREFETCH_V / H_STORE_V moves (its nrows is 1 to this)",
        "power of two; >= BLEN; <= vsram_rows", ROWS,
    )
    hbm_latency: int = hw_field(100, "cycles from DMA start to the first data", bound=cycles_bound())
    hbm_bytes_per_cycle: int = hw_field(64, "HBM bandwidth (512-bit bus)", bound=bandwidth_bound())
    mm_occupancy: int = hw_field(8, "cycles the matrix unit is busy per M_MM", bound=cycles_bound())
    imem_size: int = hw_field(16384, "instruction memory, in instructions", bound=IMEM)

    @model_validator(mode="after")
    def _check(self) -> NPUConfig:
        if self.MLEN != self.VLEN:
            raise ValueError("MLEN must equal VLEN (matrix tiles are built from vector rows)")
        self.require_power_of_two(("MLEN", "BLEN", "v_prefetch_rows"))
        if self.BLEN > self.MLEN or self.v_prefetch_rows > self.vsram_rows:
            raise ValueError("BLEN must not exceed MLEN; v_prefetch_rows must fit in VSRAM")
        if self.v_prefetch_rows < self.BLEN:
            raise ValueError("v_prefetch_rows must be >= BLEN (one DMA moves a whole BLEN-row block)")
        return self

    def state_parts(self) -> dict[str, int]:
        """The SRAMs as the interpreter holds them: a word per element plus two int32 scoreboards per row."""
        return {
            "VSRAM (vsram_rows x VLEN)": self.vsram_rows * (self.VLEN * WORD + 2 * 4),
            "MSRAM (msram_tiles x MLEN x MLEN)": self.msram_rows * (self.MLEN * WORD + 2 * 4),
            "FP SRAM (fpsram_size)": self.fpsram_size * WORD,
            "INT SRAM (intsram_size)": self.intsram_size * WORD,
        }

    # derived quantities -------------------------------------------------------------
    @property
    def msram_rows(self) -> int:
        return self.msram_tiles * self.MLEN

    @property
    def vsram_size(self) -> int:
        return self.vsram_rows * self.VLEN

    @property
    def msram_size(self) -> int:
        return self.msram_rows * self.MLEN

    @property
    def peak_macs_per_cycle(self) -> float:
        return self.BLEN * self.MLEN * self.BLEN / self.mm_occupancy

    @property
    def mv_occupancy(self) -> int:
        return math.ceil(self.MLEN * self.MLEN / self.peak_macs_per_cycle)

    def dma_cycles(self, elements: int) -> int:
        """Occupancy of one DMA moving ``elements`` bf16 values."""
        return math.ceil(2 * elements / self.hbm_bytes_per_cycle)
