"""NPU timing contract: one test per numbered rule of the guide's Timing model section (NPU-Tn).

Each test runs a small kernel and asserts the cycle count the rule's formula predicts, computed
here from the same config and cost-table constants the guide prints.
"""

from __future__ import annotations

import math

import numpy as np

from kcgym.sims.npu import ACCELERATOR
from kcgym.sims.npu import machine as M
from kcgym.sims.npu.config import NPUConfig
from kcgym.sims.npu.isa import make_isa
from tests.sims.contract import check_every_rule_has_a_test
from tests.sims.npu.harness import at, run

HW = NPUConfig()
ISA = make_isa(HW)
LAT = dict(zip((s.mnemonic for s in ISA.instructions), ISA.table("latency", HW), strict=True))
HBM = np.ones(8192, np.float32)


def occ_v(nrows: int) -> int:
    return math.ceil(2 * nrows * HW.VLEN / HW.hbm_bytes_per_cycle)


def cycles(src: str) -> int:
    st, _ = run(src, HBM)
    ctl = np.asarray(st.ctl)[0]
    assert ctl[M.FAULT] == 0
    return int(ctl[M.T_END])


def test_every_rule_has_a_contract_test():
    check_every_rule_has_a_test(ACCELERATOR.docs(HW), globals(), "NPU")


def test_npu_t1_in_order_issue_and_dmas_never_stall_it():
    assert cycles("S_ADDI_INT gp1, gp0, 1\n" * 3) == 3 + 1  # + the implicit C_HALT (NPU-T6)
    # a DMA waiting in the queue does not hold back the scalar instructions behind it
    two = "C_SET_ADDR_REG a0, gp0, gp0\nH_PREFETCH_V gp0, gp0, a0, 0, 4\nH_PREFETCH_V gp0, gp0, a0, 0, 4\n"
    assert cycles(two) == cycles(two + "S_ADDI_INT gp1, gp0, 1\n" * 5)


def test_npu_t2_start_is_the_latest_of_issue_unit_and_sources():
    # the second V_EXP_V reads row 0 written by the first: start = 0 + latency; ready after another latency
    assert cycles("V_EXP_V gp0, gp0\nV_EXP_V gp3, gp0\n") == 2 * LAT["V_EXP_V"]
    assert cycles("V_EXP_V gp0, gp0\n") == max(LAT["V_EXP_V"], 2)


def test_npu_t3_a_write_waits_for_earlier_readers_of_the_row():
    # H_STORE_V reads rows 0-3 for its occupancy (from 1); the V_EXP_V writing row 0 starts after that
    src = "C_SET_ADDR_REG a0, gp0, gp0\nS_LUI_INT gp5, 1\nH_STORE_V gp0, gp5, a0, 0, 4\nV_EXP_V gp0, gp0\n"
    store_start = 2
    v_start = max(3, store_start + occ_v(4))
    assert cycles(src) == max(store_start + HW.hbm_latency + occ_v(4), v_start + LAT["V_EXP_V"])


def test_npu_t4_dma_cost_follows_nrows():
    for nrows in (1, 2, 4):
        src = f"C_SET_ADDR_REG a0, gp0, gp0\nH_PREFETCH_V gp0, gp0, a0, 0, {nrows}\n"
        assert cycles(src) == 1 + HW.hbm_latency + occ_v(nrows)
    assert occ_v(HW.v_prefetch_rows) == HW.dma_cycles(HW.v_prefetch_rows * HW.VLEN)


def test_npu_t5_a_prefetch_after_a_store_waits_only_for_its_occupancy_and_sees_its_data():
    src = ("C_SET_ADDR_REG a0, gp0, gp0\nS_ADDI_INT gp2, gp0, 512\n"
           "H_STORE_V gp0, gp0, a0, 0, 4\nH_PREFETCH_V gp2, gp0, a0, 0, 4\n")
    s = 2  # the store issues after the two setup instructions
    assert cycles(src) == s + 2 * occ_v(4) + HW.hbm_latency
    st, _ = run(src, HBM)
    vs = np.asarray(at(st).vs)
    assert np.all(vs[8:12] == 0.0)  # the prefetch read the stored (zero) rows, not the ones HBM held


def test_npu_t6_the_run_ends_when_the_last_result_lands():
    useless = "C_SET_ADDR_REG a0, gp0, gp0\nH_PREFETCH_V gp0, gp0, a0, 0, 4\n"
    assert cycles(useless) == 1 + HW.hbm_latency + occ_v(4)
    assert cycles("S_ADDI_INT gp1, gp0, 1\n") == 2


def test_npu_t7_initial_state():
    st, _ = run("C_NOP\n", HBM)
    s = at(st)
    assert not np.asarray(s.gp).any() and not np.asarray(s.fp).any()
    assert np.all(np.asarray(s.ar) == M.UNSET) and int(np.asarray(s.ctl)[M.STRIDE]) == M.UNSET
    assert not np.asarray(s.vs).any() and not np.asarray(s.ms).any() and not np.asarray(s.acc).any()
    assert not np.asarray(s.mv).any() and not np.asarray(s.im).any()
