"""Wall time of the main job (`kcgym eval` with its defaults), with an empty and a warm JAX cache.

Usage: python benchmarks/bench_eval.py [--configs 1-2] [extra kcgym eval flags...]
Each measurement runs `kcgym eval` in a fresh process into a temporary run directory.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed_eval(cache_dir: Path, out: Path, extra: list[str]) -> float:
    env = {**os.environ, "KCGYM_CACHE_DIR": str(cache_dir), "JAX_PLATFORMS": os.environ.get("JAX_PLATFORMS", "cpu")}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "kcgym.cli", "eval", "--out", str(out), "--quiet", "--no-report", *extra],
                   check=True, env=env)
    return time.perf_counter() - start


def main() -> None:
    extra = sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cold = timed_eval(root / "cache", root / "cold", extra)
        warm = timed_eval(root / "cache", root / "warm", extra)
        n = len((root / "cold" / "episodes.jsonl").read_text().splitlines())
    print(f"kcgym eval {' '.join(extra) or '(defaults)'}: {n} episodes, cold cache {cold:.1f} s, warm {warm:.1f} s "
          f"({os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
