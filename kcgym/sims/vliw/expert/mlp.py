"""Expert FFN and SwiGLU: pipelined VMMUL GEMMs with the elementwise stages fused into their tiles.

The compiler stages these blocks as GEMMs and streaming passes over EXT scratch. Here the first
GEMM applies SiLU to each rounded 4x8 tile while it is still in registers (the tail of every
8 x 16 block, list-scheduled with the block's stores); SwiGLU's up-projection GEMM brings in the
matching tiles of SiLU(gate) beside its own and multiplies them before the store. So each
intermediate makes one trip through EXT, and every product runs the expert GEMM
(``expert/matmul.py``). The exp2 argument and 1 + e stay in fp32 accumulators (VEXP2C, VINVC),
as in the compiler's SiLU.
"""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.vliw.compiler.composites import LOG2E_HI, LOG2E_LO
from kcgym.sims.vliw.compiler.emit import Asm, ext_bytes
from kcgym.sims.vliw.config import VLIWConfig
from kcgym.sims.vliw.expert.matmul import buffers, gemm
from kcgym.tasks.base import Task, TaskConfig


def silu_tiles() -> list[str]:
    """x0-x3 = bf16(SiLU(x0-x3)), tile i in accumulator c(4+i) and x(4+i); constants in x8-x10."""
    ops = [f"VBCST x8, {-LOG2E_HI!r}", f"VBCST x10, {-LOG2E_LO!r}", "VBCST x9, 1.0"]
    for i in range(4):
        c, e, x = f"c{4 + i}", f"x{4 + i}", f"x{i}"
        ops += [f"VMPY {c}, {x}, x8", f"VMAC {c}, {x}, x10", f"VEXP2C {e}, {c}", f"VUPS {c}, {e}",
                f"VMAC {c}, x9, x9", f"VINVC {e}, {c}", f"VMUL {x}, {x}, {e}"]
    return ops


def expert_ffn(task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout) -> str | None:
    n, h, hi = cfg["n"], cfg["h"], cfg["hi"]
    up, down = (1, n, h, hi), (1, n, hi, h)
    if buffers(hw, up, False) is None or buffers(hw, down, False) is None:
        return None
    x, w1, w2, y, hid = (ext_bytes(layout, t) for t in ("X", "W1", "W2", "Y", "H"))
    asm = Asm(f"{task.title} {cfg.label}", author="kcgym's expert kernels (VMMUL GEMMs, SiLU fused)")
    asm.comment("stage 1: H = bf16(SiLU(bf16(X @ W1))), the SiLU applied to each output tile in registers")
    gemm(asm, hw, up, x, w1, hid, epilogue=silu_tiles)
    asm.comment("stage 2: Y = bf16(H @ W2)")
    gemm(asm, hw, down, hid, w2, y)
    return asm.text()


def _times_side() -> list[str]:
    """x0-x3 = bf16(x0-x3 * x4-x7): the up-projection's tiles times SiLU(gate)'s."""
    return [f"VMUL x{i}, x{4 + i}, x{i}" for i in range(4)]


def expert_swiglu(task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout) -> str | None:
    n, h, hi = cfg["n"], cfg["h"], cfg["hi"]
    up, down = (1, n, h, hi), (1, n, hi, h)
    if buffers(hw, up, False, side=True) is None or buffers(hw, down, False) is None:
        return None
    x, w1, w3, w2, y, g, u = (ext_bytes(layout, t) for t in ("X", "W1", "W3", "W2", "Y", "G", "U"))
    asm = Asm(f"{task.title} {cfg.label}", author="kcgym's expert kernels (VMMUL GEMMs, SiLU and product fused)")
    asm.comment("stage 1: G = bf16(SiLU(bf16(X @ W1))), the SiLU applied to each output tile in registers")
    gemm(asm, hw, up, x, w1, g, epilogue=silu_tiles)
    asm.comment("stage 2: U = bf16(G * bf16(X @ W3)), G's tiles brought in beside each output block")
    gemm(asm, hw, up, x, w3, u, epilogue=_times_side, side=g)
    asm.comment("stage 3: Y = bf16(U @ W2)")
    gemm(asm, hw, down, u, w2, y)
    return asm.text()


EXPERTS = {"ffn": expert_ffn, "swiglu": expert_swiglu}  # task name -> kernel, found by kcgym.sims.vliw.expert
