"""The trace-ahead VLIW simulator (``kcgym/sims/vliw/trace.py``) against its oracle, the interpreter.

Same outputs bit for bit, same cycles, bundle counts, category counts, slot busy counts, same faults
(code, pc, slot, line, message) and first non-finite line: on every compiler and expert kernel (C1 and
the cheap C2 ones here, the other C2 ones and C3..C5 in the slow tier), on the reward-hack battery, and
on generated programs that fault, spin, overflow, branch and alias. For raw programs the whole final
machine state is compared (DM, EXT, registers, loop stack, scoreboard and DMA times). Rolled loops
(``kcgym/sims/vliw/rolled.py``) have their own cases in ``test_trace_rolled.py``; the kernels here roll
wherever their loops are steady (batch_matmul's strip loops, for one).
"""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.evaluation import Evaluator
from kcgym.isa.diagnostics import AssemblyError
from kcgym.sims.vliw import machine as M
from kcgym.sims.vliw import trace
from kcgym.sims.vliw.accelerator import ACCELERATOR, EXT_BUCKET
from kcgym.sims.vliw.config import VLIWConfig
from kcgym.tasks import TASKS
from tests.sims.trace_contract import (
    assert_same_results,
    bits,
    check_profiling_and_the_switch,
    check_trace_is_cached_across_input_sets,
)
from tests.sims.vliw import adversarial

VLIW_TASKS = [n for n, t in TASKS.items() if ACCELERATOR.supports(t)]
HW = VLIWConfig()
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


# C2 kernels of at most ~12k bundles (benchmarks/results/vliw.jsonl) run in the default tier, the rest in slow
C2_CHEAP = ("silu", "relu", "gelu", "softmax", "layernorm", "rmsnorm", "gemv", "matmul", "linear", "depthwise_conv",
            "rope", "sdpa", "flash_attention")


def _kernels(index: int, names=None):
    for name in VLIW_TASKS if names is None else [n for n in VLIW_TASKS if n in names]:
        for kind in ("compiler", "expert"):
            yield pytest.param(name, kind, index, id=f"{name}-{kind}-C{index}")


def _check_kernel(monkeypatch, name: str, kind: str, index: int) -> None:
    task = TASKS[name]
    cfg = task.config("VLIW", index)
    src = ACCELERATOR.compile(task, cfg, HW) if kind == "compiler" else ACCELERATOR.expert(task, cfg, HW)
    if src is None:
        pytest.skip(f"no expert kernel for {name}")
    program = ACCELERATOR.assemble(src, HW)
    inputs = Evaluator(ACCELERATOR, task, cfg, HW).input_sets(0, 2)
    trace._TRACES.clear()
    ran = []
    real_run = trace.run

    def run(*args):
        ran.append(real_run(*args))
        return ran[-1]

    monkeypatch.setattr(trace, "run", run)
    new, old = _both(monkeypatch, program, task, cfg, inputs)
    assert old[0].fault is None
    assert_same_results(new, old)
    count = trace.static_count(program.padded(HW.imem_bundles + 1, M.Machine(HW).halt_row), trace.rolled.ROLL_TRIES + 2)
    if count is None or count <= trace.TRACE_MAX_OPS:  # (counting the iterations a rolled loop steps; longer: oracle)
        assert ran and all(st is not None for st in ran)  # the trace path ran, not its fallback to the oracle


@pytest.mark.parametrize("name,kind,index", [*_kernels(1), *_kernels(2, C2_CHEAP)])
def test_kernels_c1_c2(monkeypatch, name, kind, index):
    _check_kernel(monkeypatch, name, kind, index)


@pytest.mark.slow
@pytest.mark.parametrize("name,kind,index", [*_kernels(2, set(VLIW_TASKS) - set(C2_CHEAP)),
                                             *[p for i in (3, 4, 5) for p in _kernels(i)]])
def test_kernels_c2_c5(monkeypatch, name, kind, index):
    _check_kernel(monkeypatch, name, kind, index)


@pytest.mark.parametrize("hack", ["zeros", "constant", "copy_input", "spin", "out_of_bounds"])
@pytest.mark.parametrize("name", ["relu", "matmul", "softmax"])
def test_hack_battery(monkeypatch, name, hack):
    task = TASKS[name]
    cfg = task.config("VLIW", 1)
    layout = ACCELERATOR.kernel_layout(task, cfg, HW)
    program = ACCELERATOR.assemble(getattr(adversarial, hack)(task, layout, HW), HW)
    inputs = Evaluator(ACCELERATOR, task, cfg, HW).input_sets(0, 2)
    new, old = _both(monkeypatch, program, task, cfg, inputs, max_steps=3000)
    assert_same_results(new, old)


