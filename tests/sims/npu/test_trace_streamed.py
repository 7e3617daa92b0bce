"""The NPU trace path streamed (``trace._streamed``): a long program's groups run part by part while its pre-pass
goes on, with results bit for bit the interpreter's.

Streaming is forced on small programs here (every program streams, a part at every loop back-edge, chunks of a
few groups), so each kernel and generated program runs as many parts: same outputs, cycles, counts, faults and
first non-finite line as the oracle, the whole machine state on generated programs, the levels of the parts
those of one call, and a warm run of a streamed trace the same again.
"""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.evaluation import Evaluator
from kcgym.sims import compile_ahead
from kcgym.sims.npu import machine as M
from kcgym.sims.npu import trace
from kcgym.sims.npu.accelerator import ACCELERATOR
from kcgym.sims.npu.config import NPUConfig
from kcgym.tasks import TASKS
from tests.sims.npu.test_trace_differential import _hbm, _run_state, assert_same_state, generated_program
from tests.sims.trace_contract import assert_same_results, recorded

HW = NPUConfig()
MAX_STEPS = 50_000_000
# C1 kernels with loops (each streams as several parts)
KERNELS = ["matmul", "conv2d", "depthwise_conv", "embedding", "rope", "ffn", "sdpa", "mha", "conv_block",
           "decoder_llama"]


@pytest.fixture
def streamed(monkeypatch):
    """Every program on the trace path, streamed in parts of a few operations; ``parts``: each part's groups."""
    monkeypatch.setenv(trace.SIM_ENV, "trace")
    monkeypatch.setattr(trace, "STREAM_ABOVE", 0)
    monkeypatch.setattr(trace, "STREAM_PART_OPS", 5)
    monkeypatch.setattr(trace, "GROUP_CHUNK", 8)
    parts = recorded(monkeypatch, trace, "_sent", lambda g, ch: int(g.n))
    trace._TRACES.clear()
    yield parts
    trace._TRACES.clear()


def _oracle(monkeypatch, program, task, cfg, inputs, max_steps=MAX_STEPS):
    monkeypatch.setenv(trace.SIM_ENV, "oracle")
    try:
        return ACCELERATOR.run(program, task, cfg, HW, inputs, max_steps)
    finally:
        monkeypatch.setenv(trace.SIM_ENV, "trace")


@pytest.mark.parametrize("kind", ["compiler", "expert"])
@pytest.mark.parametrize("name", KERNELS)
def test_kernels_streamed(monkeypatch, streamed, name, kind):
    task = TASKS[name]
    cfg = task.config("NPU", 1)
    src = ACCELERATOR.compile(task, cfg, HW) if kind == "compiler" else ACCELERATOR.expert(task, cfg, HW)
    if src is None:
        pytest.skip(f"no expert kernel for {name}")
    program = ACCELERATOR.assemble(src, HW)
    inputs = Evaluator(ACCELERATOR, task, cfg, HW).input_sets(0, 2)
    new = ACCELERATOR.run(program, task, cfg, HW, inputs, MAX_STEPS)
    assert len(streamed) > 2, "the kernel should have run as several parts"
    old = _oracle(monkeypatch, program, task, cfg, inputs)
    assert old[0].fault is None
    assert_same_results(new, old)
    n_parts = len(streamed)
    assert_same_results(ACCELERATOR.run(program, task, cfg, HW, inputs, MAX_STEPS), old)  # warm: the cached chunks
    assert len(streamed) == n_parts


@pytest.mark.parametrize("seed", range(16))
def test_generated_programs_streamed_whole_state(streamed, seed):
    """Faults, step budgets, overflows and aliasing in a streamed pre-pass: the whole machine state."""
    program = ACCELERATOR.assemble(generated_program(seed, 90), HW)
    hw_json = HW.model_dump_json()
    hbm = _hbm(seed)
    max_steps = 300 if seed % 4 == 0 else 100_000
    new = _run_state(trace.batched_runner(hw_json)[1], program, hbm, max_steps)
    assert_same_state(new, _run_state(M.oracle_runner(hw_json)[1], program, hbm, max_steps))


