"""Each NPU instruction's semantics against NumPy (bf16 rounding where the hardware rounds)."""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.sims.npu import machine as M
from kcgym.sims.npu.accelerator import ACCELERATOR
from kcgym.sims.npu.config import NPUConfig
from kcgym.tasks.numerics import round_bf16
from tests.sims.npu.harness import run, vsram

RNG = np.random.default_rng(7)
A_ROW = round_bf16(RNG.uniform(-2, 2, 64).astype(np.float32))
B_ROW = round_bf16(RNG.uniform(0.5, 2, 64).astype(np.float32))
HBM = np.concatenate([A_ROW, B_ROW, np.zeros(4096 - 128, np.float32)])
LOAD_AB = """
C_SET_ADDR_REG a0, gp0, gp0
S_ADDI_INT gp1, gp0, 64
H_PREFETCH_V gp0, gp0, a0, 0, 2      ; rows 0, 1 <- A, B
S_LI_FP f1, 1.5
S_ADDI_INT gp2, gp0, 128             ; destination row 2
"""


@pytest.mark.parametrize(
    "op, expected",
    [
        ("V_ADD_VV gp2, gp0, gp1", A_ROW + B_ROW),
        ("V_SUB_VV gp2, gp0, gp1", A_ROW - B_ROW),
        ("V_MUL_VV gp2, gp0, gp1", A_ROW * B_ROW),
        ("V_MAX_VV gp2, gp0, gp1", np.maximum(A_ROW, B_ROW)),
        ("V_ADD_VF gp2, gp0, f1", A_ROW + 1.5),
        ("V_SUB_VF gp2, gp0, f1", A_ROW - 1.5),
        ("V_RSUB_VF gp2, gp0, f1", 1.5 - A_ROW),
        ("V_MUL_VF gp2, gp0, f1", A_ROW * 1.5),
        ("V_MAX_VF gp2, gp0, f0", np.maximum(A_ROW, 0)),
        ("V_EXP_V gp2, gp0", np.exp(A_ROW)),
        ("V_RECI_V gp2, gp1", 1.0 / B_ROW),
    ],
)
def test_vector_ops_round_to_bf16(op, expected):
    st, _ = run(LOAD_AB + op, HBM)
    got = vsram(st)[128:192]
    np.testing.assert_array_equal(got, round_bf16(np.asarray(expected, np.float32)))


def test_reductions_accumulate_in_fp32():
    st, _ = run(LOAD_AB + "S_LI_FP f2, 10.0\nV_RED_SUM f2, gp0\nS_LI_FP f3, -100.0\nV_RED_MAX f3, gp1\n", HBM)
    fp = np.asarray(st.fp)[0]
    assert fp[2] == pytest.approx(10.0 + A_ROW.astype(np.float64).sum(), rel=1e-6)
    assert fp[3] == B_ROW.max()


def test_scalar_fp_and_fp_sram():
    src = """
    S_LI_FP f1, 2.25
    S_LI_FP f2, -0.5
    S_ADD_FP f3, f1, f2
    S_SUB_FP f4, f1, f2
    S_MUL_FP f5, f1, f2
    S_MAX_FP f6, f1, f2
    S_ST_FP f5, gp0, 7
    S_LD_FP f7, gp0, 3
    """
    fpm = np.zeros(512, np.float32)
    fpm[3] = 42.0
    st, _ = run(src, fpm=fpm)
    fp = np.asarray(st.fp)[0]
    assert list(fp[1:8]) == [2.25, -0.5, 1.75, 2.75, -1.125, 2.25, 42.0]
    assert np.asarray(st.fpm)[0][7] == -1.125
    st, _ = run("S_LI_FP f1, 4.0\nS_EXP_FP f2, f1\nS_RECI_FP f3, f1\nS_SQRT_FP f4, f1\nS_ADD_FP f0, f1, f1")
    fp = np.asarray(st.fp)[0]
    assert fp[2] == pytest.approx(np.exp(4.0), rel=1e-6) and fp[3] == 0.25 and fp[4] == 2.0 and fp[0] == 0.0


def test_scalar_int_and_int_sram():
    src = """
    S_ADDI_INT gp1, gp0, 100
    S_ADDI_INT gp2, gp0, -7
    S_ADD_INT gp3, gp1, gp2
    S_SUB_INT gp4, gp1, gp2
    S_MUL_INT gp5, gp1, gp2
    S_LUI_INT gp6, 3
    S_ST_INT gp5, gp1, 5          ; INTSRAM[105] = -700
    S_LD_INT gp7, gp0, 105
    S_ADDI_INT gp0, gp0, 9        ; discarded
    """
    st, prog = run(src)
    gp = np.asarray(st.gp)[0]
    assert list(gp[:8]) == [0, 100, -7, 93, 107, -700, 3 << 12, -700]
    assert any(w.code == "W001" for w in prog.warnings)


