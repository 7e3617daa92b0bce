"""The CPU machine's hardware configuration: a BOOM-like out-of-order core (defaults near MediumBoom).

A changed config is a new machine. Every timing parameter of the guide's rules CPU-T* is a field here;
array sizes of the simulator state (ROB ring, issue-queue rings, predictor tables, cache tags) come from
these fields, so one compiled interpreter serves every program and batch on one config.
"""

from __future__ import annotations

import re

from pydantic import model_validator

from kcgym.sims.hwconfig import Bound, HWConfig, hw_field
from kcgym.sims.rvv.config import DTCM_BASE, EXT_BASE, RVVConfig

RAM_BASE = DTCM_BASE  # .data/.rodata/.bss and the stack (the RVV core's DTCM address: one assembler, one QEMU map)
TENSOR_BASE = EXT_BASE  # the task's tensors (the layout's origin)
PREDICTORS = ("bimodal", "gshare")  # values of ``predictor``
CALENDAR_CYCLES = 256  # issue-slot calendar window per functional-unit class (see machine.py)

MAX_WIDTH = 8
MAX_ROB = 512
MAX_QUEUE = 128
MAX_UNITS = 8
MAX_LATENCY = 1024
MAX_CACHE_BYTES = 1 << 20
MAX_TABLE = 1 << 16


def _field(default: int, meaning: str, constraints: str) -> int:
    """:func:`hw_field` with the range written in ``constraints`` (``"1..8"``, ``"<= N"``, ``"0 or 1"``, after
    any relation) taken as the field's bound, so that it is checked field by field like the other machines'."""
    head, _, rng = constraints.rpartition("; ")
    if (m := re.fullmatch(r"(\d+)\.\.(\d+)", rng)) is not None:
        lo, hi = int(m[1]), int(m[2])
    elif (m := re.fullmatch(r"<= (\d+)", rng)) is not None:
        lo, hi = 1, int(m[1])
    elif rng == "0 or 1":
        lo, hi = 0, 1
    else:
        raise ValueError(f"no range in {constraints!r}")
    return hw_field(default, meaning, head, Bound(lo, hi, "the CPU model's range (kcgym/sims/cpu/config.py)"))


