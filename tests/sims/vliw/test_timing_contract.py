"""VLIW timing contract: one test per numbered rule of the guide's Timing section (VLIW-Tn).

Each test runs a small kernel and asserts the cycle count the rule's formula predicts, computed
here from the same config constants the guide prints.
"""

from __future__ import annotations

import math

import numpy as np

from kcgym.sims.vliw import ACCELERATOR
from kcgym.sims.vliw import machine as M
from kcgym.sims.vliw.config import VLIWConfig
from tests.sims.contract import check_every_rule_has_a_test
from tests.sims.vliw.harness import run

HW = VLIWConfig()
L, ALU, NL = HW.load_latency, HW.alu_latency, HW.nonlinear_latency
DLAT = HW.dma_latency


def occ(nbytes: int) -> int:
    return math.ceil(nbytes / HW.dma_bytes_per_cycle)


def cycles(src: str, ext=None) -> int:
    st, _ = run(src, ext)
    assert st.ctl[M.FAULT] == 0, M.FAULT_NAMES[int(st.ctl[M.FAULT])]
    return int(max(st.ctl[M.T_END], st.ctl[M.T_ISSUE]))


def test_every_rule_has_a_contract_test():
    check_every_rule_has_a_test(ACCELERATOR.docs(HW), globals(), "VLIW")


def test_vliw_t1_one_bundle_per_cycle_in_order():
    n = 5
    src = "\n".join(f"MOVI r{i + 1}, {i}" for i in range(n))
    assert cycles(src) == n + 1  # T1: t = 0..n-1; T9: the HALT issues at n, the run ends at n + 1


def test_vliw_t2_a_consumer_waits_for_the_result_latency():
    # VLD at 0; VADD at 0 + L (T2); HALT at L + 1; T9: max(L + 2, L + ALU)
    assert cycles("VLD x0, p0, 64\nVADD x1, x0, x0") == max(L + 2, L + ALU)
    # a post-incremented pointer is ready one cycle later: two loads through p0 issue back to back
    assert cycles("VLD x0, p0, 64\nVLD x1, p0, 64") == max(1 + 2, 1 + L)


def test_vliw_t3_same_bank_pairs_cost_a_cycle_each():
    same = "PMOVI p1, 64\nVLD x0, p0, 64 || VLD x1, p1, 64"  # both in bank 0
    other = f"PMOVI p1, {HW.bank_bytes}\nVLD x0, p0, 64 || VLD x1, p1, 64"
    # the pair bundle: t = max(0 + 1, ready(p1) = 1) + conflicts; T9: its loads end at t + L
    assert cycles(same) == 1 + 1 + L
    assert cycles(other) == 1 + 0 + L
    three = "PMOVI p1, 64\nPMOVI p2, 128\nVLD x0, p0, 64 || VLD x1, p1, 64 || VST x2, p2, 64"
    assert cycles(three) == 2 + 3 + L  # three same-bank pairs


def test_vliw_t4_taken_branches_pay_the_penalty_loop_back_edges_do_not():
    P = HW.branch_penalty
    # J at 0 (taken): next issue 1 + P; MOVI at 1 + P; HALT at 2 + P; end 3 + P
    assert cycles("J skip\nMOVI r1, 1\nskip:\nMOVI r2, 2") == 3 + P
    # LOOPI at 0; the body bundle 4 times at 1..4, back-edges free; HALT at 5
    assert cycles("LOOPI 4, end\nMOVI r1, 1\nend:") == 1 + 4 + 1
    assert cycles("LOOPI 0, end\nMOVI r1, 1\nend:") == 1 + P + 1  # count 0: taken, skips the body


