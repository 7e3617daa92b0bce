"""Trajectory export: the recording wrapper and kcgym eval run directories -> chat JSONL."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

from kcgym.integrations.trajectories import (
    TrajectoryError,
    TrajectoryRecorder,
    export_run_dir,
    load_transcript,
    main,
    opening_messages,
    read_run_dir,
    write_jsonl,
)
from tests.envs.fake_accelerator import FAST, WRONG
from tests.integrations.conftest import FAKE_ID


def play(kernel: str, seed: int = 0, agent: str = "scripted") -> dict:
    env = TrajectoryRecorder(gym.make(FAKE_ID, config=1), agent=agent, model=None)
    env.reset(seed=seed)
    env.step({"name": "write_kernel", "arguments": {"source": kernel}})
    env.step("garbage that is not a tool call")
    env.step({"id": "abc", "type": "function", "function": {"name": "simulate", "arguments": "{}"}})
    _, reward, terminated, _, _ = env.step(json.dumps({"name": "submit", "arguments": {}}))
    assert terminated
    t = env.transcript()
    assert t["reward"] == pytest.approx(reward)
    return t


def test_recorder_writes_the_eval_transcript_shape():
    t = play(FAST, seed=3)
    assert set(t) == {"env_id", "config", "seed", "agent", "model", "tools", "messages", "reward", "success"}
    assert (t["env_id"], t["config"], t["seed"], t["agent"], t["success"]) == (FAKE_ID, 1, 3, "scripted", True)
    assert [m["role"] for m in t["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
    ]
    system, _, write, write_result, bad, bad_result, sim, sim_result = t["messages"][:8]
    assert system["content"].startswith("You are")
    call = write["tool_calls"][0]
    assert call["function"]["name"] == "write_kernel" and json.loads(call["function"]["arguments"]) == {"source": FAST}
    assert write_result["tool_call_id"] == call["id"] == "call_1"
    assert bad["content"] == "garbage that is not a tool call" and "invalid tool call" in bad_result["content"]
    assert sim["tool_calls"][0]["id"] == sim_result["tool_call_id"] == "abc"
    assert "Final score" in t["messages"][-1]["content"]
    assert {tool["function"]["name"] for tool in t["tools"]} >= {"write_kernel", "submit"}


def write_run_dir(root: Path, transcripts: list[dict]) -> Path:
    """A run directory as `kcgym eval` writes it: episodes.jsonl + transcripts/ beside it."""
    (root / "transcripts").mkdir(parents=True)
    with (root / "episodes.jsonl").open("w") as f:
        for i, t in enumerate(transcripts):
            rel = f"transcripts/episode-{i}.json"
            (root / rel).write_text(json.dumps(t, indent=1))
            f.write(json.dumps({"env_id": t["env_id"], "seed": t["seed"], "transcript": rel}) + "\n")
        f.write(json.dumps({"env_id": FAKE_ID, "seed": 9, "transcript": None}) + "\n")  # agent crashed
    return root


def test_export_run_dir_to_jsonl_with_filters(tmp_path: Path):
    good, bad = play(FAST, seed=1), play(WRONG, seed=2, agent="llm")
    bad["model"] = "gpt-x"
    run = write_run_dir(tmp_path / "run", [good, bad])
    out = tmp_path / "out" / "sft.jsonl"
    assert export_run_dir(run, out) == 2
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines == [good, bad]
    assert export_run_dir(run, out, only_success=True) == 1
    assert export_run_dir(run, out, min_reward=3.0) == 0 and out.read_text() == ""  # FAST scores 2.21 (sol reward)
    assert main([str(run), str(out), "--min-reward", "0.5"]) == 0 and len(out.read_text().splitlines()) == 1
    assert write_jsonl(read_run_dir(run), out) == 2


def test_bad_run_directories_are_located(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    with pytest.raises(TrajectoryError, match="episodes.jsonl not found"):
        list(read_run_dir(tmp_path))
    run = write_run_dir(tmp_path / "run", [play(FAST)])
    with (run / "episodes.jsonl").open("a") as f:
        f.write('{"transcript": "transcripts/missing.json"}\n{not json\n')
    with pytest.raises(TrajectoryError, match=r"episodes.jsonl:3: transcript file 'transcripts/missing.json'"):
        list(read_run_dir(run))
    (run / "transcripts" / "missing.json").write_text(json.dumps({"env_id": FAKE_ID}))
    with pytest.raises(TrajectoryError, match=r"missing.json: field 'config': Field required"):
        list(read_run_dir(run))
    (run / "transcripts" / "missing.json").write_text("{\n  oops")
    with pytest.raises(TrajectoryError, match=r"missing.json:2:3: not valid JSON"):
        load_transcript(run / "transcripts" / "missing.json")
    (run / "transcripts" / "missing.json").write_text(json.dumps(play(FAST)))
    with pytest.raises(TrajectoryError, match=r"episodes.jsonl:4:2: not valid JSON"):
        list(read_run_dir(run))
    assert main([str(run), str(tmp_path / "o.jsonl")]) == 2
    assert "episodes.jsonl:4:2" in capsys.readouterr().err


def test_recorder_and_agent_sessions_open_with_the_same_messages():
    """One opening: the recorder (RL rollouts), an agent's Session (kcgym eval) and the verifiers dataset."""
    from baselines.session import Session

    recorder = TrajectoryRecorder(gym.make(FAKE_ID, config=1), agent="scripted", model=None)
    recorder.reset(seed=4)
    session = Session(env=gym.make(FAKE_ID, config=1), seed=4)
    session.start()
    assert recorder.messages == session.messages[:2] == opening_messages(session.prompt)
    assert session.messages[1]["role"] == "user" and "tool calls" in session.messages[1]["content"]
