"""Templates of the decoder blocks (LLaMA, T5): RMSNorm, projected attention, residual adds, MLP.

Every stage reads and writes EXT (``SCRATCH``), in the order of the task's reference, so each
rounds where it rounds: RMSNorm -> Z, attention(Z) -> A, H1 = X + A, ... The attention pieces
come from :mod:`.attention`, SiLU from :mod:`.composites`, products from ``matmul_stage``.
RMSNorm rows are h = 64..256 wide here (the level-1 row template handles h = 64 only), so
:func:`rmsnorm_stage` walks a row in vectors.
"""

from __future__ import annotations

from collections.abc import Callable

from kcgym.sims.base import MemoryLayout
from kcgym.sims.vliw.compiler.attention import projected_attention_stage, projection_scratch, sum_halves
from kcgym.sims.vliw.compiler.composites import silu_times_up
from kcgym.sims.vliw.compiler.emit import Asm, ext_bytes
from kcgym.sims.vliw.compiler.primitives import CHUNK_BYTES, matmul_stage, stream_stage
from kcgym.sims.vliw.config import LANES, VECTOR_BYTES, VLIWConfig
from kcgym.tasks.base import Task, TaskConfig


def rmsnorm_stage(asm: Asm, dims: tuple[int, int], src: int, dst: int, inv_hidden: float, eps: float) -> None:
    """dst = bf16(src / sqrt(mean(src^2) + eps)) row by row (EXT byte addresses), rows of any multiple of 32.

    Rounded once, as the reference: the mean is carried in fp32 (two bf16 halves of the sum), the
    bf16 VRSQRT estimate y0 gets one Newton step, y = y0 + y0 * (1 - m * y0^2) / 2 kept as two
    halves, and x * y is formed in fp32. With the mean, 1/rms and the product each rounded to bf16,
    a decoder block's output came within 6% of its tolerance; every stage after an RMSNorm carries
    its one-ulp differences.
    """
    rows, h = dims
    total = 2 * rows * h
    chunk = min(total, CHUNK_BYTES)
    if h % LANES or h < 2 * LANES or chunk % (2 * h) or total % chunk:
        raise ValueError(f"RMSNorm of rows x h = {rows} x {h} does not fit the VLIW template")
    asm("VBCST x6, -1.0")
    asm("VBCST x7, 1.0")
    asm("VBCST x9, 0.5")
    asm(f"VBCST x10, {inv_hidden!r}", "1 / h")
    asm(f"VBCST x11, {eps!r}", "eps")

    def body(a: Asm) -> None:
        with a.loop(chunk // (2 * h), "rows of the chunk"):
            a("PADDI p4, p1, 0", "start of the row, for the second pass")
            a("CZERO c0")
            with a.loop(h // LANES, "sum of squares in fp32"):
                a("VLD x0, p1, 64")
                a("VMAC c0, x0, x0")
            sum_halves(a, "c0", "x2", "x3")
            a("VMPY c1, x2, x10")
            a("VMAC c1, x3, x10")
            a("VMAC c1, x11, x7", "m = mean + eps in fp32")
            a("VCONV x2, c1", "m_hi")
            a("VMAC c1, x2, x6")
            a("VCONV x3, c1", "m_lo")
            a("VRSQRT x4, x2", "y0 ~ 1 / sqrt(m)")
            a("VMPY c2, x2, x4")
            a("VMAC c2, x3, x4", "t = m * y0 in fp32")
            a("VCONV x2, c2", "t_hi")
            a("VMAC c2, x2, x6")
            a("VCONV x3, c2", "t_lo")
            a("VMUL x5, x4, x6", "-y0")
            a("VMPY c3, x7, x7")
            a("VMAC c3, x2, x5")
            a("VMAC c3, x3, x5", "1 - m * y0^2")
            a("VCONV x2, c3")
            a("VMUL x2, x2, x9")
            a("VMUL x5, x4, x2", "y_lo = y0 * (1 - m * y0^2) / 2")
            with a.loop(h // LANES - 1, "scale the row ..."):
                a("VLD x0, p4, 64")
                a("VMPY c1, x0, x4")
                a("VMAC c1, x0, x5", "x * (y0 + y_lo) in fp32")
                a("VCONV x1, c1")
                a("VST x1, p2, 64")
            a("VLD x0, p4, 64", "... its last vector peeled: a loop may not end where the row loop does")
            a("VMPY c1, x0, x4")
            a("VMAC c1, x0, x5")
            a("VCONV x1, c1")
            a("VST x1, p2, 64")

    stream_stage(asm, src, dst, total, body)


def _binary(asm: Asm, a: int, b: int, dst: int, total_bytes: int, op: str, comment: str) -> None:
    """dst = bf16(a op b), elementwise over ``total_bytes`` (EXT byte addresses)."""
    chunk = min(total_bytes, CHUNK_BYTES)

    def body(s: Asm) -> None:
        with s.loop(chunk // VECTOR_BYTES, "vectors of the chunk"):
            s("VLD x0, p1, 64")
            s("VLD x3, p3, 64")
            s(f"{op} x1, x0, x3", comment)
            s("VST x1, p2, 64")

    stream_stage(asm, a, dst, total_bytes, body, second=b)


def _relu_in_place(asm: Asm, addr: int, total_bytes: int) -> None:
    chunk = min(total_bytes, CHUNK_BYTES)
    asm("VBCST x8, 0.0")

    def body(s: Asm) -> None:
        with s.loop(chunk // VECTOR_BYTES, "vectors of the chunk"):
            s("VLD x0, p1, 64")
            s("VMAX x1, x0, x8", "max(x, 0)")
            s("VST x1, p2, 64")

    stream_stage(asm, addr, addr, total_bytes, body)


class _Block:
    """Addresses and shapes of one decoder block's layout, and the stages over them."""

    def __init__(self, task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout):
        self.asm = Asm(f"{task.title} {cfg.label}")
        self.hw, self.layout = hw, layout
        self.s, self.h, self.nh, self.hi = cfg["s"], cfg["h"], cfg["nh"], cfg["hi"]
        self.consts = task.constants(cfg)

    def at(self, name: str) -> int:
        return ext_bytes(self.layout, name)

    def rmsnorm(self, src: str, dst: str) -> None:
        self.asm.comment(f"==== {dst} = RMSNorm({src})")
        rmsnorm_stage(self.asm, (self.s, self.h), self.at(src), self.at(dst), self.consts["inv_hidden"],
                      self.consts["eps"])

    def attention(self, x: str, ctx: str, suffix: str, out: str) -> None:
        self.asm.comment(f"==== {out} = attention({x}, {ctx}) with W*{suffix}")
        weights = tuple(f"W{p}{suffix}" for p in "qkvo")
        projected_attention_stage(self.asm, self.hw, self.layout, (self.s, self.h, self.nh, self.nh),
                                  self.consts["scale"], x, ctx, weights, out)  # type: ignore[arg-type]

    def add(self, a: str, b: str, dst: str) -> None:
        self.asm.comment(f"==== {dst} = {a} + {b}")
        _binary(self.asm, self.at(a), self.at(b), self.at(dst), 2 * self.s * self.h, "VADD", "residual add")

    def matmul(self, x: str, w: str, y: str, k: int, n: int) -> None:
        self.asm.comment(f"==== {y} = {x} @ {w}")
        matmul_stage(self.asm, self.hw, (1, self.s, k, n), self.at(x), self.at(w), self.at(y))

    def attention_block(self, x: str, out: str, ctx: str = "Z", suffix: str = "") -> None:
        """out = x + attention(RMSNorm(x), ctx) through Z and A (ctx Z: self-attention)."""
        self.rmsnorm(x, "Z")
        self.attention("Z", ctx, suffix, "A")
        self.add(x, "A", out)

    def normed_up(self, h: str) -> None:
        """The MLP's first step: Z = RMSNorm(h), G = Z @ W1."""
        self.rmsnorm(h, "Z")
        self.matmul("Z", "W1", "G", self.h, self.hi)

    def down_residual(self, h: str, out: str) -> None:
        """The MLP's last step: out = h + G @ W2, through F."""
        self.matmul("G", "W2", "F", self.hi, self.h)
        self.add(h, "F", out)


def _llama(task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout) -> str:
    b = _Block(task, cfg, hw, layout)
    b.attention_block("X", "H1")
    b.normed_up("H1")
    b.matmul("Z", "W3", "U", b.h, b.hi)
    b.asm.comment("==== G = bf16(bf16(SiLU(G)) * U)")
    silu_times_up(b.asm, b.at("G"), b.at("U"), 2 * b.s * b.hi)
    b.down_residual("H1", "Y")
    return b.asm.text()


def _t5(task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout) -> str:
    b = _Block(task, cfg, hw, layout)
    b.attention_block("X", "H1")
    b.attention_block("H1", "H2", ctx="E", suffix="_cross")
    b.normed_up("H2")
    b.asm.comment("==== G = ReLU(G)")
    _relu_in_place(b.asm, b.at("G"), 2 * b.s * b.hi)
    b.down_residual("H2", "Y")
    return b.asm.text()


def _scratch(residuals: tuple[str, ...], hidden: dict[str, str]) -> Callable[[TaskConfig], list]:
    def specs(cfg: TaskConfig) -> list[tuple[str, tuple[int, ...], str]]:
        s, h, hi = cfg["s"], cfg["h"], cfg["hi"]
        return [
            ("Z", (s, h), "scratch: RMSNorm output, input of the next sub-block (s x h bf16)"),
            *projection_scratch(s, h, h),
            ("A", (s, h), "scratch: attention sub-block output, after Wo (s x h bf16)"),
            *[(n, (s, h), "scratch: residual stream (s x h bf16)") for n in residuals],
            *[(n, (s, hi), f"scratch: {what} (s x hi bf16)") for n, what in hidden.items()],
            ("F", (s, h), "scratch: MLP output, after W2 (s x h bf16)"),
        ]

    return specs


TEMPLATES: dict[str, Callable[[Task, TaskConfig, VLIWConfig, MemoryLayout], str]] = {
    "decoder_llama": _llama,
    "decoder_t5": _t5,
}

SCRATCH: dict[str, Callable[[TaskConfig], list[tuple[str, tuple[int, ...], str]]]] = {
    "decoder_llama": _scratch(("H1",), {"G": "gate Z @ W1, then SiLU(gate) * up", "U": "up Z @ W3"}),
    "decoder_t5": _scratch(("H1", "H2"), {"G": "ReLU(Z @ W1)"}),
}
