"""Many VLIW programs in one data-path call (``trace.run_many``) against one by one (``trace.run``) and the oracle.

A merged call moves each program's compact rows into its own range of one buffer and gives each its own copy of
the EXT window, and runs all their levels together in shared groups; every program's final state (registers,
DM, EXT, control state, counts, the first non-finite line) must be what it gets alone, bit for bit: on
generated programs that fault, stop at the step budget and produce NaNs, on every compiler and expert kernel,
on mixed batches (a program left to run alone, duplicates, a batch of one), across several calls, and through
the batch scorer (its rewards are the env's ``submit`` rewards).
"""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.evaluation import Evaluator
from kcgym.scoring import BatchScorer
from kcgym.sims.vliw import machine as M
from kcgym.sims.vliw import trace
from kcgym.sims.vliw.accelerator import ACCELERATOR
from kcgym.tasks import TASKS
from tests.envs.conftest import call
from tests.sims.trace_contract import assert_same_results
from tests.sims.vliw.test_trace_differential import (
    EXT_ELEMENTS,
    HW,
    VLIW_TASKS,
    _ext,
    assert_same_state,
    generated_program,
)

HW_JSON = HW.model_dump_json()
HALT = M.Machine(HW).halt_row


@pytest.fixture(autouse=True)
def _trace_path(monkeypatch):
    """The trace path for every program run alone here (the oracle only where a test asks for it)."""
    monkeypatch.setenv(trace.SIM_ENV, "trace")


@pytest.fixture
def merged(monkeypatch) -> list[int]:
    """Counts the programs each merged call takes (so a test can say its programs did merge)."""
    calls: list[int] = []
    real = trace._run_merged

    def run_merged(hw_json, part, *args):
        calls.append(len(part))
        return real(hw_json, part, *args)

    monkeypatch.setattr(trace, "_run_merged", run_merged)
    return calls


def _words(source: str) -> np.ndarray:
    return ACCELERATOR.assemble(source, HW).padded(HW.imem_bundles + 1, HALT)


def _check(words: list[np.ndarray], ext: np.ndarray, max_steps: int, oracle: bool = True) -> list:
    """``run_many`` of ``words`` against ``run`` of each (and the oracle): the same whole State; ``whole=False``
    the same in every field a result reads."""
    args = (np.int32(EXT_ELEMENTS), np.int32(max_steps))
    many = trace.run_many(HW_JSON, words, ext, *args)
    part = trace.run_many(HW_JSON, words, ext, *args, whole=False)
    interp = M.batched_runner(HW_JSON)[1]
    for w, st, st_part in zip(words, many, part, strict=True):
        if st is None:  # left to run alone: so in both
            assert st_part is None
            continue
        alone = trace.run(HW_JSON, w, ext, *args)
        assert alone is not None
        assert_same_state(st, alone)
        if oracle:
            assert_same_state(st, interp(w, ext, *args))
        for field in ("ctl", "counts", "busy", "nan_pc"):
            np.testing.assert_array_equal(getattr(st_part, field), getattr(st, field), err_msg=field)
        np.testing.assert_array_equal(st_part.ext[:, :EXT_ELEMENTS].view(np.uint32),
                                      st.ext[:, :EXT_ELEMENTS].view(np.uint32))
    return many


@pytest.mark.parametrize("max_steps", [25, 100_000])
def test_generated_programs_merged_equal_alone(merged, max_steps):
    """Twelve generated programs (faults, NaNs, overflows; at 25 steps some stop at the budget) in one call."""
    words = [_words(generated_program(seed)) for seed in range(12)]
    many = _check(words, _ext(3), max_steps)
    assert sum(merged) == 2 * sum(st is not None for st in many) >= 20  # (``_check`` runs them twice)
    ctl = np.array([np.asarray(st.ctl)[0] for st in many if st is not None])
    if max_steps == 25:
        assert np.sum(ctl[:, M.HALTED] == 0) >= 3  # stopped by the budget
    else:
        assert len(set(ctl[:, M.FAULT].tolist())) >= 2  # clean runs and faults
        assert any(int(np.asarray(st.nan_pc)[1]) >= 0 for st in many if st is not None)  # per-program NaN lines


