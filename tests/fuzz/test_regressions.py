"""Issue 14's examples, end to end: each returns an error result, fast, on every path and machine.

Assembly-level bounds are in tests/isa/test_limits.py; this file drives the same strings through
``env.step``, ``BatchScorer``, the adapters and the CLI, and injects kcgym bugs to check that every
path turns them into the documented ``internal_error`` result instead of raising.
"""

from __future__ import annotations

import gc
import json
import math
import time

import pytest

from kcgym.envs.kernel_env import KernelCraftEnv
from kcgym.limits import STEP_BUDGET_MULTIPLE
from kcgym.scoring import BatchScorer, extract_kernel
from tests.envs.fake_accelerator import COPY_TASK, FAKE
from tests.isa.hostile import HUGE, SYNTAX, hostile_sources

MACHINES = ("NPU", "VLIW", "RVV")
CPU_SECONDS = 1.0  # per hostile kernel through submit, baseline already computed
SPIN = {"VLIW": "spin:\nJ spin\n", "RVV": "1:\nj 1b\n",
        "NPU": "C_LOOP_START gp1, 65535\nC_LOOP_START gp2, 65535\nC_NOP\nC_LOOP_END gp2\nC_LOOP_END gp1\n"}
_ENVS: dict[str, KernelCraftEnv] = {}


def env_for(machine: str, **kwargs) -> KernelCraftEnv:
    key = f"{machine}{sorted(kwargs.items())}"
    if key not in _ENVS:
        _ENVS[key] = KernelCraftEnv(machine, "relu", 1, docs_in_prompt=False, **kwargs)
        _ENVS[key].evaluator.baseline()
    return _ENVS[key]


def json_ok(value) -> str:
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    text.encode("utf-8")
    return text


def submit(env: KernelCraftEnv, source: str):
    env.reset(seed=0)
    env.step({"name": "write_kernel", "arguments": {"source": source}})
    return env.step({"name": "submit", "arguments": {}})


@pytest.mark.parametrize("machine", MACHINES)
def test_hostile_kernels_submit_to_a_syntax_error_fast(machine):
    env = env_for(machine)
    for name, source in hostile_sources(machine).items():
        gc.collect()  # earlier tests' garbage must not set off a full collection in the window (tests/isa/test_limits)
        t0 = time.process_time()
        obs, reward, terminated, _, info = submit(env, source)
        assert time.process_time() - t0 < CPU_SECONDS, name
        assert terminated and reward == 0.0, name
        assert info["episode"]["error_class"] == "syntax", (name, info["episode"])
        assert "error[" in obs
        json_ok(info)


@pytest.mark.parametrize("machine", MACHINES)
def test_hostile_kernels_score_zero_in_a_batch(machine):
    scorer = BatchScorer(env_for(machine), max_workers=2)
    sources = list(hostile_sources(machine).values())
    records = scorer.score(sources)
    assert [r.error_class for r in records] == ["syntax"] * len(sources)
    for r in records:
        json.loads(r.model_dump_json())


@pytest.mark.parametrize("machine", MACHINES)
def test_lone_surrogates_leave_as_valid_utf8(machine):
    env = env_for(machine)
    source = SYNTAX[machine]["nop"] + " \ud800\n\udfff bogus"
    obs, _, _, _, info = submit(env, source)
    json_ok(info)
    assert obs.isascii()
    (rec,) = BatchScorer(env).score([source])
    assert rec.error_class == "syntax" and "\ufffd" in rec.error
    rec.model_dump_json()
    (from_completion,) = BatchScorer(env).score_completions(["```\n" + source + "\n```\n"])
    from_completion.model_dump_json()


def test_surrogates_and_huge_ints_in_transcripts():
    from kcgym.integrations.trajectories import TrajectoryRecorder

    rec = TrajectoryRecorder(KernelCraftEnv(FAKE, COPY_TASK, docs_in_prompt=False))
    rec.reset(seed=0)
    rec.step({"name": "write_kernel", "arguments": {"source": "COPY \ud800"}})
    rec.step({"name": "view_output", "arguments": {"rows": 10**5000}})
    rec.step('{"name": "view_output", "arguments": {"rows": ' + HUGE + "}}")
    json_ok(rec.transcript())


@pytest.mark.parametrize("action", [
    '{"name": "view_output", "arguments": {"rows": ' + HUGE + "}}",
    '{"name": "view_output", "arguments": "{\\"rows\\": ' + HUGE + '}"}',
    {"name": "view_output", "arguments": {"rows": 10**5000}},
    {"name": "view_output", "arguments": {"rows": -(10**5000)}},
    {"name": 10**5000, "arguments": {}},
    {"name": "view_output", "arguments": {10**5000: 1}},
    {"name": "x" * 200_000, "arguments": {}},
    HUGE,
])
def test_huge_integers_in_actions_are_ordinary_bad_calls(action):
    env = KernelCraftEnv(FAKE, COPY_TASK, docs_in_prompt=False)
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(action)
    assert obs.startswith("Error") and "invalid tool call" in obs and reward == 0.0
    assert not terminated and info["error"]
    json_ok(info)


