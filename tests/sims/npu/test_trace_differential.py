"""The trace-ahead NPU simulator (``kcgym/sims/npu/trace.py``) against its oracle, the interpreter.

Same outputs bit for bit, same cycles, instruction counts, category counts, unit busy cycles, same
faults (code, pc, line, message) and first non-finite line: on every compiler and expert kernel (C1
here, C2..C5 in the slow tier) and on generated programs that fault, spin, overflow and alias. For raw
programs the whole final machine state is compared (SRAMs, registers, scoreboard times).
"""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.evaluation import Evaluator
from kcgym.sims.npu import machine as M
from kcgym.sims.npu import trace
from kcgym.sims.npu.accelerator import ACCELERATOR
from kcgym.sims.npu.config import NPUConfig
from kcgym.tasks import TASKS
from tests.sims.trace_contract import (
    assert_same_results,
    bits,
    check_profiling_and_the_switch,
    check_trace_is_cached_across_input_sets,
)

NPU_TASKS = [n for n, t in TASKS.items() if ACCELERATOR.supports(t)]
HW = NPUConfig()
MAX_STEPS = 50_000_000


@pytest.fixture(autouse=True)
def _trace_path(monkeypatch):
    """The trace path for every program here, the small ones too (by default they take the oracle)."""
    monkeypatch.setenv(trace.SIM_ENV, "trace")


def _both(monkeypatch, program, task, cfg, inputs, max_steps=MAX_STEPS):
    new = ACCELERATOR.run(program, task, cfg, HW, inputs, max_steps)
    monkeypatch.setenv(trace.SIM_ENV, "oracle")
    old = ACCELERATOR.run(program, task, cfg, HW, inputs, max_steps)
    monkeypatch.setenv(trace.SIM_ENV, "trace")
    return new, old


def _kernels(index: int):
    for name in NPU_TASKS:
        for kind in ("compiler", "expert"):
            yield pytest.param(name, kind, index, id=f"{name}-{kind}-C{index}")


def _check_kernel(monkeypatch, name: str, kind: str, index: int) -> None:
    task = TASKS[name]
    cfg = task.config("NPU", index)
    src = ACCELERATOR.compile(task, cfg, HW) if kind == "compiler" else ACCELERATOR.expert(task, cfg, HW)
    if src is None:
        pytest.skip(f"no expert kernel for {name}")
    program = ACCELERATOR.assemble(src, HW)
    inputs = Evaluator(ACCELERATOR, task, cfg, HW).input_sets(0, 2)
    new, old = _both(monkeypatch, program, task, cfg, inputs)
    assert old[0].fault is None
    assert_same_results(new, old)


@pytest.mark.parametrize("name,kind,index", list(_kernels(1)))
def test_kernels_c1(monkeypatch, name, kind, index):
    _check_kernel(monkeypatch, name, kind, index)


@pytest.mark.slow
@pytest.mark.parametrize("name,kind,index", [p for i in (2, 3, 4, 5) for p in _kernels(i)])
def test_kernels_c2_c5(monkeypatch, name, kind, index):
    _check_kernel(monkeypatch, name, kind, index)


# ---- generated programs: the whole machine state --------------------------------------------------
HBM_ELEMENTS = 16384  # 256 rows of VLEN
ADDR_REGS = (1, 2, 3, 4, 5, 6)  # VSRAM addresses
MS_REGS = (7, 8)  # MSRAM addresses
OFF_REG, INT_REGS, IDX_REG = 9, (10, 11), 12


def _set(reg: int, value: int) -> list[str]:
    if -(1 << 17) <= value < (1 << 18):
        return [f"S_ADDI_INT gp{reg}, gp0, {value}"]
    hi, lo = value >> 12, value & 0xFFF
    return [f"S_LUI_INT gp{reg}, {hi}", f"S_ADDI_INT gp{reg}, gp{reg}, {lo}"]


def _vs_addr(rng: np.random.Generator, bad: float) -> int:
    if rng.random() < bad:
        return int(rng.choice([32, -64, HW.vsram_size, HW.vsram_size - 64, 7]))
    return int(rng.integers(0, HW.vsram_rows - HW.v_prefetch_rows)) * HW.VLEN