def test_calls_split_by_programs_and_rows(merged, monkeypatch):
    """More programs than MERGE_PROGRAMS, and than MERGE_ROWS holds, take several calls; results stay in order."""
    words = [_words(generated_program(seed, 30)) for seed in range(20, 30)]
    monkeypatch.setattr(trace, "MERGE_PROGRAMS", 4)
    _check(words, _ext(4), 100_000, oracle=False)
    assert max(merged) <= 4 and len(merged) >= 3
    merged.clear()
    monkeypatch.setattr(trace, "MERGE_PROGRAMS", 32)
    monkeypatch.setattr(trace, "MERGE_ROWS", 40)
    _check(words, _ext(4), 100_000, oracle=False)
    assert len(merged) >= 3


def test_programs_that_run_alone_and_a_batch_of_one(merged):
    """Not merged: a program of more than MERGE_MAX_BUNDLES bundles (its LOOPI count), a VMMUL on non-bf16 EXT;
    a batch of one merges alone."""
    n = int(np.sqrt(trace.MERGE_MAX_BUNDLES)) + 1
    long = f"LOOPI {n}, outer\nLOOPI {n}, inner\nVBCST x1, 2.0\nNOP\ninner:\nNOP\nouter:\nVST x1, p0, 0\n"
    vmmul = ("DMAI p0, r0, r0, 1, 128\n" + "NOP\n" * 60 + "PMOVI p1, 64\nVLD x0, p0, 0 || VLD x1, p1, 0\n"
             + "NOP\n" * 6 + "VMMUL c0, x0, x1, 0\n")
    ext = _ext(5)
    ext[:, :64] = np.random.default_rng(0).standard_normal((2, 64)).astype(np.float32)
    words = [_words(long), _words(vmmul), _words(generated_program(40))]
    many = trace.run_many(HW_JSON, words, ext, np.int32(EXT_ELEMENTS), np.int32(1000))
    assert many[0] is None and many[1] is None and many[2] is not None and merged == [1]
    batch = trace.run_batch(HW_JSON, words, ext, np.int32(EXT_ELEMENTS), np.int32(1000))  # the rest alone
    interp = M.batched_runner(HW_JSON)[1]
    for w, st in zip(words, batch, strict=True):
        assert_same_state(st, interp(w, ext, np.int32(EXT_ELEMENTS), np.int32(1000)))
    _check(words[2:], ext, 1000)


def _kernel_programs(name: str, index: int) -> tuple:
    task = TASKS[name]
    cfg = task.config("VLIW", index)
    sources = [s for s in (ACCELERATOR.compile(task, cfg, HW), ACCELERATOR.expert(task, cfg, HW)) if s is not None]
    programs = [ACCELERATOR.assemble(s, HW) for s in sources]
    return task, cfg, programs


def _check_kernels(monkeypatch, merged, name: str, index: int, oracle: bool) -> None:
    """The task's compiler and expert kernels, each twice, through ``run_many``: every RunResult as ``run``'s
    (and the oracle's, where asked). Those that merge did (MERGE_MAX_BUNDLES bounds which)."""
    task, cfg, programs = _kernel_programs(name, index)
    programs = [*programs, *programs]
    inputs = Evaluator(ACCELERATOR, task, cfg, HW).input_sets(0, 2)
    many = ACCELERATOR.run_many(programs, task, cfg, HW, inputs, 10_000_000)
    for program, results in zip(programs, many, strict=True):
        assert_same_results(results, ACCELERATOR.run(program, task, cfg, HW, inputs, 10_000_000))
        assert results[0].fault is None
    if oracle:
        monkeypatch.setenv(trace.SIM_ENV, "oracle")
        for program, results in zip(programs, many, strict=True):
            assert_same_results(results, ACCELERATOR.run(program, task, cfg, HW, inputs, 10_000_000))
    assert sum(merged) == sum(_merges(p, task, cfg, inputs) for p in programs)


def _merges(program, task, cfg, inputs) -> bool:
    """Whether ``program`` should merge, from its plan alone (``traced``): a short trace in a compact state."""
    words = program.padded(HW.imem_bundles + 1, HALT)
    ext, limit = ACCELERATOR._image(task, cfg, ACCELERATOR.layout(task, cfg, HW), inputs)
    count = trace.static_count(words)
    if count is not None and count > trace.MERGE_MAX_BUNDLES:
        return False
    tr, pl, _ = trace.traced(words, HW_JSON, limit, 10_000_000, ext.shape[1])
    H = ext.shape[1]
    return pl is not None and not tr.rolls and pl.rows < trace.layout_of(HW, H).dump + 1 and pl.ext < H and \
        pl.ext <= trace.MERGE_EXT and len(pl.op_seq) <= trace.MERGE_MAX_OPS


