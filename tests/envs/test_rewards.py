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

# the fake machine (config 1): baseline 160 cycles, speed of light = its roofline, 50 cycles
HEADROOM = 160 / 50
SOL_FAST = 1 + 3 * math.log(1.6) / math.log(HEADROOM)  # FAST: 100 cycles, speedup 1.6


def test_paper_formula_gives_the_old_numbers():
    spec = RewardSpec(kind="paper")
    assert spec.score(False, 10.0) == 0.0
    assert spec.score(True, None) == 0.0
    assert spec.score(True, 1.0) == 1.0
    assert spec.score(True, 2.0) == pytest.approx(2.0)
    assert spec.score(True, 1000.0) == pytest.approx(4.0)  # clipped at log2 = 3
    assert spec.score(True, 0.001) == pytest.approx(0.1)  # clipped at log2 = -0.9
    assert spec.max_score == 4.0
    assert spec.score(True, 2.0, headroom=1.5) == pytest.approx(2.0)  # headroom plays no part


def test_sol_formula():
    spec = RewardSpec()
    assert spec.kind == "sol" and spec.max_score == 4.0
    assert spec.score(False, 10.0, HEADROOM) == 0.0
    assert spec.score(True, None, HEADROOM) == 0.0
    assert spec.score(True, 1.0, HEADROOM) == 1.0  # the compiler's speed
    assert spec.score(True, HEADROOM, HEADROOM) == pytest.approx(4.0)  # the speed of light
    assert spec.score(True, 100.0, HEADROOM) == pytest.approx(4.0)  # beats it: no extra credit
    assert spec.score(True, math.sqrt(HEADROOM), HEADROOM) == pytest.approx(2.5)  # half the log-headroom
    assert spec.score(True, 1e-6, HEADROOM) == pytest.approx(0.1)  # q clipped at -0.3
    with pytest.raises(ValueError, match="headroom"):
        spec.score(True, 1.0)


def test_sol_formula_when_the_compiler_is_already_near_the_bound():
    spec = RewardSpec()
    assert spec.headroom(1000, 990) == spec.min_headroom == 1.05  # 1% headroom is taken as 5%
    assert spec.headroom(1000, 1000) == 1.05 and spec.headroom(None, 10) == 1.05
    h = spec.headroom(1000, 990)
    assert spec.score(True, 1.0, h) == 1.0
    assert spec.score(True, 1000 / 990, h) == pytest.approx(1 + 3 * math.log(1000 / 990) / math.log(1.05))
    assert spec.score(True, 1.05, h) == pytest.approx(4.0)
    assert spec.headroom(3000, 1000) == 3.0


@pytest.mark.parametrize("kind", ["sol", "paper"])
@given(st.floats(min_value=1e-9, max_value=1e9), st.floats(min_value=1e-9, max_value=1e9),
       st.floats(min_value=1.0, max_value=1e6))
def test_correct_always_beats_incorrect_and_faster_never_scores_less(kind, s1, s2, headroom):
    spec = RewardSpec(kind=kind)
    assert spec.score(True, s1, headroom) > spec.score(False, s1, headroom) == 0.0
    assert spec.score(True, s1, headroom) <= spec.max_score + 1e-12
    if s1 <= s2:
        assert spec.score(True, s1, headroom) <= spec.score(True, s2, headroom)


def test_spec_validation():
    with pytest.raises(ValidationError, match="must be > 0"):
        RewardSpec(kind="paper", correct_base=0.5, log_speedup_clip=(-1.0, 3.0))
    with pytest.raises(ValidationError, match="must be > 0"):
        RewardSpec(correct_base=0.5, sol_clip_low=-0.2)
    with pytest.raises(ValidationError, match="min_headroom"):
        RewardSpec(min_headroom=1.0)
    with pytest.raises(ValidationError, match="lo <= hi"):
        RewardSpec(log_speedup_clip=(2.0, 1.0))
    with pytest.raises(ValidationError):
        RewardSpec(mode="sparse")
    with pytest.raises(ValidationError):
        RewardSpec(kind="speedup")
    with pytest.raises(ValidationError):
        RewardSpec(bonus=1.0)
    assert RewardSpec.of({"mode": "dense"}).mode == "dense"
    assert RewardSpec.of(None) == RewardSpec()
    with pytest.raises(TypeError):
        RewardSpec.of("dense")


def test_describe_names_the_formula():
    assert "speed-of-light" in RewardSpec().describe() and "log2" not in RewardSpec().describe()
    assert "log2(speedup)" in RewardSpec(kind="paper").describe()


def _episode(kernel: str | None, mode: str = "terminal", extra: tuple[str, ...] = (), submit: bool = True,
             kind: str = "sol"):
    """Rewards of: [write_kernel] + simulate... + submit."""
    env = fake_env(reward={"mode": mode, "kind": kind})
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
    assert rewards[-1] == pytest.approx(SOL_FAST)
    assert _episode(fa.FAST, kind="paper")[-1] == pytest.approx(1 + math.log2(1.6))


def test_a_kernel_at_the_speed_of_light_scores_4_and_the_compiler_1():
    # copy_cycles = 50: COPY runs exactly at the fake machine's speed of light (its roofline)
    for kernel, expected in ((fa.BASELINE_LIKE, 1.0), ("COPY\n", 4.0)):
        env = fake_env(hw={"copy_cycles": 50})
        env.reset(seed=0)
        call(env, "write_kernel", source=kernel)
        obs, r, term, trunc, info = call(env, "submit")
        assert r == pytest.approx(expected)
        assert info["sol_cycles"] == 50 and not info["beats_sol"]
        assert info["episode"]["sol_cycles"] == 50


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
    assert call(env, "simulate")[1] == pytest.approx(SOL_FAST - 0.1)
    call(env, "write_kernel", source=fa.SLOW)
    assert call(env, "simulate")[1] == 0.0  # the best so far is what counts
    # submitting the slow one pays back the difference
    assert call(env, "submit")[1] == pytest.approx(0.1 - SOL_FAST)


def test_below_roofline_is_scored_as_incorrect_and_flagged():
    env = fake_env()
    env.reset(seed=0)
    call(env, "write_kernel", source=fa.EXPLOIT)
    obs, r, term, trunc, info = call(env, "submit")
    assert r == 0.0 and info["below_roofline"] and info["correct"]
    assert info["episode"]["error_class"] == "below_roofline" and not info["episode"]["success"]
