"""The CPU as a kcgym machine: its layout rule, memory images, interpreter, final state and faults.

The memory map is the RVV core's (program at 0x0, a data RAM at 0x10000 holding ``.data`` and the stack,
the task's tensors from 0x20000000), so one assembler and one QEMU harness serve both RISC-V machines;
on the CPU every data access goes through the same L1 data cache, whatever its address.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import jax
import numpy as np

from kcgym.isa.program import Program
from kcgym.sims.base import FinalState, MemoryLayout, MemoryRegion, SimulatedAccelerator, StateFormat
from kcgym.sims.cpu import machine as M
from kcgym.sims.cpu.assembler import assemble
from kcgym.sims.cpu.config import RAM_BASE, TENSOR_BASE, CPUConfig
from kcgym.sims.interpreter import round_up
from kcgym.sims.layout import SCRATCH, LayoutRule
from kcgym.sims.rvv import isa as I
from kcgym.sims.rvv.accelerator import RVVAccelerator, ext_bucket, tensor_dtype
from kcgym.sims.rvv.assembler import HALT_WORD, RVVProgram
from kcgym.sims.rvv.qemu import ArchState
from kcgym.tasks.base import Task, TaskConfig

TENSOR_ALIGN = 64  # bytes: every tensor starts on a cache line
CATEGORY = {cls: I.CATEGORY[cls] for cls in ("ALU", "MULDIV", "LOAD", "STORE", "BRANCH", "JUMP", "CSR", "HALT")}
_TENSOR_IMAGE: Any = RVVAccelerator.ext_image  # the same image: inputs, int32 constants, poisoned outputs
_LOOP_RANGES: Any = RVVAccelerator.loop_ranges


def simulate_images(program: RVVProgram, images: np.ndarray, hw: CPUConfig, max_steps: int,
                    ext_size: int | None = None, batched: bool = False, profile: bool = False) -> M.State:
    """Run ``program`` once per row of ``images`` (uint8[B, tensor bytes]); the final states, stacked (numpy).

    ``batched``: one vmapped run over every row instead of one run per row (same results); ``profile``: the
    profiling interpreter (same results, plus per-PC cycle attribution in ``State.prof``).
    """
    images = np.atleast_2d(np.asarray(images, np.uint8))
    n, size = images.shape
    ext_size = size if ext_size is None else ext_size
    _, run = M.runner(hw.model_dump_json(), batched, profile)
    words = program.padded(round_up(program.length + 1, hw.imem_instructions + 1), HALT_WORD)
    data = np.frombuffer(program.data, np.uint8)
    mems = np.zeros((n, hw.ram_bytes + ext_bucket(size) + 1), np.uint8)
    mems[:, : data.size] = data
    mems[:, hw.ram_bytes : hw.ram_bytes + size] = images
    args = (np.int32(program.length), np.int32(ext_size), np.int32(max_steps))
    if batched:
        return jax.device_get(run(words, mems, *args))
    states = [jax.device_get(run(words, mems[b], *args)) for b in range(n)]
    return jax.tree.map(lambda *xs: np.stack(xs), *states)


def pipeline_trace(program: RVVProgram, image: np.ndarray, hw: CPUConfig, n: int = 256) -> np.ndarray:
    """The pipeline times of the first ``n`` executed instructions on one tensor image (rules CPU-T*):
    ``int[k, 6]`` rows of pc, fetch, dispatch, issue, complete, commit (k <= n: halted or faulted rows dropped)."""
    size = int(np.asarray(image).size)
    words = program.padded(round_up(program.length + 1, hw.imem_instructions + 1), HALT_WORD)
    mem = np.zeros(hw.ram_bytes + ext_bucket(size) + 1, np.uint8)
    data = np.frombuffer(program.data, np.uint8)
    mem[: data.size] = data
    mem[hw.ram_bytes : hw.ram_bytes + size] = np.asarray(image, np.uint8)
    rows = np.asarray(M.tracer(hw.model_dump_json(), n)(words, mem, np.int32(program.length), np.int32(size)))
    return rows[rows[:, 6] == 1, :6]


def arch_state(st: M.State, b: int, hw: CPUConfig, ext_size: int) -> ArchState:
    """The architectural state of batch row ``b`` in the QEMU harness's terms (no vector state: zeros)."""
    mem = np.asarray(st.mem[b])
    return ArchState(x=np.asarray(st.x[b]).copy(), vl=0, vtype=0, vregs=np.zeros(32 * 16, np.uint8),
                     dtcm=mem[: hw.ram_bytes].copy(), ext=mem[hw.ram_bytes : hw.ram_bytes + ext_size].copy())


