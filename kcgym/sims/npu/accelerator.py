"""The NPU as a kcgym accelerator: layout, batched simulation, results and faults."""

from __future__ import annotations

import math
from typing import ClassVar

import jax
import numpy as np

from kcgym.isa.assembler import assemble
from kcgym.isa.program import Program
from kcgym.sims.base import Accelerator, DocSection, FaultInfo, MemoryLayout, MemoryRegion, RunResult
from kcgym.sims.npu import machine as M
from kcgym.sims.npu.config import NPUConfig
from kcgym.sims.npu.docs import npu_docs
from kcgym.sims.npu.isa import CATEGORY, CLASSES, UNITS, make_isa
from kcgym.sims.profiling import PcProfile
from kcgym.tasks.base import Task, TaskConfig

HBM_ALIGN = 64  # elements; every tensor starts on a VLEN boundary
PROGRAM_BUCKET = 1024
HBM_BUCKET = 1 << 16


class NPUAccelerator(Accelerator):
    name: ClassVar[str] = "NPU"
    modelled_on: ClassVar[str] = "PLENA (flattened systolic array, HBM + matrix/vector/FP/INT SRAMs, hardware loops)"
    summary: ClassVar[str] = ("PLENA-like LLM accelerator: MLEN x BLEN matrix unit, VLEN vector unit, HBM with "
                              "non-blocking prefetch into matrix and vector SRAM, bf16 storage, fp32 accumulation.")
    hw_model: ClassVar[type[NPUConfig]] = NPUConfig
    supports_profile: ClassVar[bool] = True

    def supports(self, task: Task) -> bool:
        return "NPU" in task.configs_by_accelerator

    def assemble(self, source: str, hw: NPUConfig) -> Program:  # type: ignore[override]
        return assemble(make_isa(hw), source, hw)

    # ---- memory layout ---------------------------------------------------------------
    def layout(self, task: Task, cfg: TaskConfig, hw: NPUConfig) -> MemoryLayout:  # type: ignore[override]
        regions, offset = [], 0
        for t in task.tensors(cfg):
            desc = t.description or ""
            if "row-major" not in desc:
                desc = (desc + "; " if desc else "") + "bf16, row-major"
            regions.append(MemoryRegion(t.name, "HBM", offset, t.shape, t.role, desc))
            offset += math.ceil(t.size / HBM_ALIGN) * HBM_ALIGN
        # composites get HBM workspace after the outputs (poisoned like them): the stages of the
        # template compiler pass their intermediates through it, and an agent's kernel may use it
        from kcgym.sims.npu.compiler import scratch_regions

        for sc in scratch_regions(task, cfg, hw):
            desc = f"free workspace, NaN at start (the template compiler keeps here: {sc.description})"
            regions.append(MemoryRegion(sc.name, "HBM", offset, sc.shape, "scratch", desc))
            offset += math.ceil(math.prod(sc.shape) / HBM_ALIGN) * HBM_ALIGN
        for i, (name, value) in enumerate(task.constants(cfg).items()):
            regions.append(MemoryRegion(name, "FPSRAM", i, (1,), "constant", f"= {value!r} (fp32)"))
        return MemoryLayout(tuple(regions))

    @staticmethod
    def hbm_size(layout: MemoryLayout) -> int:
        return max((r.offset + math.ceil(r.size / HBM_ALIGN) * HBM_ALIGN for r in layout.regions if r.space == "HBM"),
                   default=HBM_ALIGN)

    # ---- simulation ------------------------------------------------------------------
    def run(self, program: Program, task: Task, cfg: TaskConfig, hw: NPUConfig,  # type: ignore[override]
            inputs: list[dict[str, np.ndarray]], max_steps: int, profile: bool = False) -> list[RunResult]:
        layout = self.layout(task, cfg, hw)
        limit = self.hbm_size(layout)
        H = M.bucket(limit, HBM_BUCKET)
        hbm = np.full((len(inputs), H), np.nan, np.float32)  # poison: unwritten outputs fail
        for b, inp in enumerate(inputs):
            for r in layout.regions:
                if r.space == "HBM" and r.role == "input":
                    hbm[b, r.offset : r.offset + r.size] = np.asarray(inp[r.name], np.float32).reshape(-1)
        fpm = np.zeros(hw.fpsram_size, np.float32)
        for r in layout.regions:
            if r.space == "FPSRAM":
                fpm[r.offset] = task.constants(cfg)[r.name]
        machine, runner = M.batched_runner(hw.model_dump_json(), profile)
        words = program.padded(M.bucket(program.length, PROGRAM_BUCKET), machine.halt_row)
        st = runner(words, hbm, fpm, np.int32(limit), np.int32(max_steps))
        st = jax.device_get(st)
        results = [self._result(st, b, program, layout, hw, max_steps) for b in range(len(inputs))]
        if profile:
            PcProfile.attach(results, st, program.length, M.PROFILE_STALLS, M.T_ISSUE)
        return results

    def loop_ranges(self, program: Program) -> list[tuple[int, int]]:
        """Each hardware loop: from the instruction after C_LOOP_START to its C_LOOP_END (which jumps back)."""
        end = make_isa(NPUConfig()).sub_ids["C_LOOP_END"]
        ctrl = CLASSES.index("CTRL")
        return [(int(w[4]), pc) for pc, w in enumerate(program.words)
                if w[1] == ctrl and w[2] == end and 0 <= int(w[4]) <= pc]

    def _result(self, st: M.State, b: int, program: Program, layout: MemoryLayout, hw: NPUConfig,
                max_steps: int) -> RunResult:
        ctl = np.asarray(st.ctl[b])
        steps = int(ctl[M.STEPS])
        counts_raw = np.asarray(st.counts[b]).copy()
        busy = np.asarray(st.busy[b]).copy()
        if ctl[M.HALTED] and ctl[M.FAULT] == 0 and ctl[M.PC] - 1 >= program.length:
            # the implicit halt after the last instruction is not an instruction of the kernel
            steps -= 1
            counts_raw[CLASSES.index("CTRL")] -= 1
            busy[UNITS.index("SCALAR")] -= 1
        fault = None
        if ctl[M.FAULT] != 0:
            fault = self._fault_info(int(ctl[M.FAULT]), int(ctl[M.FAULT_PC]), int(ctl[M.FAULT_DETAIL]), program, hw)
        elif not ctl[M.HALTED]:
            pc = int(ctl[M.PC])
            fault = FaultInfo(code=M.F_STEP_BUDGET, name="STEP_BUDGET", pc=pc, line=program.line_of(pc),
                              source=program.source_line(pc),
                              message=f"the kernel ran {max_steps} instructions without finishing (an infinite or "
                              "far too long loop?); it was executing this line when stopped")
        outputs = {}
        hbm = np.asarray(st.hbm[b])
        for r in layout.regions:
            if r.space == "HBM" and r.role == "output":
                outputs[r.name] = hbm[r.offset : r.offset + r.size].reshape(r.shape).copy()
        counts: dict[str, int] = {}
        for cls, n in zip(CLASSES, counts_raw, strict=True):
            counts[CATEGORY[cls]] = counts.get(CATEGORY[cls], 0) + int(n)
        nan_pc = int(st.nan_pc[b])
        return RunResult(
            outputs=outputs,
            cycles=int(ctl[M.T_END]),
            instructions=steps,
            fault=fault,
            counts_by_category=counts,
            unit_busy={u: int(v) for u, v in zip(UNITS, busy, strict=True)},
            first_nonfinite_line=program.line_of(nan_pc) if nan_pc >= 0 else None,
        )

    @staticmethod
    def _fault_info(code: int, pc: int, detail: int, program: Program, hw: NPUConfig) -> FaultInfo:
        name = M.FAULT_NAMES[code]
        msg = {
            "OOB_VSRAM": f"VSRAM access at address {detail} is out of bounds (VSRAM holds {hw.vsram_size} "
                         f"elements, addresses 0..{hw.vsram_size - 1}, and the whole access must fit)",
            "OOB_MSRAM": f"MSRAM access at address {detail} is out of bounds (MSRAM holds {hw.msram_size} "
                         f"elements = {hw.msram_tiles} tiles of {hw.MLEN}x{hw.MLEN})",
            "OOB_HBM": (f"HBM access at element {detail} is outside this task's HBM image (check a-register, "
                        "offset and STRIDE)") if detail > M.UNSET // 2 else (
                "HBM access through an address register or STRIDE that was never set (they are not "
                "initialised: use C_SET_ADDR_REG / C_SET_STRIDE_REG first)"),
            "OOB_FPSRAM": f"FP SRAM index {detail} is outside 0..{hw.fpsram_size - 1}",
            "OOB_INTSRAM": f"INT SRAM index {detail} is outside 0..{hw.intsram_size - 1}",
            "MISALIGNED": f"address {detail} is misaligned (VSRAM/HBM rows: multiples of VLEN={hw.VLEN}; M_MM "
                          f"MSRAM column offsets and M_MM_WO addresses: multiples of BLEN={hw.BLEN}; MSRAM row "
                          f"starts for H_PREFETCH_M, M_TMM, M_MV/M_TMV: multiples of MLEN={hw.MLEN})",
        }.get(name, name)
        return FaultInfo(code=code, name=name, pc=pc, line=program.line_of(pc), source=program.source_line(pc),
                         message=msg)

    # ---- baselines, docs, bounds -----------------------------------------------------
    def compile(self, task: Task, cfg: TaskConfig, hw: NPUConfig) -> str:  # type: ignore[override]
        from kcgym.sims.npu.compiler import compile_task

        return compile_task(task, cfg, hw, self.layout(task, cfg, hw))

    def expert(self, task: Task, cfg: TaskConfig, hw: NPUConfig) -> str | None:  # type: ignore[override]
        from kcgym.sims.npu.expert import expert_kernel

        return expert_kernel(task, cfg, hw, self.layout(task, cfg, hw))

    def docs(self, hw: NPUConfig) -> list[DocSection]:  # type: ignore[override]
        return npu_docs(hw)

    def hardware_summary(self, hw: NPUConfig) -> str:  # type: ignore[override]
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

    def speed_of_light(self, task: Task, cfg: TaskConfig, hw: NPUConfig):  # type: ignore[override]
        from kcgym.sims.npu.speed_of_light import speed_of_light

        return speed_of_light(task, cfg, hw)

    def roofline_cycles(self, task: Task, cfg: TaskConfig, hw: NPUConfig) -> int:  # type: ignore[override]
        """max(MACs / peak, bytes / HBM bandwidth). Peak counts the matrix unit *and* the vector unit
        (VLEN/2 MAC/cycle via multiply + add), since a kernel may use both at once."""
        peak = hw.peak_macs_per_cycle + hw.VLEN / 2
        nbytes = 2 * sum(t.size for t in task.tensors(cfg))
        return int(math.floor(max(task.macs(cfg) / peak, nbytes / hw.hbm_bytes_per_cycle)))


ACCELERATOR = NPUAccelerator()
