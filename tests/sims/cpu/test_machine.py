"""The CPU machine: its scalar-only assembler, functional results, faults, config checks and state sizes."""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.isa.diagnostics import AssemblyError
from kcgym.sims.cpu import ACCELERATOR
from kcgym.sims.cpu import machine as M
from kcgym.sims.cpu.accelerator import simulate_images
from kcgym.sims.cpu.assembler import assemble
from kcgym.sims.cpu.config import RAM_BASE, TENSOR_BASE, CPUConfig

HW = CPUConfig()
IMAGE = np.zeros(1024, np.uint8)


def run(source: str, image: np.ndarray = IMAGE, max_steps: int = 10_000, hw: CPUConfig = HW):
    p = assemble(source, hw)
    st = simulate_images(p, image[None], hw, max_steps)
    return p, st, ACCELERATOR.fault(ACCELERATOR.final_state(st, 0, p), p, hw, max_steps)


def errors(source: str) -> list:
    with pytest.raises(AssemblyError) as e:
        assemble(source, HW)
    return [d for d in e.value.diagnostics if d.severity == "error"]


def test_vector_instructions_are_clear_errors_at_line_and_column():
    (d,) = errors("addi t0, zero, 4\n  vsetvli t1, t0, e32, m1, ta, ma")
    assert (d.code, d.line, d.col) == ("E024", 2, 3)
    assert "the CPU has no vector unit" in d.message and "vsetvli" in d.message
    (d,) = errors("vadd.vv v1, v2, v3")
    assert d.code == "E024"
    (d,) = errors("vneg.v v1, v2")  # a vector pseudo-instruction too
    assert d.code == "E024"


def test_counter_csrs_assemble_and_vector_csrs_do_not():
    assemble("rdcycle a0\nrdinstret a1\ncsrr a2, mcycle\ncsrr a3, minstret\nrdcycleh a4\ncsrr a5, mhartid", HW)
    (d,) = errors("csrr a0, vl")
    assert d.code == "E018" and "vector CSR" in (d.hint or "")
    (d,) = errors("csrr a0, satp")
    assert d.code == "E018" and "cycle" in (d.hint or "")
    (d,) = errors("rdcycle")
    assert d.code == "E002"


def test_scalar_semantics_data_section_and_x0():
    src = """
    la a0, table
    lw t0, 0(a0)
    lw t1, 4(a0)
    mul t2, t0, t1
    div t3, t0, zero
    rem t4, t0, zero
    mulh t5, t0, t1
    addi zero, zero, 5
    li a1, 0x20000000
    sw t2, 0(a1)
    sb t0, 5(a1)
    lbu t6, 5(a1)
    ret
    .data
table: .word -7, 100000
"""
    p, st, fault = run(src)
    assert fault is None
    x = np.asarray(st.x[0])
    assert p.symbols["table"] == RAM_BASE
    assert (x[7], x[28], x[29], x[30], x[0], x[31]) == (-700000, -1, -7, -1, 0, 0xF9)
    mem = np.asarray(st.mem[0])
    assert mem[HW.ram_bytes : HW.ram_bytes + 4].view(np.int32)[0] == -700000


def test_faults_are_results_with_the_source_line():
    _, _, f = run("li a0, 0x100\nlw t0, 0(a0)")
    assert f.name == "OOB" and f.line == 2 and "0x00000100" in f.message
    _, _, f = run(f"li a0, {TENSOR_BASE + 2}\nlw t0, 0(a0)")
    assert f.name == "MISALIGNED" and f.line == 2
    _, _, f = run("li ra, 0x8000\nret")
    assert f.name == "BAD_JUMP"
    _, _, f = run("1: j 1b", max_steps=100)
    assert f.name == "STEP_BUDGET" and f.line == 1
    _, st, f = run(f"li a0, {TENSOR_BASE}\nli t0, 7\nsw t0, 4(a0)\nlw t1, 0x400(a0)", image=np.zeros(64, np.uint8))
    assert f.name == "OOB"
    assert np.asarray(st.mem[0])[HW.ram_bytes + 4] == 7  # the earlier store landed; the faulting load did nothing


