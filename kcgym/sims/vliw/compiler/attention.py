"""Templates of the attention tasks: the attention core (SDPA, FlashAttention) and MHA / GQA / MQA.

Staged like the reference: S = bf16(bf16(Q_i K^T) * scale) one query row at a time, the softmax of
that row exact-ish (exp2 argument and max subtraction formed in fp32, probabilities rounded), then
O_i = bf16(P_i V) with fp32 accumulation. Per head, K^T comes into DM by column-gathering DMAs
(rowbytes 2, strided by the row), so a key row of scores is one broadcast-MAC chain per 32 keys.
Rows shorter than a vector (s or d < 32) sit in 64-byte slots: score padding lanes get -1e30 (they
vanish under exp), K^T and V padding lanes are zeroed. FlashAttention shares SDPA's template: it is
the same function, and a naive kernel has no reason to tile the keys.

The projected forms stage through EXT scratch (``SCRATCH``): Qp, Kp, Vp = X @ Wq, Wk, Wv, the heads
side by side in Oh, then Y = Oh @ Wo. Projections narrower than a vector (K/V of one 16-wide head)
use :func:`narrow_matmul_stage`; the rest use the shared ``matmul_stage``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from kcgym.sims.base import MemoryLayout
from kcgym.sims.vliw.compiler.composites import LOG2E_HI, LOG2E_LO
from kcgym.sims.vliw.compiler.emit import Asm, ext_bytes
from kcgym.sims.vliw.compiler.primitives import matmul_stage
from kcgym.sims.vliw.config import LANES, VECTOR_BYTES, VLIWConfig
from kcgym.tasks.base import Task, TaskConfig
from kcgym.tasks.numerics import round_bf16

PAD_SCORE = -1.0e30  # score padding lanes: exp2 of it underflows to exactly 0


def _vectors(n: int) -> int:
    """Vectors (64-byte slots) one row of ``n`` bf16 elements occupies."""
    return -(-n // LANES)


def _split(value: float) -> tuple[float, float]:
    """value = hi + lo with hi, lo bf16: VMPY + VMAC by the halves multiply by value in fp32."""
    hi = float(round_bf16(np.float32(value)))
    return hi, float(round_bf16(np.float32(value - hi)))


def narrow_matmul_stage(asm: Asm, hw: VLIWConfig, dims: tuple[int, int, int], x: int, w: int, y: int) -> None:
    """Y = bf16(X @ W) for N < 32 (EXT byte addresses): W's rows in 64-byte slots, one MAC chain per row.

    ``matmul_stage`` works in 32-column strips; a 16-wide K/V projection of one head has none.
    """
    M, K, N = dims
    xbuf = K * VECTOR_BYTES
    ybuf = xbuf + _vectors(K) * VECTOR_BYTES
    if N >= LANES or N % 2 or ybuf + VECTOR_BYTES > hw.dm_bytes or hw.dma_max_bytes < 2 * K:
        raise ValueError(f"narrow matmul M={M}, K={K}, N={N} does not fit the VLIW template")
    asm(f"MOVI r1, {w}", "row of W")
    asm("PMOVI p0, 0")
    with asm.loop(K, "rows of W, one 64-byte slot each"):
        asm(f"DMAI p0, r1, r0, 1, {2 * N}")
        asm(f"ADDI r1, r1, {2 * N}")
        asm(f"PADDI p0, p0, {VECTOR_BYTES}")
    asm(f"MOVI r7, {x}", "row of X")
    asm(f"MOVI r9, {y}", "row of Y")
    with asm.loop(M, "rows"):
        asm(f"PMOVI p1, {xbuf}")
        asm(f"DMAI p1, r7, r0, 1, {2 * K}", "row of X -> DM")
        asm("CZERO c0")
        asm("PMOVI p0, 0")
        with asm.loop(K, "k"):
            asm("VLDB x0, p1, 2", "X[i, k] in every lane")
            asm("VLD x1, p0, 64", "W[k, :] (lanes past N: zero)")
            asm("VMAC c0, x1, x0")
        asm("VCONV x2, c0", "round to bf16")
        asm(f"PMOVI p2, {ybuf}")
        asm("VST x2, p2, 0")
        asm(f"DMAO p2, r9, r0, 1, {2 * N}", f"{N} outputs -> Y")
        asm(f"ADDI r7, r7, {2 * K}")
        asm(f"ADDI r9, r9, {2 * N}")


def project(asm: Asm, hw: VLIWConfig, dims: tuple[int, int, int], x: int, w: int, y: int) -> None:
    """Y = bf16(X @ W) with the stage that fits N."""
    M, K, N = dims
    if N % LANES == 0:
        matmul_stage(asm, hw, (1, M, K, N), x, w, y)
    else:
        narrow_matmul_stage(asm, hw, dims, x, w, y)


def attention_stage(asm: Asm, hw: VLIWConfig, s: int, d: int, heads: int, group: int, scale: float,
                    q: tuple[int, int], k: tuple[int, int], v: tuple[int, int], o: tuple[int, int]) -> None:
    """O_i = softmax(bf16(bf16(Q_i K_g^T) * scale)) V_g for ``heads`` query heads of width ``d``.

    Each operand is (EXT byte address of head 0's first column, row stride in bytes); head i reads
    columns i*d.. of Q and O and K/V head g = i // group (group a power of two) of K and V.
    """
    ns, nd = _vectors(s), _vectors(d)
    kt_buf = 0  # K^T: d rows of ns slots
    v_buf = kt_buf + d * ns * VECTOR_BYTES  # V: s rows of nd slots
    q_row = v_buf + s * nd * VECTOR_BYTES
    s_row = q_row + nd * VECTOR_BYTES
    o_row = s_row + ns * VECTOR_BYTES
    if o_row + nd * VECTOR_BYTES > hw.dm_bytes or nd > 8 or (d % LANES == 0 and 2 * s * d > hw.dma_max_bytes):
        raise ValueError(f"attention s={s}, d={d} does not fit the VLIW template (K^T and V in DM, one DMA for V, "
                         "one accumulator per 32 columns of a head)")
    if group & (group - 1) or k[1] != v[1]:
        raise ValueError(f"attention needs a power-of-two group (got {group}) and one row stride for K and V")
    sc_hi, sc_lo = _split(scale)
    asm.comment(f"attention: {heads} head(s) of {s} x {d}, scale {scale!r}")
    asm(f"VBCST x8, {LOG2E_HI!r}", "log2(e), high bf16 half")
    asm(f"VBCST x9, {LOG2E_LO!r}", "log2(e), low half")
    asm(f"VBCST x10, {sc_hi!r}", "scale, high half")
    asm(f"VBCST x11, {sc_lo!r}", "scale, low half")
    asm("VBCST x7, 1.0")
    asm("VBCST x2, 0.0")
    if s % LANES:
        asm("VMOV x6, x2", "score padding: 0 in the key lanes ...")
        asm(f"VBCST x3, {PAD_SCORE!r}")
        asm(f"MOVI r13, {s}")
        with asm.loop(LANES - s % LANES, "... and -1e30 past them"):
            asm("VINS x6, x3, r13")
            asm("ADDI r13, r13, 1")
        asm(f"PMOVI p0, {kt_buf}")
        with asm.loop(d * ns, "zero K^T (padding lanes stay 0)"):
            asm("VST x2, p0, 64")
    if d % LANES:
        asm(f"PMOVI p3, {v_buf}")
        with asm.loop(s * nd, "zero V (padding lanes stay 0)"):
            asm("VST x2, p3, 64")
    asm(f"MOVI r1, {q[0]}", "Q of this head")
    asm(f"MOVI r2, {o[0]}", "O of this head")
    asm("MOVI r3, 0", "head index")
    asm(f"MOVI r10, {q[1]}", "row stride of Q")
    asm(f"MOVI r11, {k[1]}", "row stride of K and V")
    asm(f"MOVI r12, {o[1]}", "row stride of O")
    with asm.loop(heads, "heads"):
        asm(f"SHRI r13, r3, {int(math.log2(group))}", "K/V head of this query head")
        asm(f"MOVI r14, {2 * d}")
        asm("MUL r13, r13, r14", "its byte offset in a row")
        asm(f"MOVI r4, {k[0]}")
        asm("ADD r4, r4, r13", "K of this head")
        asm(f"MOVI r5, {v[0]}")
        asm("ADD r5, r5, r13", "V of this head")
        asm(f"PMOVI p0, {kt_buf}")
        asm("ADD r8, r4, r0")
        with asm.loop(d, "K^T: gather one column of K per row"):
            asm(f"DMAI p0, r8, r11, {s}, 2")
            asm("ADDI r8, r8, 2")
            asm(f"PADDI p0, p0, {ns * VECTOR_BYTES}")
        asm(f"PMOVI p3, {v_buf}")
        if d % LANES == 0:
            asm(f"DMAI p3, r5, r11, {s}, {2 * d}", "V -> DM")
        else:
            asm("ADD r8, r5, r0")
            with asm.loop(s, "V: one row per slot"):
                asm(f"DMAI p3, r8, r0, 1, {2 * d}")
                asm("ADD r8, r8, r11")
                asm(f"PADDI p3, p3, {nd * VECTOR_BYTES}")
        asm("ADD r6, r1, r0", "row of Q")
        asm("ADD r7, r2, r0", "row of O")
        with asm.loop(s, "query rows"):
            _score_row(asm, s, d, ns, kt_buf, q_row, s_row)
            _softmax_row(asm, ns, s_row)
            _output_row(asm, s, d, nd, v_buf, s_row, o_row)
            asm("ADD r6, r6, r10")
            asm("ADD r7, r7, r12")
        asm(f"ADDI r1, r1, {2 * d}")
        asm(f"ADDI r2, r2, {2 * d}")
        asm("ADDI r3, r3, 1")


def _score_row(asm: Asm, s: int, d: int, ns: int, kt_buf: int, q_row: int, s_row: int) -> None:
    """DM[s_row] = bf16(bf16(Q_i K^T) * scale) (+ padding), Q_i DMAed from r6."""
    asm(f"PMOVI p1, {q_row}")
    asm(f"DMAI p1, r6, r0, 1, {2 * d}", "row of Q -> DM")
    asm(f"PMOVI p0, {kt_buf}")
    asm(f"PMOVI p2, {s_row}")
    with asm.loop(ns, "32 keys at a time"):
        asm("CZERO c0")
        asm(f"PMOVI p1, {q_row}")
        with asm.loop(d, "k"):
            asm("VLDB x0, p1, 2", "Q[i, k] in every lane")
            asm(f"VLD x1, p0, {ns * VECTOR_BYTES}", "K^T[k, keys]")
            asm("VMAC c0, x1, x0")
        asm(f"PADDI p0, p0, {VECTOR_BYTES - d * ns * VECTOR_BYTES}", "next 32 keys")
        asm("VCONV x2, c0", "bf16(Q K^T)")
        asm("VMPY c1, x2, x10")
        asm("VMAC c1, x2, x11", "* scale in fp32")
        asm("VCONV x2, c1", "bf16 scores")
        if s % LANES:
            asm("VADD x2, x2, x6", "padding lanes -> -1e30")
        asm("VST x2, p2, 64")


def _softmax_row(asm: Asm, ns: int, s_row: int) -> None:
    """DM[s_row] = bf16(softmax) in place, each probability rounded once from a near-exact e / sum.

    (s - max) * log2(e) is formed in fp32 for VEXP2C; the fp32 sum is carried as two bf16 halves
    and 1/sum as inv_hi + inv_lo (one Newton step), so the normalisation adds no rounding of its
    own: with a bf16 sum and a bf16 reciprocal every probability of a row shared one error of up
    to 2^-8, which the later products carried to within 5% of the tolerance.
    """
    asm(f"VBCST x3, {PAD_SCORE!r}")
    asm(f"PMOVI p2, {s_row}")
    with asm.loop(ns, "row max"):
        asm("VLD x2, p2, 64")
        asm("VMAX x3, x3, x2")
    asm("VRMAX x3, x3")
    asm("VBCST x4, 0.0")
    asm("VSUB x4, x4, x3", "-max (exact)")
    asm("CZERO c0")
    asm(f"PMOVI p2, {s_row}")
    asm(f"PMOVI p5, {s_row}")
    with asm.loop(ns, "exp"):
        asm("VLD x2, p2, 64")
        asm("VMPY c1, x2, x8")
        asm("VMAC c1, x4, x8")
        asm("VMAC c1, x2, x9")
        asm("VMAC c1, x4, x9", "(s - max) * log2(e) in fp32")
        asm("VEXP2C x2, c1")
        asm("VMAC c0, x2, x7", "row sum in fp32 lanes")
        asm("VST x2, p5, 64")
    sum_halves(asm, "c0", "x0", "x1")
    asm("VUPS c2, x0")
    asm("VMAC c2, x1, x7", "sum in fp32")
    asm("VINVC x4, c2", "inv_hi = bf16(1 / sum)")
    asm("VBCST x3, 0.0")
    asm("VSUB x3, x3, x4", "-inv_hi")
    asm("VMPY c3, x7, x7")
    asm("VMAC c3, x0, x3")
    asm("VMAC c3, x1, x3", "r = 1 - sum * inv_hi")
    asm("VCONV x3, c3")
    asm("VMUL x5, x4, x3", "inv_lo = inv_hi * r")
    asm(f"PMOVI p2, {s_row}")
    asm(f"PMOVI p5, {s_row}")
    with asm.loop(ns, "normalise"):
        asm("VLD x2, p2, 64")
        asm("VMPY c1, x2, x4")
        asm("VMAC c1, x2, x5", "e * (inv_hi + inv_lo) in fp32")
        asm("VCONV x2, c1")
        asm("VST x2, p5, 64")


def sum_halves(asm: Asm, acc: str, hi: str, lo: str) -> None:
    """hi + lo (bf16, every lane) = the sum of the 32 fp32 lanes of ``acc`` to ~16 bits; ``acc`` is spent."""
    asm(f"VRADD {hi}, {acc}", "sum, rounded")
    asm(f"VBCST {lo}, {-1.0 / LANES!r}")
    asm(f"VMAC {acc}, {hi}, {lo}", "every lane -= hi / 32")
    asm(f"VRADD {lo}, {acc}", "what the rounding lost")


def _output_row(asm: Asm, s: int, d: int, nd: int, v_buf: int, s_row: int, o_row: int) -> None:
    """O_i = bf16(P_i V) (fp32 accumulation over the keys), DMAed to r7."""
    for t in range(nd):
        asm(f"CZERO c{t}")
    asm(f"PMOVI p1, {s_row}")
    asm(f"PMOVI p3, {v_buf}")
    with asm.loop(s, "keys"):
        asm("VLDB x0, p1, 2", "P[i, j] in every lane")
        for t in range(nd):
            asm("VLD x1, p3, 64", f"V[j, {32 * t}..]")
            asm(f"VMAC c{t}, x1, x0")
    asm(f"PMOVI p4, {o_row}")
    for t in range(nd):
        asm(f"VCONV x2, c{t}")
        asm("VST x2, p4, 64")
    asm(f"PMOVI p4, {o_row}")
    asm(f"DMAO p4, r7, r0, 1, {2 * d}", "row of O -> EXT")


def projected_attention_stage(asm: Asm, hw: VLIWConfig, layout: MemoryLayout, dims: tuple[int, int, int, int],
                              scale: float, x: str, ctx: str, weights: tuple[str, str, str, str], out: str,
                              suffix: str = "") -> None:
    """EXT ``out`` = attention of ``x`` over ``ctx`` with the four projections, through the scratch.

    ``dims`` = (s, h, nh, nkv); the scratch tensors are named Qp, Kp, Vp, Oh (+ ``suffix``).
    """
    s, h, nh, nkv = dims
    d = h // nh
    kv = nkv * d
    qp, kp, vp, oh = (ext_bytes(layout, n + suffix) for n in ("Qp", "Kp", "Vp", "Oh"))
    wq, wk, wv, wo = (ext_bytes(layout, n) for n in weights)
    asm.comment("Qp = bf16(X @ Wq)")
    project(asm, hw, (s, h, h), ext_bytes(layout, x), wq, qp)
    asm.comment("Kp = bf16(C @ Wk)")
    project(asm, hw, (s, h, kv), ext_bytes(layout, ctx), wk, kp)
    asm.comment("Vp = bf16(C @ Wv)")
    project(asm, hw, (s, h, kv), ext_bytes(layout, ctx), wv, vp)
    attention_stage(asm, hw, s, d, nh, nh // nkv, scale, (qp, 2 * h), (kp, 2 * kv), (vp, 2 * kv), (oh, 2 * h))
    asm.comment("out = bf16(Oh @ Wo)")
    project(asm, hw, (s, h, h), oh, wo, ext_bytes(layout, out))


def projection_scratch(s: int, h: int, kv: int, suffix: str = "") -> list[tuple[str, tuple[int, ...], str]]:
    return [
        ("Qp" + suffix, (s, h), "scratch: Q projection (s x h bf16) for the staged compiler kernel"),
        ("Kp" + suffix, (s, kv), "scratch: K projection (s x nkv*d bf16)"),
        ("Vp" + suffix, (s, kv), "scratch: V projection (s x nkv*d bf16)"),
        ("Oh" + suffix, (s, h), "scratch: attention heads side by side, before Wo (s x h bf16)"),
    ]


def _core(task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout) -> str:
    asm = Asm(f"{task.title} {cfg.label}")
    s, h = cfg["s"], cfg["h"]
    q, k, v, o = ((ext_bytes(layout, n), 2 * h) for n in ("Q", "K", "V", "O"))
    attention_stage(asm, hw, s, h, 1, 1, task.constants(cfg)["scale"], q, k, v, o)
    return asm.text()


def _projected(task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout) -> str:
    asm = Asm(f"{task.title} {cfg.label}")
    dims = (cfg["s"], cfg["h"], cfg["nh"], task.kv_heads(cfg))  # type: ignore[attr-defined]
    projected_attention_stage(asm, hw, layout, dims, task.constants(cfg)["scale"], "X", "X",
                              ("Wq", "Wk", "Wv", "Wo"), "Y")
    return asm.text()


def _projected_scratch(kv_heads: Callable[[TaskConfig], int]) -> Callable[[TaskConfig], list]:
    def specs(cfg: TaskConfig) -> list[tuple[str, tuple[int, ...], str]]:
        return projection_scratch(cfg["s"], cfg["h"], kv_heads(cfg) * (cfg["h"] // cfg["nh"]))

    return specs


TEMPLATES: dict[str, Callable[[Task, TaskConfig, VLIWConfig, MemoryLayout], str]] = {
    "sdpa": _core,
    "flash_attention": _core,
    "mha": _projected,
    "gqa": _projected,
    "mqa": _projected,
}

SCRATCH: dict[str, Callable[[TaskConfig], list[tuple[str, tuple[int, ...], str]]]] = {
    "mha": _projected_scratch(lambda c: c["nh"]),
    "gqa": _projected_scratch(lambda c: c["nkv"]),
    "mqa": _projected_scratch(lambda c: 1),
}

__all__ = ["SCRATCH", "TEMPLATES", "attention_stage", "sum_halves", "narrow_matmul_stage", "project",
           "projected_attention_stage"]
