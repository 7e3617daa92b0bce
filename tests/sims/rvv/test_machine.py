"""The RVV machine: faults come back as results naming the line; the cycle model rewards what it should."""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.sims.rvv import machine as M
from kcgym.sims.rvv.accelerator import arch_state, fault_info, simulate_images
from kcgym.sims.rvv.assembler import assemble
from kcgym.sims.rvv.config import RVVConfig

HW = RVVConfig()
EXT = 4096


def run(source: str, max_steps: int = 20_000, hw: RVVConfig = HW):
    p = assemble(source, hw)
    img = np.arange(EXT, dtype=np.int64).astype(np.uint8)[None]
    st = simulate_images(p, img, hw, max_steps)
    return st, fault_info(st, 0, p, hw, max_steps), arch_state(st, 0, hw, EXT)


def cycles(source: str, hw: RVVConfig = HW) -> int:
    st, fault, _ = run(source, hw=hw)
    assert fault is None, fault.render()
    return int(st.ctl[0, M.T_END])


def test_infinite_loop_ends_with_step_budget_naming_the_loop_line():
    _, fault, _ = run("li t0, 1\nloop:\n  addi t1, t1, 1\n  bnez t0, loop\n", max_steps=1000)
    assert fault.name == "STEP_BUDGET" and fault.line in (3, 4) and "1000 instructions" in fault.message


@pytest.mark.parametrize(("source", "name", "line", "text"), [
    ("li a0, 0x30000000\nlw a1, 0(a0)\n", "OOB", 2, "0x30000000"),
    ("li a0, 0x20000000\nli t0, 16\nvsetvli t0, t0, e8, m1, ta, ma\nli a0, 0x20000ff8\nvle8.v v1, (a0)\n", "OOB", 5,
     "0x20001000"),
    ("li a0, 0x20000002\nlw a1, 0(a0)\n", "MISALIGNED", 2, "misaligned"),
    ("li a0, 0x20000000\nvle8.v v1, (a0)\n", "ILLEGAL_VTYPE", 2, "vsetvli"),
    ("li t0, 4\nvsetvli t0, t0, e8, m1, ta, ma\nli t1, 0x1a\nvsetvl t0, t0, t1\nvsetvli x0, x0, e8, m1, ta, ma\n"
     "li t1, 0x0b\nvsetvl t2, t0, t1\nvadd.vv v1, v2, v3\n", "ILLEGAL_GROUP", 8, "multiple of 8"),
    ("li ra, 12345\nret\n", "BAD_JUMP", 2, "ret with a clobbered ra"),
])
def test_faults_are_results_with_the_source_line(source, name, line, text):
    _, fault, _ = run(source)
    assert fault is not None and fault.name == name and fault.line == line, fault and fault.render()
    assert text in fault.render()


def test_ret_and_falling_off_the_end_both_halt():
    assert run("li a0, 1\nret\nli a0, 2\n")[2].x[10] == 1
    assert run("li a0, 1\n")[2].x[10] == 1


def test_stores_reach_external_memory_and_dtcm_data_is_initialised():
    _, fault, arch = run(".data\nt: .word 0x01020304\n.text\nla a0, t\nlw a1, 0(a0)\nli a2, 0x20000100\n"
                         "sw a1, 0(a2)\n")
    assert fault is None and arch.ext[0x100:0x104].tolist() == [4, 3, 2, 1]


COPY = """
    li t0, 1024
    li a0, {src}
    li a1, 0x20000800
1:  vsetvli t1, t0, e8, m{lmul}, ta, ma
    vle8.v v8, (a0)
    vse8.v v8, (a1)
    add a0, a0, t1
    add a1, a1, t1
    sub t0, t0, t1
    bnez t0, 1b
"""


def test_dtcm_is_faster_than_external_memory():
    assert cycles(COPY.format(src=0x10000, lmul=1)) < cycles(COPY.format(src=0x20000000, lmul=1))


def test_wide_transfers_amortise_external_latency():
    assert 2 * cycles(COPY.format(src=0x20000000, lmul=8)) < cycles(COPY.format(src=0x20000000, lmul=1))


def test_external_bandwidth_bounds_a_copy():
    # 2 KB moved over a 4-byte/cycle channel cannot take less than 512 cycles
    assert cycles(COPY.format(src=0x20000000, lmul=8)) >= 2048 // HW.ext_bytes_per_cycle


def test_mispredicted_branches_cost_the_penalty():
    taken_back = "li t0, 100\n1: addi t0, t0, -1\nbnez t0, 1b\n"
    never_fwd = "li t0, 100\n1: addi t0, t0, -1\nbeqz t0, 2f\nj 1b\n2:\n"
    slow = cycles(never_fwd)
    # 100 forward branches not taken (predicted), 99 backward jumps, vs 99 predicted taken + 1 mispredicted exit
    assert cycles(taken_back) < slow


def test_dependent_multiply_waits_for_its_latency():
    indep = "li a0, 3\nmul a1, a0, a0\nmul a2, a0, a0\nmul a3, a0, a0\n"
    dep = "li a0, 3\nmul a1, a0, a0\nmul a2, a1, a1\nmul a3, a2, a2\n"
    assert cycles(dep) - cycles(indep) == 2 * (HW.mul_latency - 1)


def test_cycles_and_results_are_deterministic():
    src = COPY.format(src=0x20000000, lmul=2)
    a, b = run(src), run(src)
    assert int(a[0].ctl[0, M.T_END]) == int(b[0].ctl[0, M.T_END]) and np.array_equal(a[2].ext, b[2].ext)
