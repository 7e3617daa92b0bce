"""The VLIW tile as a kcgym accelerator: its layout rule, EXT images, interpreter and fault messages.

Running input sets, results, faults and output collection are the shared core's
(:class:`kcgym.sims.base.SimulatedAccelerator`); this module says only what is the VLIW's own.
"""

from __future__ import annotations

import functools
import math
from types import SimpleNamespace
from typing import Any, ClassVar

import jax
import numpy as np

from kcgym.isa.assembler import assemble
from kcgym.isa.program import Program
from kcgym.sims.base import FinalState, MemoryLayout, MemoryRegion, SimulatedAccelerator, StateFormat
from kcgym.sims.interpreter import COLD_START, bucket
from kcgym.sims.layout import SCRATCH, Buffer, LayoutRule, carve
from kcgym.sims.vliw import machine as M
from kcgym.sims.vliw import trace
from kcgym.sims.vliw.config import LANES, VLIWConfig
from kcgym.sims.vliw.isa import CATEGORY, CLASSES, make_isa
from kcgym.tasks.base import Task, TaskConfig
from kcgym.tasks.numerics import round_bf16

EXT_ALIGN = LANES  # elements: every tensor starts on a 64-byte boundary
EXT_BUCKET = 1 << 20  # elements: one compile serves every config up to 4 MB of tensors


def _run_scratch(hw_json: str, words: np.ndarray, ext: np.ndarray, ext_limit: Any, max_steps: Any) -> M.State | None:
    """``trace.run`` on an image the caller built for this run alone (``simulate``'s): it may be overwritten."""
    return trace.run(hw_json, words, ext, ext_limit, max_steps, scratch=True)


# the trace module as ``COLD_START.run`` calls it, for an EXT image the run may overwrite (``execute``); its
# functions looked up at each call (as ``trace.<name>``, so a patched one is the one called)
_SCRATCH_TRACE = SimpleNamespace(run=_run_scratch, sim_mode=lambda: trace.sim_mode(),
                                 dynamic_count=lambda words, stop: trace.dynamic_count(words, stop))


def _describe_tensor(task: Task, name: str, desc: str, offset: int) -> str:
    if name != SCRATCH and "row-major" not in desc:
        desc = (desc + "; " if desc else "") + "bf16, row-major"
    return f"{desc}; byte address {2 * offset}"


LAYOUT = LayoutRule(
    space="EXT", align=EXT_ALIGN, unit_bytes=2, constant_lanes=LANES, describe_tensor=_describe_tensor,
    describe_constant=lambda name, value, offset: f"{value!r} rounded to bf16, in all {LANES} lanes; "
    f"byte address {2 * offset}",
    scratch_note="free workspace, NaN at start",
    constant_note=f"each a {2 * LANES}-byte vector of its value in all {LANES} lanes",
)


