"""RVV timing contract: one test per numbered rule of the guide's Timing model section (RVV-Tn).

Each test runs a small kernel and asserts the cycle count the rule's formula predicts, computed
here from the same config constants the guide prints.
"""

from __future__ import annotations

import math

import numpy as np

from kcgym.sims.rvv import ACCELERATOR
from kcgym.sims.rvv import machine as M
from kcgym.sims.rvv.accelerator import fault_info, simulate_images
from kcgym.sims.rvv.assembler import assemble
from kcgym.sims.rvv.config import DTCM_BASE, RVVConfig
from tests.sims.contract import check_every_rule_has_a_test

HW = RVVConfig()
LAT, BW, Q = HW.ext_latency, HW.ext_bytes_per_cycle, HW.vector_queue_depth
SETUP = "li t0, 32\nvsetvli t0, t0, e32, m8, ta, ma\n"  # 2 cycles; vl = 32 of 32-bit: 8 chunks of 128 bits
T0 = 2  # T after SETUP (li at 0, vsetvli at 1)
CH = 8  # chunks of one e32 m8 operation at vl = 32


def run(source: str):
    p = assemble(source, HW)
    st = simulate_images(p, np.zeros((1, 4096), np.uint8), HW, 100_000)
    fault = fault_info(st, 0, p, HW, 100_000)
    assert fault is None, fault.render()
    return st


def cycles(source: str) -> int:
    return int(run(source).ctl[0, M.T_END])


def test_every_rule_has_a_contract_test():
    check_every_rule_has_a_test(ACCELERATOR.docs(HW), globals(), "RVV")


def test_rvv_t1_scalar_issue_one_per_cycle_after_sources():
    assert cycles("addi t0, zero, 1\naddi t1, t0, 1\naddi t2, t1, 1") == 3
    assert cycles("li t0, 3\ndiv t1, t0, t0") == 1 + HW.div_cycles


def test_rvv_t2_scalar_result_latencies():
    assert cycles("li t0, 3\nmul t1, t0, t0\naddi t2, t1, 1") == 1 + HW.mul_latency + 1
    assert cycles("lw t0, -4(sp)\naddi t1, t0, 1") == HW.load_use_latency + 1
    # lui at 0; lw at 1: c = 1, ready 1 + ceil(4 / BW) + LAT; the addi issues then
    assert cycles("lui a0, 0x20000\nlw t0, 0(a0)\naddi t1, t0, 1") == 1 + math.ceil(4 / BW) + LAT + 1


def test_rvv_t3_static_branch_prediction():
    P = HW.branch_penalty
    # li; 3 x (addi, bnez): two predicted-taken back-edges, the final fall-through mispredicted
    assert cycles("li t0, 3\n1: addi t0, t0, -1\nbnez t0, 1b") == 1 + 3 * 2 + P
    assert cycles("beq zero, zero, 1f\naddi t0, t0, 1\n1: addi t1, t1, 1") == 1 + P + 1  # forward taken
    assert cycles("jal zero, 1f\n1: addi t1, t1, 1") == 1 + HW.jump_penalty + 1


def _queue_model(n: int, occ: int, t0: int = T0, lat: int = 1) -> int:
    """RVV-T4/T5 applied by hand to n independent vector ops of occupancy ``occ`` after ``t0``."""
    T, free, starts, done = t0, 0, [], 0
    for i in range(n):
        s = max(T, starts[i - Q] if i >= Q else 0)
        v = max(s + 1, free)
        starts.append(v)
        free, T, done = v + occ, s + 1, v + occ + lat
    return max(T, done)


def test_rvv_t4_the_scalar_core_runs_at_most_queue_depth_vector_instructions_ahead():
    n = 3 * Q
    src = SETUP + "vadd.vv v8, v16, v24\n" * n
    assert cycles(src) == _queue_model(n, CH)
    # vsetvli does not wait for the vector unit: it costs one scalar cycle after the queue
    assert cycles(src + "vsetvli t1, t0, e8, m1, ta, ma\n") == _queue_model(n, CH)
    assert cycles("li t0, 8\n" + "vsetvli t1, t0, e8, m1, ta, ma\n" * 3) == 1 + 3  # one cycle each


def test_rvv_t5_vector_unit_occupancy_and_result_latency():
    # a dependent chain: each vadd starts at the previous one's done = v + CH + 1
    src = SETUP + "vadd.vv v8, v16, v24\nvadd.vv v16, v8, v8\n"
    v1 = T0 + 1
    v2 = max(T0 + 2, v1 + CH, v1 + CH + 1)
    assert cycles(src) == v2 + CH + 1
    # a multiply adds vmul_latency
    assert cycles(SETUP + "vmul.vv v8, v16, v24\n") == T0 + 1 + CH + HW.vmul_latency + 1
    # a DTCM unit-stride load: occupancy ceil(vl * 32 / 128), usable one cycle after
    src = SETUP + f"lui a0, {DTCM_BASE >> 12}\nvle32.v v8, (a0)\nvadd.vv v16, v8, v8\n"
    v1 = T0 + 1 + 1  # lui at T0, the load issues at T0 + 1 and starts one later
    assert cycles(src) == v1 + CH + 1 + CH + 1


