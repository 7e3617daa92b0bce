"""Batch scoring: records, rewards equal to the env's submit, fences, dedup, threads, NPU."""

from __future__ import annotations

import threading

import pytest

from kcgym.scoring import BatchScorer, KernelScore, extract_kernel, score_completions, score_kernels
from tests.envs.conftest import call, fake_env
from tests.envs.fake_accelerator import (
    BASELINE_LIKE,
    EXPLOIT,
    FAST,
    FAULTY,
    HANGS,
    PARTIAL,
    SLOW,
    SYNTAX,
    WARNS,
    WRONG,
)

ALL = [FAST, BASELINE_LIKE, SLOW, WRONG, PARTIAL, FAULTY, HANGS, EXPLOIT, SYNTAX, WARNS]


@pytest.fixture(scope="module")
def scorer() -> BatchScorer:
    return BatchScorer(fake_env(), max_workers=4)


def submit_reward(kernel: str, seed: int) -> tuple[float, dict]:
    env = fake_env()
    env.reset(seed=seed)
    call(env, "write_kernel", source=kernel)
    _, reward, terminated, _, info = call(env, "submit")
    assert terminated
    return reward, info["episode"]


@pytest.mark.parametrize("seed", [0, 7])
def test_batch_rewards_equal_the_env_submit_reward(scorer: BatchScorer, seed: int):
    records = scorer.score(ALL, seed=seed)
    assert [r.index for r in records] == list(range(len(ALL)))
    for kernel, rec in zip(ALL, records, strict=True):
        reward, episode = submit_reward(kernel, seed)
        assert rec.reward == pytest.approx(reward), kernel
        assert rec.correct == episode["correct"]
        assert rec.cycles == episode.get("cycles")  # absent when not measured (stable info types)
        assert rec.error_class == episode["error_class"]


def test_records_say_what_happened(scorer: BatchScorer):
    fast, base, slow, wrong, partial, faulty, hangs, exploit, syntax, warns = scorer.score(ALL)
    assert fast.correct and fast.speedup == pytest.approx(1.6) and fast.error is None and fast.error_class is None
    assert base.reward == pytest.approx(1.0) and base.baseline_cycles == 160
    assert 0 < slow.reward < base.reward < fast.reward
    assert not wrong.correct and wrong.reward == 0 and wrong.match_rate == 0 and wrong.error_class == "functional"
    assert "incorrect" in wrong.error and "Y: 0/32 match" in wrong.error
    assert 0 < partial.match_rate < 1 and partial.speedup is None
    assert faulty.error_class == "functional" and "OOB_MEM" in faulty.error and "line 2" in faulty.error
    assert "STEP_BUDGET" in hangs.error
    assert exploit.below_roofline and exploit.reward == 0 and exploit.error_class == "below_roofline"
    assert "roofline" in exploit.error
    assert not syntax.assembled and syntax.error_class == "syntax" and "1:1" in syntax.error and "CPY" in syntax.error
    assert warns.correct and warns.error is None
    assert all(isinstance(r, KernelScore) for r in (fast, syntax))


def test_identical_kernels_are_simulated_once(monkeypatch: pytest.MonkeyPatch):
    s = BatchScorer(fake_env(), max_workers=1)
    seen: list[str] = []
    original = s.env.evaluator.evaluate
    monkeypatch.setattr(
        s.env.evaluator, "evaluate", lambda src, inputs, **kw: seen.append(src) or original(src, inputs, **kw)
    )
    records = s.score([FAST, WRONG, FAST, FAST, WRONG])
    assert sorted(seen) == sorted([FAST, WRONG])
    assert [r.correct for r in records] == [True, False, True, True, False]
    assert [r.index for r in records] == [0, 1, 2, 3, 4]


def test_the_cyclic_collector_is_off_during_a_batch_and_back_after(monkeypatch: pytest.MonkeyPatch):
    import gc

    s = BatchScorer(fake_env(), max_workers=2)
    seen: list[bool] = []
    original = s.env.evaluator.evaluate
    def evaluate(src, inputs, **kw):
        seen.append(gc.isenabled())
        return original(src, inputs, **kw)

    monkeypatch.setattr(s.env.evaluator, "evaluate", evaluate)
    assert gc.isenabled()
    s.score([FAST, WRONG, SYNTAX])
    assert seen == [False] * 3 and gc.isenabled()
    gc.disable()  # a caller that keeps the collector off keeps it off
    try:
        s.score([SLOW])
        assert not gc.isenabled()
    finally:
        gc.enable()
    monkeypatch.setattr(s.env.evaluator, "evaluate", lambda src, inputs, **kw: 1 / 0)
    with pytest.raises(ZeroDivisionError):  # an exception out of the batch turns it back on too
        s.score([FAST])
    assert gc.isenabled()


def test_concurrent_calls_agree_with_a_serial_call(scorer: BatchScorer):
    expected = [r.reward for r in BatchScorer(fake_env(), max_workers=1).score(ALL, seed=3)]
    results: list[list[float]] = []

    def work() -> None:
        results.append([r.reward for r in scorer.score(ALL, seed=3)])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert results == [expected] * 4
    import gc

    assert gc.isenabled()  # the last of the concurrent batches turned the collector back on


