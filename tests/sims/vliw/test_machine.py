"""The VLIW machine: in-bundle semantics, the cycle model, DMA, and faults (never exceptions)."""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.evaluation import Evaluator
from kcgym.sims.vliw import ACCELERATOR
from kcgym.sims.vliw import machine as M
from kcgym.tasks import TASKS
from kcgym.tasks.numerics import round_bf16
from tests.sims.vliw.harness import fault_name, run

HW = ACCELERATOR.make_hw()


def cycles(st) -> int:
    return int(max(st.ctl[M.T_END], st.ctl[M.T_ISSUE]))


# ---- semantics -------------------------------------------------------------------------------
def test_reads_see_the_state_before_the_bundle_and_writes_commit_at_its_end():
    st, _ = run("""
        VBCST x0, 1.0
        VBCST x1, 2.0
        VADD x0, x1, x1 || VMOV x2, x0          // x2 gets the old x0
        VMOV x3, x0                              // the next bundle sees the new x0
        MOVI r1, 0
        MOVI r1, 5 || BEQZ r1, taken             // the branch reads the old r1 (0)
        MOVI r3, 1
        taken: MOVI r2, 1
        PMOVI p0, 128
        PMOVI p1, 128
        VST x0, p1, 0 || VLD x4, p0, 0           // the load reads memory before the store
        VLD x5, p0, 0
        VLD x6, p2, 64 || MOVP r4, p2            // MOVP reads the old p2
        MOVP r5, p2                              // the post-increment is visible in the next bundle
    """)
    x = st.x
    assert x[2][0] == 1.0 and x[0][0] == 4.0 and x[3][0] == 4.0
    assert st.r[1] == 5 and st.r[2] == 1 and st.r[3] == 0
    assert x[4][0] == 0.0 and x[5][0] == 4.0
    assert st.r[4] == 0 and st.r[5] == 64


def test_vector_arithmetic_rounds_to_bf16_and_accumulators_do_not():
    st, _ = run("""
        VBCST x0, 1.0
        VBCST x1, 0.00390625                     // 2**-8: 1 + 2**-8 is not a bf16
        VADD x2, x0, x1
        VMPY c0, x0, x0
        VMAC c0, x1, x0
        VCONV x3, c0
        VRADD x4, c0                             // 32 * (1 + 2**-8) = 32.125 -> bf16 32.0
        VUPS c1, x1
        MOVI r1, 3
        VINS x5, x0, r1
        VMACL c2, x0, x5, r1
        VEXP2C x6, c0                            // 2 ** 1.00390625, from the unrounded fp32 argument
        VEXP2 x7, x3                             // 2 ** 1.0
    """)
    assert st.x[2][0] == 1.0
    assert st.c[0][0] == np.float32(1.00390625) and st.x[3][0] == 1.0
    assert st.x[4][0] == 32.0 and st.c[1][0] == np.float32(0.00390625)
    assert list(st.x[5][2:5]) == [0.0, 1.0, 0.0] and st.c[2][7] == 1.0
    assert st.x[6][0] == round_bf16(np.exp2(np.float32(1.00390625))) and st.x[7][0] == 2.0


def test_loops_nest_and_branches_use_scalar_registers():
    st, _ = run("""
        MOVI r2, 3
        LOOP r2, outer
          LOOPI 4, inner
            ADDI r1, r1, 1
          inner: ADDI r3, r3, 1
        outer: MOVI r4, 5
        back: ADDI r4, r4, -1
        BNEZ r4, back
    """)
    assert (st.r[1], st.r[3], st.r[4]) == (12, 3, 0)


def test_dma_moves_strided_rows_in_and_out():
    ext = np.arange(256, dtype=np.float32)
    st, _ = run("""
        MOVI r1, 8                // EXT element 4
        MOVI r2, 64               // rows 32 elements apart
        PMOVI p0, 0
        DMAI p0, r1, r2, 4, 16    // 4 rows of 8 elements -> 32 contiguous elements
        PMOVI p1, 0
        VLD x0, p1, 0
        MOVI r3, 384
        DMAO p1, r3, r0, 1, 64
    """, ext)
    want = np.concatenate([np.arange(4, 12) + 32 * i for i in range(4)]).astype(np.float32)
    np.testing.assert_array_equal(st.x[0], want)
    np.testing.assert_array_equal(st.ext[192:224], want)


# ---- cycle model -------------------------------------------------------------------------------
def test_interlock_waits_for_the_producers_latency():
    dependent, _ = run("VLD x0, p0, 0\nVADD x1, x0, x0")
    independent, _ = run("VLD x0, p0, 0\nVADD x1, x2, x2")
    assert cycles(dependent) == HW.load_latency + HW.alu_latency
    assert cycles(independent) == HW.load_latency  # the load's result is the last to arrive


def test_packing_saves_cycles_and_chained_accumulations_stall():
    packed, _ = run(f"PMOVI p1, {HW.bank_bytes}\nVADD x1, x2, x2 || VLD x0, p0, 0 || VLD x3, p1, 0 || ADDI r1, r1, 1")
    serial, _ = run(f"PMOVI p1, {HW.bank_bytes}\nVADD x1, x2, x2\nVLD x0, p0, 0\nVLD x3, p1, 0\nADDI r1, r1, 1")
    assert int(serial.ctl[M.T_ISSUE]) - int(packed.ctl[M.T_ISSUE]) == 3
    chained, _ = run("\n".join(["VMAC c0, x0, x0"] * 4))
    rotated, _ = run("\n".join(f"VMAC c{i}, x0, x0" for i in range(4)))
    assert cycles(chained) == 4 * HW.mul_latency
    assert cycles(rotated) == 3 + HW.mul_latency


