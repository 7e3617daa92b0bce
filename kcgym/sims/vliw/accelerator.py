"""The VLIW tile as a kcgym accelerator: layout, batched simulation, results and faults."""

from __future__ import annotations

import math
from typing import ClassVar

import jax
import numpy as np

from kcgym.isa.assembler import assemble
from kcgym.isa.program import Program
from kcgym.sims.base import Accelerator, DocSection, FaultInfo, MemoryLayout, MemoryRegion, RunResult
from kcgym.sims.profiling import PcProfile
from kcgym.sims.vliw import machine as M
from kcgym.sims.vliw.config import LANES, VLIWConfig
from kcgym.sims.vliw.isa import CATEGORY, CLASSES, make_isa
from kcgym.tasks.base import Task, TaskConfig
from kcgym.tasks.numerics import round_bf16

EXT_ALIGN = LANES  # elements: every tensor starts on a 64-byte boundary
EXT_BUCKET = 1 << 20  # elements: one compile serves every config up to 4 MB of tensors


class VLIWAccelerator(Accelerator):
    name: ClassVar[str] = "VLIW"
    modelled_on: ClassVar[str] = "AMD AIE-ML tile (VLIW bundles, 512-bit vectors, fp32 accumulators, 64 KB banked DM)"
    summary: ClassVar[str] = ("AIE-ML-like VLIW vector tile: every bundle holds up to 2 loads, 1 store, 1 vector, "
                              "1 scalar, 1 move and 1 control operation; 32-lane bf16 vectors, fp32 accumulators, "
                              "64 KB data memory in 8 banks, tensors in external memory moved by DMA.")
    hw_model: ClassVar[type[VLIWConfig]] = VLIWConfig
    supports_profile: ClassVar[bool] = True
    issue_unit: ClassVar[str] = "bundles"

    def supports(self, task: Task) -> bool:
        """A task with VLIW configurations and a template-compiler baseline."""
        from kcgym.sims.vliw.compiler import TEMPLATES

        return "VLIW" in task.configs_by_accelerator and task.name in TEMPLATES

    def assemble(self, source: str, hw: VLIWConfig) -> Program:  # type: ignore[override]
        return assemble(make_isa(hw), source, hw)

    # ---- memory layout ---------------------------------------------------------------
    def layout(self, task: Task, cfg: TaskConfig, hw: VLIWConfig) -> MemoryLayout:  # type: ignore[override]
        regions, offset = [], 0
        for t in task.tensors(cfg):
            desc = t.description or ""
            if "row-major" not in desc:
                desc = (desc + "; " if desc else "") + "bf16, row-major"
            regions.append(MemoryRegion(t.name, "EXT", offset, t.shape, t.role, f"{desc}; byte address {2 * offset}"))
            offset += math.ceil(t.size / EXT_ALIGN) * EXT_ALIGN
        for name, value in task.constants(cfg).items():
            regions.append(MemoryRegion(name, "EXT", offset, (LANES,), "constant",
                                        f"{value!r} rounded to bf16, in all 32 lanes; byte address {2 * offset}"))
            offset += LANES
        from kcgym.sims.vliw.compiler import SCRATCH

        for name, shape, desc in SCRATCH.get(task.name, lambda c: [])(cfg):
            regions.append(MemoryRegion(name, "EXT", offset, shape, "scratch", f"{desc}; byte address {2 * offset}"))
            offset += math.ceil(math.prod(shape) / EXT_ALIGN) * EXT_ALIGN
        return MemoryLayout(tuple(regions))

    @staticmethod
    def ext_size(layout: MemoryLayout) -> int:
        return max((r.offset + math.ceil(r.size / EXT_ALIGN) * EXT_ALIGN for r in layout.regions), default=EXT_ALIGN)

    # ---- simulation ------------------------------------------------------------------
    def run(self, program: Program, task: Task, cfg: TaskConfig, hw: VLIWConfig,  # type: ignore[override]
            inputs: list[dict[str, np.ndarray]], max_steps: int, profile: bool = False) -> list[RunResult]:
        layout = self.layout(task, cfg, hw)
        constants = task.constants(cfg)
        limit = self.ext_size(layout)
        ext = np.full((len(inputs), M.bucket(limit, EXT_BUCKET)), np.nan, np.float32)  # poison: unwritten outputs
        for b, inp in enumerate(inputs):
            for r in layout.regions:
                if r.role == "input":
                    ext[b, r.offset : r.offset + r.size] = np.asarray(inp[r.name], np.float32).reshape(-1)
                elif r.role == "constant":
                    ext[b, r.offset : r.offset + r.size] = round_bf16(np.float32(constants[r.name]))
        st = self.execute(program, ext, limit, hw, max_steps, profile)
        results = [self._result(st, b, program, layout, hw, max_steps) for b in range(len(inputs))]
        if profile:
            PcProfile.attach(results, st, program.length, M.PROFILE_STALLS, M.T_ISSUE)
        return results

    def loop_ranges(self, program: Program) -> list[tuple[int, int]]:
        """Each LOOP/LOOPI's body: the bundles after it up to its end label."""
        isa = make_isa(VLIWConfig())
        S, F = len(isa.slot_units), isa.n_fields
        ctl = program.words.reshape(program.length, S, F)[:, M.S_CTL]
        subs = (isa.sub_ids["LOOP"], isa.sub_ids["LOOPI"])
        return [(pc + 1, int(row[4]) - 1) for pc, row in enumerate(ctl)
                if row[1] == M.CLS["CTL"] and row[2] in subs and int(row[4]) - 1 > pc]

    @staticmethod
    def execute(program: Program, ext: np.ndarray, ext_limit: int, hw: VLIWConfig, max_steps: int,
                profile: bool = False) -> M.State:
        """Run ``program`` on a batch of EXT images ``[B, H]``; the final machine state as numpy."""
        machine, runner = M.batched_runner(hw.model_dump_json(), profile)
        words = program.padded(hw.imem_bundles + 1, machine.halt_row)
        st = runner(words, ext, np.int32(ext_limit), np.int32(max_steps))
        return jax.device_get(st)

    def _result(self, st: M.State, b: int, program: Program, layout: MemoryLayout, hw: VLIWConfig,
                max_steps: int) -> RunResult:
        ctl = np.asarray(st.ctl[b])
        steps = int(ctl[M.STEPS])
        counts_raw = np.asarray(st.counts[b]).copy()
        busy = np.asarray(st.busy[b]).copy()
        if ctl[M.HALTED] and ctl[M.FAULT] == 0 and ctl[M.PC] >= program.length:
            # the implicit HALT bundle after the last bundle is not part of the kernel
            steps -= 1
            counts_raw[CLASSES.index("CTL")] -= 1
            busy[M.BUSY_KEYS.index("CONTROL")] -= 1
        fault = None
        if ctl[M.FAULT] != 0:
            fault = self.fault_info(int(ctl[M.FAULT]), int(ctl[M.FAULT_PC]), int(ctl[M.FAULT_DETAIL]), program, hw,
                                    int(ctl[M.FAULT_SLOT]))
        elif not ctl[M.HALTED]:
            pc = int(ctl[M.PC])
            fault = FaultInfo(code=M.F_STEP_BUDGET, name="STEP_BUDGET", pc=pc, line=program.line_of(pc),
                              source=program.source_line(pc),
                              message=f"the kernel ran {max_steps} bundles without finishing (an infinite or far "
                              "too long loop?); it was executing this line when stopped")
        ext = np.asarray(st.ext[b])
        outputs = {r.name: ext[r.offset : r.offset + r.size].reshape(r.shape).copy()
                   for r in layout.regions if r.role == "output"}
        counts: dict[str, int] = {}
        for cls, n in zip(CLASSES, counts_raw, strict=True):
            if cls != "NOP":
                counts[CATEGORY[cls]] = counts.get(CATEGORY[cls], 0) + int(n)
        nan_pc = int(st.nan_pc[b])
        return RunResult(
            outputs=outputs,
            cycles=int(max(ctl[M.T_END], ctl[M.T_ISSUE])),
            instructions=steps,
            fault=fault,
            counts_by_category=counts,
            unit_busy={k: int(v) for k, v in zip(M.BUSY_KEYS, busy, strict=True)},
            first_nonfinite_line=program.line_of(nan_pc) if nan_pc >= 0 else None,
        )

    @staticmethod
    def fault_info(code: int, pc: int, detail: int, program: Program, hw: VLIWConfig, slot: int = -1) -> FaultInfo:
        """The fault, located at the faulting operation's own line (a bundle in braces spans lines)."""
        name = M.FAULT_NAMES[code]
        msg = {
            "OOB_DM": f"data-memory access at byte address {detail} is out of bounds (DM holds {hw.dm_bytes} bytes, "
                      "and the whole access must fit)",
            "MISALIGNED": f"address {detail} is misaligned (VLD/VST and DMA DM addresses: multiples of 64 bytes; "
                          "VLDB addresses and DMA EXT addresses/strides: even)",
            "OOB_EXT": f"DMA touches external-memory byte address {detail}, outside this task's EXT image",
            "BAD_LANE": f"lane register holds {detail}; lanes are 0..{LANES - 1}",
            "LOOP_DEPTH": f"LOOP entered with {detail} loops already active: the hardware loop stack holds "
                          f"{hw.loop_depth}",
        }.get(name, name)
        line = program.slot_line(pc, slot)
        return FaultInfo(code=code, name=name, pc=pc, line=line, source=program.source_line(pc, line), message=msg)

    # ---- baselines, docs, bounds -----------------------------------------------------
    def compile(self, task: Task, cfg: TaskConfig, hw: VLIWConfig) -> str:  # type: ignore[override]
        from kcgym.sims.vliw.compiler import compile_task

        return compile_task(task, cfg, hw, self.layout(task, cfg, hw))

    def expert(self, task: Task, cfg: TaskConfig, hw: VLIWConfig) -> str | None:  # type: ignore[override]
        from kcgym.sims.vliw.expert import expert_kernel

        return expert_kernel(task, cfg, hw, self.layout(task, cfg, hw))

    def docs(self, hw: VLIWConfig) -> list[DocSection]:  # type: ignore[override]
        from kcgym.sims.vliw.docs import vliw_docs

        return vliw_docs(hw)

    def hardware_summary(self, hw: VLIWConfig) -> str:  # type: ignore[override]
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

    def speed_of_light(self, task: Task, cfg: TaskConfig, hw: VLIWConfig):  # type: ignore[override]
        from kcgym.sims.vliw.speed_of_light import speed_of_light

        return speed_of_light(task, cfg, hw)

    def roofline_cycles(self, task: Task, cfg: TaskConfig, hw: VLIWConfig) -> int:  # type: ignore[override]
        """max(MACs / vector-slot peak, input bytes / DMA-in bandwidth, output bytes / DMA-out bandwidth)."""
        in_bytes = 2 * sum(t.size for t in task.inputs(cfg))
        out_bytes = 2 * sum(t.size for t in task.outputs(cfg))
        return int(math.floor(max(task.macs(cfg) / hw.peak_macs_per_cycle, in_bytes / hw.dma_bytes_per_cycle,
                                  out_bytes / hw.dma_bytes_per_cycle)))


ACCELERATOR = VLIWAccelerator()