def test_extract_kernel_is_linear():
    gc.collect()  # as in test_limits: a full collection of earlier tests' objects must not land in the window
    t0 = time.thread_time()
    assert extract_kernel("```x\n" * 16000) is None
    assert extract_kernel("```\n" * 16001) == ""
    assert extract_kernel("```\n" + "a\n" * 500_000 + "```\n") == "a\n" * 500_000
    assert extract_kernel("x" * 5_000_000 + "\n```\nK\n```\n") == "K\n"  # only the tail is scanned
    assert time.thread_time() - t0 < 1.0


# -- the simulation budget ------------------------------------------------------------------
@pytest.mark.parametrize("machine", MACHINES)
def test_a_spinning_kernel_stops_at_the_documented_budget(machine):
    env = env_for(machine)
    ev = env.evaluator
    base = ev.baseline()
    rep = ev.evaluate(SPIN[machine], ev.input_sets(0, 1))
    assert rep.fault is not None and rep.fault.name == "STEP_BUDGET"
    assert rep.instructions == ev.max_steps(base) == max(64, math.ceil(STEP_BUDGET_MULTIPLE * base.instructions)) + 1


@pytest.mark.parametrize("machine", MACHINES)
def test_a_kernel_within_the_multiple_never_faults(machine):
    env = env_for(machine, step_budget=1.0)  # exactly the compiler's steps: the compiler itself passes
    ev = env.evaluator
    rep = ev.evaluate(ev.baseline().source, ev.input_sets(0, 3))
    assert rep.correct and rep.fault is None


def test_the_budget_is_configurable_on_env_and_scorer():
    env = KernelCraftEnv(FAKE, COPY_TASK, docs_in_prompt=False, step_budget=100.0)
    assert env.step_budget == 100.0
    scorer = BatchScorer("KernelCraft-RVV-relu", step_budget=7.5)
    assert scorer.env.step_budget == 7.5
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="step-budget multiple"):
            KernelCraftEnv(FAKE, COPY_TASK, step_budget=bad)


# -- internal errors: every path returns ----------------------------------------------------
def _boom(*args, **kwargs):
    raise RuntimeError("simulated kcgym bug")


def test_final_evaluation_bug_is_an_internal_error_result(monkeypatch):
    env = KernelCraftEnv(FAKE, COPY_TASK, docs_in_prompt=False, max_turns=2)
    monkeypatch.setattr(env.evaluator, "_evaluate", _boom)
    obs, reward, terminated, _, info = submit(env, "COPY")
    assert terminated and reward == 0.0
    assert info["episode"]["error_class"] == "internal_error" and "simulated kcgym bug" in info["internal_error"]
    assert "internal error" in obs
    monkeypatch.setattr(env, "_finish", _boom)  # the episode-ending code itself fails: still an episode end
    env.reset(seed=0)
    env.step({"name": "write_kernel", "arguments": {"source": "COPY"}})
    obs, reward, _, truncated, info = env.step({"name": "assemble", "arguments": {}})  # turn 2 of 2
    assert truncated and reward == 0.0 and info["episode"]["error_class"] == "internal_error"
    json_ok(info)


def test_batch_scorer_bugs_are_internal_error_records(monkeypatch):
    scorer = BatchScorer(KernelCraftEnv(FAKE, COPY_TASK, docs_in_prompt=False), max_workers=2)
    monkeypatch.setattr(scorer.env.evaluator, "_evaluate", _boom)
    recs = scorer.score(["COPY", "ZERO", None])
    assert [r.error_class for r in recs] == ["internal_error", "internal_error", "no_kernel"]
    assert all(r.reward == 0.0 for r in recs)
    monkeypatch.setattr(scorer, "hidden_input_sets", _boom)
    assert [r.error_class for r in scorer.score(["COPY"])] == ["internal_error"]


def test_trl_reward_bug_costs_the_group_its_reward(monkeypatch):
    pytest.importorskip("trl")
    import gymnasium as gym

    from kcgym.integrations.trl import KernelReward
    from tests.integrations.conftest import FAKE_ID

    if FAKE_ID not in gym.registry:  # as tests/integrations/conftest.py registers it
        gym.register(FAKE_ID, entry_point=KernelCraftEnv, kwargs={"accelerator": FAKE, "task": COPY_TASK})
    reward = KernelReward(env_id=FAKE_ID)
    monkeypatch.setattr(BatchScorer, "score_completions", _boom)
    assert reward(prompts=["p", "p"], completions=["```\nCOPY\n```", "x"]) == [0.0, 0.0]
    assert reward.history[-1][0].error_class == "internal_error"


def test_verifiers_step_bug_ends_the_rollout():
    pytest.importorskip("verifiers")
    from kcgym.integrations import verifiers as kv

    class Broken:
        def step(self, action):
            raise RuntimeError("simulated kcgym bug")

    state = {kv._ENV: Broken(), kv._DONE: False, kv._RETURN: 0.0, kv._EPISODE: None}
    msg = kv.KernelCraftVerifiersEnv._step(state, {"name": "submit", "arguments": {}}, "call_1")
    assert state[kv._DONE] and state[kv._EPISODE]["error_class"] == "internal_error"
    assert "internal error" in msg.content


def test_cli_bug_is_exit_code_70(monkeypatch, capsys):
    from kcgym import cli

    monkeypatch.setattr(cli, "cmd_list", _boom)  # main() builds its parser from the module's functions
    assert cli.main(["list"]) == cli.EXIT_INTERNAL
    assert "internal error: RuntimeError: simulated kcgym bug" in capsys.readouterr().err
