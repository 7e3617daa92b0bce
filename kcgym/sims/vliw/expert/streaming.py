"""Expert kernels of the streaming tasks: activations and row-wise normalisations.

The data streams through two DM buffers in different banks: while the tile computes on one
chunk, the DMA engines bring in the next chunk and write back the previous one (double
buffering). Each chunk's computation is one straight-line block packed by the list scheduler,
with several vectors (or rows) in flight in rotating registers, so the vector slot stays busy
through the load, multiply and exp2/inv latencies.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from kcgym.sims.base import MemoryLayout
from kcgym.sims.vliw.compiler.emit import Asm, ext_bytes
from kcgym.sims.vliw.config import VECTOR_BYTES, VLIWConfig
from kcgym.sims.vliw.schedule import emit
from kcgym.tasks.base import Task, TaskConfig

LOG2E = 1.4426950408889634
CHUNK = 4096  # bytes per buffer
BUFFERS = (0, 16384)  # two banks apart


# ---- per-vector and per-row bodies: (registers) -> operations --------------------------------------
def _relu(x: str, t: str) -> list[str]:
    return [f"VMAX {x}, {x}, x8"]


def _silu(x: str, t: str) -> list[str]:
    return [f"VMUL {t}, {x}, x8", f"VEXP2 {t}, {t}", f"VADD {t}, {t}, x9", f"VINV {t}, {t}", f"VMUL {x}, {x}, {t}"]


def _gelu(x: str, t: str) -> list[str]:
    return [f"VMUL {t}, {x}, {x}", f"VMUL {t}, {t}, {x}", f"VMUL {t}, {t}, x10", f"VADD {t}, {t}, {x}",
            f"VMUL {t}, {t}, x8", f"VEXP2 {t}, {t}", f"VADD {t}, {t}, x9", f"VINV {t}, {t}", f"VMUL {x}, {x}, {t}"]


ELEMENTWISE = {
    "relu": (_relu, [("x8", 0.0)], 1),
    "silu": (_silu, [("x8", -LOG2E), ("x9", 1.0)], 2),
    "gelu": (_gelu, [("x8", -2.0 * math.sqrt(2.0 / math.pi) * LOG2E), ("x9", 1.0), ("x10", 0.044715)], 2),
}


def _softmax(a: str, b: str, m: str, c: str) -> list[str]:
    return [f"VMAX {m}, {a}, {b}", f"VRMAX {m}, {m}", f"VSUB {a}, {a}, {m}", f"VSUB {b}, {b}, {m}",
            f"VMUL {a}, {a}, x10", f"VMUL {b}, {b}, x10", f"VEXP2 {a}, {a}", f"VEXP2 {b}, {b}",
            f"VMPY {c}, {a}, x11", f"VMAC {c}, {b}, x11", f"VRADD {m}, {c}", f"VINV {m}, {m}",
            f"VMUL {a}, {a}, {m}", f"VMUL {b}, {b}, {m}"]


def _rmsnorm(a: str, b: str, m: str, c: str) -> list[str]:
    return [f"VMPY {c}, {a}, {a}", f"VMAC {c}, {b}, {b}", f"VRADD {m}, {c}", f"VMUL {m}, {m}, x10",
            f"VADD {m}, {m}, x11", f"VRSQRT {m}, {m}", f"VMUL {a}, {a}, {m}", f"VMUL {b}, {b}, {m}"]


def _layernorm(a: str, b: str, m: str, c: str) -> list[str]:
    return [f"VMPY {c}, {a}, x9", f"VMAC {c}, {b}, x9", f"VRADD {m}, {c}", f"VMUL {m}, {m}, x10",
            f"VSUB {a}, {a}, {m}", f"VSUB {b}, {b}, {m}", f"VMPY {c}, {a}, {a}", f"VMAC {c}, {b}, {b}",
            f"VRADD {m}, {c}", f"VMUL {m}, {m}, x10", f"VADD {m}, {m}, x11", f"VRSQRT {m}, {m}",
            f"VMUL {a}, {a}, {m}", f"VMUL {b}, {b}, {m}"]


ROWWISE: dict[str, Callable[[str, str, str, str], list[str]]] = {
    "softmax": _softmax, "rmsnorm": _rmsnorm, "layernorm": _layernorm,
}


def _chunk_block(task: Task, cfg: TaskConfig, chunk: int) -> list[str]:
    """Straight-line operations that transform the chunk at p1 in place (stores through p2)."""
    ops: list[str] = []
    if task.name in ELEMENTWISE:
        body, consts, regs_per_vector = ELEMENTWISE[task.name]
        free = [f"x{i}" for i in range(8)]
        sets = len(free) // regs_per_vector
        for v in range(chunk // VECTOR_BYTES):
            k = (v % sets) * regs_per_vector
            x, t = free[k], free[k + regs_per_vector - 1]
            ops.append(f"VLD {x}, p1, 64")
            ops += body(x, t)
            ops.append(f"VST {x}, p2, 64")
        return ops
    rowwise = ROWWISE[task.name]
    for row in range(chunk // (2 * VECTOR_BYTES)):
        k = (row % 3) * 3
        a, b, m, c = f"x{k}", f"x{k + 1}", f"x{k + 2}", f"c{row % 3}"
        ops += [f"VLD {a}, p1, 64", f"VLD {b}, p1, 64", *rowwise(a, b, m, c), f"VST {a}, p2, 64", f"VST {b}, p2, 64"]
    return ops


def expert_streaming(task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout) -> str:
    asm = Asm(f"{task.title} {cfg.label}", author="kcgym's expert kernels (double-buffered, list-scheduled)")
    if task.name in ELEMENTWISE:
        for reg, value in ELEMENTWISE[task.name][1]:
            asm(f"VBCST {reg}, {value!r}")
        total = 2 * cfg["n"]
    else:
        asm(f"VBCST x10, {LOG2E!r}" if task.name == "softmax" else f"VBCST x10, {1.0 / cfg['hidden']!r}")
        asm("VBCST x11, 1.0" if task.name == "softmax" else f"VBCST x11, {task.constants(cfg)['eps']!r}")
        if task.name == "layernorm":
            asm("VBCST x9, 1.0")
        total = 2 * cfg["n"]
    chunk = min(total, CHUNK)
    n_chunks = total // chunk
    b0, b1 = BUFFERS
    asm(f"MOVI r1, {ext_bytes(layout, 'X')}", "X of the current chunk")
    asm(f"MOVI r2, {ext_bytes(layout, 'Y')}", "Y of the current chunk")
    asm(f"MOVI r4, {b0}", "current buffer")
    asm(f"MOVI r8, {b0 + b1}", "current + other buffer")
    asm(f"MOVI r6, {n_chunks}", "chunks left")
    asm(f"PMOVI p0, {b0}")
    asm(f"DMAI p0, r1, r0, 1, {chunk}", "first chunk")
    with asm.loop(n_chunks, "chunks"):
        asm("ADDI r6, r6, -1")
        asm("SUB r5, r8, r4", "r5 = the other buffer")
        skip = asm.fresh("last")
        asm(f"BEQZ r6, {skip} || PMOV p0, r5")
        asm(f"ADDI r7, r1, {chunk}")
        asm(f"DMAI p0, r7, r0, 1, {chunk}", "prefetch the next chunk into the other buffer")
        asm.lines.append(f"{skip}:")
        asm("PMOV p1, r4")
        asm("PMOV p2, r4")
        emit(asm, _chunk_block(task, cfg, chunk), hw)
        asm("PMOV p3, r4")
        asm(f"DMAO p3, r2, r0, 1, {chunk} || ADDI r1, r1, {chunk}", "write the chunk back (asynchronous)")
        asm(f"ADDI r2, r2, {chunk}")
        asm("SUB r4, r8, r4", "swap buffers")
    return asm.text()


# task name -> kernel, found by kcgym.sims.vliw.expert
EXPERTS = dict.fromkeys(("relu", "silu", "gelu", "softmax", "layernorm", "rmsnorm"), expert_streaming)
