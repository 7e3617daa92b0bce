"""The README's benchmark sentences are generated from the results files (so they cannot drift)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def bench(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def readme() -> str:
    return " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())


def test_spin_sentence_matches_results():
    path = ROOT / "benchmarks" / "results" / "spin.jsonl"
    if not path.exists():
        pytest.skip("run benchmarks/bench_spin.py first")
    rows = jsonl(path)
    survey = path.with_name("spin_experts_c1.jsonl")
    experts = jsonl(survey) if survey.exists() else None
    assert bench("bench_spin").readme_sentence(rows, experts) in readme()


def test_fuzz_sentence_matches_results():
    path = ROOT / "benchmarks" / "results" / "fuzz.json"
    if not path.exists():
        pytest.skip("run benchmarks/bench_fuzz.py first")
    assert bench("bench_fuzz").readme_sentence(json.loads(path.read_text())) in readme()


def test_budget_rule_in_the_readme_quotes_the_constants():
    from kcgym import limits

    text = readme()
    assert f"scans at most the last {limits.MAX_COMPLETION_CHARS:,} characters" in text
    assert f"`step_budget` (default {limits.STEP_BUDGET_MULTIPLE})" in text
    assert f"at least {limits.STEP_BUDGET_FLOOR}, plus one step for the halt" in text
    assert f"| `step_budget` | {limits.STEP_BUDGET_MULTIPLE} |" in text
