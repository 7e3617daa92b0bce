"""No cycle counter can overflow: past ``kcgym.limits.CYCLE_LIMIT`` a run faults CYCLE_LIMIT, on every machine.

The clock's counters are int32 on both paths (interpreter and trace pre-pass). Past the limit a step faults at the
point its machine's guide states (kcgym/limits.py lists them), identically on both paths (same fault, pc, line,
message, steps and cycles); a run just below it completes with the exact count. The limit is reached in few
steps with hw overrides (a large branch penalty or latency). The headroom test computes each machine's largest
one-step increment from its hw bounds and checks that nothing computed before the check can pass int32.
"""

from __future__ import annotations

import numpy as np

from kcgym.evaluation import Evaluator
from kcgym.limits import CYCLE_LIMIT, MAX_HW_CYCLES
from kcgym.registry import ACCELERATORS, task_for
from tests.sims.trace_contract import assert_same_results

INT32_MAX = (1 << 31) - 1


TASK = {"VLIW": "relu", "NPU": "matmul", "RVV": "relu", "CPU": "vvadd"}  # (NPU: an HBM image of a whole tile)


def _run(monkeypatch, machine: str, src: str, hw_overrides: dict, mode: str, max_steps: int = 10_000_000):
    acc = ACCELERATORS[machine]
    hw = acc.make_hw(hw_overrides)
    task = task_for(machine, TASK[machine])
    cfg = task.config(machine, 1)
    program = acc.assemble(src, hw)
    inputs = Evaluator(acc, task, cfg, hw).input_sets(0, 1)
    monkeypatch.setenv("KCGYM_SIM", mode)
    return acc.run(program, task, cfg, hw, inputs, max_steps)


def _both(monkeypatch, machine: str, src: str, hw_overrides: dict, modes=("trace", "oracle")):
    """The result on the trace path and on the interpreter (asserted equal), then the interpreter's."""
    new, old = (_run(monkeypatch, machine, src, hw_overrides, mode) for mode in modes)
    assert_same_results(new, old)
    return old[0]


# ---- VLIW ------------------------------------------------------------------------------------------------
VLIW_HW = {"branch_penalty": MAX_HW_CYCLES}
VLIW_PERIOD = 1 + MAX_HW_CYCLES  # one taken branch of the spin below


def _vliw_spin(n: int, tail: str = "") -> str:
    """``n`` taken branches of ``VLIW_PERIOD`` cycles each, then one not taken (BNEZ reads r1 before the bundle
    decrements it)."""
    return f"MOVI r1, {n}\nNOP\nNOP\nspin:\n{{ ADDI r1, r1, -1 ; BNEZ r1, spin }}\n{tail}HALT\n"


