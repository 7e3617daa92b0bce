"""The ``kcgym`` command on the fake accelerator (patched into the registry): output and exit codes."""

from __future__ import annotations

import json

import pytest

from kcgym import cli, registry
from kcgym.tasks import TASKS
from tests.envs import fake_accelerator as fa

FAKE_ID = "KernelCraft-FAKE-copy"


@pytest.fixture(autouse=True)
def fake_in_registry(monkeypatch):
    """The CLI resolves everything through the registry; put the fake machine and task in it."""
    monkeypatch.setitem(registry._ACCELERATOR_PATHS, "FAKE", "tests.envs.fake_accelerator:FAKE")
    monkeypatch.setitem(registry.SUPPORTED, "FAKE", ("copy",))
    monkeypatch.setitem(TASKS, "copy", fa.COPY_TASK)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def kernel(tmp_path, text: str) -> str:
    path = tmp_path / "kernel.s"
    path.write_text(text)
    return str(path)


def test_list(capsys):
    code, out, _ = run(capsys, "list", "--accelerator", "FAKE")
    assert code == 0
    assert out.startswith(FAKE_ID) and "L1" in out and "Copy" in out and "C5 (R=32, C=16)" in out
    code, out, _ = run(capsys, "list", "--json", "--accelerator", "FAKE")
    rows = json.loads(out)
    assert rows[0]["env_id"] == FAKE_ID and len(rows[0]["configs"]) == 5


def test_list_all_includes_the_npu_table(capsys):
    code, out, _ = run(capsys, "list")
    assert code == 0 and "KernelCraft-NPU-matmul" in out and "GEMM" in out


def test_docs(capsys):
    code, out, _ = run(capsys, "docs", "FAKE")
    assert code == 0 and "guide" in out and "Instruction reference" in out
    code, out, _ = run(capsys, "docs", "FAKE", "--section", "guide")
    assert code == 0 and "Y lies after X -> write it." in out
    code, out, _ = run(capsys, "docs", "FAKE", "--query", "COPYROW")
    assert code == 0 and "[isa]" in out
    code, out, err = run(capsys, "docs", "FAKE", "--section", "gide")
    assert code == 2 and "Did you mean 'guide'" in err
    code, out, err = run(capsys, "docs", "FAK")
    assert code == 2 and "did you mean 'FAKE'" in err


def test_baseline(capsys):
    code, out, _ = run(capsys, "baseline", FAKE_ID, "--config", "2")
    assert code == 0 and out.count("COPYROW") == 8


@pytest.mark.parametrize(
    ("source", "code", "fragment"),
    [
        (fa.FAST, 0, "Result: CORRECT"),
        (fa.WRONG, 1, "Result: INCORRECT"),
        (fa.FAULTY, 1, "runtime fault OOB_MEM at line 2"),
        (fa.EXPLOIT, 1, "SUSPICIOUS"),
        (fa.SYNTAX, 3, "error[E001]"),
    ],
)
def test_check_exit_codes(capsys, tmp_path, source, code, fragment):
    rc, out, _ = run(capsys, "check", FAKE_ID, kernel(tmp_path, source), "--config", "1")
    assert rc == code and fragment in out


def test_check_json_matches_the_env(capsys, tmp_path):
    from tests.envs.conftest import call, fake_env

    rc, out, _ = run(capsys, "check", FAKE_ID, kernel(tmp_path, fa.FAST), "--seed", "4", "--json")
    data = json.loads(out)
    assert rc == 0 and data["correct"] and data["cycles"] == 100 and data["speedup"] == pytest.approx(1.6)
    assert data["seed"] == 4 and data["config"] == 1 and data["config_label"].startswith("C1")
    env = fake_env()
    env.reset(seed=4)
    call(env, "write_kernel", source=fa.FAST)
    *_, info = call(env, "simulate")
    assert {k: info[k] for k in ("cycles", "match_rate", "speedup", "correct")} == {
        k: data[k] for k in ("cycles", "match_rate", "speedup", "correct")
    }


def test_check_json_assembly_failure(capsys, tmp_path):
    rc, out, _ = run(capsys, "check", FAKE_ID, kernel(tmp_path, fa.SYNTAX), "--json")
    data = json.loads(out)
    assert rc == 3 and data["assembled"] is False and len(data["diagnostics"]) == 2


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["check", "KernelCraft-FAKE-cpy", "k.s"], "did you mean 'KernelCraft-FAKE-copy'"),
        (["check", "copy", "k.s"], "did you mean 'KernelCraft-CPU-copy' or 'KernelCraft-FAKE-copy'"),  # two copies
        (["check", FAKE_ID, "missing.s"], "kernel file not found"),
        (["baseline", FAKE_ID, "--config", "9"], "config must be in 1..5"),
        (["baseline", FAKE_ID, "--hw", "{oops"], "--hw is not valid JSON"),
        (["baseline", FAKE_ID, "--hw", '{"warp": 1}'], "warp"),
        (["baseline", FAKE_ID, "--hw", "[1]"], "JSON object"),
    ],
)
def test_usage_errors_exit_2(capsys, tmp_path, monkeypatch, argv, fragment):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.s").write_text("COPY\n")
    code, out, err = run(capsys, *argv)
    assert code == 2 and fragment in err


def test_argparse_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["check"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        cli.main(["frobnicate"])
    assert e.value.code == 2


def test_help_documents_exit_codes(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert e.value.code == 0 and "exit codes:" in out and "3  the kernel did not assemble" in out
    with pytest.raises(SystemExit):
        cli.main(["check", "--help"])
    assert "exit codes:" in capsys.readouterr().out


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["--version"])
    assert e.value.code == 0 and "kcgym 0.1.0" in capsys.readouterr().out


def test_list_into_a_closed_pipe_exits_quietly(monkeypatch):
    """``kcgym list | head -1``: a reader that left is not an error (no BrokenPipeError traceback)."""
    import os

    from kcgym.cli import main

    read_end, write_end = os.pipe()
    os.close(read_end)  # every write now fails with EPIPE, as after `head` exits
    closed = os.fdopen(write_end, "w", buffering=1)
    monkeypatch.setattr("sys.stdout", closed)
    try:
        assert main(["list"]) == 0
    finally:
        monkeypatch.undo()
        closed.close()
