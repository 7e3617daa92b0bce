"""The RVV core as a kcgym accelerator: its layout rule, external-memory images, interpreter and faults.

Running input sets, results, faults and output collection are the shared core's
(:class:`kcgym.sims.base.SimulatedAccelerator`); this module says only what is the RVV core's own.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import jax
import numpy as np

from kcgym import seeding
from kcgym.isa.program import Program
from kcgym.sims.base import FaultInfo, FinalState, MemoryLayout, MemoryRegion, SimulatedAccelerator, StateFormat
from kcgym.sims.interpreter import round_up
from kcgym.sims.layout import SCRATCH, LayoutRule
from kcgym.sims.rvv import isa as I
from kcgym.sims.rvv import machine as M
from kcgym.sims.rvv import trace
from kcgym.sims.rvv.assembler import HALT_WORD, RVVProgram, assemble
from kcgym.sims.rvv.config import DTCM_BASE, EXT_BASE, VLENB, RVVConfig
from kcgym.sims.rvv.qemu import ArchState
from kcgym.tasks.base import Task, TaskConfig

TENSOR_ALIGN = 16  # bytes: every tensor starts on a VLEN boundary
OUTPUT_ALIGN = 4096  # the paper's harness puts outputs 4 KB-aligned after the inputs
EXT_BUCKET = 65536  # one bucket covers every task: one compile of the interpreter


def tensor_dtype(task: Task, name: str) -> np.dtype:
    """Element type of a tensor: int8 unless the task says otherwise (``dtype_of``)."""
    fn = getattr(task, "dtype_of", None)
    return np.dtype(fn(name)) if fn is not None else np.dtype(np.int8)


def region_dtype(task: Task, region: MemoryRegion) -> np.dtype:
    return np.dtype(np.int32) if region.role == "constant" else tensor_dtype(task, region.name)


def ext_bucket(n: int) -> int:
    return max(EXT_BUCKET, 1 << math.ceil(math.log2(max(n, 1))))


def machine_inputs(program: RVVProgram, images: np.ndarray, hw: RVVConfig) -> tuple[np.ndarray, np.ndarray]:
    """(the padded words, the memories: the DTCM image then each row of ``images`` in its bucket) a run sees."""
    n, size = images.shape
    words = program.padded(round_up(program.length + 1, hw.itcm_instructions + 1), HALT_WORD)
    data = np.frombuffer(program.data, np.uint8)
    mems = np.zeros((n, hw.dtcm_bytes + ext_bucket(size) + 1), np.uint8)
    mems[:, : data.size] = data
    mems[:, hw.dtcm_bytes : hw.dtcm_bytes + size] = images
    return words, mems


def simulate_images(program: RVVProgram, ext_images: np.ndarray, hw: RVVConfig, max_steps: int,
                    ext_size: int | None = None, profile: bool = False) -> M.State:
    """Run ``program`` once per row of ``ext_images`` (uint8[B, ext bytes]); the final states, stacked.

    External memory is padded to a power-of-two bucket, so the interpreter compiles for few shapes. The
    trace-ahead path (``trace.py``) runs unless profiling or ``KCGYM_SIM=oracle``; the interpreter where it
    gives up (data it cannot resolve: a masked vector access, too many resolutions).
    """
    images = np.atleast_2d(np.asarray(ext_images, np.uint8))
    n, size = images.shape
    ext_size = size if ext_size is None else ext_size
    hw_json = hw.model_dump_json()
    words, mems = machine_inputs(program, images, hw)
    if not profile and trace.sim_mode() != "oracle":  # the trace-ahead path; None: it leaves this one to us
        st = trace.run(hw_json, words, program.length, mems, ext_size, max_steps)
        if st is not None:
            return st
    _, run = M.runner(hw_json, profile)
    states = [jax.device_get(run(words, mems[b], np.int32(program.length), np.int32(ext_size), np.int32(max_steps)))
              for b in range(n)]
    return jax.tree.map(lambda *xs: np.stack(xs), *states)


def arch_state(st: M.State, b: int, hw: RVVConfig, ext_size: int) -> ArchState:
    """The architectural state of batch row ``b`` (what the QEMU differential test compares)."""
    mem = np.asarray(st.mem[b])
    return ArchState(x=np.asarray(st.x[b]).copy(), vl=int(st.ctl[b, M.VL]), vtype=int(st.ctl[b, M.VTYPE]),
                     vregs=np.asarray(st.vrf[b, : 32 * VLENB]).copy(), dtcm=mem[: hw.dtcm_bytes].copy(),
                     ext=mem[hw.dtcm_bytes : hw.dtcm_bytes + ext_size].copy())


def _describe_tensor(task: Task, name: str, desc: str, offset: int) -> str:
    if name == SCRATCH:
        return desc
    dt = tensor_dtype(task, name)
    return dt.name + (f"; {desc}" if desc and desc != dt.name else "")


LAYOUT = LayoutRule(
    space="EXT", align=TENSOR_ALIGN, unit_bytes=1, writable_align=OUTPUT_ALIGN, constant_units=4,
    itemsize=lambda task, name: tensor_dtype(task, name).itemsize, describe_tensor=_describe_tensor,
    describe_constant=lambda name, value, offset: f"int32; = {int(value)} (or use the value as an immediate)",
    scratch_note="free workspace, zero at start", origin=EXT_BASE, constant_note="one int32 word each",
)


class RVVAccelerator(SimulatedAccelerator[RVVConfig]):
    name: ClassVar[str] = "RVV"
    modelled_on: ClassVar[str] = "Coral NPU (RV32IM scalar core + RVV 1.0 Zve32x vector unit, VLEN=128, ITCM/DTCM)"
    summary: ClassVar[str] = ("Coral-NPU-like RISC-V core: RV32IM + RVV 1.0 integer vectors (Zve32x, VLEN=128), "
                              "8 KB ITCM, 32 KB single-cycle DTCM, external memory over AXI; int8 kernels, exact.")
    numerics: ClassVar[str] = "int8"
    data_dependent_timing: ClassVar[bool] = True  # scalar code may branch on loaded data
    layout_rule: ClassVar[LayoutRule] = LAYOUT
    state_format: ClassVar[StateFormat] = StateFormat(
        M.FAULT_NAMES, M.F_STEP_BUDGET, I.CATEGORY, uncounted=frozenset({"HALT"}),
        profile_stalls=M.PROFILE_STALLS, profile_issue_col=M.T_SCALAR)

    def supports(self, task: Task) -> bool:
        return "RVV" in task.configs_by_accelerator

    def assemble(self, source: str, hw: RVVConfig) -> RVVProgram:
        return assemble(source, hw)

    # ---- memory layout ---------------------------------------------------------------
    def ext_size(self, task: Task, cfg: TaskConfig, hw: RVVConfig, layout: MemoryLayout | None = None) -> int:
        layout = layout or self.layout(task, cfg, hw)
        end = max(r.offset + r.extent for r in layout.regions)
        return math.ceil(end / TENSOR_ALIGN) * TENSOR_ALIGN

    def ext_image(self, task: Task, cfg: TaskConfig, hw: RVVConfig, inputs: dict[str, np.ndarray],
                  layout: MemoryLayout | None = None) -> np.ndarray:
        """The external-memory image of one input set; outputs are poisoned with input-seeded noise."""
        layout = layout or self.layout(task, cfg, hw)
        img = np.zeros(self.ext_size(task, cfg, hw, layout), np.uint8)
        constants = task.constants(cfg)
        seed = 0
        for r in layout.regions:
            if r.role in ("input", "constant"):
                value = inputs[r.name] if r.role == "input" else np.int32(int(constants[r.name]))
                raw = np.ascontiguousarray(np.asarray(value).astype(region_dtype(task, r))).view(np.uint8)
                img[r.offset : r.offset + raw.size] = raw.reshape(-1)
                seed = (seed * 1_000_003 + int(np.sum(raw, dtype=np.int64))) % (1 << 32)
        poison = seeding.generator(seed)
        for r in layout.regions:
            if r.role == "output":
                img[r.offset : r.offset + r.extent] = poison.integers(0, 256, r.extent, dtype=np.uint8)
        return img

    # ---- simulation ------------------------------------------------------------------
    def simulate(self, program: Program, task: Task, cfg: TaskConfig, hw: RVVConfig, layout: MemoryLayout,
                 inputs: list[dict[str, np.ndarray]], max_steps: int, profile: bool) -> Any:
        assert isinstance(program, RVVProgram), "RVV programs come from RVVAccelerator.assemble"
        images = np.stack([self.ext_image(task, cfg, hw, inp, layout) for inp in inputs])
        return simulate_images(program, images, hw, max_steps, profile=profile)

    def final_state(self, st: Any, b: int, program: Program) -> FinalState:
        ctl = np.asarray(st.ctl[b])
        return FinalState(
            halted=bool(ctl[M.HALTED]), fault=int(ctl[M.FAULT]), fault_pc=int(ctl[M.FAULT_PC]),
            fault_detail=int(ctl[M.FAULT_DETAIL]), pc=int(ctl[M.PC]), steps=int(ctl[M.STEPS]),
            cycles=int(ctl[M.T_END]), class_counts=dict(zip(I.CLASSES, np.asarray(st.counts[b]).tolist(), strict=True)),
            unit_busy=dict(zip(I.UNITS, np.asarray(st.busy[b]).tolist(), strict=True)))

    def read_region(self, st: Any, b: int, region: MemoryRegion, task: Task, hw: RVVConfig) -> np.ndarray:
        start = hw.dtcm_bytes + region.offset
        mem = np.asarray(st.mem[b])[start : start + region.extent].copy()
        return mem.view(tensor_dtype(task, region.name)).reshape(region.shape)

    def loop_ranges(self, program: Program) -> list[tuple[int, int]]:
        """Each backward branch or jal: from its target up to it."""
        w = program.words
        back = ((w[:, I.F_CLS] == I.CLASS_ID["BRANCH"]) | (w[:, I.F_CLS] == I.CLASS_ID["JUMP"]) & (w[:, I.F_SUB] == 0))
        return [(int(w[pc, I.F_IMM]), int(pc)) for pc in np.flatnonzero(back) if 0 <= w[pc, I.F_IMM] <= pc]

    def fault_message(self, name: str, detail: int, hw: RVVConfig) -> str:
        addr = detail & 0xFFFFFFFF
        return {
            "OOB": f"memory access at address {addr:#010x} is outside the DTCM ({DTCM_BASE:#x}.."
                   f"{DTCM_BASE + hw.dtcm_bytes - 1:#x}) and this task's external memory (from {EXT_BASE:#x}); "
                   "check the base register, offset, vl and stride",
            "MISALIGNED": f"access at address {addr:#010x} is misaligned: halfwords, words and vector elements "
                          "must be aligned to their size",
            "ILLEGAL_VTYPE": "vector instruction without a valid vtype: run vsetvli/vsetivli first (vtype is "
                             "illegal at reset and after a vsetvl with a bad value)",
            "ILLEGAL_GROUP": (f"register group v{detail // 256} is illegal under the current vtype: it is a group of "
                              f"{detail % 256} registers, so its number must be a multiple of {detail % 256}"
                              if detail % 256 <= 8 else
                              f"v{detail // 256} would need a group of {detail % 256} registers; at most 8 are allowed "
                              "(widening at m8 is illegal: lower LMUL)"),
            "BAD_JUMP": f"jump to address {addr:#010x}, which is not an instruction of the program (ret with a "
                        "clobbered ra?)",
        }.get(name, name)

    # ---- baselines, docs, bounds -----------------------------------------------------
    def hardware_summary(self, hw: RVVConfig) -> str:
        return "\n".join([
            "- ISA: rv32im_zicsr_zve32x (RISC-V RV32IM + RVV 1.0 integer vectors), GNU as syntax. VLEN=128 bits, "
            "ELEN=32: e8 = 16 x int8, e16 = 8 x int16, e32 = 4 x int32 per register; LMUL m1/m2/m4/m8.",
            "- Registers: x0-x31 (ABI names zero ra sp gp tp t0-t6 s0-s11 a0-a7; there is no t7), v0-v31 "
            "(v0 is the mask register).",
            f"- ITCM {hw.itcm_bytes} bytes at 0x0 ({hw.itcm_instructions} instructions). DTCM {hw.dtcm_bytes} bytes "
            f"at {DTCM_BASE:#x} (single cycle; .data lands here; sp starts at its top). External memory at "
            f"{EXT_BASE:#x}: {hw.ext_latency} cycles latency, {hw.ext_bytes_per_cycle} bytes/cycle.",
            f"- Vector unit behind a {hw.vector_queue_depth}-entry queue; one 128-bit chunk per cycle. The kernel "
            "ends with `ret` (or by running past its last instruction).",
        ])

    def roofline_cycles(self, task: Task, cfg: TaskConfig, hw: RVVConfig) -> int:
        """max(MACs / (VLEN/8 vector + 1 scalar MAC per cycle), bytes that must cross external memory / bandwidth).

        Lookup tables (``task.tables``) are left out of the bytes: a kernel need not read every entry.
        """
        tables = set(getattr(task, "tables", ()))
        nbytes = sum(t.size * tensor_dtype(task, t.name).itemsize for t in task.tensors(cfg) if t.name not in tables)
        return int(math.floor(max(task.macs(cfg) / (VLENB + 1), nbytes / hw.ext_bytes_per_cycle)))


ACCELERATOR = RVVAccelerator()


def fault_info(st: M.State, b: int, program: RVVProgram, hw: RVVConfig, max_steps: int) -> FaultInfo | None:
    """The fault of batch row ``b`` of a :func:`simulate_images` run (None: it halted cleanly)."""
    return ACCELERATOR.fault(ACCELERATOR.final_state(st, b, program), program, hw, max_steps)