# ---- generated programs: the whole machine state --------------------------------------------------
EXT_ELEMENTS = 16384


def _op(rng: np.random.Generator, bad: float) -> str:
    """One bundle of up to five slots, over every instruction; ``bad``: chance of a faulting operand."""
    x = lambda: f"x{int(rng.integers(0, 12))}"  # noqa: E731
    c = lambda: f"c{int(rng.integers(0, 8))}"  # noqa: E731
    ptr = lambda: f"p{int(rng.integers(0, 4))}"  # noqa: E731
    slots = []
    if rng.random() < 0.6:
        if rng.random() < 0.2:
            slots.append(f"VLDB {x()}, {ptr()}, {int(rng.choice([0, 2, 64, -2]))}")
        else:
            slots.append(f"VLD {x()}, {ptr()}, {int(rng.choice([0, 64, 128, -64]))}")
    if rng.random() < 0.3:
        slots.append(f"VLD {x()}, {ptr()}, 64")
    if rng.random() < 0.3:
        slots.append(f"VST {x()}, {ptr()}, {int(rng.choice([0, 64, -64]))}")
    if rng.random() < 0.7:
        mn = str(rng.choice(["VADD", "VSUB", "VMUL", "VMAX", "VMIN", "VMPY"]))
        k = int(rng.integers(0, 6))
        slots.append({0: f"{mn} {c() if mn == 'VMPY' else x()}, {x()}, {x()}",
                      1: f"{rng.choice(['VRMAX', 'VEXP2', 'VINV', 'VRSQRT'])} {x()}, {x()}",
                      2: f"{rng.choice(['VRADD', 'VEXP2C', 'VINVC'])} {x()}, {c()}",
                      3: f"VMAC {c()}, {x()}, {x()}",
                      4: f"{rng.choice(['VMPYL', 'VMACL'])} {c()}, {x()}, {x()}, r{int(rng.integers(1, 4))}",
                      5: f"VMMUL {c()}, {x()}, {x()}, {int(rng.integers(0, 2))}"}[k])
    if rng.random() < 0.5:
        k = int(rng.integers(0, 7))
        slots.append({0: f"VCONV {x()}, {c()}", 1: f"VUPS {c()}, {x()}", 2: f"VMOV {x()}, {x()}",
                      3: f"VBCST {x()}, {float(rng.choice([1.5, -3.0e38, 0.1, 0.0]))!r}",
                      4: f"VBCSTL {x()}, {x()}, r{int(rng.integers(1, 4))}",
                      5: f"VINS {x()}, {x()}, r{int(rng.integers(1, 4))}", 6: f"CZERO {c()}"}[k])
    if rng.random() < 0.4:
        k = int(rng.integers(0, 5))
        lane = int(rng.choice([0, 5, 31] + ([32, -1] if rng.random() < bad else [])))
        slots.append({0: f"MOVI r{int(rng.integers(1, 4))}, {lane}",
                      1: f"ADDI r{int(rng.integers(4, 8))}, r{int(rng.integers(4, 8))}, {int(rng.integers(-9, 9))}",
                      2: f"PADDI {ptr()}, {ptr()}, {int(rng.choice([64, -64, 128]))}",
                      3: f"PMOVI {ptr()}, {_dm_addr(rng, bad)}",
                      4: f"{rng.choice(['MUL', 'SUB', 'ADD'])} r{int(rng.integers(4, 8))}, r5, r6"}[k])
    if rng.random() < 0.25:
        slots.append(_dma(rng, bad))
    kept: list[str] = []
    for op in slots:  # drop the operations that break a slot rule (two writes of one register)
        if _assembles(" || ".join([*kept, op])):
            kept.append(op)
    return " || ".join(kept) if kept else "NOP"


def _assembles(bundle: str) -> bool:
    try:
        ACCELERATOR.assemble(bundle + "\n", HW)
    except AssemblyError:
        return False
    return True