def _ms_addr(rng: np.random.Generator, bad: float, col: bool) -> int:
    if rng.random() < bad:
        return int(rng.choice([HW.msram_size, 2, -HW.MLEN, (HW.msram_tiles - 1) * HW.MLEN * HW.MLEN + HW.MLEN]))
    return int(rng.integers(0, HW.msram_tiles)) * HW.MLEN * HW.MLEN + (int(rng.integers(0, HW.MLEN // HW.BLEN))
                                                                        * HW.BLEN if col else 0)


def _op(rng: np.random.Generator, bad: float) -> list[str]:
    g = lambda pool: f"gp{int(rng.choice(pool))}"  # noqa: E731
    f = lambda: f"f{int(rng.integers(0, 8))}"  # noqa: E731
    k = int(rng.integers(0, 20))
    if k == 0:
        return _set(int(rng.choice(ADDR_REGS)), _vs_addr(rng, bad))
    if k == 1:
        return _set(int(rng.choice(MS_REGS)), _ms_addr(rng, bad, rng.random() < 0.5))
    if k == 2:
        return [f"S_ADDI_INT {g(ADDR_REGS)}, {g(ADDR_REGS)}, {int(rng.choice([64, 128, 256, -64]))}"]
    if k == 3:
        mn = rng.choice(["S_ADD_INT", "S_SUB_INT", "S_MUL_INT"])
        return [f"{mn} {g(INT_REGS)}, {g(INT_REGS)}, {g(INT_REGS)}",
                f"S_ST_INT {g(INT_REGS)}, gp{IDX_REG}, {int(rng.integers(0, 8))}",
                f"S_LD_INT {g(INT_REGS)}, gp{IDX_REG}, {int(rng.integers(0, 8))}"]
    if k == 4:
        value = float(rng.choice([0.5, -1.25, 3.0e38, 1e-3, 2.0, -0.0]))
        return [f"S_LI_FP {f()}, {value!r}"]
    if k == 5:
        mn = rng.choice(["S_ADD_FP", "S_SUB_FP", "S_MUL_FP", "S_MAX_FP"])
        return [f"{mn} {f()}, {f()}, {f()}"]
    if k == 6:
        mn = rng.choice(["S_EXP_FP", "S_RECI_FP", "S_SQRT_FP"])
        return [f"{mn} {f()}, {f()}"]
    if k == 7:
        mn = rng.choice(["S_LD_FP", "S_ST_FP"])
        return [f"{mn} {f()}, gp{IDX_REG}, {int(rng.choice([0, 1, 5, HW.fpsram_size - 1] + ([HW.fpsram_size] if rng.random() < bad else [])))}"]  # noqa: E501
    if k in (8, 9):
        mn = rng.choice(["V_ADD_VV", "V_SUB_VV", "V_MUL_VV", "V_MAX_VV"])
        return [f"{mn} {g(ADDR_REGS)}, {g(ADDR_REGS)}, {g(ADDR_REGS)}"]
    if k == 10:
        mn = rng.choice(["V_ADD_VF", "V_SUB_VF", "V_RSUB_VF", "V_MUL_VF", "V_MAX_VF"])
        return [f"{mn} {g(ADDR_REGS)}, {g(ADDR_REGS)}, {f()}"]
    if k == 11:
        mn = rng.choice(["V_EXP_V", "V_RECI_V"])
        return [f"{mn} {g(ADDR_REGS)}, {g(ADDR_REGS)}"]
    if k == 12:
        return [f"{rng.choice(['V_RED_SUM', 'V_RED_MAX'])} {f()}, {g(ADDR_REGS)}"]
    if k in (13, 14):
        mn = rng.choice(["M_MM", "M_MM", "M_TMM"])
        return [f"{mn} {g(MS_REGS)}, {g(ADDR_REGS)}"]
    if k == 15:
        return [f"{rng.choice(['M_MV', 'M_TMV'])} gp7, {g(ADDR_REGS)}", f"M_MV_WO {g(ADDR_REGS)}, 0"]
    if k == 16:
        return [f"M_MM_WO {g(ADDR_REGS)}, {int(rng.integers(0, HW.VLEN // HW.BLEN)) * HW.BLEN}"]
    if k in (17, 18):
        mn = rng.choice(["H_PREFETCH_V", "H_STORE_V"])
        return [f"{mn} {g(ADDR_REGS)}, gp{OFF_REG}, a{int(rng.integers(0, 3))}, {int(rng.integers(0, 2))}, "
                f"{int(rng.integers(1, HW.v_prefetch_rows + 1))}"]
    return [f"H_PREFETCH_M {g(MS_REGS)}, gp{OFF_REG}, a{int(rng.integers(0, 3))}, {int(rng.integers(0, 2))}"]


def generated_program(seed: int, n_ops: int = 60) -> str:
    """A random straight-line-and-loops program over every instruction; about one in ten register
    settings is out of bounds or misaligned, so many of these fault somewhere."""
    rng = np.random.default_rng(seed)
    bad = 0.1 if seed % 3 else 0.0
    lines = ["S_ADDI_INT gp12, gp0, 3", *_set(OFF_REG, int(rng.integers(0, 4)) * HW.VLEN)]
    for a in range(3):
        lines += [*_set(10, int(rng.integers(0, 8)) * HW.VLEN), f"C_SET_ADDR_REG a{a}, gp10, gp0"]
    lines += [*_set(11, int(rng.choice([0, 64, 128]))), "C_SET_STRIDE_REG gp11"]
    lines += [line for r in ADDR_REGS for line in _set(r, _vs_addr(rng, 0.0))]
    lines += [*_set(7, _ms_addr(rng, 0.0, False)), *_set(8, _ms_addr(rng, 0.0, True))]
    lines += [*_set(10, int(rng.integers(-5, 5))), *_set(11, int(rng.integers(-5, 5)))]
    depth, ops = 0, 0
    while ops < n_ops:
        r = rng.random()
        if r < 0.05 and depth < 2:
            lines.append(f"C_LOOP_START gp{13 + depth}, {int(rng.integers(1, 4))}")
            depth += 1
        elif r < 0.1 and depth:
            depth -= 1
            lines.append(f"C_LOOP_END gp{13 + depth}")
        else:
            lines += _op(rng, bad)
            ops += 1
    while depth:
        depth -= 1
        lines.append(f"C_LOOP_END gp{13 + depth}")
    return "\n".join(lines) + "\n"


def _run_state(runner, program, hbm: np.ndarray, max_steps: int):
    machine = M.Machine(HW)
    words = program.padded(M.bucket(program.length, 1024), machine.halt_row)
    fpm = np.linspace(-2, 2, HW.fpsram_size, dtype=np.float32)
    return runner(words, hbm, fpm, np.int32(HBM_ELEMENTS), np.int32(max_steps))


def assert_same_state(new, old) -> None:
    for field in M.State._fields:
        if field in ("prof", "vs_dma", "vsr_dma", "ms_dma"):
            continue  # profiling counters: the oracle's alone (profiling runs on it)
        a, b = np.asarray(getattr(new, field)), np.asarray(getattr(old, field))
        if a.dtype == np.float32:
            np.testing.assert_array_equal(bits(a), bits(b), err_msg=field)
        else:
            np.testing.assert_array_equal(a, b, err_msg=field)


def _hbm(seed: int, n: int = 2) -> np.ndarray:
    rng = np.random.default_rng(1000 + seed)
    hbm = rng.standard_normal((n, HBM_ELEMENTS)).astype(np.float32)
    hbm[:, -640:] = np.nan  # poisoned tail, as the accelerator leaves unwritten outputs
    hbm[1, 5] = np.inf
    return hbm


@pytest.mark.parametrize("seed", range(24))
def test_generated_programs_whole_state(seed):
    program = ACCELERATOR.assemble(generated_program(seed), HW)
    hw_json = HW.model_dump_json()
    fast = trace.batched_runner(hw_json)[1]
    oracle = M.oracle_runner(hw_json)[1]
    hbm = _hbm(seed)
    max_steps = 400 if seed % 4 == 0 else 100_000  # every fourth: the step budget may stop it first
    assert_same_state(_run_state(fast, program, hbm, max_steps), _run_state(oracle, program, hbm, max_steps))


def test_generated_programs_fault_and_finish():
    """The generator is adversarial enough: among its programs some fault, some finish, some overflow."""
    codes, nan = set(), 0
    oracle = M.oracle_runner(HW.model_dump_json())[1]
    for seed in range(24):
        program = ACCELERATOR.assemble(generated_program(seed), HW)
        st = _run_state(oracle, program, _hbm(seed), 100_000)
        codes.add(int(np.asarray(st.ctl)[0, M.FAULT]))
        nan += int(np.asarray(st.nan_pc)[0] >= 0)
    assert 0 in codes and len(codes) >= 3
    assert nan >= 1


@pytest.mark.parametrize("case", ["oob_vsram", "misaligned", "oob_hbm", "unset_areg", "step_budget", "nan_line",
                                  "oob_intsram_store", "oob_intsram_load"])
def test_faults_and_first_nonfinite_line(monkeypatch, case):
    task = TASKS["relu"]
    cfg = task.config("NPU", 1)
    layout = ACCELERATOR.layout(task, cfg, HW)
    out = next(r for r in layout.regions if r.role == "output")
    body = {
        "oob_vsram": [f"S_LUI_INT gp1, {HW.vsram_size >> 12}", "V_ADD_VV gp1, gp0, gp0"],
        "misaligned": ["S_ADDI_INT gp1, gp0, 8", "V_EXP_V gp2, gp1"],
        "oob_hbm": ["S_LUI_INT gp1, 4000", "C_SET_ADDR_REG a0, gp1, gp0", "H_PREFETCH_V gp0, gp0, a0, 0, 1"],
        "unset_areg": ["H_PREFETCH_M gp0, gp0, a3, 0"],
        "step_budget": ["C_LOOP_START gp1, 60000", "S_ADDI_INT gp2, gp2, 1", "C_LOOP_END gp1"],
        "oob_intsram_store": ["S_ADDI_INT gp2, gp0, 7", "S_ST_INT gp2, gp0, 3", "S_ADDI_INT gp1, gp0, -1",
                              "S_ST_INT gp2, gp1, 0"],
        "oob_intsram_load": ["S_ST_INT gp0, gp0, 1", "S_LD_INT gp3, gp0, 1", f"S_LD_INT gp2, gp0, {HW.intsram_size}"],
        "nan_line": ["S_LI_FP f1, 0.0", "S_RECI_FP f2, f1", "V_ADD_VF gp0, gp0, f2",
                     f"S_LUI_INT gp1, {out.offset >> 12}", f"S_ADDI_INT gp1, gp1, {out.offset & 0xFFF}",
                     "C_SET_ADDR_REG a0, gp1, gp0", "H_STORE_V gp0, gp0, a0, 0, 1"],
    }[case]
    program = ACCELERATOR.assemble("\n".join(body) + "\n", HW)
    inputs = Evaluator(ACCELERATOR, task, cfg, HW).input_sets(0, 2)
    new, old = _both(monkeypatch, program, task, cfg, inputs, max_steps=5000)
    assert_same_results(new, old)
    if case == "nan_line":
        assert old[0].first_nonfinite_line == 2 and old[0].fault is None
    else:
        assert old[0].fault is not None


def test_profiling_and_the_switch_use_the_oracle(monkeypatch):
    """``profile=True`` runs on the interpreter (it alone keeps per-PC counters), with the fast path's
    cycles; ``KCGYM_SIM=oracle`` keeps every run off the trace path."""
    hw_json = HW.model_dump_json()
    assert trace.batched_runner(hw_json, True)[1] is M.oracle_runner(hw_json, True)[1]
    check_profiling_and_the_switch(monkeypatch, ACCELERATOR, trace, HW, MAX_STEPS)


def test_trace_is_cached_across_input_sets():
    check_trace_is_cached_across_input_sets(ACCELERATOR, trace, HW, MAX_STEPS)


def test_long_programs_run_in_chunks(monkeypatch):
    """Programs longer than one chunk of groups carry the data state from call to call."""
    monkeypatch.setattr(trace, "GROUP_CHUNK", 8)
    monkeypatch.setattr(trace, "SMALL_CHUNK", 4)
    trace._TRACES.clear()
    task = TASKS["layernorm"]
    cfg = task.config("NPU", 1)
    program = ACCELERATOR.assemble(ACCELERATOR.compile(task, cfg, HW), HW)
    inputs = Evaluator(ACCELERATOR, task, cfg, HW).input_sets(0, 2)
    new, old = _both(monkeypatch, program, task, cfg, inputs)
    ((_, groups, _),) = trace._TRACES.values()
    assert groups.n > 2 * 8
    assert_same_results(new, old)
    trace._TRACES.clear()


def test_program_filling_its_bucket_runs_on_past_the_end():
    """A program exactly one bucket long has no halt row after it: both paths keep executing its last
    instruction (JAX clamps the index) until the step budget stops them."""
    src = "S_ADDI_INT gp1, gp1, 1\n" * 1023 + "V_ADD_VV gp0, gp0, gp0\n"
    program = ACCELERATOR.assemble(src, HW)
    assert program.length == 1024
    hw_json = HW.model_dump_json()
    hbm = _hbm(0)
    new = _run_state(trace.batched_runner(hw_json)[1], program, hbm, 1500)
    assert_same_state(new, _run_state(M.oracle_runner(hw_json)[1], program, hbm, 1500))
    assert not np.asarray(new.ctl)[0, M.HALTED]


# ---- the default dispatch: programs of at most ORACLE_MAX_INSTRUCTIONS take the interpreter ----------
def _loop(count: int) -> str:
    return f"C_LOOP_START gp1, {count}\nS_ADDI_INT gp2, gp2, 1\nC_LOOP_END gp1\n"  # 2 * count + 2 with the halt


def _words(program):
    return program.padded(M.bucket(program.length, 1024), M.Machine(HW).halt_row)


@pytest.mark.parametrize("name", ["relu", "softmax", "matmul", "conv2d", "rope"])
def test_dynamic_count_is_the_step_count(name):
    task = TASKS[name]
    program = ACCELERATOR.assemble(ACCELERATOR.compile(task, task.config("NPU", 1), HW), HW)
    st = _run_state(M.oracle_runner(HW.model_dump_json())[1], program, _hbm(0), MAX_STEPS)
    steps = int(np.asarray(st.ctl)[0, M.STEPS])
    assert trace.dynamic_count(_words(program), 1 << 40) == steps
    assert trace.dynamic_count(_words(program), steps // 2) <= steps  # stops counting early
    assert trace.dynamic_count(_words(program), steps // 2) > steps // 2


def test_dispatch_by_dynamic_count(monkeypatch):
    """At the threshold the interpreter runs (nothing is pre-passed); one loop iteration more and the
    trace path does (its trace is cached); both give the oracle's state."""
    monkeypatch.delenv(trace.SIM_ENV)
    limit = trace.ORACLE_MAX_INSTRUCTIONS
    hw_json = HW.model_dump_json()
    auto, oracle = trace.batched_runner(hw_json)[1], M.oracle_runner(hw_json)[1]
    for count, traced in (((limit - 2) // 2, False), ((limit - 2) // 2 + 1, True)):
        program = ACCELERATOR.assemble(_loop(count), HW)
        assert (trace.dynamic_count(_words(program), limit) > limit) == traced
        trace._TRACES.clear()
        st = _run_state(auto, program, _hbm(0), MAX_STEPS)
        assert len(trace._TRACES) == int(traced)
        assert_same_state(st, _run_state(oracle, program, _hbm(0), MAX_STEPS))
        assert np.asarray(st.ctl)[0, M.HALTED]
    trace._TRACES.clear()


def test_misjudged_loop_goes_on_to_the_trace_path(monkeypatch):
    """A loop that rewrites its own counter (the ISA says not to) runs far longer than its count says:
    the interpreter stops at the threshold's step count and the trace path runs the whole program."""
    monkeypatch.delenv(trace.SIM_ENV)
    src = ("C_LOOP_START gp1, 1\nS_LD_INT gp6, gp0, 0\nS_ADDI_INT gp6, gp6, 1\nS_ST_INT gp6, gp0, 0\n"
           "S_ADDI_INT gp7, gp0, 150\nS_SUB_INT gp1, gp7, gp6\nC_LOOP_END gp1\n")  # 149 iterations, not 1
    program = ACCELERATOR.assemble(src, HW)
    assert trace.dynamic_count(_words(program), trace.ORACLE_MAX_INSTRUCTIONS) <= trace.ORACLE_MAX_INSTRUCTIONS
    hw_json = HW.model_dump_json()
    trace._TRACES.clear()
    st = _run_state(trace.batched_runner(hw_json)[1], program, _hbm(0), MAX_STEPS)
    assert len(trace._TRACES) == 1
    assert_same_state(st, _run_state(M.oracle_runner(hw_json)[1], program, _hbm(0), MAX_STEPS))
    ctl = np.asarray(st.ctl)[0]
    assert ctl[M.HALTED] and ctl[M.FAULT] == 0 and ctl[M.STEPS] > trace.ORACLE_MAX_INSTRUCTIONS
    trace._TRACES.clear()


def test_int32_wrap_around_in_scalar_code():
    """Scalar results that pass int32 wrap as the interpreter's do (the pre-pass wraps only where a result
    leaves the range): ADDI/ADD/SUB/MUL overflow, and a loop counter decremented past INT_MIN (it keeps
    looping until the step budget stops it)."""
    src = ("S_LUI_INT gp4, 524287\nS_ADDI_INT gp4, gp4, 4095\nS_ADDI_INT gp5, gp4, 1\nS_ADD_INT gp2, gp5, gp5\n"
           "S_ADDI_INT gp11, gp0, 3\nS_SUB_INT gp3, gp5, gp11\nS_MUL_INT gp6, gp4, gp4\nC_LOOP_START gp13, 2\n"
           "S_ADDI_INT gp7, gp7, 1\nS_ADD_INT gp13, gp5, gp0\nC_LOOP_END gp13\n")
    program = ACCELERATOR.assemble(src, HW)
    hw_json = HW.model_dump_json()
    new = _run_state(trace.batched_runner(hw_json)[1], program, _hbm(0), 400)
    assert_same_state(new, _run_state(M.oracle_runner(hw_json)[1], program, _hbm(0), 400))
    gp = np.asarray(new.gp)[0]
    assert gp[4] == (1 << 31) - 1 and gp[5] == -(1 << 31) and gp[2] == 0 and gp[3] == (1 << 31) - 3
    assert gp[6] == 1 and gp[7] > 100  # (INT_MAX squared wraps to 1; the wrapped counter kept the loop going)


@pytest.mark.slow  # (about 30 s: it runs a kernel up to the cycle limit on both paths)
def test_matmul_past_the_cycle_limit_faults_at_the_matmul(monkeypatch):
    """An in-bounds M_MM (the pre-pass's inline path) whose time passes CYCLE_LIMIT faults there, as on the
    interpreter: a loop of M_MMs of 4096 cycles each keeps the matrix unit busy past the limit."""
    from kcgym.limits import CYCLE_LIMIT, MAX_HW_CYCLES

    hw = NPUConfig(mm_occupancy=MAX_HW_CYCLES)
    task = TASKS["matmul"]
    cfg = task.config("NPU", 1)
    inputs = Evaluator(ACCELERATOR, task, cfg, hw).input_sets(0, 1)
    n = CYCLE_LIMIT // (8 * MAX_HW_CYCLES) + 2
    src = f"C_LOOP_START gp15, {n}\n" + "M_MM gp0, gp0\n" * 8 + "C_LOOP_END gp15\nC_HALT\n"
    program = ACCELERATOR.assemble(src, hw)

    def run(mode: str):
        monkeypatch.setenv(trace.SIM_ENV, mode)
        return ACCELERATOR.run(program, task, cfg, hw, inputs, 10_000_000)

    new = run("trace")
    assert new[0].fault is not None and new[0].fault.name == "CYCLE_LIMIT" and "M_MM" in new[0].fault.source
    assert_same_results(new, run("oracle"))
