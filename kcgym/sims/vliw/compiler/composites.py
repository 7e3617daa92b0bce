"""Templates of the MLP blocks (FFN, SwiGLU): stages through EXT scratch, no fusion.

Each stage is a level-1 template (matrix product, streaming activation) reading and writing
EXT; intermediates round to bf16 where the task's staged reference rounds. The scratch
tensors are appended to the layout (``SCRATCH``), so agents see them and may reuse them.
SiLU takes its exp2 argument and its 1 + e from accumulators (VEXP2C, VINVC): with every step
rounded to bf16, SwiGLU's staged chain exceeded the paper's absolute tolerance in about one
element in a thousand.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from kcgym.sims.base import MemoryLayout
from kcgym.sims.vliw.compiler.emit import Asm, ext_bytes
from kcgym.sims.vliw.compiler.primitives import CHUNK_BYTES, matmul_stage, stream_stage
from kcgym.sims.vliw.config import VECTOR_BYTES, VLIWConfig
from kcgym.tasks.base import Task, TaskConfig
from kcgym.tasks.numerics import round_bf16


def _mlp_scratch(cfg: TaskConfig, names: tuple[str, ...]) -> list[tuple[str, tuple[int, ...], str]]:
    return [(name, (cfg["n"], cfg["hi"]), "scratch (n x hi bf16) for the staged compiler kernel") for name in names]


SCRATCH: dict[str, Callable[[TaskConfig], list[tuple[str, tuple[int, ...], str]]]] = {
    "ffn": lambda cfg: _mlp_scratch(cfg, ("H",)),
    "swiglu": lambda cfg: _mlp_scratch(cfg, ("G", "U")),
}


LOG2E = 1.4426950408889634
LOG2E_HI = float(round_bf16(np.float32(LOG2E)))
LOG2E_LO = LOG2E - LOG2E_HI


def _silu_constants(asm: Asm) -> None:
    """-log2(e) split into two bf16 halves, so VMPY + VMAC form -x*log2(e) in fp32; and 1.0."""
    asm(f"VBCST x8, {-LOG2E_HI!r}")
    asm(f"VBCST x10, {-LOG2E_LO!r}")
    asm("VBCST x9, 1.0")


def _silu(asm: Asm) -> None:
    """x0 -> x1 = bf16(SiLU(x0)); the exp2 argument and 1 + exp(-x) stay fp32 (the stages feed a product)."""
    asm("VMPY c1, x0, x8")
    asm("VMAC c1, x0, x10", "-x * log2(e) in fp32")
    asm("VEXP2C x2, c1", "exp(-x)")
    asm("VUPS c2, x2")
    asm("VMAC c2, x9, x9", "1 + exp(-x) in fp32")
    asm("VINVC x2, c2", "sigmoid(x)")
    asm("VMUL x1, x0, x2")


def silu_in_place(asm: Asm, addr: int, total_bytes: int) -> None:
    """addr = bf16(SiLU(addr)), in place, streamed through DM in chunks."""
    chunk = min(total_bytes, CHUNK_BYTES)
    _silu_constants(asm)

    def body(s: Asm) -> None:
        with s.loop(chunk // VECTOR_BYTES, "vectors of the chunk"):
            s("VLD x0, p1, 64")
            _silu(s)
            s("VST x1, p2, 64")

    stream_stage(asm, addr, addr, total_bytes, body)


def silu_times_up(asm: Asm, gate: int, up: int, total_bytes: int) -> None:
    """gate = bf16(bf16(SiLU(gate)) * up), in place."""
    chunk = min(total_bytes, CHUNK_BYTES)
    _silu_constants(asm)

    def body(s: Asm) -> None:
        with s.loop(chunk // VECTOR_BYTES, "vectors of the chunk"):
            s("VLD x0, p1, 64")
            s("VLD x3, p3, 64")
            _silu(s)
            s("VMUL x1, x1, x3", "* up")
            s("VST x1, p2, 64")

    stream_stage(asm, gate, gate, total_bytes, body, second=up)


def _ffn(task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout) -> str:
    asm = Asm(f"{task.title} {cfg.label}")
    n, h, hi = cfg["n"], cfg["h"], cfg["hi"]
    x, w1, w2, y, hid = (ext_bytes(layout, t) for t in ("X", "W1", "W2", "Y", "H"))
    asm.comment("stage 1: H = bf16(X @ W1)")
    matmul_stage(asm, hw, (1, n, h, hi), x, w1, hid)
    asm.comment("stage 2: H = bf16(SiLU(H)), in place")
    silu_in_place(asm, hid, 2 * n * hi)
    asm.comment("stage 3: Y = bf16(H @ W2)")
    matmul_stage(asm, hw, (1, n, hi, h), hid, w2, y)
    return asm.text()


def _swiglu(task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout) -> str:
    asm = Asm(f"{task.title} {cfg.label}")
    n, h, hi = cfg["n"], cfg["h"], cfg["hi"]
    x, w1, w3, w2, y, g, u = (ext_bytes(layout, t) for t in ("X", "W1", "W3", "W2", "Y", "G", "U"))
    asm.comment("stage 1: G = bf16(X @ W1)")
    matmul_stage(asm, hw, (1, n, h, hi), x, w1, g)
    asm.comment("stage 2: U = bf16(X @ W3)")
    matmul_stage(asm, hw, (1, n, h, hi), x, w3, u)
    asm.comment("stage 3: G = bf16(bf16(SiLU(G)) * U), in place")
    silu_times_up(asm, g, u, 2 * n * hi)
    asm.comment("stage 4: Y = bf16(G @ W2)")
    matmul_stage(asm, hw, (1, n, hi, h), g, w2, y)
    return asm.text()


TEMPLATES: dict[str, Callable[[Task, TaskConfig, VLIWConfig, MemoryLayout], str]] = {
    "ffn": _ffn,
    "swiglu": _swiglu,
}
