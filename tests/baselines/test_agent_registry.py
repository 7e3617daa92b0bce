"""kcgym.agents: the one table of agents, resolved lazily, extended by register_agent and entry points."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import baselines
from kcgym import agents

ROOT = Path(__file__).resolve().parents[2]


def run_python(code: str, *paths: Path) -> str:
    path = ":".join(str(p) for p in (*paths, ROOT))
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                         env={"PYTHONPATH": path, "PATH": "/usr/bin:/bin", "JAX_PLATFORMS": "cpu"}, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_one_table():
    assert baselines.AGENTS is agents.AGENTS and baselines.make_agent is agents.make_agent
    assert set(agents.BUILTIN_AGENTS) <= set(agents.agent_names()) and agents.OFFLINE_AGENTS == (
        "compiler", "expert", "search")


def test_importing_the_registry_imports_no_agent():
    loaded = run_python("""
        import sys
        import kcgym.agents
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("baselines", "openai")))
    """)
    assert loaded == "[]"


def test_an_entry_point_agent_is_found(tmp_path: Path):
    dist = tmp_path / "kcgym_plugin_demo-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: kcgym-plugin-demo\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[kcgym.agents]\ndemo = demo_agent:DemoAgent\ncompiler = x:Y\n")
    (tmp_path / "demo_agent.py").write_text(textwrap.dedent("""
        from baselines.fixed import CompilerAgent

        class DemoAgent(CompilerAgent):
            name = "demo"
    """))
    out = run_python("""
        from kcgym.agents import AGENTS, agent_names, make_agent
        print(agent_names()[-1], type(make_agent("demo")).__name__, AGENTS["compiler"])
    """, tmp_path)
    assert out == "demo DemoAgent baselines.fixed:CompilerAgent"  # a built-in name is never shadowed


def test_register_agent_and_errors():
    agents.register_agent("compiler-again", "baselines.fixed:CompilerAgent")
    try:
        assert type(agents.make_agent("compiler-again")).__name__ == "CompilerAgent"
    finally:
        agents.AGENTS.pop("compiler-again")
    with pytest.raises(ValueError, match="module:Class"):
        agents.register_agent("bad", "baselines.fixed.CompilerAgent")
    with pytest.raises(KeyError, match="did you mean 'compiler'"):
        agents.make_agent("compilr")
    assert agents.agent_options(max_retries=2).max_retries == 2
    assert agents.session_class().__name__ == "Session"
    assert agents.missing_credentials("http://localhost:1/v1", "NO_SUCH_KEY_VAR") is None
