"""The README's co-design example: a hardware sweep of NPU matmul C3 over the systolic array.

Runs ``kcgym sweep`` (compiler and expert kernels at every grid point) into
``benchmarks/results/sweep_npu_matmul_c3/`` and renders its table, which ``benchmarks/readme_tables.py``
puts in the README (the ``sweep`` block). The transcripts are left out of the committed results (they are
the kernels' sources, regenerated on demand); ``--resume`` continues a partial run.

    python benchmarks/bench_sweep.py            # run (about 20 min on 2 cores; each hw point compiles anew)
    python benchmarks/bench_sweep.py --table    # print the table of the committed results
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent / "results" / "sweep_npu_matmul_c3"
GRID = ["--hw", "MLEN+VLEN=32,64,128", "--hw", "BLEN+v_prefetch_rows=4,8,16"]


def render(path: Path) -> str:
    """The sweep table of a records file (``kcgym.eval.report.sweep_table_of_file``)."""
    from kcgym.eval.report import sweep_table_of_file

    return sweep_table_of_file(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--table", action="store_true", help="print the table of the committed results and exit")
    ap.add_argument("--resume", action="store_true", help="continue a partial run in the results directory")
    args = ap.parse_args()
    if not args.table:
        cmd = [sys.executable, "-m", "kcgym.cli", "sweep", "NPU", "--tasks", "matmul", "--configs", "3", *GRID,
               "--out", str(OUT), *(["--resume"] if args.resume else [])]
        subprocess.run(cmd, check=True)
    print(render(OUT / "episodes.jsonl"))


if __name__ == "__main__":
    main()