def test_final_state_counts_classes_and_unit_busy():
    p, st, fault = run("li t0, 3\nmul t1, t0, t0\ndiv t2, t1, t0\nsw t2, -4(sp)\nbeqz t2, 1f\n1: ret")
    fs = ACCELERATOR.final_state(st, 0, p)
    assert fault is None and fs.halted and fs.steps == 6
    assert fs.class_counts["MULDIV"] == 2 and fs.class_counts["STORE"] == 1 and fs.class_counts["BRANCH"] == 1
    assert fs.unit_busy["MULDIV"] == 1 + HW.div_latency and fs.unit_busy["MEM"] == 1
    assert fs.cycles == int(st.ctl[0, M.T_END]) > 0


def test_state_sizes_come_from_the_config():
    hw = CPUConfig(rob_entries=32, predictor_entries=256, ras_entries=4, dcache_bytes=8192, dcache_ways=2,
                   store_queue=8)
    st = M.Machine(hw).init_state(np.zeros(hw.ram_bytes + 16, np.uint8), np.int32(4))
    assert st.rob.shape == (32,) and st.bp.shape == (256,) and st.ras.shape == (4,) and st.sq_issue.shape == (8,)
    assert st.dtag.shape == (8192 // (64 * 2), 2)


@pytest.mark.parametrize(("override", "words"), [
    ({"dcache_bytes": 1000}, "dcache_bytes must be line_bytes x dcache_ways x a power of two"),
    ({"predictor_entries": 1000}, "power of two"),
    ({"rob_entries": 0}, "rob_entries must be at least 1"), ({"rob_entries": 513}, "rob_entries must be at most 512"),
    ({"predictor": 2}, "predictor must be at most 1"),
    ({"rob_entry": 64}, "did you mean 'rob_entries'?"),
])
def test_bad_configs_are_clear_errors(override, words):
    with pytest.raises(ValueError) as e:
        ACCELERATOR.make_hw(override)
    assert words in str(e.value)


def test_the_profile_adds_up_and_changes_nothing():
    from kcgym.evaluation import Evaluator
    from kcgym.registry import SUPPORTED, task_for
    from kcgym.sims.profiling import line_profile

    for name in SUPPORTED["CPU"][:3] + ("qsort",):
        task = task_for("CPU", name)
        cfg = task.config("CPU", 1)
        program = ACCELERATOR.assemble(ACCELERATOR.compile(task, cfg, HW), HW)
        inputs = Evaluator(ACCELERATOR, task, cfg, HW).input_sets(0, 1)
        (plain,) = ACCELERATOR.run(program, task, cfg, HW, inputs, 10_000_000)
        (prof,) = ACCELERATOR.run(program, task, cfg, HW, inputs, 10_000_000, profile=True)
        assert (prof.cycles, prof.instructions, prof.unit_busy) == (plain.cycles, plain.instructions, plain.unit_busy)
        pc = prof.profile
        assert pc.total_cycles == prof.cycles and pc.drain == 0 and (pc.table >= 0).all()
        assert int(pc.table[:, 0].sum()) == prof.instructions
        lp = line_profile(program, pc, ACCELERATOR.loop_ranges(program), prof.cycles, prof.unit_busy)
        assert lp.attributed == prof.cycles and lp.loops


def test_the_profile_names_the_cause():
    from kcgym.sims.profiling import PcProfile

    def columns(source: str, hw: CPUConfig = HW) -> dict[str, int]:
        p = assemble(source, hw)
        st = simulate_images(p, IMAGE[None], hw, 10_000, profile=True)
        pc = PcProfile.from_counters(np.asarray(st.prof[0]), p.length, M.PROFILE_STALLS, int(st.ctl[0, M.T_END]),
                                     int(st.ctl[0, M.T_END]))
        return dict(zip(M.PROFILE_STALLS, pc.table[:, 2:].sum(axis=0).tolist(), strict=True))

    chase = f"li a0, {TENSOR_BASE}\nlw a1, 0(a0)\nadd a1, a1, a0\nlw a2, 256(a1)\naddi a3, a2, 1"  # dependent misses
    got = columns(chase)
    assert got["load latency (D-cache hits and misses)"] >= 2 * HW.mem_latency
    got = columns("li t0, 7\n" + "div t0, t0, t0\n" * 3)
    assert got["multiply/divide latency"] >= 3 * HW.div_latency - 3
    # the first instruction's gap runs from cycle -1 (so the gaps sum to C(last) + 1): its cold fetch and cycle 0
    assert columns("addi t0, zero, 1")["fetch (I-cache miss, misprediction redirect, fetch buffer)"] == \
        HW.mem_latency + 1