@pytest.mark.parametrize("max_steps", [5000, 77])
def test_fault_after_many_parts(monkeypatch, streamed, max_steps):
    """A loop that streams many parts, then an out-of-bounds access (or the step budget, part way through the
    loop): the fault, its pc and the data before it."""
    task = TASKS["relu"]
    cfg = task.config("NPU", 1)
    src = "\n".join(["C_LOOP_START gp1, 40", "V_ADD_VV gp0, gp0, gp0", "V_EXP_V gp2, gp0", "C_LOOP_END gp1",
                     f"S_LUI_INT gp3, {HW.vsram_size >> 12}", "V_ADD_VV gp3, gp0, gp0"]) + "\n"
    program = ACCELERATOR.assemble(src, HW)
    inputs = Evaluator(ACCELERATOR, task, cfg, HW).input_sets(0, 2)
    new = ACCELERATOR.run(program, task, cfg, HW, inputs, max_steps)
    assert len(streamed) > 5
    old = _oracle(monkeypatch, program, task, cfg, inputs, max_steps)
    assert old[0].fault is not None
    assert_same_results(new, old)


@pytest.mark.parametrize("name", ["matmul", "layernorm", "conv2d"])
def test_levels_of_parts_are_those_of_one_call(name):
    task = TASKS[name]
    cfg = task.config("NPU", 1)
    program = ACCELERATOR.assemble(ACCELERATOR.compile(task, cfg, HW), HW)
    words = program.padded(M.bucket(program.length, 1024), M.Machine(HW).halt_row)
    ops = trace.prepass(words, HW, 1 << 20, MAX_STEPS).ops
    d = trace.dims_of(HW, 1 << 16)
    whole = trace.levelled(ops, HW, d)
    rng = np.random.default_rng(0)
    cuts = sorted(rng.choice(np.arange(1, len(ops)), size=min(12, len(ops) - 1), replace=False).tolist())
    lev = trace.Leveller(HW, d)
    parts = [lev.level(ops[a:b]) for a, b in zip([0, *cuts], [*cuts, len(ops)], strict=True)]
    for field in ("kinds", "seqs", "levels", "fields", "pcs"):
        np.testing.assert_array_equal(np.concatenate([getattr(p, field) for p in parts]), getattr(whole, field))


def test_compile_ahead_once_per_key_and_a_failure_is_quiet():
    calls: list[int] = []
    a = compile_ahead.ahead(("test", 1), lambda: calls.append(1))
    assert compile_ahead.ahead(("test", 1), lambda: calls.append(2)) is a
    compile_ahead.wait(a)
    assert calls == [1]

    def broken():
        raise RuntimeError("no compiler today")

    compile_ahead.wait(compile_ahead.ahead(("test", 2), broken))  # (does not raise)


def test_operation_table_pads_each_kind_with_zeros():
    """``trace._table`` (one conversion per tuple length) as padding each operation to 3 + N_FIELDS columns."""
    task = TASKS["conv_block"]
    cfg = task.config("NPU", 1)
    program = ACCELERATOR.assemble(ACCELERATOR.compile(task, cfg, HW), HW)
    ops = trace.prepass(program.padded(M.bucket(program.length, 1024), M.Machine(HW).halt_row), HW, 1 << 20,
                        MAX_STEPS).ops
    ops = [*ops, (trace.K_SFP, 7, 3, -1, -(1 << 31), (1 << 31) - 1, 2, 5), (trace.K_FLD, 8, 4, 0, 9)]
    assert len({len(op) for op in ops}) >= 3
    want = np.array([list(op) + [0] * (3 + trace.N_FIELDS - len(op)) for op in ops], np.int32)
    np.testing.assert_array_equal(trace._table(ops), want)
    assert trace._table([]).shape == (0, 3 + trace.N_FIELDS)


@pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")  # (JAX's: the child here runs no JAX)
def test_compile_ahead_works_in_a_forked_child():
    """A child forked after the background thread ran (``gymnasium``'s AsyncVectorEnv forks on Linux) gets a new
    executor: its own compile-ahead work runs, where the parent's executor would wait for a thread that is gone."""
    import os
    import time

    compile_ahead.wait(compile_ahead.ahead(("test", "before fork"), lambda: None))
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            fut = compile_ahead.ahead(("test", "in the child"), lambda: 7)
            os._exit(0 if fut.result(timeout=20) == 7 else 1)
        except BaseException:
            os._exit(2)
    deadline = time.monotonic() + 30
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child's compile-ahead work never ran")
        time.sleep(0.05)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
