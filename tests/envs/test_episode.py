"""Episode mechanics: reset info, truncation, the end of an episode, seeding, rendering."""

from __future__ import annotations

import string

import gymnasium
import pytest

import kcgym
from kcgym.envs.kernel_env import KernelCraftEnv, episode_seeds
from tests.envs import fake_accelerator as fa
from tests.envs.conftest import call, fake_env


def test_reset_returns_prompt_and_info():
    env = fake_env(config=2, hw={"copy_cycles": 90})
    obs, info = env.reset(seed=5)
    assert obs in env.observation_space and set(obs) <= set(string.printable)
    assert info["accelerator"] == "FAKE" and info["task"] == "copy" and info["level"] == 1
    assert info["config"] == 2 and info["config_index"] == 2 and info["config_label"] == "C2 (R=8, C=8)"
    assert info["max_turns"] == 15 and info["suite_version"] == kcgym.__version__
    assert info["env_id"] == "KernelCraft-FAKE-copy" and info["seed"] == 5
    assert info["hw"] == {"copy_cycles": 90, "row_cycles": 40, "roofline": 50}
    assert [t["function"]["name"] for t in info["tools"]] == [t["function"]["name"] for t in env.tools]
    assert info["reward"]["mode"] == "terminal"


def test_constructor_validation():
    with pytest.raises(ValueError, match="config must be in 1..5"):
        fake_env(config=6)
    with pytest.raises(ValueError, match="max_turns"):
        fake_env(max_turns=0)
    with pytest.raises(ValueError, match="hidden_inputs"):
        fake_env(hidden_inputs=0)
    with pytest.raises(ValueError, match="render_mode"):
        fake_env(render_mode="human")
    with pytest.raises(ValueError):  # pydantic: unknown hw field
        fake_env(hw={"warp_drive": 1})
    with pytest.raises(ValueError, match="did you mean 'NPU'"):
        KernelCraftEnv(accelerator="NPX", task="relu")
    with pytest.raises(ValueError, match="does not support"):
        KernelCraftEnv(accelerator=fa.FAKE, task="relu")


def test_max_turns_defaults_follow_the_paper():
    assert fake_env().max_turns == 15

    class L2(fa.CopyTask):
        level = 2

    class L3(fa.CopyTask):
        level = 3

    assert KernelCraftEnv(fa.FAKE, L2()).max_turns == 20
    assert KernelCraftEnv(fa.FAKE, L3()).max_turns == 25


def test_step_before_reset_raises_reset_needed():
    with pytest.raises(gymnasium.error.ResetNeeded):
        fake_env().step({"name": "simulate"})


def test_truncation_evaluates_the_current_kernel():
    env = fake_env(max_turns=3)
    env.reset(seed=0)
    call(env, "write_kernel", source=fa.FAST)
    _, r, term, trunc, _ = call(env, "read_docs")
    assert (r, term, trunc) == (0.0, False, False)
    obs, r, term, trunc, info = call(env, "read_docs")
    assert not term and trunc
    assert "Turn budget exhausted" in obs and "Final score: 2.212" in obs and "episode is over" in obs
    assert r == pytest.approx(2.212, abs=1e-3)  # sol reward: 1 + 3 log(1.6) / log(160 / 50)
    ep = info["episode"]
    assert ep["success"] and not ep["submitted"] and ep["turns"] == 3 and ep["cycles"] == 100
    assert ep["baseline_cycles"] == 160 and ep["error_class"] is None
    assert "first_correct_turn" not in ep  # never simulated: a number not measured is absent
    assert ep["tool_counts"] == {"read_docs": 2, "write_kernel": 1}
    assert info["tool"] == "read_docs" and info["turns_left"] == 0


def test_truncation_without_kernel_scores_zero():
    env = fake_env(max_turns=1)
    env.reset(seed=0)
    obs, r, term, trunc, info = call(env, "read_docs")
    assert trunc and r == 0.0 and "No kernel was ever written" in obs
    assert info["episode"]["error_class"] == "tool_use" and info["episode"]["success"] is False


def test_submit_on_the_last_turn_terminates_rather_than_truncates():
    env = fake_env(max_turns=2)
    env.reset(seed=0)
    call(env, "write_kernel", source=fa.FAST)
    _, r, term, trunc, info = call(env, "submit")
    assert term and not trunc and info["episode"]["submitted"]


def test_episode_summary_records_first_correct_turn_and_errors():
    env = fake_env()
    env.reset(seed=0)
    call(env, "write_kernel", source=fa.SYNTAX)
    call(env, "simulate")
    call(env, "write_kernel", source=fa.WRONG)
    call(env, "simulate")
    call(env, "write_kernel", source=fa.SLOW)
    call(env, "simulate")
    env.step("garbage")
    *_, info = call(env, "submit")
    ep = info["episode"]
    assert ep["first_correct_turn"] == 6 and ep["turns"] == 8
    assert ep["tool_counts"] == {"invalid": 1, "simulate": 3, "submit": 1, "write_kernel": 3}
    assert ep["success"] and ep["speedup"] == pytest.approx(160 / 5100)


