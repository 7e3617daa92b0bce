"""RewardSpec and how the env pays it out: terminal and dense modes, correct-slow > incorrect."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from kcgym.envs.rewards import RewardSpec
from tests.envs import fake_accelerator as fa
from tests.envs.conftest import call, fake_env


def test_score_formula():
    spec = RewardSpec()
    assert spec.score(False, 10.0) == 0.0
    assert spec.score(True, None) == 0.0
    assert spec.score(True, 1.0) == 1.0
    assert spec.score(True, 2.0) == pytest.approx(2.0)
    assert spec.score(True, 1000.0) == pytest.approx(4.0)  # clipped at log2 = 3
    assert spec.score(True, 0.001) == pytest.approx(0.1)  # clipped at log2 = -0.9
    assert spec.max_score == 4.0


@given(st.floats(min_value=1e-9, max_value=1e9), st.floats(min_value=1e-9, max_value=1e9))
def test_correct_always_beats_incorrect_and_faster_never_scores_less(s1, s2):
    spec = RewardSpec()
    assert spec.score(True, s1) > spec.score(False, s1) == 0.0
    if s1 <= s2:
        assert spec.score(True, s1) <= spec.score(True, s2)


def test_spec_validation():
    with pytest.raises(ValidationError, match="must be > 0"):
        RewardSpec(correct_base=0.5, log_speedup_clip=(-1.0, 3.0))
    with pytest.raises(ValidationError, match="lo <= hi"):
        RewardSpec(log_speedup_clip=(2.0, 1.0))
    with pytest.raises(ValidationError):
        RewardSpec(mode="sparse")
    with pytest.raises(ValidationError):
        RewardSpec(bonus=1.0)
    assert RewardSpec.of({"mode": "dense"}).mode == "dense"
    assert RewardSpec.of(None) == RewardSpec()
    with pytest.raises(TypeError):
        RewardSpec.of("dense")


def _episode(kernel: str | None, mode: str = "terminal", extra: tuple[str, ...] = (), submit: bool = True):
    """Rewards of: [write_kernel] + simulate... + submit."""
    env = fake_env(reward={"mode": mode})
    env.reset(seed=0)
    rewards = []
    if kernel is not None:
        rewards.append(call(env, "write_kernel", source=kernel)[1])
    for tool in extra:
        rewards.append(call(env, tool)[1])
    if submit:
        obs, r, term, trunc, info = (
            call(env, "submit") if kernel is not None else (None, 0.0, True, False, {})
        )
        rewards.append(r)
    return rewards


def test_terminal_rewards_only_at_the_end():
    rewards = _episode(fa.FAST, extra=("simulate", "profile"))
    assert rewards[:-1] == [0.0, 0.0, 0.0]
    assert rewards[-1] == pytest.approx(1 + math.log2(1.6))


def test_correct_slow_beats_incorrect_in_both_modes():
    for mode in ("terminal", "dense"):
        slow = sum(_episode(fa.SLOW, mode, extra=("simulate",)))
        wrong = sum(_episode(fa.WRONG, mode, extra=("simulate",)))
        faulty = sum(_episode(fa.FAULTY, mode))
        syntax = sum(_episode(fa.SYNTAX, mode))
        assert slow == pytest.approx(0.1) and slow > 0
        assert wrong == faulty == syntax == 0.0


@pytest.mark.parametrize(
    "plan",
    [
        [
            ("write_kernel", fa.WRONG),
            ("simulate",),
            ("write_kernel", fa.SLOW),
            ("simulate",),
            ("write_kernel", fa.FAST),
            ("simulate",),
            ("submit",),
        ],
        [("write_kernel", fa.FAST), ("simulate",), ("write_kernel", fa.SLOW), ("simulate",), ("submit",)],
        [("write_kernel", fa.FAST), ("simulate",), ("write_kernel", fa.WRONG), ("submit",)],
        [("write_kernel", fa.BASELINE_LIKE), ("profile",), ("simulate",), ("submit",)],
        [("write_kernel", fa.FAST), ("simulate",), ("read_docs",)],  # truncated at max_turns=3
        [("read_docs",), ("assemble",), ("simulate",)],  # never wrote a kernel
    ],
)
def test_dense_return_equals_terminal_return(plan):
    returns = {}
    for mode in ("terminal", "dense"):
        env = fake_env(reward={"mode": mode}, max_turns=len(plan))
        env.reset(seed=3)
        total, done = 0.0, False
        for step in plan:
            args = {"source": step[1]} if len(step) > 1 else {}
            _, r, term, trunc, info = call(env, step[0], **args)
            total += r
            done = term or trunc
        assert done
        returns[mode] = (total, info["episode"]["score"])
    assert returns["dense"][0] == pytest.approx(returns["terminal"][0])
    assert returns["dense"][0] == pytest.approx(returns["dense"][1])


def test_dense_rewards_improvement_of_the_best_verified_kernel():
    env = fake_env(reward={"mode": "dense"})
    env.reset(seed=0)
    call(env, "write_kernel", source=fa.SLOW)
    assert call(env, "simulate")[1] == pytest.approx(0.1)
    call(env, "write_kernel", source=fa.FAST)
    assert call(env, "simulate")[1] == pytest.approx(1 + math.log2(1.6) - 0.1)
    call(env, "write_kernel", source=fa.SLOW)
    assert call(env, "simulate")[1] == 0.0  # the best so far is what counts
    # submitting the slow one pays back the difference
    assert call(env, "submit")[1] == pytest.approx(0.1 - (1 + math.log2(1.6)))


def test_below_roofline_is_scored_as_incorrect_and_flagged():
    env = fake_env()
    env.reset(seed=0)
    call(env, "write_kernel", source=fa.EXPLOIT)
    obs, r, term, trunc, info = call(env, "submit")
    assert r == 0.0 and info["below_roofline"] and info["correct"]
    assert info["episode"]["error_class"] == "below_roofline" and not info["episode"]["success"]
