"""What a newcomer meets first (issue 19): flags that refuse bad values, discoverable hw configs, clear errors.

CLI behaviour is tested through a real ``python -m kcgym.cli`` subprocess (PYTHONPATH inherited, so it
runs this tree), on the fake suite where an eval is needed (``--import tests.eval.fake_suite``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import kcgym  # noqa: F401  (registers the envs)
from kcgym.eval.progress import format_duration
from kcgym.eval.records import EpisodeRecord
from kcgym.registry import parse_config, parse_env_id
from kcgym.sims.hwconfig import fields_table
from tests.envs.conftest import fake_env
from tests.envs.fake_accelerator import FAST, SYNTAX

ROOT = Path(__file__).resolve().parents[1]
FAKE = ["--import", "tests.eval.fake_suite", "--accelerators", "FAKE"]


def kcgym_cli(*argv: str, env: dict[str, str] | None = None, timeout: float = 240) -> subprocess.CompletedProcess:
    environ = dict(os.environ if env is None else env)
    environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return subprocess.run([sys.executable, "-m", "kcgym.cli", *argv], cwd=ROOT, env=environ, capture_output=True,
                          text=True, timeout=timeout)


# -- flags that quietly did the wrong thing ------------------------------------------------------------


@pytest.mark.parametrize("configs", ["1-9", "1,7", "9"])
def test_eval_configs_beyond_the_range_are_usage_errors(tmp_path, configs):
    p = kcgym_cli("eval", *FAKE, "--configs", configs, "--out", str(tmp_path / "run"))
    assert p.returncode == 2 and "configs are 1..5 (C1..C5)" in p.stderr, p.stderr
    assert not (tmp_path / "run").exists()  # nothing started


def test_resume_needs_an_existing_run_and_says_what_is_left(tmp_path):
    p = kcgym_cli("eval", *FAKE, "--resume")
    assert p.returncode == 2 and "--resume needs --out DIR" in p.stderr
    p = kcgym_cli("eval", *FAKE, "--resume", "--out", str(tmp_path / "typo"))
    assert p.returncode == 2 and "no run to continue" in p.stderr and not (tmp_path / "typo").exists()
    run = str(tmp_path / "run")
    assert kcgym_cli("eval", *FAKE, "--agent", "compiler", "--configs", "1-2", "--out", run, "--quiet",
                     "--no-report").returncode == 0
    p = kcgym_cli("eval", *FAKE, "--agent", "compiler", "--configs", "1-3", "--out", run, "--resume", "--quiet",
                  "--no-report")
    assert p.returncode == 0 and "2 of 3 episodes recorded, 1 left to run" in p.stderr, p.stderr
    p = kcgym_cli("eval", *FAKE, "--agent", "compiler", "--configs", "1-3", "--out", run, "--resume", "--quiet",
                  "--no-report")
    assert p.returncode == 0 and "nothing left to run" in p.stderr


def test_list_rejects_an_unknown_accelerator_and_takes_any_case():
    p = kcgym_cli("list", "--accelerator", "TPU")
    assert p.returncode == 2 and "unknown accelerator 'TPU'" in p.stderr and "valid: NPU, VLIW, RVV" in p.stderr
    lower, upper = kcgym_cli("list", "--accelerator", "npu"), kcgym_cli("list", "--accelerators", "NPU")
    assert lower.returncode == upper.returncode == 0 and lower.stdout == upper.stdout
    assert "KernelCraft-NPU-matmul" in lower.stdout and "KernelCraft-RVV" not in lower.stdout
    both = kcgym_cli("list", "--accelerators", "npu,rvv").stdout
    assert "KernelCraft-RVV-relu" in both and "KernelCraft-VLIW" not in both


def test_llm_eval_without_a_key_is_a_usage_error_before_any_episode(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    p = kcgym_cli("eval", *FAKE, "--agent", "llm", "--model", "m", "--out", str(tmp_path / "r"), env=env, timeout=60)
    assert p.returncode == 2 and "$OPENAI_API_KEY is not set" in p.stderr and "--base-url" in p.stderr
    assert not (tmp_path / "r").exists()


def test_the_llm_agent_itself_records_why_without_a_key(monkeypatch):
    from baselines import AgentOptions
    from baselines.llm import LLMAgent
    from baselines.session import Session

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    session = Session(env=fake_env(), seed=0)
    LLMAgent(AgentOptions(model="m", max_retries=6)).play(session)  # returns at once: no retries
    assert session.failure == "api" and "no API key" in session.failure_message


def test_an_eval_where_every_episode_failed_for_api_reasons_exits_4_with_the_first_error_once(tmp_path):
    out = tmp_path / "r"
    p = kcgym_cli("eval", *FAKE, "--agent", "llm", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
                  "--max-retries", "0", "--configs", "1-3", "--out", str(out), "--no-plots")
    assert p.returncode == 4, p.stderr
    assert p.stderr.count("first api error") == 1 and "APIConnectionError" in p.stderr
    assert "FAIL api (" in p.stderr  # the reason is on the progress line too
    assert f"--rerun-errors --out {out}" in p.stderr
    assert "exit codes:" in kcgym_cli("eval", "--help").stdout and "4  every episode failed" in kcgym_cli(
        "eval", "--help").stdout


def test_max_episode_steps_becomes_max_turns():
    env = gym.make("KernelCraft-NPU-relu", max_episode_steps=2)
    assert env.unwrapped.max_turns == 2 and "TimeLimit" not in str(env)
    _, info = env.reset(seed=0)
    assert info["max_turns"] == 2
    env.step({"name": "read_docs", "arguments": {}})
    _, _, terminated, truncated, info = env.step({"name": "read_docs", "arguments": {}})
    assert truncated and not terminated and "episode" in info  # evaluated at the limit, as without the kwarg
    assert gym.make(env.spec).unwrapped.max_turns == 2
    with pytest.raises(ValueError, match="pass max_turns only"):
        gym.make("KernelCraft-NPU-relu", max_episode_steps=2, max_turns=3)


# -- hardware overrides you can discover ---------------------------------------------------------------


@pytest.mark.parametrize("acc", ["NPU", "VLIW", "RVV"])
def test_docs_hw_lists_every_field_and_the_readme_carries_the_same_table(acc):
    from kcgym.registry import ACCELERATORS

    model = ACCELERATORS[acc].hw_model
    p = kcgym_cli("docs", acc, "--hw")
    assert p.returncode == 0
    for name, info in model.model_fields.items():
        assert f"| `{name}` | {info.default} | {info.description} |" in p.stdout
    assert fields_table(model) in (ROOT / "README.md").read_text(encoding="utf-8")


def test_a_bad_hw_field_gets_did_you_mean_and_the_valid_names():
    p = kcgym_cli("docs", "NPU", "--hw", '{"mlen": 32}')
    assert p.returncode == 2
    assert "unknown NPU hw field 'mlen' (did you mean 'MLEN'?); valid: MLEN, VLEN, BLEN" in p.stderr
    assert "pydantic" not in p.stderr and "extra_forbidden" not in p.stderr
    with pytest.raises(ValueError, match="MLEN must equal VLEN"):
        gym.make("KernelCraft-NPU-relu", hw={"MLEN": 32})
    help_text = kcgym_cli("docs", "--help").stdout
    example = help_text[help_text.index("'{") + 1: help_text.index("}'") + 1]
    assert kcgym_cli("docs", "NPU", "--hw", example).returncode == 0  # the help's example works


# -- config 3 or "C3", recorded as 3 -------------------------------------------------------------------


def test_config_accepts_the_index_and_the_label_everywhere(tmp_path):
    from kcgym.scoring import BatchScorer

    assert parse_config(3) == parse_config("3") == parse_config("C3") == parse_config("c3") == 3
    assert parse_config("C1 (n=256)") == 1  # as `kcgym list` prints it
    env = gym.make("KernelCraft-NPU-relu", config="C2")
    _, info = env.reset(seed=0)
    assert info["config"] == 2 and info["config_label"].startswith("C2 (")
    assert BatchScorer("KernelCraft-NPU-relu", config="C2").env.cfg.index == 2
    asm = kcgym_cli("baseline", "KernelCraft-NPU-relu", "--config", "C2").stdout
    (tmp_path / "relu.s").write_text(asm)
    p = kcgym_cli("check", "KernelCraft-NPU-relu", str(tmp_path / "relu.s"), "--config", "c2", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["config"] == 2
    run = tmp_path / "run"
    assert kcgym_cli("eval", *FAKE, "--agent", "compiler", "--configs", "C1-C2", "--out", str(run), "--quiet",
                     "--no-report").returncode == 0
    assert sorted(json.loads(line)["config"] for line in (run / "episodes.jsonl").read_text().splitlines()) == [1, 2]
    p = kcgym_cli("check", "KernelCraft-NPU-relu", str(tmp_path / "relu.s"), "--config", "X")
    assert p.returncode == 2 and "like 3 or a label like 'C3'" in p.stderr


# -- docs -----------------------------------------------------------------------------------------------


def test_docs_all_prints_exactly_the_docs_of_the_prompt_and_the_index_shows_cli_syntax():
    p = kcgym_cli("docs", "npu", "--all")
    assert p.returncode == 0 and p.stdout.startswith("### [")
    prompt = gym.make("KernelCraft-NPU-relu").unwrapped.prompt
    assert p.stdout.rstrip("\n") in prompt
    index = kcgym_cli("docs", "NPU").stdout
    assert "kcgym docs NPU --section <id>" in index and "kcgym docs NPU --all" in index
    assert "read_docs(" not in index


# -- errors and crashes ---------------------------------------------------------------------------------


def test_score_completions_scores_a_missing_completion_no_kernel():
    from kcgym.scoring import BatchScorer

    scores = BatchScorer(fake_env()).score_completions([f"```\n{FAST}```", None])
    assert scores[0].correct and scores[1].error_class == "no_kernel" and scores[1].index == 1


def test_a_closed_output_pipe_ends_cleanly_with_every_record_intact(tmp_path):
    run = tmp_path / "run"
    cmd = [sys.executable, "-m", "kcgym.cli", "eval", *FAKE, "--agent", "compiler,random", "--configs", "1-5",
           "--out", str(run)]
    environ = dict(os.environ, PYTHONPATH=str(ROOT))
    shell = " ".join(f"'{c}'" for c in cmd) + " 2>&1 | head -2; exit ${PIPESTATUS[0]}"
    p = subprocess.run(["bash", "-c", shell], cwd=ROOT, env=environ, capture_output=True, text=True, timeout=240)
    assert p.returncode == 0, p.stdout + p.stderr
    lines = (run / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == 10 and all(EpisodeRecord.model_validate_json(line) for line in lines)


def test_an_unknown_env_id_suggests_without_listing_every_id():
    with pytest.raises(KeyError) as e:
        parse_env_id("KernelCraft-NPU-matmull")
    message = e.value.args[0]
    assert "did you mean 'KernelCraft-NPU-matmul'" in message and "kcgym list" in message
    assert "KernelCraft-RVV-relu" not in message and len(message) < 200


def test_check_names_the_users_file_and_refuses_dirs_and_empty_files(tmp_path):
    bad = tmp_path / "my_kernel.asm"
    bad.write_text("FOO r1\n")
    p = kcgym_cli("check", "KernelCraft-NPU-relu", str(bad))
    assert p.returncode == 3 and f"{bad}:1:1: error[E001]" in p.stdout and "kernel.s" not in p.stdout
    p = kcgym_cli("check", "KernelCraft-NPU-relu", str(tmp_path))
    assert p.returncode == 2 and "is a directory" in p.stderr
    (tmp_path / "empty.s").write_text("\n")
    p = kcgym_cli("check", "KernelCraft-NPU-relu", str(tmp_path / "empty.s"))
    assert p.returncode == 2 and "is empty" in p.stderr and "kcgym baseline KernelCraft-NPU-relu" in p.stderr


def test_check_json_diagnostics_are_structured(tmp_path):
    bad = tmp_path / "k.s"
    bad.write_text(SYNTAX)
    from kcgym import cli, registry
    from kcgym.tasks import TASKS
    from tests.envs import fake_accelerator as fa

    with pytest.MonkeyPatch.context() as mp:  # the fake machine, in-process (a subprocess has no fixtures)
        mp.setitem(registry._ACCELERATOR_PATHS, "FAKE", "tests.envs.fake_accelerator:FAKE")
        mp.setitem(registry.SUPPORTED, "FAKE", ("copy",))
        mp.setitem(TASKS, "copy", fa.COPY_TASK)
        import contextlib
        import io

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert cli.main(["check", "KernelCraft-FAKE-copy", str(bad), "--json"]) == 3
    diags = json.loads(buf.getvalue())["diagnostics"]
    assert diags and all(set(d) == {"severity", "line", "col", "code", "message", "hint"} for d in diags)
    assert isinstance(diags[0]["line"], int) and diags[0]["code"].startswith("E")


# -- smaller --------------------------------------------------------------------------------------------


def test_eta_and_counts_read_like_english(tmp_path):
    assert [format_duration(s) for s in (0.4, 42, 185, 3720)] == ["0s", "42s", "3m05s", "1h02m"]
    p = kcgym_cli("eval", *FAKE, "--agent", "compiler", "--out", str(tmp_path / "r"), "--no-plots")
    assert "kcgym eval: 1 episode x 1 agent (compiler)" in p.stderr
    assert "| ETA 0s" in p.stderr
    summary = next(line for line in p.stdout.splitlines() if line.startswith("| compiler |"))
    assert summary.split("|")[-3].strip() == "–"  # tokens / episode: none, not 0


def test_only_check_and_eval_help_carry_exit_codes():
    assert "exit codes:" not in kcgym_cli("list", "--help").stdout
    assert "exit codes:" not in kcgym_cli("docs", "--help").stdout
    assert "3  the kernel did not assemble" in kcgym_cli("check", "--help").stdout


def test_success_vs_turns_axis_ends_at_the_papers_budget():
    from kcgym.eval.plots import budget_axis

    def rec(agent: str, max_turns: int) -> EpisodeRecord:
        return EpisodeRecord(agent=agent, env_id="e", accelerator="NPU", task="relu", level=1, config=1, run=0,
                             seed=0, suite_version="x", max_turns=max_turns)

    assert budget_axis([rec("compiler", 15), rec("search", 34)]) == (15, {1: 15})


def test_report_keeps_the_same_agent_of_two_runs_apart(tmp_path):
    for name in ("a", "b"):
        assert kcgym_cli("eval", *FAKE, "--agent", "compiler", "--out", str(tmp_path / name), "--quiet",
                         "--no-report").returncode == 0
    p = kcgym_cli("report", str(tmp_path / "a"), str(tmp_path / "b"), "--no-plots")
    assert p.returncode == 0 and "| compiler [a] | 1 |" in p.stdout and "| compiler [b] | 1 |" in p.stdout


def test_ray_install_hint_is_the_same_in_help_readme_and_error():
    from kcgym.extras import RAY_INSTALL_HINT

    help_text = " ".join(kcgym_cli("eval", "--help").stdout.split())
    assert RAY_INSTALL_HINT in help_text and RAY_INSTALL_HINT in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_rl_extra_torch_pin_is_explained_in_the_readme():
    import re

    rl_line = next(line for line in (ROOT / "pyproject.toml").read_text().splitlines() if line.startswith("rl ="))
    torch_req = re.search(r'"(torch[^"]*)"', rl_line).group(1)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"`{torch_req}`" in readme and "download.pytorch.org/whl/cpu" in readme
