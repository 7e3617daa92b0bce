"""The RVV core as a kcgym accelerator: memory layout, batched simulation, results and faults."""

from __future__ import annotations

import math
from typing import ClassVar

import jax
import numpy as np

from kcgym.sims.base import Accelerator, DocSection, FaultInfo, MemoryLayout, MemoryRegion, RunResult
from kcgym.sims.profiling import PcProfile
from kcgym.sims.rvv import isa as I
from kcgym.sims.rvv import machine as M
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


class ByteLayout(MemoryLayout):
    """A layout whose offsets are bytes from 0x20000000: described with absolute byte addresses."""

    def describe(self) -> str:
        lines = []
        for r in self.regions:
            width = 4 if r.role == "constant" or "int32" in r.description.split(";")[0] else 1
            start = EXT_BASE + r.offset
            shape = "x".join(str(d) for d in r.shape)
            lines.append(f"- {r.name} ({r.role}): bytes {start:#010x}..{start + r.size * width - 1:#010x}, "
                         f"shape [{shape}], {r.description}")
        return "\n".join(lines)


def ext_bucket(n: int) -> int:
    return max(EXT_BUCKET, 1 << math.ceil(math.log2(max(n, 1))))


def simulate_images(program: RVVProgram, ext_images: np.ndarray, hw: RVVConfig, max_steps: int,
                    ext_size: int | None = None, profile: bool = False) -> M.State:
    """Run ``program`` once per row of ``ext_images`` (uint8[B, ext bytes]); the final states, stacked.

    External memory is padded to a power-of-two bucket, so the interpreter compiles for few shapes.
    """
    images = np.atleast_2d(np.asarray(ext_images, np.uint8))
    n, size = images.shape
    ext_size = size if ext_size is None else ext_size
    _, run = M.runner(hw.model_dump_json(), profile)
    words = program.padded(M.bucket(program.length + 1, hw.itcm_instructions + 1), HALT_WORD)
    data = np.frombuffer(program.data, np.uint8)
    states = []
    for b in range(n):
        mem = np.zeros(hw.dtcm_bytes + ext_bucket(size) + 1, np.uint8)
        mem[: data.size] = data
        mem[hw.dtcm_bytes : hw.dtcm_bytes + size] = images[b]
        states.append(jax.device_get(run(words, mem, np.int32(program.length), np.int32(ext_size),
                                         np.int32(max_steps))))
    return jax.tree.map(lambda *xs: np.stack(xs), *states)


def arch_state(st: M.State, b: int, hw: RVVConfig, ext_size: int) -> ArchState:
    """The architectural state of batch row ``b`` (what the QEMU differential test compares)."""
    mem = np.asarray(st.mem[b])
    return ArchState(x=np.asarray(st.x[b]).copy(), vl=int(st.ctl[b, M.VL]), vtype=int(st.ctl[b, M.VTYPE]),
                     vregs=np.asarray(st.vrf[b, : 32 * VLENB]).copy(), dtcm=mem[: hw.dtcm_bytes].copy(),
                     ext=mem[hw.dtcm_bytes : hw.dtcm_bytes + ext_size].copy())


def fault_info(st: M.State, b: int, program: RVVProgram, hw: RVVConfig, max_steps: int) -> FaultInfo | None:
    ctl = np.asarray(st.ctl[b])
    code = int(ctl[M.FAULT])
    if code == 0 and ctl[M.HALTED]:
        return None
    if code == 0:
        pc = int(ctl[M.PC])
        return FaultInfo(code=M.F_STEP_BUDGET, name="STEP_BUDGET", pc=pc, line=program.line_of(pc),
                         source=program.source_line(pc),
                         message=f"the kernel ran {max_steps} instructions without finishing (an infinite or far "
                         "too long loop?); it was executing this line when stopped")
    pc, detail = int(ctl[M.FAULT_PC]), int(ctl[M.FAULT_DETAIL])
    name = M.FAULT_NAMES[code]
    addr = detail & 0xFFFFFFFF
    msg = {
        "OOB": f"memory access at address {addr:#010x} is outside the DTCM ({DTCM_BASE:#x}.."
               f"{DTCM_BASE + hw.dtcm_bytes - 1:#x}) and this task's external memory (from {EXT_BASE:#x}); "
               "check the base register, offset, vl and stride",
        "MISALIGNED": f"access at address {addr:#010x} is misaligned: halfwords, words and vector elements must be "
                      "aligned to their size",
        "ILLEGAL_VTYPE": "vector instruction without a valid vtype: run vsetvli/vsetivli first (vtype is illegal at "
                         "reset and after a vsetvl with a bad value)",
        "ILLEGAL_GROUP": (f"register group v{detail // 256} is illegal under the current vtype: it is a group of "
                          f"{detail % 256} registers, so its number must be a multiple of {detail % 256}"
                          if detail % 256 <= 8 else
                          f"v{detail // 256} would need a group of {detail % 256} registers; at most 8 are allowed "
                          "(widening at m8 is illegal: lower LMUL)"),
        "BAD_JUMP": f"jump to address {addr:#010x}, which is not an instruction of the program (ret with a clobbered "
                    "ra?)",
    }.get(name, name)
    return FaultInfo(code=code, name=name, pc=pc, line=program.line_of(pc), source=program.source_line(pc),
                     message=msg)