def _matrix_setup(m_tile: np.ndarray, v_rows: np.ndarray) -> np.ndarray:
    hbm = np.zeros(8192, np.float32)
    hbm[: 64 * 64] = m_tile.reshape(-1)
    hbm[4096 : 4096 + v_rows.size] = v_rows.reshape(-1)
    return hbm


TILE = round_bf16(RNG.uniform(-1, 1, (64, 64)).astype(np.float32))
VROWS = round_bf16(RNG.uniform(-1, 1, (4, 64)).astype(np.float32))
MAT_LOAD = """
C_SET_ADDR_REG a0, gp0, gp0
H_PREFETCH_M gp0, gp0, a0, 0          ; MSRAM tile 0 <- HBM[0..4095]
S_LUI_INT gp1, 1                      ; 4096
H_PREFETCH_V gp0, gp1, a0, 0, 4       ; VSRAM rows 0..3 <- HBM[4096..]
S_ADDI_INT gp2, gp0, 512              ; output at VSRAM row 8
"""


def test_m_mm_block_and_writeout_column_offset():
    src = MAT_LOAD + "S_ADDI_INT gp3, gp0, 8\nM_MM gp3, gp0\nM_MM gp3, gp0\nM_MM_WO gp2, 8\n"
    st, _ = run(src, _matrix_setup(TILE, VROWS))
    got = vsram(st)[512 : 512 + 4 * 64].reshape(4, 64)[:, 8:12]
    expected = round_bf16((2 * (VROWS @ TILE[:, 8:12])).astype(np.float32))
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert np.all(vsram(st)[512 : 512 + 256].reshape(4, 64)[:, :8] == 0)  # rest of the rows untouched


def test_m_tmm_uses_tile_rows():
    src = MAT_LOAD + "S_ADDI_INT gp3, gp0, 128\nM_TMM gp3, gp0\nM_MM_WO gp2, 0\n"  # MSRAM rows 2..5
    st, _ = run(src, _matrix_setup(TILE, VROWS))
    got = vsram(st)[512 : 512 + 256].reshape(4, 64)[:, :4]
    np.testing.assert_allclose(got, round_bf16((VROWS @ TILE[2:6].T).astype(np.float32)), rtol=1e-6)


def test_writeout_clears_accumulator():
    src = MAT_LOAD + "M_MM gp0, gp0\nM_MM_WO gp2, 0\nM_MM gp0, gp0\nM_MM_WO gp2, 4\n"
    st, _ = run(src, _matrix_setup(TILE, VROWS))
    rows = vsram(st)[512 : 512 + 256].reshape(4, 64)
    np.testing.assert_array_equal(rows[:, :4], rows[:, 4:8])


@pytest.mark.parametrize("op, expected", [("M_MV", VROWS[0] @ TILE), ("M_TMV", TILE @ VROWS[0])])
def test_matrix_vector(op, expected):
    st, _ = run(MAT_LOAD + f"{op} gp0, gp0\nM_MV_WO gp2, 0\n", _matrix_setup(TILE, VROWS))
    np.testing.assert_allclose(vsram(st)[512:576], round_bf16(expected.astype(np.float32)), rtol=1e-6)


def test_dma_strided_rows_broadcast_and_store():
    hbm = np.arange(4096, dtype=np.float32)
    src = """
    C_SET_ADDR_REG a1, gp0, gp0
    S_ADDI_INT gp1, gp0, 256
    C_SET_STRIDE_REG gp1
    S_ADDI_INT gp2, gp0, 64
    H_PREFETCH_V gp0, gp2, a1, 1, 3       ; rows from 64, 320, 576
    C_SET_STRIDE_REG gp0
    S_ADDI_INT gp3, gp0, 256
    H_PREFETCH_V gp3, gp2, a1, 1, 4       ; stride 0: four copies of HBM[64..127]
    S_ADDI_INT gp4, gp0, 3072
    H_STORE_V gp0, gp4, a1, 0, 2          ; rows 0,1 -> HBM[3072..3199]
    """
    st, _ = run(src, hbm)
    v = vsram(st)
    np.testing.assert_array_equal(v[:192], np.concatenate([hbm[64:128], hbm[320:384], hbm[576:640]]))
    np.testing.assert_array_equal(v[256:512], np.tile(hbm[64:128], 4))
    np.testing.assert_array_equal(np.asarray(st.hbm)[0][3072:3200], np.concatenate([hbm[64:128], hbm[320:384]]))


def test_hardware_loops_nest():
    src = """
    C_LOOP_START gp1, 3
      C_LOOP_START gp2, 4
        S_ADDI_INT gp3, gp3, 1
      C_LOOP_END gp2
      S_ADDI_INT gp4, gp4, 1
    C_LOOP_END gp1
    """
    st, _ = run(src)
    gp = np.asarray(st.gp)[0]
    assert gp[3] == 12 and gp[4] == 3 and gp[1] == 0


