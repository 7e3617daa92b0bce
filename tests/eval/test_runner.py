"""The eval runner on the fake suite: every agent yields a record, resume, torn lines, Ray."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kcgym.eval.records import EpisodeRecord
from kcgym.eval.runner import RunDirError, run_eval
from kcgym.eval.store import RunStore, load_records
from kcgym.eval.suite import parse_configs, plan

ROOT = Path(__file__).resolve().parents[2]


def fake_plan(configs=(1,), runs=1):
    return plan(accelerators=["FAKE"], configs=configs, runs=runs)


def test_plan_filters_and_validates():
    specs = fake_plan(configs=[1, 2], runs=2)
    assert [(s.config, s.run, s.seed) for s in specs] == [(1, 0, 0), (1, 1, 1), (2, 0, 0), (2, 1, 1)]
    with pytest.raises(ValueError, match=r"configs are 1\.\.5 \(C1\.\.C5\); got 9"):  # not silently dropped
        fake_plan(configs=[1, 2, 9])
    assert plan(accelerators=["fake"]) == fake_plan()  # accelerator names in any case
    assert plan(accelerators=["FAKE"], levels=[2]) == []
    with pytest.raises(ValueError, match="did you mean 'FAKE'"):
        plan(accelerators=["FAKEE"])
    with pytest.raises(ValueError, match="unknown task 'cpy'"):
        plan(tasks=["cpy"])
    assert parse_configs("1-3,5") == [1, 2, 3, 5] == parse_configs("C1-C3,c5")
    with pytest.raises(ValueError, match="bad config range '3-1'"):
        parse_configs("3-1")


def test_every_builtin_agent_leaves_a_record(tmp_path):
    specs = fake_plan(configs=[1, 2])
    summary = run_eval(specs, ["compiler", "expert", "random", "search", "broken"], tmp_path, progress=False,
                       concurrency=2, options={"search_budget": 4})
    assert summary.completed == 10 and not summary.interrupted
    records = {(r.agent, r.config): r for r in load_records(tmp_path / "episodes.jsonl")}
    assert len(records) == 10
    for c in (1, 2):
        comp = records["compiler", c]
        assert comp.success and comp.speedup == pytest.approx(1.0) and comp.first_correct_turn == 2
        assert records["expert", c].status == "excluded" and records["expert", c].excluded_reason == "no expert"
        assert records["expert", c].transcript is None
        search = records["search", c]
        assert search.success and search.speedup >= 1.0 and search.max_turns == 2 * 4 + 4
        assert records["random", c].status == "done" and records["random", c].turns >= 1
        broken = records["broken", c]
        assert broken.error_class == "harness" and "agent bug" in broken.error and not broken.success
    for r in records.values():
        assert r.suite_version and r.hw == {"copy_cycles": 100, "row_cycles": 40, "roofline": 50}
        if r.transcript:
            t = json.loads((tmp_path / r.transcript).read_text())
            assert t["agent"] == r.agent and t["config"] == r.config and t["messages"][0]["role"] == "system"
            assert all(m["role"] in ("system", "user", "assistant", "tool") for m in t["messages"])


def test_resume_skips_recorded_episodes_and_a_used_dir_needs_resume(tmp_path):
    specs = fake_plan(configs=[1, 2], runs=2)
    first = run_eval(specs[:3], ["compiler"], tmp_path, progress=False)
    assert first.completed == 3
    with pytest.raises(RunDirError, match="--resume"):
        run_eval(specs, ["compiler"], tmp_path, progress=False)
    second = run_eval(specs, ["compiler"], tmp_path, resume=True, progress=False)
    assert (second.skipped, second.completed) == (3, 1)
    lines = (tmp_path / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == 4 and len({(r.config, r.run) for r in load_records(tmp_path / "episodes.jsonl")}) == 4


def test_rerun_errors_replays_api_and_harness_failures_only(tmp_path):
    specs = fake_plan(configs=[1])
    run_eval(specs, ["broken", "compiler"], tmp_path, progress=False)
    again = run_eval(specs, ["broken", "compiler"], tmp_path, rerun_errors=True, progress=False)
    assert (again.skipped, again.completed) == (1, 1)  # the compiler's success is kept
    lines = (tmp_path / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == 3 and len(load_records(tmp_path / "episodes.jsonl")) == 2  # the newer record wins


def test_a_torn_last_line_is_skipped_and_rerun(tmp_path):
    specs = fake_plan(configs=[1, 2])
    run_eval(specs[:1], ["compiler"], tmp_path, progress=False)
    path = tmp_path / "episodes.jsonl"
    whole = path.read_text().splitlines()[0]
    torn = whole.replace('"config":1', '"config":2')[: len(whole) // 2]
    with open(path, "a") as f:
        f.write(torn)  # a writer killed mid-line
    assert len(load_records(path)) == 1
    summary = run_eval(specs, ["compiler"], tmp_path, resume=True, progress=False)
    assert summary.completed == 1
    assert sorted(r.config for r in RunStore(tmp_path).records()) == [1, 2]


def _cli(out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "kcgym.cli", "eval", "--import", "tests.eval.fake_suite", "--accelerators", "FAKE",
            "--agent", "sleepy", "--configs", "1-5", "--runs", "2", "--concurrency", "1", "--out", str(out),
            "--quiet", "--no-report", *extra]


def _wait_for_records(path: Path, n: int, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and len(path.read_text().splitlines()) >= n:
            return
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.05)
    raise AssertionError(f"no {n} records within {timeout}s")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_a_killed_run_resumes_without_duplicates_or_losses(tmp_path, sig):
    env = {**os.environ, "KCGYM_TEST_SLEEP": "0.3", "JAX_PLATFORMS": "cpu", "PYTHONPATH": str(ROOT)}
    out = tmp_path / "run"
    # a shell's background job (CI under nohup, `cmd &`) inherits SIGINT ignored, and Python then never
    # raises KeyboardInterrupt: give the child the default disposition, as an interactive Ctrl-C has
    proc = subprocess.Popen(_cli(out), cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        _wait_for_records(out / "episodes.jsonl", 2, proc)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    if sig == signal.SIGINT:
        assert proc.returncode == 130 and "--resume" in err
    before = load_records(out / "episodes.jsonl")
    assert 2 <= len(before) < 10
    env["KCGYM_TEST_SLEEP"] = "0"
    done = subprocess.run(_cli(out, "--resume"), cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = [ln for ln in (out / "episodes.jsonl").read_text().splitlines() if ln.strip()]
    records = [EpisodeRecord.model_validate_json(ln) for ln in lines]
    keys = [(r.config, r.run) for r in records]
    assert len(keys) == len(set(keys)) == 10  # every episode exactly once
    assert all(r.success for r in records)


def test_ray_backend_gives_the_same_records_as_local(tmp_path):
    ray = pytest.importorskip("ray")
    specs = fake_plan(configs=[1, 2, 3])
    run_eval(specs, ["compiler", "search"], tmp_path / "local", progress=False, options={"search_budget": 3})
    sigterm = signal.getsignal(signal.SIGTERM)  # (ray.init replaces it with sys.exit: a later SIGTERM would
    # fail whatever test runs then instead of stopping the run)
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": str(ROOT), "JAX_PLATFORMS": "cpu"}})
    try:
        run_eval(specs, ["compiler", "search"], tmp_path / "ray", progress=False, backend="ray",
                 plugins=["tests.eval.fake_suite"], options={"search_budget": 3}, concurrency=2)
    finally:
        ray.shutdown()
        signal.signal(signal.SIGTERM, sigterm)

    def comparable(run: str) -> dict:
        out = {}
        for r in load_records(tmp_path / run / "episodes.jsonl"):
            out[r.key] = r.model_dump(exclude={"wall_s"})
            t = json.loads((tmp_path / run / r.transcript).read_text())
            out[r.key, "transcript"] = t
        return out

    assert comparable("ray") == comparable("local")
