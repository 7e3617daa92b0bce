"""The matrix unit: VMMUL against numpy, its interlock, and the tiled DMAs that build its blocked layouts."""

from __future__ import annotations

import re

import numpy as np
import pytest

from kcgym.isa import AssemblyError
from kcgym.sims.vliw import ACCELERATOR
from kcgym.sims.vliw import machine as M
from kcgym.sims.vliw.compiler.emit import Asm
from kcgym.sims.vliw.compiler.primitives import matmul_stage
from kcgym.tasks.numerics import round_bf16
from tests.sims.vliw.harness import fault_name, run

HW = ACCELERATOR.make_hw()


def cycles(st) -> int:
    return int(max(st.ctl[M.T_END], st.ctl[M.T_ISSUE]))


def _bf16_random(rng: np.random.Generator, n: int) -> np.ndarray:
    return round_bf16(rng.standard_normal(n).astype(np.float32))


def _load_vectors(n: int) -> str:
    """DMA EXT[0 .. 64n) into DM and load it into x0 .. x(n-1)."""
    lines = ["PMOVI p0, 0", f"DMAI p0, r0, r0, 1, {64 * n}"]
    lines += [f"VLD x{i}, p0, 64" for i in range(n)]
    return "\n".join(lines)


def _block_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a.reshape(4, 8).astype(np.float64) @ b.reshape(8, 4).astype(np.float64)


@pytest.mark.parametrize("h", [0, 1])
def test_vmmul_adds_the_block_product_to_one_half_of_the_tile(h):
    rng = np.random.default_rng(h)
    a, b, c = _bf16_random(rng, 32), _bf16_random(rng, 32), _bf16_random(rng, 32)
    st, _ = run(_load_vectors(3) + f"\nVUPS c1, x2\nVMMUL c1, x0, x1, {h}", np.concatenate([a, b, c]))
    want = c.reshape(4, 8).astype(np.float64)
    want[:, 4 * h : 4 * h + 4] += _block_product(a, b)
    np.testing.assert_allclose(st.c[1].reshape(4, 8), want, rtol=1e-6, atol=1e-6)
    other = slice(4 * (1 - h), 4 * (1 - h) + 4)
    np.testing.assert_array_equal(st.c[1].reshape(4, 8)[:, other], c.reshape(4, 8)[:, other])  # untouched, exactly