@pytest.mark.parametrize(
    "src, fault, line",
    [
        ("S_ADDI_INT gp1, gp0, 70000\nV_ADD_VV gp1, gp1, gp1", "OOB_VSRAM", 2),
        ("S_ADDI_INT gp1, gp0, 3\nV_EXP_V gp1, gp0", "MISALIGNED", 2),
        ("S_ADDI_INT gp1, gp0, 2\nM_MM gp1, gp0", "MISALIGNED", 2),
        ("S_LUI_INT gp1, 30\nM_MV gp1, gp0", "OOB_MSRAM", 2),
        ("C_SET_ADDR_REG a0, gp0, gp0\nS_LUI_INT gp1, 2\nH_PREFETCH_V gp0, gp1, a0, 0, 4", "OOB_HBM", 3),
        ("S_ADDI_INT gp1, gp0, -64\nC_SET_ADDR_REG a0, gp1, gp0\nH_PREFETCH_M gp0, gp0, a0, 0", "OOB_HBM", 3),
        ("S_ADDI_INT gp1, gp0, 32\nC_SET_ADDR_REG a0, gp0, gp0\nH_STORE_V gp0, gp1, a0, 0, 1", "MISALIGNED", 3),
        ("H_PREFETCH_V gp0, gp0, a3, 0, 1", "OOB_HBM", 1),
        ("C_SET_ADDR_REG a0, gp0, gp0\nH_PREFETCH_M gp0, gp0, a0, 1", "OOB_HBM", 2),
        ("S_ADDI_INT gp1, gp0, 600\nS_LD_FP f1, gp1, 0", "OOB_FPSRAM", 2),
        ("S_ST_INT gp0, gp0, 9999", "OOB_INTSRAM", 1),
    ],
)
def test_faults_name_the_line(src, fault, line):
    hbm = np.zeros(4096, np.float32)
    st, prog = run(src, hbm)
    ctl = np.asarray(st.ctl)[0]
    assert M.FAULT_NAMES[ctl[M.FAULT]] == fault
    assert prog.line_of(int(ctl[M.FAULT_PC])) == line


def test_fault_stops_before_writing():
    st, _ = run("S_LI_FP f1, 3.0\nS_ADDI_INT gp1, gp0, 65\nV_ADD_VF gp0, gp1, f1\nV_ADD_VF gp0, gp0, f1")
    assert np.all(vsram(st)[:64] == 0)


def test_infinite_loop_hits_step_budget():
    st, _ = run("C_LOOP_START gp1, 5\nS_ADDI_INT gp1, gp0, 5\nC_LOOP_END gp1", max_steps=5000)
    ctl = np.asarray(st.ctl)[0]
    assert ctl[M.HALTED] == 0 and ctl[M.STEPS] == 5000 and ctl[M.FAULT] == 0


def test_nonfinite_values_are_traced_to_their_line():
    st, prog = run("S_LI_FP f1, 1000.0\nS_EXP_FP f2, f1\nS_LI_FP f3, 1.0", np.zeros(4096, np.float32))
    assert prog.line_of(int(np.asarray(st.nan_pc)[0])) == 2


@pytest.mark.parametrize(
    "src, says",
    [
        ("H_PREFETCH_V gp0, gp0, a3, 0, 1", "far below 0: an address register or STRIDE that was never set"),
        ("C_SET_ADDR_REG a0, gp0, gp0\nH_PREFETCH_M gp0, gp0, a0, 1", "far below 0: an address register or STRIDE"),
        ("S_ADDI_INT gp1, gp0, -64\nC_SET_ADDR_REG a0, gp1, gp0\nH_PREFETCH_M gp0, gp0, a0, 0",
         "HBM row starting at element -64 is before the start of HBM"),
        ("C_SET_ADDR_REG a0, gp0, gp0\nS_LUI_INT gp1, 2\nH_PREFETCH_V gp0, gp1, a0, 0, 4",
         "HBM row starting at element 8384 runs past the end of this task's HBM image"),
        ("S_LUI_INT gp1, 196608\nH_PREFETCH_V gp0, gp1, a0, 0, 1",  # never set, plus an offset of 3 x 2^28
         f"HBM row starting at element {M.UNSET + 3 * (1 << 28)} is before the start of HBM"),
    ],
)
def test_the_oob_hbm_message_says_what_the_simulator_did(src, says):
    """The message follows the fault detail the machine reports (the offending row's start element)."""
    st, _ = run(src, np.zeros(4096, np.float32))
    ctl = np.asarray(st.ctl)[0]
    assert M.FAULT_NAMES[ctl[M.FAULT]] == "OOB_HBM"
    assert says in ACCELERATOR.fault_message("OOB_HBM", int(ctl[M.FAULT_DETAIL]), NPUConfig())
