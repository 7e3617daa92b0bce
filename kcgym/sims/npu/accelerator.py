"""The NPU as a kcgym accelerator: its layout rule, images, interpreter and fault messages.

Running input sets, results, faults and output collection are the shared core's
(:class:`kcgym.sims.base.SimulatedAccelerator`); this module says only what is the NPU's own.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import jax
import numpy as np

from kcgym.isa.assembler import assemble
from kcgym.isa.program import Program
from kcgym.sims.base import FinalState, MemoryLayout, MemoryRegion, SimulatedAccelerator, StateFormat
from kcgym.sims.interpreter import COLD_START, bucket
from kcgym.sims.layout import SCRATCH, Buffer, LayoutRule, carve
from kcgym.sims.npu import machine as M
from kcgym.sims.npu import trace
from kcgym.sims.npu.config import NPUConfig
from kcgym.sims.npu.isa import CATEGORY, CLASSES, UNITS, make_isa
from kcgym.tasks.base import Task, TaskConfig

HBM_ALIGN = 64  # elements; every tensor starts on a VLEN boundary
PROGRAM_BUCKET = 1024
HBM_BUCKET = 1 << 16


def _describe_tensor(task: Task, name: str, desc: str, offset: int) -> str:
    if name != SCRATCH and "row-major" not in desc:
        desc = (desc + "; " if desc else "") + "bf16, row-major"
    return desc


LAYOUT = LayoutRule(space="HBM", align=HBM_ALIGN, unit_bytes=2, constant_space="FPSRAM",
                    describe_tensor=_describe_tensor, describe_constant=lambda name, value, i: f"= {value!r} (fp32)",
                    scratch_note="free workspace, NaN at start",
                    constant_note="one fp32 word each, from index 0: S_LD_FP")


def oob_hbm_message(start: int) -> str:
    """OOB_HBM, from the start element of the offending row (the machine's fault detail).

    The machine reports the lowest row start when a row starts below 0, else the highest (whose row then
    runs past the end). Address registers and STRIDE start at ``UNSET`` (-2^30), so a row through one
    never set starts at ``UNSET`` plus the offset, or lower; a start at or below ``UNSET // 2`` is said
    to be that (an offset can only be that negative by computing one).
    """
    check = "check the a-register, the offset register and STRIDE"
    if start >= 0:
        return f"HBM row starting at element {start} runs past the end of this task's HBM image ({check})"
    if start <= M.UNSET // 2:
        return (f"HBM row starting at element {start}, far below 0: an address register or STRIDE that was never "
                f"set (they start at {M.UNSET}: set them with C_SET_ADDR_REG / C_SET_STRIDE_REG first)")
    return (f"HBM row starting at element {start} is before the start of HBM ({check}; one never set starts at "
            f"{M.UNSET})")

Final = trace.Final  # what a run's results read of the final State


class NPUAccelerator(SimulatedAccelerator[NPUConfig]):
    name: ClassVar[str] = "NPU"
    modelled_on: ClassVar[str] = "PLENA (flattened systolic array, HBM + matrix/vector/FP/INT SRAMs, hardware loops)"
    summary: ClassVar[str] = ("PLENA-like LLM accelerator: MLEN x BLEN matrix unit, VLEN vector unit, HBM with "
                              "non-blocking prefetch into matrix and vector SRAM, bf16 storage, fp32 accumulation.")
    layout_rule: ClassVar[LayoutRule] = LAYOUT
    state_format: ClassVar[StateFormat] = StateFormat(
        M.FAULT_NAMES, M.F_STEP_BUDGET, CATEGORY, implicit_halt=("CTRL", "SCALAR"),
        profile_stalls=M.PROFILE_STALLS, profile_issue_col=M.T_ISSUE)

    def supports(self, task: Task) -> bool:
        return "NPU" in task.configs_by_accelerator

    def assemble(self, source: str, hw: NPUConfig) -> Program:
        return assemble(make_isa(hw), source, hw)

    # ---- memory layout ---------------------------------------------------------------
    def kernel_layout(self, task: Task, cfg: TaskConfig, hw: NPUConfig) -> MemoryLayout:
        """The layout plus the template compiler's named stage buffers, carved from ``scratch``."""
        from kcgym.sims.npu.compiler import scratch_regions

        plan = [Buffer(sc.name, sc.shape, sc.description) for sc in scratch_regions(task, cfg, hw)]
        return carve(self.layout(task, cfg, hw), plan, HBM_ALIGN)

    @staticmethod
    def hbm_size(layout: MemoryLayout) -> int:
        return max((r.offset + math.ceil(r.size / HBM_ALIGN) * HBM_ALIGN for r in layout.regions if r.space == "HBM"),
                   default=HBM_ALIGN)

    # ---- simulation ------------------------------------------------------------------
    def simulate(self, program: Program, task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout,
                 inputs: list[dict[str, np.ndarray]], max_steps: int, profile: bool) -> Any:
        hbm, fpm, limit = self._images(task, cfg, hw, layout, inputs)
        hw_json = hw.model_dump_json()
        machine, runner = trace.batched_runner(hw_json, profile)
        words = program.padded(bucket(program.length, PROGRAM_BUCKET), machine.halt_row)
        args = (words, hbm, fpm, np.int32(limit), np.int32(max_steps))
        st = runner(*args) if profile else COLD_START.run(trace, trace.ORACLE_MAX_INSTRUCTIONS, hw_json, args, runner)
        return jax.device_get(Final(*(getattr(st, f) for f in Final._fields)))  # one transfer per field read

    merged_programs: ClassVar[int] = trace.MERGE_PROGRAMS

    def run_many(self, programs: list[Program], task: Task, cfg: TaskConfig, hw: NPUConfig,
                 inputs: list[dict[str, np.ndarray]], max_steps: int) -> list[list[Any]]:
        """:meth:`run` of each program, bit for bit, with small programs merged into one data-path call
        (``trace.run_batch``)."""
        layout = self.layout(task, cfg, hw)
        hbm, fpm, limit = self._images(task, cfg, hw, layout, inputs)
        hw_json = hw.model_dump_json()
        halt = trace.batched_runner(hw_json)[0].halt_row
        words = [p.padded(bucket(p.length, PROGRAM_BUCKET), halt) for p in programs]
        states = trace.run_batch(hw_json, words, hbm, fpm, np.int32(limit), np.int32(max_steps), whole=False)
        return [[self.result(st, b, p, task, layout, hw, max_steps) for b in range(len(inputs))]
                for p, st in zip(programs, states, strict=True)]

    def _images(self, task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout,
                inputs: list[dict[str, np.ndarray]]) -> tuple[np.ndarray, np.ndarray, int]:
        """The HBM image of each input set, the FP SRAM image and the HBM limit."""
        limit = self.hbm_size(layout)
        hbm = np.full((len(inputs), bucket(limit, HBM_BUCKET)), np.nan, np.float32)  # poison: unwritten outputs fail
        for b, inp in enumerate(inputs):
            for r in layout.regions:
                if r.space == "HBM" and r.role == "input":
                    hbm[b, r.offset : r.offset + r.size] = np.asarray(inp[r.name], np.float32).reshape(-1)
        fpm = np.zeros(hw.fpsram_size, np.float32)
        constants = task.constants(cfg)
        for r in layout.regions:
            if r.space == "FPSRAM":
                fpm[r.offset] = constants[r.name]
        return hbm, fpm, limit

    def final_state(self, st: Any, b: int, program: Program) -> FinalState:
        ctl = np.asarray(st.ctl[b])
        return FinalState(
            halted=bool(ctl[M.HALTED]), fault=int(ctl[M.FAULT]), fault_pc=int(ctl[M.FAULT_PC]),
            fault_detail=int(ctl[M.FAULT_DETAIL]), pc=int(ctl[M.PC]), steps=int(ctl[M.STEPS]),
            cycles=int(ctl[M.T_END]), class_counts=dict(zip(CLASSES, np.asarray(st.counts[b]).tolist(), strict=True)),
            unit_busy=dict(zip(UNITS, np.asarray(st.busy[b]).tolist(), strict=True)), nan_pc=int(st.nan_pc[b]),
            ran_off_end=bool(ctl[M.PC] - 1 >= program.length))

    def read_region(self, st: Any, b: int, region: MemoryRegion, task: Task, hw: NPUConfig) -> np.ndarray:
        return np.asarray(st.hbm[b])[region.offset : region.offset + region.size].reshape(region.shape).copy()

    def loop_ranges(self, program: Program) -> list[tuple[int, int]]:
        """Each hardware loop: from the instruction after C_LOOP_START to its C_LOOP_END (which jumps back)."""
        end = make_isa(NPUConfig()).sub_ids["C_LOOP_END"]
        ctrl = CLASSES.index("CTRL")
        return [(int(w[4]), pc) for pc, w in enumerate(program.words)
                if w[1] == ctrl and w[2] == end and 0 <= int(w[4]) <= pc]

    def fault_message(self, name: str, detail: int, hw: NPUConfig) -> str:
        return {
            "OOB_VSRAM": f"VSRAM access at address {detail} is out of bounds (VSRAM holds {hw.vsram_size} "
                         f"elements, addresses 0..{hw.vsram_size - 1}, and the whole access must fit)",
            "OOB_MSRAM": f"MSRAM access at address {detail} is out of bounds (MSRAM holds {hw.msram_size} "
                         f"elements = {hw.msram_tiles} tiles of {hw.MLEN}x{hw.MLEN})",
            "OOB_HBM": oob_hbm_message(detail),
            "OOB_FPSRAM": f"FP SRAM index {detail} is outside 0..{hw.fpsram_size - 1}",
            "OOB_INTSRAM": f"INT SRAM index {detail} is outside 0..{hw.intsram_size - 1}",
            "MISALIGNED": f"address {detail} is misaligned (VSRAM/HBM rows: multiples of VLEN={hw.VLEN}; M_MM "
                          f"MSRAM column offsets and M_MM_WO addresses: multiples of BLEN={hw.BLEN}; MSRAM row "
                          f"starts for H_PREFETCH_M, M_TMM, M_MV/M_TMV: multiples of MLEN={hw.MLEN})",
        }.get(name, name)

    # ---- baselines, docs, bounds -----------------------------------------------------
    def hardware_summary(self, hw: NPUConfig) -> str:
        return "\n".join([
            f"- Matrix unit: M_MM multiplies a {hw.BLEN}x{hw.MLEN} block of vector rows by a {hw.MLEN}x{hw.BLEN} "
            f"slice of a matrix tile ({hw.BLEN * hw.MLEN * hw.BLEN} MACs every {hw.mm_occupancy} cycles, fp32 "
            "accumulator).",
            f"- MLEN={hw.MLEN} (matrix tile dimension), VLEN={hw.VLEN} (vector length), BLEN={hw.BLEN} "
            f"(output block), HLEN={hw.HLEN} (head dimension).",
            f"- VSRAM: {hw.vsram_rows} rows x {hw.VLEN} bf16 ({hw.vsram_size} elements). MSRAM: {hw.msram_tiles} "
            f"tiles of {hw.MLEN}x{hw.MLEN} bf16 ({hw.msram_size} elements). FP SRAM: {hw.fpsram_size} fp32. "
            f"INT SRAM: {hw.intsram_size} int32.",
            f"- HBM: {hw.hbm_bytes_per_cycle} bytes/cycle, {hw.hbm_latency} cycles latency; H_PREFETCH_V moves 1 to "
            f"{hw.v_prefetch_rows} rows, H_PREFETCH_M one tile.",
            "- Registers: gp0-gp15 (int32, gp0 = 0), f0-f7 (fp32, f0 = 0.0), a0-a7 (HBM base addresses), STRIDE.",
            f"- Instruction memory: {hw.imem_size} instructions. No branches: hardware loops only.",
        ])

    def roofline_cycles(self, task: Task, cfg: TaskConfig, hw: NPUConfig) -> int:
        """max(MACs / peak, bytes / HBM bandwidth). Peak counts the matrix unit *and* the vector unit
        (VLEN/2 MAC/cycle via multiply + add), since a kernel may use both at once."""
        peak = hw.peak_macs_per_cycle + hw.VLEN / 2
        nbytes = 2 * sum(t.size for t in task.tensors(cfg))
        return int(math.floor(max(task.macs(cfg) / peak, nbytes / hw.hbm_bytes_per_cycle)))


ACCELERATOR = NPUAccelerator()
