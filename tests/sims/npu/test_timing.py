"""The scoreboard timing model: overlap pays, hazards cost, and costs follow the table."""

from __future__ import annotations

import numpy as np

from kcgym.sims.npu import machine as M
from kcgym.sims.npu.config import NPUConfig
from tests.sims.npu.harness import run

HW = NPUConfig()
HBM = np.ones(8192, np.float32)
SETUP = "C_SET_ADDR_REG a0, gp0, gp0\nS_ADDI_INT gp1, gp0, 256\nS_ADDI_INT gp2, gp0, 512\nS_LUI_INT gp5, 1\n"


def cycles(src: str, hw: NPUConfig = HW) -> int:
    st, _ = run(src, HBM, hw=hw)
    ctl = np.asarray(st.ctl)[0]
    assert ctl[M.FAULT] == 0
    return int(ctl[M.T_END])


def test_prefetch_ahead_beats_prefetch_then_use():
    body0 = "V_EXP_V gp0, gp0\nV_EXP_V gp3, gp0\n"
    sync = SETUP + ("H_PREFETCH_V gp0, gp0, a0, 0, 4\n" + body0 + "H_STORE_V gp0, gp5, a0, 0, 4\n"
                    "H_PREFETCH_V gp1, gp1, a0, 0, 4\nV_EXP_V gp1, gp1\nH_STORE_V gp1, gp5, a0, 0, 4\n")
    ahead = SETUP + ("H_PREFETCH_V gp0, gp0, a0, 0, 4\nH_PREFETCH_V gp1, gp1, a0, 0, 4\n" + body0 +
                     "H_STORE_V gp0, gp5, a0, 0, 4\nV_EXP_V gp1, gp1\nH_STORE_V gp1, gp5, a0, 0, 4\n")
    assert cycles(ahead) < cycles(sync) - HW.hbm_latency // 2


def test_double_buffered_tiles_overlap_dma_with_matrix_work():
    mm = "".join("M_MM gp0, gp0\n" for _ in range(40))
    one_buffer = SETUP + "H_PREFETCH_V gp0, gp0, a0, 0, 4\n" + (
        "H_PREFETCH_M gp0, gp5, a0, 0\n" + mm) * 2
    two_buffers = SETUP + "H_PREFETCH_V gp0, gp0, a0, 0, 4\nS_LUI_INT gp6, 1\n" + (
        "H_PREFETCH_M gp0, gp5, a0, 0\nH_PREFETCH_M gp6, gp5, a0, 0\n" + mm + mm.replace("M_MM gp0", "M_MM gp6"))
    # with one buffer the second tile load waits for the 40 readers of the first (WAR)
    assert cycles(two_buffers) < cycles(one_buffer) - HW.dma_cycles(64 * 64)


def test_war_on_a_stored_row_costs_time():
    store_then_overwrite = SETUP + "H_STORE_V gp0, gp5, a0, 0, 4\nV_EXP_V gp0, gp0\n"
    store_then_other = SETUP + "H_STORE_V gp0, gp5, a0, 0, 4\nV_EXP_V gp2, gp0\n"
    # the store queues behind nothing, reads for 8 cycles; overwriting row 0 must wait for it
    assert cycles(store_then_overwrite) >= cycles(store_then_other)
    st, _ = run(store_then_overwrite, HBM)
    assert np.all(np.asarray(st.hbm)[0][4096:4096 + 64] == 0)  # the store saw the old (zero) row


def test_scalar_work_hides_under_matrix_occupancy():
    base = SETUP + "H_PREFETCH_V gp0, gp0, a0, 0, 4\nH_PREFETCH_M gp0, gp5, a0, 0\n"
    mm_only = base + "M_MM gp0, gp0\nM_MM gp0, gp0\n"
    mm_scalar = base + "M_MM gp0, gp0\n" + "S_ADDI_INT gp7, gp7, 1\n" * (HW.mm_occupancy - 2) + "M_MM gp0, gp0\n"
    assert cycles(mm_scalar) == cycles(mm_only)


def test_dma_cost_is_latency_plus_bytes_over_bandwidth():
    one = cycles("C_SET_ADDR_REG a0, gp0, gp0\nH_PREFETCH_V gp0, gp0, a0, 0, 4\n")
    assert one == 1 + HW.hbm_latency + HW.dma_cycles(4 * HW.VLEN)
    tile = cycles("C_SET_ADDR_REG a0, gp0, gp0\nH_PREFETCH_M gp0, gp0, a0, 0\n")
    assert tile == 1 + HW.hbm_latency + HW.dma_cycles(HW.MLEN * HW.MLEN)
    slow = NPUConfig(hbm_bytes_per_cycle=16, hbm_latency=300)
    assert cycles("C_SET_ADDR_REG a0, gp0, gp0\nH_PREFETCH_M gp0, gp0, a0, 0\n", slow) == 1 + 300 + 512


def test_latency_table_is_what_consumers_wait_for():
    exp_then_use = "V_EXP_V gp1, gp0\nV_ADD_VV gp2, gp1, gp1\n"
    add_then_use = "V_ADD_VV gp1, gp0, gp0\nV_ADD_VV gp2, gp1, gp1\n"
    # setup: gp1 = 64, gp2 = 128 (distinct rows); exp latency 7 vs add latency 1
    pre = "S_ADDI_INT gp1, gp0, 64\nS_ADDI_INT gp2, gp0, 128\n"
    assert cycles(pre + exp_then_use) - cycles(pre + add_then_use) == 7 - 1


def test_unit_busy_and_counts_are_reported():
    st, _ = run(SETUP + "H_PREFETCH_V gp0, gp0, a0, 0, 4\nM_MM gp0, gp0\nV_EXP_V gp0, gp0\n", HBM)
    busy = np.asarray(st.busy)[0]
    # raw state: the implicit C_HALT after the last instruction is included (RunResult drops it)
    assert busy.tolist() == [4 + 1, 1, HW.mm_occupancy, HW.dma_cycles(256)]
    assert int(np.asarray(st.counts)[0].sum()) == 7 + 1
