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


def readme() -> str:
    return " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())


def test_spin_sentence_matches_results():
    path = ROOT / "benchmarks" / "results" / "spin.jsonl"
    if not path.exists():
        pytest.skip("run benchmarks/bench_spin.py first")
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    assert bench("bench_spin").readme_sentence(rows) in readme()


def test_fuzz_sentence_matches_results():
    path = ROOT / "benchmarks" / "results" / "fuzz.json"
    if not path.exists():
        pytest.skip("run benchmarks/bench_fuzz.py first")
    assert bench("bench_fuzz").readme_sentence(json.loads(path.read_text())) in readme()