def test_bank_conflicts_cost_a_cycle_per_pair():
    same, _ = run("PMOVI p1, 64\nNOP\nVLD x0, p0, 0 || VLD x1, p1, 0 || VST x2, p2, 0")
    spread, _ = run(f"PMOVI p1, {HW.bank_bytes}\nPMOVI p2, {2 * HW.bank_bytes}\n"
                    "VLD x0, p0, 0 || VLD x1, p1, 0 || VST x2, p2, 0")
    assert int(same.ctl[M.T_ISSUE]) - int(spread.ctl[M.T_ISSUE]) == 3


def test_taken_branches_pay_and_loop_back_edges_are_free():
    jump, _ = run("J next\nnext: NOP")
    fall, _ = run("NOP\nNOP")
    assert int(jump.ctl[M.T_ISSUE]) - int(fall.ctl[M.T_ISSUE]) == HW.branch_penalty
    loop, _ = run("LOOPI 10, done\nADDI r1, r1, 1\ndone: NOP")
    assert int(loop.ctl[M.T_ISSUE]) == 1 + 10 + 1 + 1  # LOOPI, 10 body bundles, NOP, implicit HALT


def test_loads_wait_for_their_dma_and_stores_for_pending_reads():
    st, _ = run("PMOVI p0, 0\nDMAI p0, r0, r0, 1, 1024\nVLD x0, p0, 0")
    dma_done = 1 + HW.dma_latency + HW.dma_cycles(1024)
    assert cycles(st) == dma_done + HW.load_latency
    st, _ = run("PMOVI p0, 0\nDMAO p0, r0, r0, 1, 1024\nVST x0, p0, 0")
    assert int(st.ctl[M.T_ISSUE]) == dma_done + 1 + 1  # the store waits until the DMA has read the line
    untouched, _ = run("PMOVI p0, 0\nDMAI p0, r0, r0, 1, 1024\nPMOVI p1, 2048\nVLD x0, p1, 0")
    assert cycles(untouched) == dma_done  # other lines are usable at once; the DMA is the last to finish


def test_unit_busy_counts_the_slots_each_bundle_uses():
    st, _ = run("VADD x1, x2, x2 || VLD x0, p0, 0\nVMUL x3, x2, x2\nMOVI r1, 1")
    busy = dict(zip(M.BUSY_KEYS, st.busy.tolist(), strict=True))
    assert busy["VECTOR"] == 2 and busy["LOAD_A"] == 1 and busy["LOAD_B"] == 0 and busy["SCALAR"] == 1


# ---- faults --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "src, name, line",
    [
        ("PMOVI p0, 65536\nVLD x0, p0, 0", "OOB_DM", 2),
        ("PMOVI p0, 32\nNOP\nVST x0, p0, 0", "MISALIGNED", 3),
        ("MOVI r1, 40\nVBCSTL x0, x1, r1", "BAD_LANE", 2),
        ("MOVI r1, -64\nPMOVI p0, 0\nDMAI p0, r1, r0, 1, 64", "OOB_EXT", 3),
        ("PMOVI p0, 0\nMOVI r1, 1\nDMAO p0, r1, r0, 1, 64", "MISALIGNED", 3),
        ("top: LOOPI 2, e\nJ top\ne: NOP", "LOOP_DEPTH", 1),
    ],
)
def test_faults_stop_the_run_and_name_the_bundle(src, name, line):
    st, prog = run(src)
    assert fault_name(st) == name
    assert prog.line_of(int(st.ctl[M.FAULT_PC])) == line
    assert st.ctl[M.HALTED] == 1


def test_a_faulting_bundle_commits_nothing():
    st, _ = run("PMOVI p0, 32\nMOVI r1, 5 || VBCST x1, 2.0 || VLD x0, p0, 64")
    assert fault_name(st) == "MISALIGNED"
    assert st.r[1] == 0 and st.x[1][0] == 0.0 and st.p[0] == 32


def test_step_budget_is_a_fault_naming_the_line():
    task = TASKS["relu"]
    ev = Evaluator(ACCELERATOR, task, task.config("VLIW", 1), HW)
    rep = ev.evaluate("MOVI r1, 1\nspin: ADDI r2, r2, 1\nJ spin\n", ev.input_sets(0, 1), max_steps=1000,
                      with_baseline=False)
    assert rep.fault is not None and rep.fault.name == "STEP_BUDGET"
    assert rep.fault.line in (2, 3) and "1000 bundles" in rep.fault.message


def test_post_incremented_pointers_are_ready_the_next_cycle():
    st, _ = run("VLD x0, p0, 64\nVLD x1, p0, 64\nVLD x2, p0, 64")
    assert int(st.ctl[M.T_ISSUE]) == 4  # three loads back to back on one pointer, then the implicit HALT


def test_fault_messages_name_the_line_and_the_limit():
    task = TASKS["relu"]
    ev = Evaluator(ACCELERATOR, task, task.config("VLIW", 1), HW)
    rep = ev.evaluate("PMOVI p0, 65536\n{\n  VBCST x1, 1.0\n  VLD x0, p0, 0\n}\n", ev.input_sets(0, 1),
                      with_baseline=False)
    assert rep.fault is not None and rep.fault.name == "OOB_DM" and rep.fault.line == 4  # the VLD's own line
    assert "VLD x0, p0, 0" in rep.fault.source
    assert "65536" in rep.fault.message and f"holds {HW.dm_bytes} bytes" in rep.fault.message