@pytest.mark.parametrize(
    ("completion", "kernel"),
    [
        ("Here it is:\n```asm\nCOPY\n```\n", "COPY\n"),
        ("```\nZERO\n```\nthinking...\n```nasm\nCOPY\n```", "COPY\n"),  # the last block is the answer
        ("````\n```inner```\nCOPY\n````", "```inner```\nCOPY\n"),  # a longer fence may hold a short one
        ([{"role": "assistant", "content": "```\nCOPY\n```"}], "COPY\n"),
        ([{"role": "user", "content": "```\nZERO\n```"}, {"role": "assistant", "content": "no code"}], None),
        ([{"role": "assistant", "content": [{"type": "text", "text": "```\nCOPY\n```"}]}], "COPY\n"),
        ("COPY\n", None),
        ("```asm\nCOPY\n", None),  # cut off before the closing fence
        ("", None),
        ("```asm\r\nCOPY\r\n```\r\n", "COPY\n"),  # Windows line ends
    ],
)
def test_extract_kernel(completion, kernel):
    assert extract_kernel(completion) == kernel


def test_completions_without_a_fence_score_zero_with_a_reason(scorer: BatchScorer):
    good, none, truncated = scorer.score_completions(["```\nCOPY\n```", "COPY", "```\nCOPY"])
    assert good.correct and good.kernel_found
    for rec in (none, truncated):
        assert not rec.kernel_found and rec.reward == 0 and rec.error_class == "no_kernel"
        assert "fenced code block" in rec.error
    (bare,) = scorer.score_completions(["COPY\n"], require_fence=False)
    assert bare.correct


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="did you mean 'KernelCraft-NPU-matmul'"):
        BatchScorer("KernelCraft-NPU-matmull")
    with pytest.raises(ValueError, match="hw, reward and hidden_inputs come from the env"):
        BatchScorer(fake_env(), reward={"mode": "dense"})
    with pytest.raises(TypeError, match="wrap a single kernel in a list"):
        BatchScorer(fake_env()).score("COPY")
    with pytest.raises(TypeError, match="kernel 1 is a int; expected the assembly source text"):
        BatchScorer(fake_env()).score(["COPY", 3])


def test_reward_spec_is_the_scorers():
    (rec,) = BatchScorer(fake_env(reward={"correct_base": 2.0})).score([FAST])
    assert rec.reward == pytest.approx(2.0 + 1.212, abs=1e-3)  # 3 log(1.6) / log(160 / 50) = 1.212


def test_npu_matmul_batch_of_mixed_candidates():
    """The issue's scenario on the real NPU: correct, wrong and non-assembling kernels in one call."""
    scorer = BatchScorer("KernelCraft-NPU-matmul", config=1)
    env = scorer.env
    compiled = env.accelerator.compile(env.task, env.cfg, env.hw)
    expert = env.accelerator.expert(env.task, env.cfg, env.hw)
    lines = compiled.splitlines()
    stores = [i for i, line in enumerate(lines) if "WO" in line.split("#")[0].upper()]
    no_store = "\n".join(line for i, line in enumerate(lines) if i != stores[-1])  # last output block unwritten
    completions = [
        f"```asm\n{compiled}\n```",
        f"Faster:\n```\n{expert}\n```",
        f"```\n{no_store}\n```",
        "```\nM_MM gp1, gp2\nNOT_AN_OP\n```",
        "I cannot do this.",
    ]
    good, fast, wrong, syntax, none = scorer.score_completions(completions, seed=5)
    assert good.correct and good.reward == pytest.approx(1.0) and good.cycles == good.baseline_cycles
    assert fast.correct and fast.speedup > 1 and fast.reward > 1
    assert not wrong.correct and wrong.assembled and wrong.reward == 0 and wrong.match_rate < 1
    assert wrong.error_class == "functional" and "incorrect" in wrong.error
    assert not syntax.assembled and syntax.error_class == "syntax" and "NOT_AN_OP" in syntax.error
    assert none.error_class == "no_kernel"
    # the convenience functions share one scorer per (env id, config) and agree with it
    assert [r.reward for r in score_completions("KernelCraft-NPU-matmul", completions, seed=5)] == [
        r.reward for r in (good, fast, wrong, syntax, none)
    ]
    assert score_kernels("KernelCraft-NPU-matmul", [compiled])[0].correct


def test_npu_matmul_64_candidates_in_one_call():
    """The issue's acceptance case: 64 distinct candidates, each record right for its kind."""
    scorer = BatchScorer("KernelCraft-NPU-matmul", config=1)
    env = scorer.env
    compiled = env.accelerator.compile(env.task, env.cfg, env.hw)
    expert = env.accelerator.expert(env.task, env.cfg, env.hw)
    kinds = ["compiled", "expert", "zeros", "syntax"]
    zeros = "S_ADDI_INT gp1, gp0, 0\n"  # writes nothing: the poisoned output stays NaN
    sources = {"compiled": compiled, "expert": expert, "zeros": zeros, "syntax": compiled + "\nBOGUS gp1\n"}
    completions = [f"```\n; candidate {i}\n{sources[kinds[i % 4]]}\n```" for i in range(64)]
    records = scorer.score_completions(completions, seed=11)
    assert len(records) == 64 and [r.index for r in records] == list(range(64))
    for i, r in enumerate(records):
        kind = kinds[i % 4]
        if kind == "compiled":
            assert r.correct and r.reward == pytest.approx(1.0)
        elif kind == "expert":
            assert r.correct and r.reward > 1.0 and r.cycles < r.baseline_cycles
        elif kind == "zeros":
            assert r.assembled and not r.correct and r.reward == 0 and r.match_rate == 0
        else:
            assert not r.assembled and r.error_class == "syntax" and "BOGUS" in r.error