def test_rvv_t6_external_vector_access_holds_the_vector_unit_for_the_transfer():
    # vle32 of 128 bytes from EXT, then an independent vadd: it starts only when the transfer ends
    src = SETUP + "lui a0, 0x20000\nvle32.v v8, (a0)\nvadd.vv v16, v24, v24\n"
    v1 = T0 + 2  # lui at T0, vle at T0 + 1, starts one later
    transfer = math.ceil(128 / BW)
    v2 = v1 + transfer  # the unit is free only after the whole transfer
    assert cycles(src) == max(v1 + transfer + LAT + 1, v2 + CH + 1)


def test_rvv_t7_one_channel_in_program_order_rounded_up_per_access():
    # transfer time rounds up per access: 5 bytes take ceil(5 / BW) channel cycles, like 8 would
    def vle8(n: int) -> str:
        return f"li t0, {n}\nvsetvli t0, t0, e8, m1, ta, ma\nlui a0, 0x20000\nvle8.v v8, (a0)\n"

    v = 3 + 1  # li, vsetvli, lui at 0..2; the load issues at 3 and starts one later
    for n in (4, 5, 8):
        assert cycles(vle8(n)) == v + math.ceil(n / BW) + LAT + 1
    # program order: a scalar load after a vector load waits for the channel until the vector transfer ends
    src = vle8(16) + "lw t1, 0(a0)\naddi t2, t1, 1\n"
    c = max(4, v + math.ceil(16 / BW))  # the lw issues at 4; the channel is free after the vle8's transfer
    assert cycles(src) == c + math.ceil(4 / BW) + LAT + 1
    # an indexed load from EXT: one channel cycle per element (32 elements of 4 bytes), holding the vector unit
    src = SETUP + "vmv.v.i v16, 0\nlui a0, 0x20000\nvluxei32.v v8, (a0), v16\n"
    v_idx = T0 + 1  # vmv.v.i starts at T0 + 1 and occupies CH cycles; the index is ready at + CH + 1
    v_ld = v_idx + CH + 1
    per_elem = math.ceil(4 / BW)
    assert cycles(src) == v_ld + 32 * per_elem + LAT + 1
    after = src + "vadd.vv v24, v16, v16\n"  # independent, but the unit is held for the 32 transfers
    assert cycles(after) == max(v_ld + 32 * per_elem + LAT + 1, v_ld + 32 * per_elem + CH + 1)


def test_rvv_t8_vmv_x_s_waits_for_its_own_result_and_so_drains_the_queue():
    k = 4
    src = SETUP + "vadd.vv v8, v16, v24\n" * k + "vmv.x.s t1, v0\naddi t2, zero, 1\n"
    # the vadds start at T0 + 1 + CH * i; vmv.x.s issues at T0 + k, starts when the unit is free, lat 2
    v_last = T0 + 1 + CH * (k - 1)
    v_mv = max(T0 + k + 1, v_last + CH)
    done = v_mv + CH + 2  # occupancy CH chunks (T5: e32 m8 at vl = 32), move latency 2
    assert cycles(src) == done + 1  # T = done; the addi issues then


def test_rvv_t9_scalar_memory_waits_for_earlier_vector_stores_without_their_latency():
    src = SETUP + "lui a0, 0x20000\nvse32.v v8, (a0)\nsw t0, -4(sp)\n"
    v = T0 + 2
    transfer = math.ceil(128 / BW)
    done = v + transfer + 1  # T5/T6 with lat 1
    m = max(T0 + 2, done)
    assert cycles(src) == max(m + 1, v + transfer + 1 + LAT)  # T10: the external store's latency ends the run
    # the sw waits only for done, not done + latency: a second scalar op right after is at m + 1
    src2 = src + "addi t3, zero, 1\n" * (LAT + 5)
    assert cycles(src2) == max(m + 1 + LAT + 5, v + transfer + 1 + LAT)


def test_rvv_t10_the_run_ends_with_the_last_result_or_external_store():
    assert cycles("lui a0, 0x20000\nsw zero, 0(a0)") == 1 + math.ceil(4 / BW) + LAT
    # a scalar multiply's (or ALU op's) latency does not extend the run; a load's does
    assert cycles("li t0, 3\nmul t1, t0, t0") == 2
    assert cycles("lw t0, -4(sp)") == max(HW.load_use_latency, 0 + 1 + 2)
    assert cycles("addi t0, zero, 1\nret") == 1 + 2 + HW.jump_penalty  # ret is a jalr (T3); the halt adds nothing


def test_rvv_t11_initial_state():
    st = run("addi t0, zero, 1")
    x = np.asarray(st.x[0])
    p = assemble("addi t0, zero, 1", HW)
    assert x[1] == 4 * p.length and x[2] == DTCM_BASE + HW.dtcm_bytes
    assert not np.delete(x, [1, 2, 5]).any()
    assert not np.asarray(st.vrf[0]).any()
    assert int(st.ctl[0, M.VL]) == 0 and int(st.ctl[0, M.VTYPE]) < 0
