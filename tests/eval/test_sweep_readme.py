"""The README's measured sweep table is the committed results file, rendered (never typed in).

``kcgym.eval.report.sweep_table_of_file`` renders it; the README block between ``<!-- generated: sweep -->``
and ``<!-- end generated -->`` must equal that output (a README-table generator can call the same function).
"""

from __future__ import annotations

import re
from pathlib import Path

from kcgym.eval.report import sweep_table_of_file
from kcgym.eval.store import load_records

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "sweep_npu_matmul_c3" / "episodes.jsonl"
BLOCK = re.compile(r"<!-- generated: sweep -->\n(.*?)\n<!-- end generated -->", re.S)


def readme_block() -> str:
    match = BLOCK.search((ROOT / "README.md").read_text(encoding="utf-8"))
    assert match, "the README has no <!-- generated: sweep --> block"
    return match.group(1).strip("\n")


def test_the_readme_sweep_table_is_rendered_from_the_results_file():
    assert readme_block() == sweep_table_of_file(RESULTS)


def test_the_results_file_is_a_whole_sweep():
    records = load_records(RESULTS)
    points = {r.point for r in records}
    assert len(points) == 9 and {r.agent for r in records} == {"compiler", "expert"}
    assert all(r.status == "invalid" or r.success for r in records)  # the compiler and expert are correct
    for name in ("MLEN+VLEN", "BLEN+v_prefetch_rows"):  # the plots the README shows are committed beside it
        assert (RESULTS.parent / f"sweep_NPU_matmul_C3_{name}.png").is_file()
