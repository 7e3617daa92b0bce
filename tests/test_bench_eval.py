"""The side-by-side eval comparison (``benchmarks/bench_eval.py``): it sums episode wall over the episodes both runs
played only, keys an episode by (agent, env, config, run), and skips the torn last line of a run still writing."""

from __future__ import annotations

import json
from pathlib import Path

from tests.bench_modules import load

B = load("bench_eval")


def _episode(agent: str, machine: str, task: str, config: int, wall: float, success: bool = True) -> dict:
    return {"agent": agent, "env_id": f"KernelCraft-{machine}-{task}", "accelerator": machine, "config": config,
            "run": 0, "wall_s": wall, "success": success}


def _run_dir(tmp_path: Path, name: str, eps: list[dict], torn: bool = False) -> Path:
    d = tmp_path / name
    d.mkdir()
    text = "".join(json.dumps(e) + "\n" for e in eps) + ('{"agent": "comp' if torn else "")
    (d / "episodes.jsonl").write_text(text)
    return d


def test_only_shared_episodes_count_and_a_torn_line_is_skipped(tmp_path):
    before = _run_dir(tmp_path, "before", [_episode("compiler", "NPU", "matmul", 1, 4.0),
                                            _episode("compiler", "NPU", "matmul", 2, 6.0, success=False),
                                            _episode("search", "VLIW", "relu", 1, 10.0)])
    after = _run_dir(tmp_path, "after", [_episode("compiler", "NPU", "matmul", 1, 1.0),
                                          _episode("search", "VLIW", "relu", 1, 5.0),
                                          _episode("compiler", "CPU", "qsort", 1, 99.0)], torn=True)
    row = B.compare(B.episodes(before), B.episodes(after))
    assert (row["episodes_before"], row["episodes_after"], row["shared"]) == (3, 3, 2)
    assert row["cells"]["all"] == {"n": 2, "before_s": 14.0, "after_s": 6.0, "success_before": 2, "success_after": 2}
    assert row["cells"]["NPU compiler"]["before_s"] == 4.0 and "CPU compiler" not in row["cells"]
    assert row["configs"] == [1]


def test_the_readme_block_renders_every_machine_and_agent(tmp_path):
    before = _run_dir(tmp_path, "before", [_episode("compiler", "NPU", "matmul", 1, 4.0),
                                            _episode("expert", "RVV", "gemv", 1, 2.0)])
    after = _run_dir(tmp_path, "after", [_episode("compiler", "NPU", "matmul", 1, 2.0),
                                          _episode("expert", "RVV", "gemv", 1, 4.0)])
    out = tmp_path / "rows.jsonl"
    row = B.record(B.compare(B.episodes(before), B.episodes(after)), "kcgym eval", "cmd", "aaa", "bbb",
                   {"before": 10.0, "after": 8.0}, {"before": 9.0, "after": 7.0}, "1.0", out)
    text = B.render([json.loads(out.read_text())])
    assert row["label"] == "kcgym eval"
    assert "| NPU | 4.0 -> 2.0 (2.00x) | – |" in text and "| RVV | – | 2.0 -> 4.0 (0.50x) |" in text
    assert "6.0 s -> 6.0 s of summed episode wall (1.00x)" in text and "before 10.0 s wall" in text
