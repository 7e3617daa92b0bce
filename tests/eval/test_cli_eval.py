"""``kcgym eval`` and ``kcgym report`` end to end on the fake suite (in-process), incl. the LLM agent."""

from __future__ import annotations

import json

import pytest

from kcgym import cli
from kcgym.eval.report import load_runs, render
from tests.baselines.openai_stub import StubServer, tool_call
from tests.envs.fake_accelerator import FAST

FAKE = ["--import", "tests.eval.fake_suite", "--accelerators", "FAKE"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def winning_script(body: dict) -> dict:
    """write, simulate, submit, decided by how many tool results the conversation already holds."""
    done = sum(1 for m in body["messages"] if m["role"] == "tool")
    return [tool_call("write_kernel", {"source": FAST}), tool_call("simulate", {}), tool_call("submit", {})][done]


def test_eval_with_the_llm_agent_against_a_local_server(capsys, tmp_path):
    out = tmp_path / "run"
    with StubServer(winning_script) as server:
        code, stdout, err = run(capsys, "eval", *FAKE, "--agent", "llm", "--model", "stub-m", "--base-url",
                                server.base_url, "--configs", "1-3", "--concurrency", "2", "--out", str(out))
    assert code == 0, err
    assert "[3/3] success 3" in err  # live progress with success counts
    assert "| llm:stub-m | 3 | 3/3 (100%)" in stdout
    records = load_runs([out])
    assert len(records) == 3 and all(r.tokens.api_calls == 3 and r.speedup > 1.5 for r in records)
    assert (out / "report.md").is_file() and (out / "plots" / "speedup_FAKE.png").read_bytes()[:8] == PNG_MAGIC


def test_default_agents_and_report_of_two_run_dirs(capsys, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    assert run(capsys, "eval", *FAKE, "--out", str(a), "--quiet", "--no-report")[0] == 0
    assert run(capsys, "eval", *FAKE, "--agent", "random", "--configs", "1-2", "--out", str(b), "--quiet",
               "--no-report")[0] == 0
    code, stdout, _ = run(capsys, "report", str(a), str(b), "--out", str(tmp_path / "r.md"),
                          "--plots", str(tmp_path / "plots"))
    assert code == 0
    text = (tmp_path / "r.md").read_text()
    assert text in stdout
    for heading in ("## Summary", "Table 5 layout", "Fig. 3 layout", "Table 9 layout"):
        assert heading in text
    # compiler: 100% and speedup 1.0; expert: excluded (no expert kernel on the fake machine), shown as "–"
    assert "| compiler | 1 | 1/1 (100%) | 100% | 0% | 0% | 0% | 1.000 |" in text  # default: C1 only
    assert "| L1 | copy | 1/1, –, 1/1, " in text and "| **all** | **total** |" in text
    for png in ("success_vs_turns.png", "speedup_FAKE.png"):
        assert (tmp_path / "plots" / png).read_bytes()[:8] == PNG_MAGIC


def test_report_of_records_is_deterministic_in_registry_order(tmp_path, capsys):
    run(capsys, "eval", *FAKE, "--agent", "compiler", "--configs", "1-2", "--out", str(tmp_path), "--quiet",
        "--no-report")
    records = load_runs([tmp_path])
    assert render(records, ["x"]) == render(list(reversed(records)), ["x"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--agent", "compilr"], "unknown agent 'compilr' (did you mean 'compiler'?)"),
        (["--agent", "llm"], "--agent llm needs --model"),
        (["--configs", "x"], "bad config range 'x'"),
        (["--tasks", "copi"], "unknown task 'copi'"),
        (["--levels", "3"], "matches no episodes"),
        (["--levels", "one"], "--levels must be comma-separated integers"),
        (["--runs", "0"], "runs must be >= 1"),
        (["--concurrency", "0"], "--concurrency must be >= 1"),
        (["--search-budget", "0"], "--search-budget: Input should be greater than or equal to 1, got 0"),
        (["--timeout", "0"], "--timeout: Input should be greater than 0"),
        (["--import", "no.such.module"], "--import: No module named 'no'"),
    ],
)
def test_eval_usage_errors(capsys, tmp_path, argv, message):
    code, _, err = run(capsys, "eval", *FAKE, "--out", str(tmp_path), *argv)
    assert code == 2 and message in err


def test_eval_refuses_a_used_run_dir_without_resume(capsys, tmp_path):
    assert run(capsys, "eval", *FAKE, "--agent", "compiler", "--out", str(tmp_path), "--quiet", "--no-report")[0] == 0
    code, _, err = run(capsys, "eval", *FAKE, "--agent", "compiler", "--out", str(tmp_path))
    assert code == 2 and "--resume" in err
    code, _, err = run(capsys, "eval", *FAKE, "--agent", "compiler", "--out", str(tmp_path), "--resume", "--quiet")
    assert code == 0


def test_report_of_a_missing_dir_is_a_usage_error(capsys, tmp_path):
    code, _, err = run(capsys, "report", str(tmp_path / "nope"))
    assert code == 2 and "no episodes.jsonl" in err


def test_transcripts_are_valid_json_files_beside_the_records(capsys, tmp_path):
    run(capsys, "eval", *FAKE, "--agent", "compiler", "--configs", "1", "--out", str(tmp_path), "--quiet",
        "--no-report")
    (record,) = load_runs([tmp_path])
    t = json.loads((tmp_path / record.transcript).read_text())
    assert t["env_id"] == "KernelCraft-FAKE-copy" and t["agent"] == "compiler" and t["model"] is None
    assert [m["role"] for m in t["messages"]] == ["system", "user"] + ["assistant", "tool"] * 3