def test_vliw_t5_only_transfers_queue_on_a_dma_engine():
    b = 512
    src = "DMAI p0, r0, r0, 1, 512\nPMOVI p1, 512\nDMAI p1, r0, r0, 1, 512"
    start2 = max(2, 0 + occ(b))  # issued at 2 (p1 ready), engine free at occ(b)
    assert cycles(src) == start2 + DLAT + occ(b)
    assert cycles(src) < 2 * (DLAT + occ(b))  # the serial reading of the old guide
    # four 512-byte DMAIs back to back (the Consequences paragraph)
    four = "\n".join(f"PMOVI p{i}, {i * 512}" for i in range(4)) + "\n" + \
        "\n".join(f"DMAI p{i}, r0, r0, 1, 512" for i in range(4))
    t0 = 4  # the first DMAI issues after the four PMOVIs
    assert cycles(four) == max(t0 + 3, t0 + 3 * occ(b)) + DLAT + occ(b) == t0 + DLAT + 4 * occ(b)
    # strided and tiled DMAs cost the same as contiguous ones of the same bytes
    strided = "MOVI r1, 128\nDMAI p0, r0, r1, 8, 64"
    tiled = "MOVI r1, 128\nDMAIT p0, r0, r1, 4, 128, 16"
    assert cycles(strided) == 1 + DLAT + occ(512) == cycles(tiled)


def test_vliw_t6_a_dmai_becomes_readable_all_at_once_and_not_in_its_own_bundle():
    b = 1024
    # VLD of the first line waits for the whole DMA: t = 0 + DLAT + occ(b); then its latency
    assert cycles("DMAI p0, r0, r0, 1, 1024\nVLD x0, p1, 64") == DLAT + occ(b) + L
    # a VST into one of its lines waits for it too (its latency 1 then ends the run)
    assert cycles("DMAI p0, r0, r0, 1, 1024\nPMOVI p1, 960\nVST x0, p1, 64") == DLAT + occ(b) + 1 + 1
    # in the same bundle the VLDB does not stall and reads the old (zero) DM
    ext = np.full(4096, 3.0, np.float32)
    st, _ = run("{ DMAI p0, r0, r0, 1, 1024 ; VLDB x0, p1, 0 }\nVLD x1, p1, 64", ext)
    assert st.ctl[M.FAULT] == 0
    assert int(max(st.ctl[M.T_END], st.ctl[M.T_ISSUE])) == DLAT + occ(b) + L
    assert np.all(np.asarray(st.x)[0] == 0.0) and np.all(np.asarray(st.x)[1] == 3.0)


def test_vliw_t7_dma_data_moves_at_issue():
    # DMAO copies line 0 (zeros) to EXT 2048; the later VST of ones into line 0 does not change it
    st, _ = run("MOVI r1, 2048\nVBCST x0, 1.0\nDMAO p0, r1, r0, 1, 64\nVST x0, p1, 64")
    ext = np.asarray(st.ext)
    assert np.all(ext[1024:1056] == 0.0)
    assert np.all(np.asarray(st.dm)[:32] == 1.0)


def test_vliw_t8_a_store_into_a_line_a_dmao_reads_waits_for_its_done():
    # MOVI at 0; DMAO at 1: done = 1 + DLAT + occ(512); the VST waits for it; T9: + 1 for the HALT, VST latency 1
    done = 1 + DLAT + occ(512)
    assert cycles("MOVI r1, 2048\nDMAO p0, r1, r0, 1, 512\nVST x0, p1, 64") == done + 2
    # a DMAI into those lines waits too (T5 pending): it starts at the DMAO's done
    assert cycles("MOVI r1, 2048\nDMAO p0, r1, r0, 1, 512\nDMAI p0, r0, r0, 1, 64") == done + DLAT + occ(64)


def test_vliw_t9_the_run_ends_when_every_result_and_dma_is_complete():
    assert cycles("VEXP2 x1, x0") == max(0 + 2, 0 + NL)
    assert cycles("DMAO p0, r0, r0, 1, 64") == max(2, DLAT + occ(64))
    assert cycles("MOVI r1, 1") == 2


def test_vliw_t10_initial_state():
    st, _ = run("VADD x1, x0, x0 || MOVP r1, p0")  # every register ready at 0: no stall
    assert int(max(st.ctl[M.T_END], st.ctl[M.T_ISSUE])) == max(2, ALU)
    assert not np.asarray(st.r).any() and not np.asarray(st.p).any()
    assert not np.asarray(st.x).any() and not np.asarray(st.c).any() and not np.asarray(st.dm).any()