def test_vliw_spin_past_the_limit_faults_on_both_paths(monkeypatch):
    r = _both(monkeypatch, "VLIW", _vliw_spin(CYCLE_LIMIT // VLIW_PERIOD + 10), VLIW_HW)
    assert r.fault is not None and r.fault.name == "CYCLE_LIMIT", r.fault
    assert r.fault.source is not None and "BNEZ" in r.fault.source
    assert f"{CYCLE_LIMIT:,}" in r.fault.message
    assert CYCLE_LIMIT - VLIW_PERIOD < r.cycles <= CYCLE_LIMIT + VLIW_PERIOD


def test_vliw_just_below_the_limit_completes_with_the_exact_count(monkeypatch):
    """The HALT bundle issues at the clock before it (``cycles - 1`` here): it runs up to ``CYCLE_LIMIT + 1``."""
    small = _run(monkeypatch, "VLIW", _vliw_spin(100), VLIW_HW, "trace")[0]
    n = 100 + (CYCLE_LIMIT + 1 - small.cycles) // VLIW_PERIOD  # the most iterations that still finish
    r = _both(monkeypatch, "VLIW", _vliw_spin(n), VLIW_HW)
    assert r.fault is None
    assert r.cycles == small.cycles + (n - 100) * VLIW_PERIOD <= CYCLE_LIMIT + 1
    over = _run(monkeypatch, "VLIW", _vliw_spin(n + 1), VLIW_HW, "trace")[0]
    assert over.fault is not None and over.fault.name == "CYCLE_LIMIT"  # one more iteration: past the limit


def test_vliw_bundle_after_a_dma_that_completes_past_the_limit_faults(monkeypatch):
    """The spin ends below the limit; the DMA after it completes past it (16 KB at 1 byte/cycle), so the next
    bundle (the HALT) faults: the clock counts DMA completions."""
    hw = {**VLIW_HW, "dma_bytes_per_cycle": 1}
    small = _run(monkeypatch, "VLIW", _vliw_spin(100), hw, "trace")[0]
    n = 100 + (CYCLE_LIMIT - small.cycles) // VLIW_PERIOD - 2
    r = _both(monkeypatch, "VLIW", _vliw_spin(n, "PMOVI p0, 0\nNOP\nDMAI p0, r0, r0, 256, 64\n"), hw)
    assert r.fault is not None and r.fault.name == "CYCLE_LIMIT" and "HALT" in r.fault.source, r.fault
    assert CYCLE_LIMIT < r.cycles <= CYCLE_LIMIT + 16384 + MAX_HW_CYCLES


def test_vliw_rolled_loop_stops_before_the_limit(monkeypatch):
    """A steady hardware loop (rolled on the trace path) whose chain of 4096-cycle multiplies passes the limit:
    the roll stops before it, the stepped tail faults at the interpreter's bundle and step."""
    from kcgym.sims.vliw import trace

    src = "LOOPI 2000, outer\nLOOPI 1000, inner\nVMUL x1, x0, x0\nVMUL x2, x1, x1\ninner:\nNOP\nouter:\nHALT\n"
    r = _both(monkeypatch, "VLIW", src, {"mul_latency": MAX_HW_CYCLES})
    assert r.fault is not None and r.fault.name == "CYCLE_LIMIT" and "VMUL" in r.fault.source, r.fault
    acc = ACCELERATORS["VLIW"]
    hw = acc.make_hw({"mul_latency": MAX_HW_CYCLES})
    words = acc.assemble(src, hw).padded(hw.imem_bundles + 1, trace.M.Machine(hw).halt_row)
    rolled_tr = trace.prepass(words, hw, 4096, 10_000_000, 4096, roll=True)
    assert rolled_tr.rolls, "the loop did not roll: this test no longer covers the roll's cap"
    stepped = trace.prepass(words, hw, 4096, 10_000_000, 4096, roll=False)
    np.testing.assert_array_equal(rolled_tr.ctl, stepped.ctl)


# ---- NPU -------------------------------------------------------------------------------------------------
NPU_HW = {"hbm_latency": MAX_HW_CYCLES, "hbm_bytes_per_cycle": 1}
NPU_PERIOD = 2 * (MAX_HW_CYCLES + 2 * 64 * 64)  # two chained tile DMAs (8 KB at 1 byte/cycle + the latency)


def _npu_chain(n: int) -> str:
    """``n`` iterations of two tile prefetches into the same MSRAM tile: each waits for the one before."""
    return (f"C_SET_ADDR_REG a1, gp0, gp0\nC_LOOP_START gp15, {n}\nH_PREFETCH_M gp0, gp0, a1, 0\n"
            "H_PREFETCH_M gp0, gp0, a1, 0\nC_LOOP_END gp15\nC_HALT\n")


def test_npu_dma_chain_past_the_limit_faults_on_both_paths(monkeypatch):
    r = _both(monkeypatch, "NPU", _npu_chain(CYCLE_LIMIT // NPU_PERIOD + 10), NPU_HW)
    assert r.fault is not None and r.fault.name == "CYCLE_LIMIT" and "H_PREFETCH_M" in r.fault.source, r.fault
    assert f"{CYCLE_LIMIT:,}" in r.fault.message
    assert CYCLE_LIMIT < r.cycles <= CYCLE_LIMIT + NPU_PERIOD  # (an NPU fault's own time counts)


def test_npu_just_below_the_limit_completes_with_the_exact_count(monkeypatch):
    small = _run(monkeypatch, "NPU", _npu_chain(100), NPU_HW, "trace")[0]
    n = 100 + (CYCLE_LIMIT - small.cycles) // NPU_PERIOD
    r = _both(monkeypatch, "NPU", _npu_chain(n), NPU_HW)
    assert r.fault is None
    assert r.cycles == small.cycles + (n - 100) * NPU_PERIOD <= CYCLE_LIMIT
    over = _run(monkeypatch, "NPU", _npu_chain(n + 1), NPU_HW, "trace")[0]
    assert over.fault is not None and over.fault.name == "CYCLE_LIMIT"


# ---- RVV -------------------------------------------------------------------------------------------------
RVV_HW = {"vdiv_cycles_per_chunk": MAX_HW_CYCLES}


def _rvv_divides(n: int) -> str:
    """``n`` iterations of 8 dependent LMUL=8 vector divides (8 chunks x 4096 cycles each)."""
    return (f"    li t0, {n}\n    vsetvli t1, x0, e32, m8, ta, ma\nloop:\n" + "    vdiv.vv v8, v8, v16\n" * 8
            + "    addi t0, t0, -1\n    bnez t0, loop\n    ret\n")


def _rvv_base(monkeypatch) -> tuple[int, int, int]:
    """``(n0, cycles of n0 iterations, cycles per iteration)``, measured; n0 > 2047: its ``li`` is lui + addi, as for
    every count near the limit."""
    n0 = 3000
    c0 = _run(monkeypatch, "RVV", _rvv_divides(n0), RVV_HW, "trace")[0].cycles
    return n0, c0, _run(monkeypatch, "RVV", _rvv_divides(n0 + 1), RVV_HW, "trace")[0].cycles - c0


def test_rvv_vector_divides_past_the_limit_fault_on_both_paths(monkeypatch):
    n0, c0, period = _rvv_base(monkeypatch)
    r = _both(monkeypatch, "RVV", _rvv_divides(n0 + (CYCLE_LIMIT - c0) // period + 10), RVV_HW)
    assert r.fault is not None and r.fault.name == "CYCLE_LIMIT" and "vdiv" in r.fault.source, r.fault
    assert f"{CYCLE_LIMIT:,}" in r.fault.message
    assert CYCLE_LIMIT < r.cycles <= CYCLE_LIMIT + period  # (the clock the check saw: past the limit)


def test_rvv_just_below_the_limit_completes_with_the_exact_count(monkeypatch):
    n0, c0, period = _rvv_base(monkeypatch)
    n = n0 + (CYCLE_LIMIT - c0) // period
    r = _both(monkeypatch, "RVV", _rvv_divides(n), RVV_HW)
    assert r.fault is None
    assert r.cycles == c0 + (n - n0) * period <= CYCLE_LIMIT
    over = _both(monkeypatch, "RVV", _rvv_divides(n + 1), RVV_HW)
    assert over.fault is not None and over.fault.name == "CYCLE_LIMIT"


# ---- CPU (no trace path): the clock before an instruction, preset at the limit ---------------------------------
def test_cpu_instruction_after_the_limit_faults_and_at_the_limit_runs(monkeypatch):
    from kcgym.sims.cpu import machine as CM

    init = CM.Machine.init_state

    def at(clock: int):
        def init_state(self, *args, **kwargs):
            st = init(self, *args, **kwargs)
            return st._replace(ctl=st.ctl.at[CM.T_END].set(clock))
        return init_state

    src = "    li t0, 3\n    addi t0, t0, 1\n    ret\n"
    results = {}
    for clock in (CYCLE_LIMIT, CYCLE_LIMIT + 1):
        CM.runner.cache_clear()  # (the runner traces init_state when it compiles)
        monkeypatch.setattr(CM.Machine, "init_state", at(clock))
        results[clock] = _run(monkeypatch, "CPU", src, {}, "oracle")[0]
    CM.runner.cache_clear()
    assert results[CYCLE_LIMIT].fault is None and results[CYCLE_LIMIT].instructions == 3
    late = results[CYCLE_LIMIT + 1]
    assert late.fault is not None and late.fault.name == "CYCLE_LIMIT" and "li" in late.fault.source, late.fault
    assert late.instructions == 0 and f"{CYCLE_LIMIT + 1:,}" in late.fault.message


# ---- headroom: nothing computed before the check passes int32 ------------------------------------------------
def _bound(machine: str, field: str) -> int:
    return int(ACCELERATORS[machine].hw_model.model_fields[field].json_schema_extra["maximum"])


def _largest_increments() -> dict[str, int]:
    """Per machine, the most one step can move any clock value past the clock its check reads (from the hw
    bounds): a few latencies (each <= MAX_HW_CYCLES) and the longest transfer. No transfer moves more bytes than
    the machine state holds (MAX_MACHINE_STATE_BYTES), at >= 1 byte per cycle."""
    from kcgym.limits import MAX_MACHINE_STATE_BYTES
    from kcgym.sims.cpu.config import MAX_LATENCY
    from kcgym.sims.rvv.machine import LANES
    from kcgym.sims.vliw.config import MAX_DM_BYTES

    return {
        # the previous bundle's issue + 1 + branch penalty, 3 bank conflicts, a latency, the DMA latency and a
        # DMA of up to dma_max_bytes <= dm_bytes <= MAX_DM_BYTES at 1 byte per cycle
        "VLIW": 1 + _bound("VLIW", "branch_penalty") + 3 + MAX_HW_CYCLES + _bound("VLIW", "dma_latency") + MAX_DM_BYTES,
        # issue + 1, the HBM latency and a DMA of at most one memory's bf16 elements (held as 4-byte words)
        "NPU": 1 + _bound("NPU", "hbm_latency") + MAX_HW_CYCLES + MAX_MACHINE_STATE_BYTES // 2,
        # register ready times run at most a latency ahead of T_END; a vector op of up to 8 x 2 chunks (widening
        # LMUL 8) at a per-chunk occupancy, its latency, the external latency and a 128-lane strided transfer
        "RVV": 4 * MAX_HW_CYCLES + 16 * MAX_HW_CYCLES + _bound("RVV", "ext_latency") + 4 * LANES,
        # the pipeline's stage times: front end, issue, a divide / miss latency and the commit, each <= MAX_LATENCY
        "CPU": 16 * MAX_LATENCY,
    }


def test_every_machines_clock_stays_in_int32():
    """A step starts from clocks <= CYCLE_LIMIT (the check stopped the run otherwise) and adds at most its largest
    increment before the check: that sum must fit int32. 2**30 leaves 2**30 for it; the largest is far below."""
    increments = _largest_increments()
    assert set(increments) == set(ACCELERATORS)
    for machine, inc in increments.items():
        assert CYCLE_LIMIT + inc <= INT32_MAX, machine
        assert inc < CYCLE_LIMIT // 8, machine  # (so the margin is not a near thing)


def _submit(machine: str, src: str, hw_overrides: dict):
    """Write ``src`` and submit it in a real episode (a step budget large enough for the spin)."""
    import gymnasium as gym

    import kcgym  # noqa: F401  (registers the envs)

    env = gym.make(f"KernelCraft-{machine}-relu", config=1, hw=hw_overrides, docs_in_prompt=False,
                   step_budget=100_000.0)
    env.reset(seed=0)
    env.step({"name": "write_kernel", "arguments": {"source": src}})
    return env.step({"name": "submit", "arguments": {}})


def test_vliw_fault_through_the_env_is_an_ordinary_fault_result():
    obs, reward, term, _, info = _submit("VLIW", _vliw_spin(CYCLE_LIMIT // VLIW_PERIOD + 10), VLIW_HW)
    assert term and reward == 0.0 and "CYCLE_LIMIT" in str(obs), (reward, obs)


def test_rvv_fault_through_the_env_is_an_ordinary_fault_result():
    obs, reward, term, _, _ = _submit("RVV", _rvv_divides(5000), RVV_HW)
    assert term and reward == 0.0 and "CYCLE_LIMIT" in str(obs), (reward, obs)


def test_batch_scorer_scores_the_fault_zero_not_an_internal_error():
    from kcgym.scoring import BatchScorer

    scorer = BatchScorer("KernelCraft-VLIW-relu", 1, hw=VLIW_HW, step_budget=100_000.0)
    (score,) = scorer.score([_vliw_spin(CYCLE_LIMIT // VLIW_PERIOD + 10)])
    assert score.reward == 0.0 and not score.correct and score.error_class == "functional", score
    assert score.error is not None and "CYCLE_LIMIT" in score.error


def test_every_guide_states_the_limit_from_the_constant():
    for machine, acc in ACCELERATORS.items():
        text = "\n".join(section.text for section in acc.docs(acc.make_hw({})))
        assert "CYCLE_LIMIT" in text and f"{CYCLE_LIMIT:,}" in text and "{{cycle_limit}}" not in text, machine