def test_a_chain_of_vmmuls_accumulates_a_gemm_tile():
    """Y (4x8) = A (4x16) @ B (16x8) from two K-blocks times two column halves, then VCONV."""
    rng = np.random.default_rng(7)
    a, b = _bf16_random(rng, 64).reshape(4, 16), _bf16_random(rng, 128).reshape(16, 8)
    blocks = [a[:, 8 * k : 8 * k + 8].reshape(-1) for k in range(2)]  # x0, x1: 4x8 A blocks
    blocks += [b[8 * k : 8 * k + 8, 4 * h : 4 * h + 4].reshape(-1) for k in range(2) for h in range(2)]  # x2..x5
    src = _load_vectors(6) + """
        CZERO c0
        VMMUL c0, x0, x2, 0
        VMMUL c0, x0, x3, 1
        VMMUL c0, x1, x4, 0
        VMMUL c0, x1, x5, 1
        VCONV x6, c0
    """
    st, _ = run(src, np.concatenate(blocks))
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(st.c[0].reshape(4, 8), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(st.x[6], round_bf16(st.c[0]))


def test_vmmul_chains_wait_for_the_multiply_latency():
    chained, _ = run("\n".join(["VMMUL c0, x0, x1, 0"] * 4))
    rotated, _ = run("\n".join(f"VMMUL c{i}, x0, x1, {i % 2}" for i in range(4)))
    halves, _ = run("VMMUL c0, x0, x1, 0\nVMMUL c0, x0, x1, 1")  # one accumulator: the halves chain too
    assert cycles(chained) == 4 * HW.mul_latency
    assert cycles(rotated) == 3 + HW.mul_latency
    assert cycles(halves) == 2 * HW.mul_latency


def _tiled(ext: np.ndarray, re: int, rs: int, rows: int, rowbytes: int, tbytes: int) -> np.ndarray:
    """The DM image DMAIT builds, from the documented index formula (element units)."""
    out = []
    for j in range(rowbytes // tbytes):
        for i in range(rows):
            start = (re + i * rs + j * tbytes) // 2
            out.append(ext[start : start + tbytes // 2])
    return np.concatenate(out)


@pytest.mark.parametrize("rows, rowbytes, tbytes, rs", [(4, 64, 16, 256), (16, 16, 8, 128), (3, 48, 48, 100)])
def test_dmait_then_dmaot_round_trips_a_strided_region(rows, rowbytes, tbytes, rs):
    ext = np.arange(2048, dtype=np.float32)
    re, out = 6, 8192
    n = rows * rowbytes // 2
    st, _ = run(f"""
        MOVI r1, {re}
        MOVI r2, {rs}
        PMOVI p0, 256
        DMAIT p0, r1, r2, {rows}, {rowbytes}, {tbytes}
        MOVI r3, {out}
        DMAOT p0, r3, r2, {rows}, {rowbytes}, {tbytes}
    """, np.concatenate([ext, np.zeros(4096, np.float32)]))
    np.testing.assert_array_equal(st.dm[128 : 128 + n], _tiled(ext, re, rs, rows, rowbytes, tbytes))
    for i in range(rows):  # DMAOT wrote the same rows back, strided, at the new address
        got = st.ext[(out + i * rs) // 2 : (out + i * rs + rowbytes) // 2]
        np.testing.assert_array_equal(got, ext[(re + i * rs) // 2 : (re + i * rs + rowbytes) // 2])


def test_tiled_dma_takes_as_long_as_a_plain_one():
    src = "PMOVI p0, 0\nDMAI{t} p0, r0, r1, 8, 64{w}\nPMOVI p1, 0\nVLD x0, p1, 0"
    plain, _ = run("MOVI r1, 64\n" + src.format(t="", w=""))
    tiled, _ = run("MOVI r1, 64\n" + src.format(t="T", w=", 16"))
    assert cycles(plain) == cycles(tiled) > HW.dma_latency  # the load waited for the DMA in both


@pytest.mark.parametrize("line, code, col, fragment", [
    ("VMMUL c0, x0, x1, 2", "E005", 19, "outside 0..1"),
    ("VMMUL x0, x0, x1, 0", "E003", 7, "operand 'cacc' of VMMUL must be a accumulator"),
    ("DMAIT p0, r1, r2, 4, 64, 24", "E115", 26, "not a multiple of the strip width tbytes = 24"),
    ("DMAOT p0, r1, r2, 4, 64, 15", "E006", 26, "'tbytes' of DMAOT must be a multiple of 2"),
    ("DMAIT p0, r1, r2, 4, 8192, 16", "E112", 19, "at most 16384"),
    ("DMAIT p0, r1, r2, 4, 64", "E002", 22, "takes 6 operand(s), got 5"),
])
def test_bad_matrix_unit_operands_are_rejected_at_assembly(line, code, col, fragment):
    with pytest.raises(AssemblyError) as e:
        ACCELERATOR.assemble(line, HW)
    d = next(d for d in e.value.errors if d.code == code)
    assert d.col == col and fragment in d.render(), d.render()


def test_tiled_dma_out_of_bounds_faults_like_dmai():
    st, _ = run(f"PMOVI p0, {HW.dm_bytes - 64}\nDMAIT p0, r0, r0, 4, 64, 16")
    assert fault_name(st) == "OOB_DM"
    st, _ = run("MOVI r1, 8160\nPMOVI p0, 0\nDMAOT p0, r1, r0, 4, 64, 16", np.zeros(4096, np.float32))
    assert fault_name(st) == "OOB_EXT"
    st, _ = run("PMOVI p0, 32\nDMAIT p0, r0, r0, 4, 64, 16")
    assert fault_name(st) == "MISALIGNED"


@pytest.mark.parametrize("dims, fragment", [((1, 6, 64, 64), "M % 4 == K % 8 == N % 8 == 0"),
                                            ((1, 8, 2048, 64), "K x 8 strip of W (32768 bytes)")])
def test_the_compiler_gemm_rejects_shapes_it_cannot_block(dims, fragment):
    with pytest.raises(ValueError, match=re.escape(fragment)):
        matmul_stage(Asm("t"), HW, dims, 0, 0, 0)
