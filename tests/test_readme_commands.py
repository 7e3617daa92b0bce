"""Every ``kcgym`` command the README shows in a fenced bash block runs and exits 0.

The commands are parsed from the README itself (so a new example is tested the day it is written),
run one by one by bash in a scratch directory, in README order (``kcgym baseline ... > relu.s``
feeds the ``kcgym check ... relu.s`` lines), with ``kcgym`` meaning ``python -m kcgym.cli`` of this
tree. Two rules, both applied by this file and nowhere else:

- **Excluded**: commands that need an API key or a network model server (``--agent llm``), and
  commands that read a run directory only such a command writes (``kcgym report runs/gpt52``).
- **Made small**: ``kcgym eval`` without a task or accelerator selection (the full main job takes
  minutes) runs on ``--accelerators NPU --tasks relu`` only; every other flag is kept as written.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
NEEDS_NETWORK = ("--agent llm",)  # an API key or a model server: never run by the test suite
SMALL_EVAL = ["--accelerators", "NPU", "--tasks", "relu"]  # substituted into an unselective `kcgym eval`
_FENCE = re.compile(r"^```bash\n(.*?)^```", re.M | re.S)


def readme_commands(text: str) -> list[str]:
    """The ``kcgym ...`` lines of the README's bash blocks, continuations joined, comments dropped."""
    commands = []
    for block in _FENCE.findall(text):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = line.strip()
            if line.startswith("kcgym "):
                commands.append(_strip_comment(line))
    return commands


def _strip_comment(line: str) -> str:
    """``kcgym list   # note`` -> ``kcgym list`` (a ``#`` inside quotes, as in JSON, is kept)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and line[i - 1].isspace():
            return line[:i].rstrip()
    return line


def plan(commands: list[str]) -> tuple[list[str], list[str]]:
    """``(to run, excluded)`` by the module docstring's rules."""
    run, excluded, unreachable_dirs = [], [], set()
    for cmd in commands:
        words = shlex.split(cmd)
        if any(marker in cmd for marker in NEEDS_NETWORK):
            excluded.append(cmd)
            if "--out" in words:
                unreachable_dirs.add(words[words.index("--out") + 1])
            continue
        if words[1] == "report" and unreachable_dirs & set(words[2:]):
            excluded.append(cmd)
            continue
        if words[1] == "eval" and not {"--accelerators", "--accelerator", "--tasks"} & set(words):
            cmd = f"{cmd} {' '.join(SMALL_EVAL)}"
        run.append(cmd)
    return run, excluded


def test_the_readme_shows_commands_of_every_kind_and_the_rules_hold():
    commands = readme_commands(README.read_text(encoding="utf-8"))
    shown = {shlex.split(c)[1] for c in commands}
    assert {"eval", "list", "docs", "baseline", "check", "report"} <= shown, shown
    run, excluded = plan(commands)
    assert run and excluded and all("--agent llm" not in c for c in run)
    assert any(c.startswith("kcgym report") for c in excluded)  # it reads the LLM runs
    assert "kcgym eval --accelerators NPU --tasks relu" in run  # the main job, made small


def test_every_readme_command_exits_0(tmp_path):
    run, _ = plan(readme_commands(README.read_text(encoding="utf-8")))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    prelude = f'kcgym() {{ {shlex.quote(sys.executable)} -m kcgym.cli "$@"; }}\n'
    failures = []
    for cmd in run:
        p = subprocess.run(["bash", "-c", prelude + cmd], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=600)
        if p.returncode != 0:
            failures.append(f"{cmd}\n  exit {p.returncode}: {p.stderr.strip()[-600:]}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("kcgym list   # note", "kcgym list"),
        ("kcgym check E k.s --hw '{\"a#b\": 1}'  # c", "kcgym check E k.s --hw '{\"a#b\": 1}'"),
    ],
)
def test_comments_are_cut_outside_quotes_only(line, command):
    assert readme_commands(f"```bash\n{line}\n```\n") == [command]