@pytest.mark.parametrize(
    "kernel,error_class",
    [(fa.SYNTAX, "syntax"), (fa.WRONG, "functional"), (fa.FAULTY, "functional"), (fa.HANGS, "functional")],
)
def test_failed_submissions_are_classified(kernel, error_class):
    env = fake_env()
    env.reset(seed=0)
    call(env, "write_kernel", source=kernel)
    _, r, term, _, info = call(env, "submit")
    assert term and r == 0.0 and info["episode"]["error_class"] == error_class


def test_stepping_after_the_end_is_an_error_observation():
    env = fake_env()
    env.reset(seed=0)
    call(env, "write_kernel", source=fa.FAST)
    call(env, "submit")
    obs, r, term, trunc, info = call(env, "simulate")
    assert "episode has ended" in obs and r == 0.0 and term and not trunc and info["error"]
    obs, info = env.reset(seed=0)
    assert env.kernel is None and call(env, "read_docs")[4]["turn"] == 1


def test_hidden_inputs_differ_from_visible_and_are_seeded():
    for s in (0, 1, 2**32 + 7, 2**40):
        v, h = episode_seeds(s)
        assert v != h and episode_seeds(s) == (v, h)
    env = fake_env()
    env.reset(seed=0)
    ep = env._ep
    vis = env.evaluator.input_sets(ep.visible_seed, 1)[0]["X"]
    hid = env.evaluator.input_sets(ep.hidden_seed, 1)[0]["X"]
    assert not (vis == hid).all()


def test_kernel_overfit_to_visible_inputs_fails_on_hidden():
    """A kernel that hard-codes the visible outputs passes simulate but not submit."""

    class Memorise(fa.FakeAccelerator):
        def _run_one(self, program, cfg, hw, inp, max_steps):
            res = super()._run_one(program, cfg, hw, inp, max_steps)
            if program.source.startswith("ZERO") and self.memorised is not None:
                res.outputs["Y"] = self.memorised.copy()
            return res

        memorised = None

    acc = Memorise()
    env = KernelCraftEnv(acc, fa.COPY_TASK)
    env.reset(seed=0)
    acc.memorised = env.evaluator.input_sets(env._ep.visible_seed, 1)[0]["X"]
    call(env, "write_kernel", source="ZERO\n")
    assert call(env, "simulate")[4]["correct"]
    *_, info = call(env, "submit")
    assert not info["correct"] and info["episode"]["score"] == 0.0


PLAN = [
    {"name": "read_docs", "arguments": {"query": "copy"}},
    {"name": "write_kernel", "arguments": {"source": fa.PARTIAL}},
    {"name": "simulate", "arguments": "{}", "id": "a"},
    {"name": "view_output", "arguments": {"rows": 3}},
    "not json",
    {"name": "write_kernel", "arguments": {"source": fa.FAST}},
    {"type": "function", "function": {"name": "profile", "arguments": ""}},
    {"name": "submit"},
]


def _trajectory(env, seed):
    out = [env.reset(seed=seed)]
    out.extend(env.step(a) for a in PLAN)
    return out


def test_same_seed_same_actions_same_trajectory():
    env = fake_env(visible_inputs=2, reward={"mode": "dense"})
    t1 = _trajectory(env, 11)
    t2 = _trajectory(fake_env(visible_inputs=2, reward={"mode": "dense"}), 11)
    assert t1 == t2
    # and the hidden inputs actually depend on the seed (the final match stats are per-input)
    env3 = fake_env()
    env3.reset(seed=12)
    assert env3._ep.hidden_seed != env._ep.hidden_seed


def test_unseeded_reset_continues_the_seeded_stream():
    env = fake_env()
    env.reset(seed=3)
    env.reset()
    s1 = env._ep.seed
    env.reset(seed=3)
    env.reset()
    assert env._ep.seed == s1 != 3


def test_render_ansi_returns_the_last_observation():
    env = fake_env(render_mode="ansi")
    assert env.render() == ""
    obs, _ = env.reset(seed=0)
    assert env.render() == obs
    obs, *_ = call(env, "read_docs")
    assert env.render() == obs
    assert fake_env().render() is None


def test_turn_footer():
    env = fake_env(max_turns=4)
    env.reset(seed=0)
    obs, *_ = call(env, "read_docs")
    assert obs.endswith("[turn 1/4, 3 left]")


def test_returned_info_is_fresh_every_step(env):
    call(env, "write_kernel", source=fa.FAST)
    *_, i1 = call(env, "profile")
    *_, i2 = call(env, "profile")
    assert i1["counts"] == i2["counts"] and i1["unit_busy"] == i2["unit_busy"]
    i1["counts"]["copy"] = -1
    assert i2["counts"]["copy"] == 1
