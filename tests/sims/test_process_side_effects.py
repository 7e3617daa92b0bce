"""kcgym changes no process-wide setting the user made, and its process-wide caches stay bounded."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import kcgym.evaluation as evaluation
import kcgym.scoring as scoring
from kcgym.limits import MAX_CACHED_BASELINES, MAX_CACHED_SCORERS

ROOT = Path(__file__).resolve().parents[2]
_PROBE = (
    "import jax; from kcgym.sims.jax_cache import enable_persistent_cache; "
    "{before}enable_persistent_cache(); print(jax.config.jax_compilation_cache_dir)"
)


def _cache_dir_after(tmp_path: Path, before: str = "", **env: str) -> str:
    full = {k: v for k, v in os.environ.items() if k != "JAX_COMPILATION_CACHE_DIR"}
    full.update(PYTHONPATH=str(ROOT), KCGYM_CACHE_DIR=str(tmp_path / "kc"), JAX_PLATFORMS="cpu", **env)
    out = subprocess.run([sys.executable, "-c", _PROBE.format(before=before)], env=full, capture_output=True,
                         text=True, timeout=120, check=True)
    return out.stdout.strip().splitlines()[-1]


def test_kcgym_cache_dir_is_used_when_the_user_set_none(tmp_path):
    assert _cache_dir_after(tmp_path) == str(tmp_path / "kc" / "jax")


def test_the_users_jax_cache_dir_stands(tmp_path):
    mine = str(tmp_path / "mine")
    assert _cache_dir_after(tmp_path, JAX_COMPILATION_CACHE_DIR=mine) == mine
    set_in_code = f"jax.config.update('jax_compilation_cache_dir', {mine!r}); "
    assert _cache_dir_after(tmp_path, before=set_in_code) == mine


def test_scorer_cache_is_a_bounded_lru(monkeypatch):
    made = []

    class Cheap:
        def __init__(self, env_id, config, **kw):
            made.append((env_id, config, kw["hidden_inputs"]))

    monkeypatch.setattr(scoring, "BatchScorer", Cheap)
    monkeypatch.setattr(scoring, "MAX_CACHED_SCORERS", 2)
    monkeypatch.setattr(scoring, "_SCORERS", type(scoring._SCORERS)())
    a = scoring.scorer_for("KernelCraft-NPU-relu", 1, hidden_inputs=1)
    scoring.scorer_for("KernelCraft-NPU-relu", 1, hidden_inputs=2)
    assert scoring.scorer_for("KernelCraft-NPU-relu", 1, hidden_inputs=1) is a  # a is now the most recent
    scoring.scorer_for("KernelCraft-NPU-relu", 1, hidden_inputs=3)  # evicts hidden_inputs=2, not a
    assert len(scoring._SCORERS) == 2
    assert scoring.scorer_for("KernelCraft-NPU-relu", 1, hidden_inputs=1) is a
    scoring.scorer_for("KernelCraft-NPU-relu", 1, hidden_inputs=2)
    assert made.count(("KernelCraft-NPU-relu", 1, 2)) == 2  # rebuilt after eviction
    assert MAX_CACHED_SCORERS >= 8


def test_baseline_cache_is_bounded(monkeypatch):
    from kcgym.envs.kernel_env import KernelCraftEnv

    monkeypatch.setattr(evaluation, "MAX_CACHED_BASELINES", 1)
    monkeypatch.setattr(evaluation, "_BASELINES", {})
    for config in (1, 2, 1):
        env = KernelCraftEnv("NPU", "relu", config=config)
        assert env.evaluator.baseline().cycles > 0
        assert len(evaluation._BASELINES) == 1
    assert MAX_CACHED_BASELINES >= 64


def test_readme_states_the_cache_bounds():
    text = (ROOT / "README.md").read_text()
    assert f"`kcgym.limits.MAX_CACHED_SCORERS` = {MAX_CACHED_SCORERS}" in text
    assert f"`MAX_CACHED_BASELINES` = {MAX_CACHED_BASELINES}" in text