def _describe_tensor(task: Task, name: str, desc: str, offset: int) -> str:
    if name == SCRATCH:
        return desc
    dt = tensor_dtype(task, name)
    return dt.name + (f"; {desc}" if desc and desc != dt.name else "")


LAYOUT = LayoutRule(
    space="MEM", align=TENSOR_ALIGN, unit_bytes=1, constant_units=4,
    itemsize=lambda task, name: tensor_dtype(task, name).itemsize, describe_tensor=_describe_tensor,
    describe_constant=lambda name, value, offset: f"int32; = {int(value)} (or use the value as an immediate)",
    scratch_note="free workspace, zero at start", origin=TENSOR_BASE, constant_note="one int32 word each",
)


class CPUAccelerator(SimulatedAccelerator[CPUConfig]):
    name: ClassVar[str] = "CPU"
    modelled_on: ClassVar[str] = "Sonic BOOM (out-of-order RV64 core; here RV32IM + Zicsr) with L1 I/D caches"
    summary: ClassVar[str] = ("BOOM-like out-of-order superscalar RISC-V core: RV32IM + Zicsr, branch prediction, "
                              "L1 instruction and data caches; int32 kernels, exact; the baseline is GCC -O2.")
    numerics: ClassVar[str] = "int32"
    data_dependent_timing: ClassVar[bool] = True  # branches, caches and predictors see the data
    layout_rule: ClassVar[LayoutRule] = LAYOUT
    state_format: ClassVar[StateFormat] = StateFormat(M.FAULT_NAMES, M.F_STEP_BUDGET, CATEGORY,
                                                      uncounted=frozenset({"HALT"}), profile_stalls=M.PROFILE_STALLS,
                                                      profile_issue_col=M.T_END)

    def supports(self, task: Task) -> bool:
        return "CPU" in task.configs_by_accelerator

    def assemble(self, source: str, hw: CPUConfig) -> RVVProgram:
        return assemble(source, hw)

    # ---- memory ----------------------------------------------------------------------------
    def ext_size(self, task: Task, cfg: TaskConfig, hw: CPUConfig, layout: MemoryLayout | None = None) -> int:
        """Bytes of the tensor region (from 0x20000000) this task's layout spans."""
        layout = layout or self.layout(task, cfg, hw)
        end = max(r.offset + r.extent for r in layout.regions)
        return math.ceil(end / TENSOR_ALIGN) * TENSOR_ALIGN

    def ext_image(self, task: Task, cfg: TaskConfig, hw: CPUConfig, inputs: dict[str, np.ndarray],
                  layout: MemoryLayout | None = None) -> np.ndarray:
        """The tensor-region image of one input set; outputs are poisoned with input-seeded noise."""
        return np.asarray(_TENSOR_IMAGE(self, task, cfg, hw, inputs, layout))

    # ---- simulation ------------------------------------------------------------------------
    def simulate(self, program: Program, task: Task, cfg: TaskConfig, hw: CPUConfig, layout: MemoryLayout,
                 inputs: list[dict[str, np.ndarray]], max_steps: int, profile: bool) -> Any:
        assert isinstance(program, RVVProgram), "CPU programs come from CPUAccelerator.assemble"
        images = np.stack([self.ext_image(task, cfg, hw, inp, layout) for inp in inputs])
        return simulate_images(program, images, hw, max_steps, profile=profile)

    def final_state(self, st: Any, b: int, program: Program) -> FinalState:
        ctl = np.asarray(st.ctl[b])
        counts = np.asarray(st.counts[b]).tolist()
        return FinalState(
            halted=bool(ctl[M.HALTED]), fault=int(ctl[M.FAULT]), fault_pc=int(ctl[M.FAULT_PC]),
            fault_detail=int(ctl[M.FAULT_DETAIL]), pc=int(ctl[M.PC]), steps=int(ctl[M.STEPS]),
            cycles=int(ctl[M.T_END]), class_counts={c: counts[I.CLASS_ID[c]] for c in CATEGORY},
            unit_busy=dict(zip(M.UNITS, np.asarray(st.busy[b]).tolist(), strict=True)))

    def read_region(self, st: Any, b: int, region: MemoryRegion, task: Task, hw: CPUConfig) -> np.ndarray:
        start = hw.ram_bytes + region.offset
        mem = np.asarray(st.mem[b])[start : start + region.extent].copy()
        return mem.view(tensor_dtype(task, region.name)).reshape(region.shape)

    def loop_ranges(self, program: Program) -> list[tuple[int, int]]:
        """Each backward branch or jal: from its target up to it (the same encoding as the RVV core's)."""
        return _LOOP_RANGES(self, program)

    def fault_message(self, name: str, detail: int, hw: CPUConfig) -> str:
        addr = detail & 0xFFFFFFFF
        return {
            "OOB": f"memory access at address {addr:#010x} is outside the data RAM ({RAM_BASE:#x}.."
                   f"{RAM_BASE + hw.ram_bytes - 1:#x}) and this task's tensors (from {TENSOR_BASE:#x}); check the "
                   "base register and offset",
            "MISALIGNED": f"access at address {addr:#010x} is misaligned: halfwords and words must be aligned to "
                          "their size",
            "BAD_JUMP": f"jump to address {addr:#010x}, which is not an instruction of the program (ret with a "
                        "clobbered ra?)",
        }.get(name, name)

    # ---- docs and bounds -------------------------------------------------------------------
    def hardware_summary(self, hw: CPUConfig) -> str:
        return "\n".join([
            "- ISA: rv32im_zicsr (RISC-V RV32IM + Zicsr counters), GNU as syntax; no vector, float or compressed "
            "instructions. Registers x0-x31 (ABI names zero ra sp gp tp t0-t6 s0-s11 a0-a7).",
            f"- Out-of-order core: fetch {hw.fetch_width}/cycle, decode/dispatch {hw.decode_width}/cycle, "
            f"{hw.rob_entries}-entry ROB, commit {hw.commit_width}/cycle; {hw.alu_units} ALU, {hw.muldiv_units} "
            f"MUL/DIV (mul {hw.mul_latency}, div {hw.div_latency} cycles), {hw.mem_units} load/store, "
            f"{hw.branch_units} branch unit(s); {('bimodal', 'gshare')[hw.predictor]} predictor, "
            f"{hw.mispredict_penalty}-cycle redirect after a misprediction resolves.",
            f"- L1 I-cache {hw.icache_bytes} B and D-cache {hw.dcache_bytes} B ({hw.dcache_ways}-way, "
            f"{hw.line_bytes} B lines, LRU, cold at start); a load hit takes {hw.dcache_latency} cycles, a miss "
            f"{hw.mem_latency} more.",
            f"- Program at 0x0 (at most {hw.imem_instructions} instructions); data RAM {hw.ram_bytes} B at "
            f"{RAM_BASE:#x} (.data/.rodata/.bss, the stack from its top); tensors from {TENSOR_BASE:#x}. The kernel "
            "ends with `ret`.",
        ])

    def roofline_cycles(self, task: Task, cfg: TaskConfig, hw: CPUConfig) -> int:
        """Every output word must be stored (outputs start as noise) and RV32 stores at most a word per access:
        output words / mem_units cycles."""
        nbytes = sum(t.size * tensor_dtype(task, t.name).itemsize for t in task.tensors(cfg) if t.role == "output")
        return math.ceil(nbytes / 4) // hw.mem_units


ACCELERATOR = CPUAccelerator()