@pytest.mark.parametrize("name", VLIW_TASKS)
def test_kernels_c1(monkeypatch, merged, name):
    _check_kernels(monkeypatch, merged, name, 1, oracle=True)


@pytest.mark.slow
@pytest.mark.parametrize("name,index", [(n, i) for i in (2, 3) for n in VLIW_TASKS])
def test_kernels_c2_c3(monkeypatch, merged, name, index):
    _check_kernels(monkeypatch, merged, name, index, oracle=False)


def test_mixed_kernels_through_the_accelerator(merged):
    """One batch of kernels of different lengths on one task's inputs: the compiler and expert matmul, a copy
    that stops at a fault after its data operations, one that stops at the step budget, one whose output is
    non-finite, a spin (a branch: its pre-pass stops at the budget), one left to run alone (more than
    MERGE_MAX_BUNDLES bundles), duplicates: each RunResult as ``run`` gives it."""
    task, cfg, (compiled, expert) = _kernel_programs("matmul", 1)
    src = ACCELERATOR.compile(task, cfg, HW)
    fault = src.replace("HALT", f"PMOVI p7, {HW.dm_bytes - 32}\nVLD x0, p7, 0\nHALT") if "HALT" in src else \
        src + f"PMOVI p7, {HW.dm_bytes - 32}\nVLD x0, p7, 0\n"
    nonfinite = "VBCST x1, 0.0\nNOP\nVINV x2, x1\n" + "NOP\n" * 8 + "VST x2, p0, 0\nDMAO p0, r0, r0, 1, 64\n" + src
    spin = "MOVI r1, 1\nspin:\nBNEZ r1, spin\n"
    n = int(np.sqrt(trace.MERGE_MAX_BUNDLES)) + 1
    long = f"LOOPI {n}, outer\nLOOPI {n}, inner\nVBCST x1, 2.0\nNOP\ninner:\nNOP\nouter:\n" + src
    extra = [ACCELERATOR.assemble(s, HW) for s in (fault, nonfinite, spin, long)]
    programs = [compiled, expert, *extra, compiled, expert]
    inputs = Evaluator(ACCELERATOR, task, cfg, HW).input_sets(0, 2)
    for max_steps in (600, 1_000_000):  # the first stops the compiler's kernel (615 bundles) at the budget
        merged.clear()
        many = ACCELERATOR.run_many(programs, task, cfg, HW, inputs, max_steps)
        for program, results in zip(programs, many, strict=True):
            assert_same_results(results, ACCELERATOR.run(program, task, cfg, HW, inputs, max_steps))
        assert sum(merged) == len(programs) - 1  # (the long one runs alone)
        names = [None if r[0].fault is None else r[0].fault.name for r in many]
        assert names[4] == "STEP_BUDGET" and (names[0] == names[5] == "STEP_BUDGET") == (max_steps == 600)
    assert names == [None, None, "OOB_DM", None, "STEP_BUDGET", None, None, None]
    assert many[3][0].first_nonfinite_line == 3 and many[0][0].first_nonfinite_line is None


ENV = "KernelCraft-VLIW-matmul"


def test_batch_scorer_rewards_equal_the_env_submit_reward(merged):
    """Batch scores of VLIW kernels (through merged calls) are the rewards ``submit`` pays for each alone."""
    scorer = BatchScorer(ENV, 1, max_workers=1)
    env = scorer.env
    src = env.accelerator.compile(env.task, env.cfg, env.hw)
    wrong = src[:src.index("DMAO")] + "\n"  # (stops before its first DMA out: its outputs stay NaN)
    kernels = [src, env.accelerator.expert(env.task, env.cfg, env.hw), wrong, "BAD_OP x1\n",
               *(f"MOVI r9, {i}\n{src}" for i in range(6)), src]
    records = scorer.score(kernels, seed=3)
    assert sum(merged) >= 6
    other = BatchScorer(ENV, 1, max_workers=1).env
    for kernel, rec in zip(kernels, records, strict=True):
        other.reset(seed=3)
        call(other, "write_kernel", source=kernel)
        _, reward, terminated, _, info = call(other, "submit")
        assert terminated
        assert rec.reward == pytest.approx(reward, abs=0, rel=0), kernel
        assert rec.correct == info["episode"]["correct"]
        assert rec.cycles == info["episode"].get("cycles")
        assert rec.error_class == info["episode"]["error_class"]
    assert records[0].correct and not records[2].correct and not records[3].assembled