class RVVAccelerator(Accelerator):
    name: ClassVar[str] = "RVV"
    modelled_on: ClassVar[str] = "Coral NPU (RV32IM scalar core + RVV 1.0 Zve32x vector unit, VLEN=128, ITCM/DTCM)"
    summary: ClassVar[str] = ("Coral-NPU-like RISC-V core: RV32IM + RVV 1.0 integer vectors (Zve32x, VLEN=128), "
                              "8 KB ITCM, 32 KB single-cycle DTCM, external memory over AXI; int8 kernels, exact.")
    hw_model: ClassVar[type[RVVConfig]] = RVVConfig
    supports_profile: ClassVar[bool] = True
    numerics: ClassVar[str] = "int8"
    data_dependent_timing: ClassVar[bool] = True  # scalar code may branch on loaded data

    def supports(self, task: Task) -> bool:
        return "RVV" in task.configs_by_accelerator

    def assemble(self, source: str, hw: RVVConfig) -> RVVProgram:  # type: ignore[override]
        return assemble(source, hw)

    # ---- memory layout ---------------------------------------------------------------
    def layout(self, task: Task, cfg: TaskConfig, hw: RVVConfig) -> MemoryLayout:  # type: ignore[override]
        """Inputs from 0x20000000 (16-byte aligned), then the task constants as int32 words, then the
        outputs from the next 4 KB boundary. Offsets are in bytes from 0x20000000."""
        regions, offset = [], 0
        tensors = task.tensors(cfg)

        def place(name: str, shape: tuple[int, ...], role: str, dt: np.dtype, desc: str) -> None:
            nonlocal offset
            note = dt.name + (f"; {desc}" if desc and desc != dt.name else "")
            regions.append(MemoryRegion(name, "EXT", offset, shape, role, note))
            offset = math.ceil((offset + int(np.prod(shape)) * dt.itemsize) / TENSOR_ALIGN) * TENSOR_ALIGN

        for t in tensors:
            if t.role == "input":
                place(t.name, t.shape, "input", tensor_dtype(task, t.name), t.description)
        for name, value in task.constants(cfg).items():
            place(name, (1,), "constant", np.dtype(np.int32), f"= {int(value)} (or use the value as an immediate)")
        offset = math.ceil(offset / OUTPUT_ALIGN) * OUTPUT_ALIGN
        for t in tensors:
            if t.role == "output":
                place(t.name, t.shape, "output", tensor_dtype(task, t.name), t.description)
        return ByteLayout(tuple(regions))

    def ext_size(self, task: Task, cfg: TaskConfig, hw: RVVConfig, layout: MemoryLayout | None = None) -> int:
        layout = layout or self.layout(task, cfg, hw)
        end = max(r.offset + r.size * region_dtype(task, r).itemsize for r in layout.regions)
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
        poison = np.random.default_rng(seed)
        for r in layout.regions:
            if r.role == "output":
                nbytes = r.size * tensor_dtype(task, r.name).itemsize
                img[r.offset : r.offset + nbytes] = poison.integers(0, 256, nbytes, dtype=np.uint8)
        return img

    # ---- simulation ------------------------------------------------------------------
    def run(self, program: RVVProgram, task: Task, cfg: TaskConfig, hw: RVVConfig,  # type: ignore[override]
            inputs: list[dict[str, np.ndarray]], max_steps: int, profile: bool = False) -> list[RunResult]:
        layout = self.layout(task, cfg, hw)
        images = np.stack([self.ext_image(task, cfg, hw, inp, layout) for inp in inputs])
        st = simulate_images(program, images, hw, max_steps, profile=profile)
        results = [self._result(st, b, program, task, layout, hw, max_steps) for b in range(len(inputs))]
        if profile:
            PcProfile.attach(results, st, program.length, M.PROFILE_STALLS, M.T_SCALAR)
        return results

    def loop_ranges(self, program: RVVProgram) -> list[tuple[int, int]]:  # type: ignore[override]
        """Each backward branch or jal: from its target up to it."""
        w = program.words
        back = ((w[:, I.F_CLS] == I.CLASS_ID["BRANCH"]) | (w[:, I.F_CLS] == I.CLASS_ID["JUMP"]) & (w[:, I.F_SUB] == 0))
        return [(int(w[pc, I.F_IMM]), pc) for pc in np.flatnonzero(back) if 0 <= w[pc, I.F_IMM] <= pc]

    def _result(self, st: M.State, b: int, program: RVVProgram, task: Task, layout: MemoryLayout, hw: RVVConfig,
                max_steps: int) -> RunResult:
        mem = np.asarray(st.mem[b])
        outputs = {}
        for r in layout.regions:
            if r.space == "EXT" and r.role == "output":
                dt = tensor_dtype(task, r.name)
                start = hw.dtcm_bytes + r.offset
                outputs[r.name] = mem[start : start + r.size * dt.itemsize].copy().view(dt).reshape(r.shape)
        counts: dict[str, int] = {}
        for cls, n in zip(I.CLASSES, np.asarray(st.counts[b]), strict=True):
            if cls != "HALT":
                counts[I.CATEGORY[cls]] = counts.get(I.CATEGORY[cls], 0) + int(n)
        return RunResult(outputs=outputs, cycles=int(st.ctl[b, M.T_END]), instructions=int(st.ctl[b, M.STEPS]),
                         fault=fault_info(st, b, program, hw, max_steps), counts_by_category=counts,
                         unit_busy={u: int(v) for u, v in zip(I.UNITS, np.asarray(st.busy[b]), strict=True)})

    # ---- baselines, docs, bounds -----------------------------------------------------
    def compile(self, task: Task, cfg: TaskConfig, hw: RVVConfig) -> str:  # type: ignore[override]
        from kcgym.sims.rvv.compiler import compile_task

        return compile_task(task, cfg, hw, self.layout(task, cfg, hw))

    def expert(self, task: Task, cfg: TaskConfig, hw: RVVConfig) -> str | None:  # type: ignore[override]
        from kcgym.sims.rvv.expert import expert_kernel

        return expert_kernel(task, cfg, hw, self.layout(task, cfg, hw))

    def docs(self, hw: RVVConfig) -> list[DocSection]:  # type: ignore[override]
        from kcgym.sims.rvv.docs import rvv_docs

        return rvv_docs(hw)

    def hardware_summary(self, hw: RVVConfig) -> str:  # type: ignore[override]
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

    def speed_of_light(self, task: Task, cfg: TaskConfig, hw: RVVConfig):  # type: ignore[override]
        from kcgym.sims.rvv.speed_of_light import speed_of_light

        return speed_of_light(task, cfg, hw)

    def roofline_cycles(self, task: Task, cfg: TaskConfig, hw: RVVConfig) -> int:  # type: ignore[override]
        """max(MACs / (VLEN/8 vector + 1 scalar MAC per cycle), bytes that must cross external memory / bandwidth).

        Lookup tables (``task.tables``) are left out of the bytes: a kernel need not read every entry.
        """
        tables = set(getattr(task, "tables", ()))
        nbytes = sum(t.size * tensor_dtype(task, t.name).itemsize for t in task.tensors(cfg) if t.name not in tables)
        return int(math.floor(max(task.macs(cfg) / (VLENB + 1), nbytes / hw.ext_bytes_per_cycle)))


ACCELERATOR = RVVAccelerator()