class CPUConfig(HWConfig):
    """Front end, out-of-order back end, branch prediction and L1 caches of the CPU. Frozen."""

    imem_bytes: int = _field(16384, "program (instruction) memory at 0x0; a larger program is rejected",
                               "multiple of 4; 64..262144")
    ram_bytes: int = _field(65536, "data RAM at 0x10000: .data/.rodata/.bss at its start, the stack at its top",
                              "multiple of 16; 1024..1048576")
    fetch_width: int = _field(4, "instructions fetched per cycle (a fetch group ends at a taken branch or jump)",
                                f"1..{MAX_WIDTH}")
    fetch_buffer: int = _field(16, "fetched instructions that may wait for dispatch", f"1..{MAX_QUEUE}")
    frontend_depth: int = _field(3, "cycles from fetch to dispatch (decode and rename)", f"0..{MAX_LATENCY}")
    decode_width: int = _field(2, "instructions decoded, renamed and dispatched per cycle", f"1..{MAX_WIDTH}")
    rob_entries: int = _field(64, "reorder-buffer entries (instructions in flight from dispatch to commit)",
                                f"1..{MAX_ROB}")
    commit_width: int = _field(2, "instructions committed per cycle", f"1..{MAX_WIDTH}")
    alu_units: int = _field(2, "integer ALUs (add, logic, shifts, compares, lui/auipc, CSR reads)",
                              f"1..{MAX_UNITS}")
    alu_queue: int = _field(20, "issue-queue entries of the ALU class", f"1..{MAX_QUEUE}")
    alu_latency: int = _field(1, "cycles from an ALU op's issue to its result", f"1..{MAX_LATENCY}")
    muldiv_units: int = _field(1, "multiply/divide issue ports (multiplies pipelined; divides share one "
                                 "unpipelined divider)", f"1..{MAX_UNITS}")
    muldiv_queue: int = _field(8, "issue-queue entries of the MUL/DIV class", f"1..{MAX_QUEUE}")
    mul_latency: int = _field(3, "cycles from a multiply's issue to its result", f"1..{MAX_LATENCY}")
    div_latency: int = _field(32, "cycles from a divide/remainder's issue to its result (the divider busy all along)",
                                f"1..{MAX_LATENCY}")
    mem_units: int = _field(1, "load/store units (address generation and D-cache port)", f"1..{MAX_UNITS}")
    mem_queue: int = _field(12, "issue-queue entries of the MEM class", f"1..{MAX_QUEUE}")
    store_queue: int = _field(16, "recent stores a load checks for store-to-load forwarding", f"1..{MAX_QUEUE}")
    branch_units: int = _field(1, "branch units (conditional branches, jal, jalr)", f"1..{MAX_UNITS}")
    branch_queue: int = _field(8, "issue-queue entries of the branch class", f"1..{MAX_QUEUE}")
    predictor: int = _field(1, "conditional-branch predictor: 0 = bimodal (pc), 1 = gshare (pc xor history)",
                              "0 or 1")
    predictor_entries: int = _field(1024, "2-bit counters of the predictor (and entries of the jump-target "
                                      "buffer)", f"power of two; 1..{MAX_TABLE}")
    history_bits: int = _field(8, "global-history bits gshare xors into the index", "0..16")
    ras_entries: int = _field(8, "return-address stack entries (calls push, returns pop)", f"1..{MAX_QUEUE}")
    mispredict_penalty: int = _field(6, "cycles from a mispredicted branch's resolution to the fetch of the "
                                       "right path", f"0..{MAX_LATENCY}")
    line_bytes: int = _field(64, "cache line size of both L1 caches", "power of two; 4..1024")
    icache_bytes: int = _field(16384, "L1 instruction cache size", f"line_bytes x ways x power of two; "
                                 f"<= {MAX_CACHE_BYTES}")
    icache_ways: int = _field(4, "L1 instruction cache associativity (LRU)", "1..16")
    dcache_bytes: int = _field(16384, "L1 data cache size", f"line_bytes x ways x power of two; "
                                 f"<= {MAX_CACHE_BYTES}")
    dcache_ways: int = _field(4, "L1 data cache associativity (LRU)", "1..16")
    dcache_latency: int = _field(3, "cycles from a load's issue to its data on a D-cache hit", f"1..{MAX_LATENCY}")
    mem_latency: int = _field(30, "extra cycles of an L1 miss (either cache): the memory's latency",
                                f"0..{MAX_LATENCY}")

    @model_validator(mode="after")
    def _check(self) -> CPUConfig:
        if self.imem_bytes % 4 or self.ram_bytes % 16:
            raise ValueError("imem_bytes must be a multiple of 4 and ram_bytes a multiple of 16")
        self.require_power_of_two(["predictor_entries", "line_bytes"])
        for cache in ("icache", "dcache"):
            size, ways = getattr(self, f"{cache}_bytes"), getattr(self, f"{cache}_ways")
            sets, rest = divmod(size, self.line_bytes * ways)
            if rest or sets < 1 or sets & (sets - 1):
                raise ValueError(f"{cache}_bytes must be line_bytes x {cache}_ways x a power of two, got {size} "
                                 f"(line_bytes {self.line_bytes}, {ways} ways)")
        return self

    def state_parts(self) -> dict[str, int]:
        """What ``machine.State`` allocates (int32 words for the timing structures), by the fields that size it."""
        lines = {c: self.sets(c) * getattr(self, f"{c}_ways") for c in ("icache", "dcache")}
        return {"RAM (ram_bytes)": self.ram_bytes, "program (imem_bytes)": self.imem_bytes,
                "predictor + jump targets (predictor_entries)": 8 * self.predictor_entries,
                "ROB ring (rob_entries)": 4 * self.rob_entries,
                "I-cache tags (icache_bytes / line_bytes)": 8 * lines["icache"],
                "D-cache tags (dcache_bytes / line_bytes)": 12 * lines["dcache"],
                "issue calendar": 2 * 4 * 4 * CALENDAR_CYCLES}

    @property
    def imem_instructions(self) -> int:
        return self.imem_bytes // 4

    def sets(self, cache: str) -> int:
        """Sets of ``"icache"`` or ``"dcache"``."""
        return getattr(self, f"{cache}_bytes") // (self.line_bytes * getattr(self, f"{cache}_ways"))

    def assembler_config(self) -> RVVConfig:
        """The RVV assembler's memory limits for this machine (the program memory and the data RAM)."""
        return RVVConfig(itcm_bytes=self.imem_bytes, dtcm_bytes=self.ram_bytes)