class VLIWAccelerator(SimulatedAccelerator[VLIWConfig]):
    name: ClassVar[str] = "VLIW"
    modelled_on: ClassVar[str] = "AMD AIE-ML tile (VLIW bundles, 512-bit vectors, fp32 accumulators, 64 KB banked DM)"
    summary: ClassVar[str] = ("AIE-ML-like VLIW vector tile: every bundle holds up to 2 loads, 1 store, 1 vector, "
                              "1 scalar, 1 move and 1 control operation; 32-lane bf16 vectors, fp32 accumulators, "
                              "64 KB data memory in 8 banks, tensors in external memory moved by DMA.")
    issue_unit: ClassVar[str] = "bundles"
    layout_rule: ClassVar[LayoutRule] = LAYOUT
    state_format: ClassVar[StateFormat] = StateFormat(
        M.FAULT_NAMES, M.F_STEP_BUDGET, CATEGORY, uncounted=frozenset({"NOP"}), implicit_halt=("CTL", "CONTROL"),
        profile_stalls=M.PROFILE_STALLS, profile_issue_col=M.T_ISSUE)

    def supports(self, task: Task) -> bool:
        """A task with VLIW configurations and a template-compiler baseline."""
        from kcgym.sims.vliw.compiler import TEMPLATES

        return "VLIW" in task.configs_by_accelerator and task.name in TEMPLATES

    def assemble(self, source: str, hw: VLIWConfig) -> Program:
        return assemble(make_isa(hw), source, hw)

    # ---- memory layout ---------------------------------------------------------------
    def kernel_layout(self, task: Task, cfg: TaskConfig, hw: VLIWConfig) -> MemoryLayout:
        """The layout plus the template compiler's named staging tensors, carved from ``scratch``."""
        from kcgym.sims.vliw.compiler import SCRATCH as PLANS

        plan = [Buffer(name, shape, desc) for name, shape, desc in PLANS.get(task.name, lambda c: [])(cfg)]
        return carve(self.layout(task, cfg, hw), plan, EXT_ALIGN)

    @staticmethod
    def ext_size(layout: MemoryLayout) -> int:
        return max((r.offset + math.ceil(r.size / EXT_ALIGN) * EXT_ALIGN for r in layout.regions), default=EXT_ALIGN)

    # ---- simulation ------------------------------------------------------------------
    def simulate(self, program: Program, task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout,
                 inputs: list[dict[str, np.ndarray]], max_steps: int, profile: bool) -> Any:
        ext, limit = self._image(task, cfg, layout, inputs)
        return self.execute(program, ext, limit, hw, max_steps, profile, scratch=True)

    def _image(self, task: Task, cfg: TaskConfig, layout: MemoryLayout,
               inputs: list[dict[str, np.ndarray]]) -> tuple[np.ndarray, int]:
        """The EXT image of each input set (inputs and constants in place, NaN elsewhere) and its limit."""
        constants = task.constants(cfg)
        limit = self.ext_size(layout)
        ext = np.full((len(inputs), bucket(limit, EXT_BUCKET)), np.nan, np.float32)  # poison: unwritten outputs
        for b, inp in enumerate(inputs):
            for r in layout.regions:
                if r.role == "input":
                    ext[b, r.offset : r.offset + r.size] = np.asarray(inp[r.name], np.float32).reshape(-1)
                elif r.role == "constant":
                    ext[b, r.offset : r.offset + r.size] = round_bf16(np.asarray(constants[r.name], np.float32))
        return ext, limit

    merged_programs: ClassVar[int] = trace.MERGE_PROGRAMS

    def run_many(self, programs: list[Program], task: Task, cfg: TaskConfig, hw: VLIWConfig,
                 inputs: list[dict[str, np.ndarray]], max_steps: int) -> list[list[Any]]:
        """:meth:`run` of each program, bit for bit, from one EXT image and with small programs merged into one
        data-path call (``trace.run_batch``)."""
        layout = self.layout(task, cfg, hw)
        ext, limit = self._image(task, cfg, layout, inputs)
        hw_json = hw.model_dump_json()
        halt = trace.batched_runner(hw_json)[0].halt_row
        words = [p.padded(hw.imem_bundles + 1, halt) for p in programs]
        states = trace.run_batch(hw_json, words, ext, np.int32(limit), np.int32(max_steps), whole=False)
        return [[self.result(st, b, p, task, layout, hw, max_steps) for b in range(len(inputs))]
                for p, st in zip(programs, states, strict=True)]

    @staticmethod
    def execute(program: Program, ext: np.ndarray, ext_limit: int, hw: VLIWConfig, max_steps: int,
                profile: bool = False, scratch: bool = False) -> M.State:
        """Run ``program`` on a batch of EXT images ``[B, H]``; the final machine state as numpy. ``scratch``:
        ``ext`` is the caller's to overwrite (``trace.run``: the final EXT may be written into it)."""
        hw_json = hw.model_dump_json()
        machine, runner = trace.batched_runner(hw_json, profile)
        words = program.padded(hw.imem_bundles + 1, machine.halt_row)
        args = (words, ext, np.int32(ext_limit), np.int32(max_steps))
        if profile:
            return jax.device_get(runner(*args))
        if scratch:
            return jax.device_get(COLD_START.run(_SCRATCH_TRACE, trace.ORACLE_MAX_BUNDLES, hw_json, args,
                                                 functools.partial(runner, scratch=True)))
        return jax.device_get(COLD_START.run(trace, trace.ORACLE_MAX_BUNDLES, hw_json, args, runner))

    def final_state(self, st: Any, b: int, program: Program) -> FinalState:
        ctl = np.asarray(st.ctl[b])
        return FinalState(
            halted=bool(ctl[M.HALTED]), fault=int(ctl[M.FAULT]), fault_pc=int(ctl[M.FAULT_PC]),
            fault_detail=int(ctl[M.FAULT_DETAIL]), fault_slot=int(ctl[M.FAULT_SLOT]), pc=int(ctl[M.PC]),
            steps=int(ctl[M.STEPS]), cycles=int(max(ctl[M.T_END], ctl[M.T_ISSUE])),
            class_counts=dict(zip(CLASSES, np.asarray(st.counts[b]).tolist(), strict=True)),
            unit_busy=dict(zip(M.BUSY_KEYS, np.asarray(st.busy[b]).tolist(), strict=True)),
            nan_pc=int(st.nan_pc[b]), ran_off_end=bool(ctl[M.PC] >= program.length))

    def read_region(self, st: Any, b: int, region: MemoryRegion, task: Task, hw: VLIWConfig) -> np.ndarray:
        return np.asarray(st.ext[b])[region.offset : region.offset + region.size].reshape(region.shape).copy()

    def locate(self, program: Program, pc: int, slot: int) -> tuple[int | None, str | None]:
        """The faulting operation's own line (a bundle in braces spans lines)."""
        line = program.slot_line(pc, slot)
        return line, program.source_line(pc, line)

    def loop_ranges(self, program: Program) -> list[tuple[int, int]]:
        """Each LOOP/LOOPI's body: the bundles after it up to its end label."""
        isa = make_isa(VLIWConfig())
        S, F = len(isa.slot_units), isa.n_fields
        ctl = program.words.reshape(program.length, S, F)[:, M.S_CTL]
        subs = (isa.sub_ids["LOOP"], isa.sub_ids["LOOPI"])
        return [(pc + 1, int(row[4]) - 1) for pc, row in enumerate(ctl)
                if row[1] == M.CLS["CTL"] and row[2] in subs and int(row[4]) - 1 > pc]

    def fault_message(self, name: str, detail: int, hw: VLIWConfig) -> str:
        return {
            "OOB_DM": f"data-memory access at byte address {detail} is out of bounds (DM holds {hw.dm_bytes} bytes, "
                      "and the whole access must fit)",
            "MISALIGNED": f"address {detail} is misaligned (VLD/VST and DMA DM addresses: multiples of 64 bytes; "
                          "VLDB addresses and DMA EXT addresses/strides: even)",
            "OOB_EXT": f"DMA touches external-memory byte address {detail}, outside this task's EXT image",
            "BAD_LANE": f"lane register holds {detail}; lanes are 0..{LANES - 1}",
            "LOOP_DEPTH": f"LOOP entered with {detail} loops already active: the hardware loop stack holds "
                          f"{hw.loop_depth}",
        }.get(name, name)

    # ---- baselines, docs, bounds -----------------------------------------------------
    def hardware_summary(self, hw: VLIWConfig) -> str:
        return "\n".join([
            "- VLIW bundles: per cycle up to 2 loads (LD), 1 store (ST), 1 vector op (VEC), 1 scalar op (SCL), "
            "1 move (MOV) and 1 control op (CTL: branch, loop, DMA). In-order, interlocked on register latencies.",
            f"- Registers: r0-r15 (int32, r0 = 0), p0-p7 (DM byte pointers), x0-x11 ({LANES} bf16 lanes), "
            f"c0-c7 ({LANES} fp32 lanes).",
            f"- Data memory (DM): {hw.dm_bytes} bytes in {hw.dm_banks} banks of {hw.bank_bytes}; vector loads/stores "
            "move 64 aligned bytes. Two memory ops of one bundle in the same bank cost a stall cycle.",
            f"- Matrix unit: VMMUL multiplies a 4x8 bf16 block by an 8x4 block into half of a 4x8 fp32 "
            f"accumulator tile, {hw.peak_macs_per_cycle} MACs per bundle (32-lane VMAC/VMACL do 32).",
            f"- External memory (EXT) holds the task's tensors; DMAI/DMAO move up to {hw.dma_max_bytes} bytes "
            f"(latency {hw.dma_latency}, {hw.dma_bytes_per_cycle} bytes/cycle per engine; one in-engine, one "
            "out-engine, asynchronous); DMAIT/DMAOT do the same in the blocked (strip) layouts of VMMUL.",
            f"- Latencies: load {hw.load_latency}, add/max {hw.alu_latency}, mul/mac {hw.mul_latency}, reductions "
            f"{hw.reduce_latency}, exp2/inv/rsqrt {hw.nonlinear_latency}, conversions {hw.move_latency}; taken branch "
            f"+{hw.branch_penalty}; zero-overhead loops (LOOP/LOOPI, {hw.loop_depth} deep).",
            f"- Program memory: {hw.imem_bundles} bundles.",
        ])

    def roofline_cycles(self, task: Task, cfg: TaskConfig, hw: VLIWConfig) -> int:
        """max(MACs / vector-slot peak, input bytes / DMA-in bandwidth, output bytes / DMA-out bandwidth)."""
        in_bytes = 2 * sum(t.size for t in task.inputs(cfg))
        out_bytes = 2 * sum(t.size for t in task.outputs(cfg))
        return int(math.floor(max(task.macs(cfg) / hw.peak_macs_per_cycle, in_bytes / hw.dma_bytes_per_cycle,
                                  out_bytes / hw.dma_bytes_per_cycle)))


ACCELERATOR = VLIWAccelerator()