def _dm_addr(rng: np.random.Generator, bad: float) -> int:
    if rng.random() < bad:
        return int(rng.choice([HW.dm_bytes, HW.dm_bytes - 32, 2, 96]))
    return int(rng.integers(0, HW.dm_bytes // 64 - 4)) * 64


def _dma(rng: np.random.Generator, bad: float) -> str:
    """A DMA, plain or tiled, in or out, through p8-free registers set by the program's prologue."""
    mn = str(rng.choice(["DMAI", "DMAO", "DMAIT", "DMAOT"]))
    rows = int(rng.choice([1, 2, 4, 8]))
    rowbytes = int(rng.choice([16, 64, 128, 200]))
    pm = f"p{int(rng.integers(4, 6))}"
    re = f"r{int(rng.choice([8, 9, 14, 12 if rng.random() < bad else 8]))}"
    rs = f"r{int(rng.choice([10, 11]))}"
    if mn.endswith("T"):
        return f"{mn} {pm}, {re}, {rs}, {rows}, {rowbytes}, {int(rng.choice([8, 16])) if rowbytes % 16 == 0 else 8}"
    return f"{mn} {pm}, {re}, {rs}, {rows}, {rowbytes}"


def generated_program(seed: int, n_bundles: int = 60) -> str:
    """Random bundles over every instruction, in loops, with branches; about one in ten addresses is
    out of bounds or misaligned on most seeds, so many of these fault somewhere."""
    rng = np.random.default_rng(seed)
    bad = 0.1 if seed % 3 else 0.0
    lines = [f"PMOVI p{i}, {_dm_addr(rng, 0.0)}" for i in range(6)]
    lines += ["MOVI r1, 3", "MOVI r2, 7", "MOVI r3, 30", "MOVI r5, 3", "MOVI r6, -5", "MOVI r7, 2",
              f"MOVI r8, {int(rng.integers(0, 64)) * 2}", f"MOVI r9, {int(rng.integers(0, 512)) * 64}",
              f"MOVI r10, {int(rng.choice([0, 64, 256, 400]))}", "MOVI r11, 256", "MOVI r12, -128",
              f"MOVI r13, {int(rng.integers(1, 4))}", f"MOVI r14, {int(rng.integers(0, 64)) * 2}"]
    depth, n, label = 0, 0, 0
    open_loops: list[str] = []
    while n < n_bundles:
        roll = rng.random()
        if roll < 0.06 and depth < 3:
            label += 1
            open_loops.append(f"L{label}")
            lines.append(f"LOOP r13, L{label}" if rng.random() < 0.3 else f"LOOPI {int(rng.integers(0, 4))}, L{label}")
            lines.append(_op(rng, bad))
            depth += 1
        elif roll < 0.12 and depth:
            lines.append(_op(rng, bad))
            lines.append(f"{open_loops.pop()}:")
            depth -= 1
        elif roll < 0.14:
            label += 1
            lines += ["ADDI r7, r7, -1", f"BNEZ r7, B{label}", "NOP",
                      f"B{label}:", f"BEQZ r0, S{label}", "NOP", f"S{label}:"]
        else:
            lines.append(_op(rng, bad))
        n += 1
    while open_loops:
        lines.append("NOP")
        lines.append(f"{open_loops.pop()}:")
    return "\n".join(lines) + "\n"


def _ext(seed: int, n: int = 2) -> np.ndarray:
    import ml_dtypes

    rng = np.random.default_rng(1000 + seed)
    e = np.full((n, M.bucket(EXT_ELEMENTS, EXT_BUCKET)), np.nan, np.float32)
    vals = rng.standard_normal((n, EXT_ELEMENTS)) * np.exp(rng.standard_normal((n, EXT_ELEMENTS)))
    e[:, :EXT_ELEMENTS] = vals.astype(ml_dtypes.bfloat16).astype(np.float32)  # bf16, as task inputs are
    e[:, EXT_ELEMENTS - 640:EXT_ELEMENTS] = np.nan  # a poisoned tail, as the accelerator leaves outputs
    e[1, 5] = np.inf
    e[0, 7] = -0.0
    return e


def _run_state(runner, program, ext: np.ndarray, max_steps: int):
    words = program.padded(HW.imem_bundles + 1, M.Machine(HW).halt_row)
    return runner(words, ext, np.int32(EXT_ELEMENTS), np.int32(max_steps))


def assert_same_state(new, old) -> None:
    for field in M.State._fields:
        if field == "prof":
            continue  # profiling counters: the oracle's alone (profiling runs on it)
        a, b = np.asarray(getattr(new, field)), np.asarray(getattr(old, field))
        if a.dtype == np.float32:
            np.testing.assert_array_equal(bits(a), bits(b), err_msg=field)
        else:
            np.testing.assert_array_equal(a, b, err_msg=field)


@pytest.mark.parametrize("seed", range(24))
def test_generated_programs_whole_state(seed):
    program = ACCELERATOR.assemble(generated_program(seed), HW)
    hw_json = HW.model_dump_json()
    ext = _ext(seed)
    max_steps = 90 if seed % 4 == 0 else 100_000  # every fourth: the step budget may stop it first
    trace._TRACES.clear()
    new = _run_state(trace.batched_runner(hw_json)[1], program, ext, max_steps)
    assert_same_state(new, _run_state(M.batched_runner(hw_json)[1], program, ext, max_steps))
    assert all(entry[1] is not None for entry in trace._TRACES.values())  # not left to the oracle


def test_generated_programs_fault_and_finish():
    """The generator is adversarial enough: among its programs some fault, some finish, some overflow."""
    codes, nan = set(), 0
    oracle = M.batched_runner(HW.model_dump_json())[1]
    for seed in range(24):
        program = ACCELERATOR.assemble(generated_program(seed), HW)
        st = _run_state(oracle, program, _ext(seed), 100_000)
        codes.add(int(np.asarray(st.ctl)[0, M.FAULT]))
        nan += int(np.asarray(st.nan_pc)[0] >= 0)
    assert 0 in codes and len(codes) >= 3
    assert nan >= 1


@pytest.mark.parametrize("case", ["oob_dm", "misaligned", "oob_ext", "bad_lane", "loop_depth", "step_budget",
                                  "nan_line"])
def test_faults_and_first_nonfinite_line(monkeypatch, case):
    task = TASKS["relu"]
    cfg = task.config("VLIW", 1)
    layout = ACCELERATOR.kernel_layout(task, cfg, HW)
    out = next(r for r in layout.regions if r.role == "output")
    body = {
        "oob_dm": [f"PMOVI p1, {HW.dm_bytes - 32}", "NOP", "VLD x0, p1, 0"],
        "misaligned": ["PMOVI p1, 32", "VST x0, p1, 0"],
        "oob_ext": ["MOVI r1, 1000000", "DMAI p0, r1, r0, 1, 64"],
        "bad_lane": ["MOVI r1, 40", "VMACL c0, x0, x1, r1"],
        "loop_depth": ["MOVI r1, 6", "again:", "LOOPI 2, e1", "ADDI r1, r1, -1", "BNEZ r1, again", "NOP", "e1:"],
        "step_budget": ["MOVI r1, 1", "spin:", "BNEZ r1, spin"],
        "nan_line": ["VBCST x1, 0.0", "NOP", "VINV x2, x1", "NOP", "NOP", "NOP", "NOP", "NOP", "NOP", "NOP", "NOP",
                     "VST x2, p0, 0", f"MOVI r1, {2 * out.offset}", "DMAO p0, r1, r0, 1, 64"],
    }[case]
    program = ACCELERATOR.assemble("\n".join(body) + "\n", HW)  # loop_depth: branches out of a body, 5 deep
    inputs = Evaluator(ACCELERATOR, task, cfg, HW).input_sets(0, 2)
    new, old = _both(monkeypatch, program, task, cfg, inputs, max_steps=500)
    assert_same_results(new, old)
    if case == "nan_line":
        assert old[0].first_nonfinite_line == 3 and old[0].fault is None
    else:
        assert old[0].fault is not None
        assert old[0].fault.name == case.upper()


@pytest.mark.parametrize("hazard", ["ext_war", "dm_war", "partial_line"])
def test_memory_hazards_whole_state(hazard):
    """Orderings the levels must keep although the operations' own inputs are ready early: a DMA out that
    overwrites EXT a DMA in still has to read (the DMA in waits for a long chain), a VST into a line a DMA
    out still has to read, and a DMA in whose last line it only partly writes (the rest kept)."""
    chain = ["VBCST x1, 1.5"] + [f"VEXP2 x{2 + i % 2}, x{1 + (i + 1) % 2 + (i > 0)}" for i in range(6)]
    body = {
        "ext_war": ["VST x3, p0, 64", "VST x3, p0, -64", "DMAI p0, r0, r0, 1, 100", "PMOVI p2, 2048",
                    "DMAO p2, r0, r0, 1, 64", "VLD x5, p0, 0"],  # the DMA in waits for the chain (its partial line)
        "dm_war": ["VST x3, p0, 0", "MOVI r1, 640", "DMAO p0, r1, r0, 1, 64", "VBCST x4, 3.0", "VST x4, p0, 0",
                   "MOVI r2, 1280", "DMAO p0, r2, r0, 1, 64"],
        "partial_line": ["VST x3, p0, 64", "VST x3, p0, -64", "DMAI p0, r0, r0, 1, 100", "PMOVI p1, 64",
                         "VLD x6, p1, 0"],
    }[hazard]
    program = ACCELERATOR.assemble("\n".join(chain + body) + "\n", HW)
    hw_json = HW.model_dump_json()
    ext = _ext(7)
    trace._TRACES.clear()
    new = _run_state(trace.batched_runner(hw_json)[1], program, ext, 10_000)
    assert_same_state(new, _run_state(M.batched_runner(hw_json)[1], program, ext, 10_000))


def test_non_bf16_ext_with_vmmul_goes_to_the_oracle():
    """VMMUL is exact on the trace path for bf16 vector registers (every task's inputs are bf16); an EXT
    image with other values leaves a program with VMMUL to the interpreter, with the same results."""
    src = ("DMAI p0, r0, r0, 1, 128\n" + "NOP\n" * 60 + "PMOVI p1, 64\nVLD x0, p0, 0 || VLD x1, p1, 0\n"
           + "NOP\n" * 6 + "VMMUL c0, x0, x1, 0\n")
    program = ACCELERATOR.assemble(src, HW)
    hw_json = HW.model_dump_json()
    ext = _ext(0)
    ext[:, :64] = np.random.default_rng(0).standard_normal((2, 64)).astype(np.float32)
    trace._TRACES.clear()
    assert trace.run(hw_json, program.padded(HW.imem_bundles + 1, M.Machine(HW).halt_row), ext,
                     EXT_ELEMENTS, 1000) is None
    new = _run_state(trace.batched_runner(hw_json)[1], program, ext, 1000)
    assert_same_state(new, _run_state(M.batched_runner(hw_json)[1], program, ext, 1000))


@pytest.mark.parametrize("at", [None, 0, 1, 4094, 4095, 4096, 9000])
def test_bf16_check_reads_the_low_halves_below_the_limit(at):
    """``trace._bf16_inputs`` (a strided view of the low uint16 halves) agrees with its definition, every float32
    below the limit with its low 16 bits clear: a set bit at either end of the limit, past it, or none."""
    ext = np.random.default_rng(3).standard_normal((2, 8192)).astype(np.float32)
    ext = (ext.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)
    if at is not None:
        ext.reshape(-1).view(np.uint32)[at] |= np.uint32(1 << (at % 16))
    for image in (ext, np.asfortranarray(ext)):  # (and an image whose elements are not adjacent)
        for limit in (1, 4096, 8192):
            want = not np.any(image[:, :limit].view(np.uint32) & 0xFFFF)
            assert trace._bf16_inputs(image, limit) == want


def test_profiling_and_the_switch_use_the_oracle(monkeypatch):
    """``profile=True`` runs on the interpreter (it alone keeps per-bundle counters), with the fast path's
    cycles; ``KCGYM_SIM=oracle`` keeps every run off the trace path."""
    hw_json = HW.model_dump_json()
    assert trace.batched_runner(hw_json, True)[1] is M.batched_runner(hw_json, True)[1]
    check_profiling_and_the_switch(monkeypatch, ACCELERATOR, trace, HW, MAX_STEPS)


def test_trace_is_cached_across_input_sets():
    check_trace_is_cached_across_input_sets(ACCELERATOR, trace, HW, MAX_STEPS)


def test_long_programs_run_in_chunks(monkeypatch):
    """Programs longer than one chunk of groups carry the data state from call to call."""
    monkeypatch.setattr(trace, "GROUP_CHUNK", 8)
    monkeypatch.setattr(trace, "SMALL_CHUNK", 4)
    trace._TRACES.clear()
    task = TASKS["layernorm"]
    cfg = task.config("VLIW", 1)
    program = ACCELERATOR.assemble(ACCELERATOR.compile(task, cfg, HW), HW)
    inputs = Evaluator(ACCELERATOR, task, cfg, HW).input_sets(0, 2)
    new, old = _both(monkeypatch, program, task, cfg, inputs)
    ((_, groups, _),) = trace._TRACES.values()
    assert groups.n > 2 * 8
    assert_same_results(new, old)
    trace._TRACES.clear()


def test_too_long_a_trace_goes_to_the_oracle(monkeypatch):
    """Past TRACE_MAX_OPS the interpreter runs the program: at once where its LOOPI counts say it is that
    long, else when the pre-pass has recorded that many data operations (here: a loop closed by a branch)."""
    monkeypatch.setattr(trace, "TRACE_MAX_OPS", 50)
    task = TASKS["softmax"]
    cfg = task.config("VLIW", 1)
    inputs = Evaluator(ACCELERATOR, task, cfg, HW).input_sets(0, 2)
    counted = ACCELERATOR.assemble(ACCELERATOR.compile(task, cfg, HW), HW)
    branchy = ACCELERATOR.assemble("MOVI r1, 80\nloop:\nVADD x1, x2, x3 || ADDI r1, r1, -1\nBNEZ r1, loop\n", HW)
    for program, prepassed in ((counted, False), (branchy, True)):
        trace._TRACES.clear()
        new, old = _both(monkeypatch, program, task, cfg, inputs)
        assert_same_results(new, old)
        assert len(trace._TRACES) == int(prepassed)
        if prepassed:
            ((tr, groups, _),) = trace._TRACES.values()
            assert tr.exotic and groups is None
    trace._TRACES.clear()


# ---- the default dispatch: programs of at most ORACLE_MAX_BUNDLES take the interpreter --------------
def _words(program):
    return program.padded(HW.imem_bundles + 1, M.Machine(HW).halt_row)


@pytest.mark.parametrize("name", ["relu", "softmax", "matmul", "layernorm", "rope"])
def test_dynamic_count_is_the_step_count(name):
    task = TASKS[name]
    program = ACCELERATOR.assemble(ACCELERATOR.compile(task, task.config("VLIW", 1), HW), HW)
    st = _run_state(M.batched_runner(HW.model_dump_json())[1], program, _ext(0), MAX_STEPS)
    steps = int(np.asarray(st.ctl)[0, M.STEPS])
    count = trace.dynamic_count(_words(program), 1 << 40)
    assert count == steps or count == (1 << 40) + 1  # exact, or unknown (a LOOP or a branch)
    assert trace.dynamic_count(_words(program), 10) <= 11


def test_dispatch_by_dynamic_count(monkeypatch):
    """At the threshold the interpreter runs (nothing is pre-passed); one loop iteration more and the
    trace path does (its trace is cached); both give the oracle's state. (The mechanism at a threshold of 64:
    the tuned one may be 0, no program.)"""
    monkeypatch.delenv(trace.SIM_ENV)
    limit = 64
    monkeypatch.setattr(trace, "ORACLE_MAX_BUNDLES", limit)
    hw_json = HW.model_dump_json()
    auto, oracle = trace.batched_runner(hw_json)[1], M.batched_runner(hw_json)[1]
    for count, traced in ((limit - 2, False), (limit - 1, True)):
        program = ACCELERATOR.assemble(f"LOOPI {count}, end\nADDI r2, r2, 1\nend:\n", HW)  # count + 2 bundles
        assert (trace.dynamic_count(_words(program), limit) > limit) == traced
        trace._TRACES.clear()
        st = _run_state(auto, program, _ext(0), MAX_STEPS)
        assert len(trace._TRACES) == int(traced)
        assert_same_state(st, _run_state(oracle, program, _ext(0), MAX_STEPS))
        assert np.asarray(st.ctl)[0, M.HALTED]
    trace._TRACES.clear()


def test_branches_are_left_to_the_trace_path(monkeypatch):
    """A program with a branch has no static count: the trace path runs it (a tight loop of BNEZ)."""
    monkeypatch.delenv(trace.SIM_ENV)
    program = ACCELERATOR.assemble("MOVI r1, 3\nloop:\nADDI r1, r1, -1\nBNEZ r1, loop\n", HW)
    assert trace.dynamic_count(_words(program), trace.ORACLE_MAX_BUNDLES) > trace.ORACLE_MAX_BUNDLES
    hw_json = HW.model_dump_json()
    trace._TRACES.clear()
    st = _run_state(trace.batched_runner(hw_json)[1], program, _ext(0), MAX_STEPS)
    assert len(trace._TRACES) == 1
    assert_same_state(st, _run_state(M.batched_runner(hw_json)[1], program, _ext(0), MAX_STEPS))
    trace._TRACES.clear()


@pytest.mark.parametrize("src", [
    "MOVI r1, 33554431\nSHLI r1, r1, 6\nPMOV p1, r1\nNOP\nVLD x0, p1, 0\nVST x0, p0, 0\n",  # 2**31-64
    "MOVI r1, 33554431\nSHLI r1, r1, 6\nPMOV p1, r1\nNOP\nVST x0, p1, 0\n",
    "MOVI r1, 33554431\nSHLI r1, r1, 6\nPMOV p1, r1\nNOP\nDMAI p1, r0, r0, 1, 64\n",
    f"PMOVI p1, {HW.dm_bytes - 2}\nNOP\nVLDB x0, p1, 0\nVST x0, p0, 0\n",  # the last element: not exotic
])
def test_wrapped_addresses_go_to_the_oracle(src):
    """An address whose bounds check passes only by int32 wrap-around (the interpreter then clips it):
    the program is left to the interpreter; the last DM element read by a VLDB is no such case."""
    program = ACCELERATOR.assemble(src, HW)
    hw_json = HW.model_dump_json()
    trace._TRACES.clear()
    new = _run_state(trace.batched_runner(hw_json)[1], program, _ext(3), 1000)
    assert_same_state(new, _run_state(M.batched_runner(hw_json)[1], program, _ext(3), 1000))
    ((tr, _, _),) = trace._TRACES.values()
    assert tr.exotic == ("VLDB" not in src)
    trace._TRACES.clear()


# ---- wide groups (``trace.WIDE``: WIDE_WIDTH lanes where a trace's levels fill them) ------------------------
def _widths_run() -> set[int]:
    """The group widths of the cached traces' levelled parts."""
    return {int(part.fields.shape[1]) for _, pl, _ in trace._TRACES.values() if pl is not None for part in pl.parts
            if isinstance(part, trace.Groups)}


@pytest.mark.parametrize("wide", [True, False])
@pytest.mark.parametrize("seed", range(0, 24, 3))
def test_generated_programs_in_wide_groups(monkeypatch, seed, wide):
    """Every trace in WIDE_WIDTH groups (``WIDE_BELOW`` infinite), or in none (0): the whole state is the oracle's."""
    monkeypatch.setattr(trace, "WIDE", (trace.WIDE[0], float("inf") if wide else 0.0))
    program = ACCELERATOR.assemble(generated_program(seed), HW)
    hw_json = HW.model_dump_json()
    ext = _ext(seed)
    max_steps = 90 if seed % 4 == 0 else 100_000
    trace._TRACES.clear()
    new = _run_state(trace.batched_runner(hw_json)[1], program, ext, max_steps)
    assert_same_state(new, _run_state(M.batched_runner(hw_json)[1], program, ext, max_steps))
    assert _widths_run() <= {trace.WIDE_WIDTH if wide else trace.GROUP_WIDTH}
    trace._TRACES.clear()


@pytest.mark.parametrize("wide", [True, False])
@pytest.mark.parametrize("name", ["matmul", "softmax", "layernorm", "conv2d"])
def test_kernels_in_wide_groups(monkeypatch, name, wide):
    monkeypatch.setattr(trace, "WIDE", (trace.WIDE[0], float("inf") if wide else 0.0))
    _check_kernel(monkeypatch, name, "compiler", 1)
    assert _widths_run() == {trace.WIDE_WIDTH if wide else trace.GROUP_WIDTH}
    trace._TRACES.clear()


def test_wide_groups_where_the_levels_fill_them():
    """A level of 64 independent loads a kind: wide groups (half as many); levels of 32: the narrow ones."""
    for per_level, width in ((64, trace.WIDE_WIDTH), (32, trace.GROUP_WIDTH)):
        n = per_level * 40
        ops = np.zeros((n, 4 + trace.N_FIELDS), np.int32)
        ops[:, 1] = ops[:, 2] = np.arange(n)
        ops[:, 3] = np.arange(n) // per_level + 1
        g = trace.schedule(ops)
        assert g.fields.shape[1] == width and int(g.n) == 40 * per_level // width
        np.testing.assert_array_equal(np.sort(g.seq[g.seq != trace.NO_SEQ]), np.arange(n))