def test_float_division_is_integer_division():
    """``trace._divmod`` (a proven window's DMAs divide in float32) against integer division: every dividend
    below 2**16 by small divisors, random ones up to ``_DIV_EXACT`` by any positive int32, and the worst cases
    (quotients just below an integer, the largest dividends)."""
    import jax.numpy as jnp

    rng = np.random.default_rng(0)
    top = trace._DIV_EXACT
    a = np.concatenate([np.repeat(np.arange(1 << 16), 3), rng.integers(0, top, 300_000), top - 1 - np.arange(1000),
                        (rng.integers(1, 4096, 2000) * rng.integers(1, 4096, 2000)) % top]).astype(np.int32)
    d = np.concatenate([np.tile([1, 3, 7], 1 << 16), rng.integers(1, 1 << 31, 100_000), rng.integers(1, 64, 100_000),
                        rng.integers(1, top, 100_000), np.full(1000, 3), rng.integers(1, 4096, 2000)]).astype(np.int32)
    near = a[-2000:] // np.maximum(d[-2000:], 1) * d[-2000:] - 1  # one below a multiple of d
    a[-2000:] = np.clip(near, 0, top - 1)
    q, r = (np.asarray(x) for x in trace._divmod(jnp.asarray(a), jnp.asarray(d)))
    np.testing.assert_array_equal(q, a // d)
    np.testing.assert_array_equal(r, a % d)


@pytest.mark.parametrize("wide", [True, False])
def test_merged_calls_in_wide_groups(merged, monkeypatch, wide):
    """Merged calls in WIDE_WIDTH groups throughout (``WIDE_BELOW`` infinite) or never: each program's State as
    alone and as the oracle's."""
    monkeypatch.setattr(trace, "WIDE", (trace.WIDE[0], float("inf") if wide else 0.0))
    widths = []
    real = trace.pack_groups
    monkeypatch.setattr(trace, "pack_groups", lambda g, part: widths.append(g.fields.shape[1]) or real(g, part))
    words = [_words(generated_program(seed)) for seed in range(12)]
    many = _check(words, _ext(3), 100_000)
    assert sum(merged) >= 20 and sum(st is not None for st in many) >= 10
    assert set(widths) == {trace.WIDE_WIDTH if wide else trace.GROUP_WIDTH}


def test_a_partial_batch_runs_programs_alone_to_the_limit(merged):
    """``run_batch(whole=False)``: a program that runs alone (``trace.run``) returns EXT up to the limit only (not
    a copy of the whole image), and every field a result reads as the whole run's."""
    n = int(np.sqrt(trace.MERGE_MAX_BUNDLES)) + 1
    long = (f"MOVI r1, 64\nDMAI p0, r0, r0, 1, 64\nLOOPI {n}, outer\nLOOPI {n}, inner\nVBCST x1, 2.0\nNOP\n"
            f"inner:\nNOP\nouter:\nVLD x2, p0, 0\nNOP\nNOP\nNOP\nVADD x1, x1, x2\nNOP\nNOP\nVST x1, p0, 0\n"
            "DMAO p0, r1, r0, 1, 64\n")
    words = [_words(long), _words(generated_program(41))]
    ext = _ext(6)
    args = (ext, np.int32(EXT_ELEMENTS), np.int32(100_000))
    part, whole = (trace.run_batch(HW_JSON, words, *args, whole=w) for w in (False, True))
    assert merged == [1, 1]  # (the generated one merged, alone; the long one ran alone)
    assert part[0].ext.shape[1] < ext.shape[1] == whole[0].ext.shape[1]
    for a, b in zip(part, whole, strict=True):
        for field in ("ctl", "counts", "busy", "nan_pc"):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)
        np.testing.assert_array_equal(a.ext[:, :EXT_ELEMENTS].view(np.uint32), b.ext[:, :EXT_ELEMENTS].view(np.uint32))
    assert_same_state(whole[0], M.batched_runner(HW_JSON)[1](words[0], *args))
