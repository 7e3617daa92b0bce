"""The README's measured numbers are the committed results files (benchmarks/readme_tables.py).

Every generated block must exist, be closed, and read exactly what its benchmark renders from its results
file; a README table of numbers outside a generated block must be one of the known static tables (inputs
and defaults, not measurements), so a new measured table cannot be typed in by hand.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.bench_modules import load

ROOT = Path(__file__).resolve().parent.parent


R = load("readme_tables", "_kcgym_readme_tables")
README = (ROOT / "README.md").read_text(encoding="utf-8")
# header rows of the README's tables that are not measurements (configs, flags, defaults, shapes, prose)
STATIC_HEADERS = {
    "| accelerator | modelled on | tasks (x 5 configs C1..C5) | numbers | section |",
    "| field | default | meaning | constraints |",
    "| kwarg | default | meaning |",
    "| tool | arguments | returns |",
    "| task (params) | | C1 | C2 | C3 | C4 | C5 |",
    "| task | params | tensors (HBM, in order) |",
    "| flag | default | meaning |",
    "| metric | meaning |",
    "| server | start | `--base-url` |",
}
# measured tables whose benchmark writes no results file yet (none left): a table listed here is a visible gap
NOT_YET_GENERATED: dict[str, str] = {}


@pytest.mark.parametrize("block", [b for b in R.BLOCKS], ids=lambda b: b.name)
def test_each_block_reads_what_its_results_file_renders(block):
    have = R.current(README, block.name)
    if not block.available():
        assert block.optional, f"benchmarks/results/{block.results[0]} is missing: run benchmarks/{block.script}.py"
        assert have is None, f"README block {block.name!r} has no results file to come from"
        return  # an optional block (a benchmark another change adds) waits for its script and results
    assert have is not None or block.optional, f"README has no {R.begin(block.name)} block"
    if have is not None:
        assert have == block.text(), (f"README block {block.name!r} disagrees with benchmarks/results/"
                                      f"{block.results[0]}: run python benchmarks/readme_tables.py --write")


def test_the_check_command_agrees():
    assert R.stale(README) == []


def test_markers_are_paired_and_known():
    names = re.findall(r"<!-- generated: ([a-z0-9-]+) -->", README)
    assert len(names) == len(set(names)) == README.count(R.END)
    assert set(names) <= {b.name for b in R.BLOCKS}


def test_every_table_of_numbers_is_generated_or_known():
    outside = README
    for block in R.BLOCKS:  # drop the generated blocks
        while R.begin(block.name) in outside:
            head, body = outside.split(R.begin(block.name), 1)
            outside = head + body.split(R.END, 1)[1]
    headers = []
    lines = outside.splitlines()
    for i, line in enumerate(lines[:-1]):
        if line.startswith("|") and re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", lines[i + 1].strip()):
            headers.append(line.strip())
    unknown = [h for h in headers if h not in STATIC_HEADERS and h not in NOT_YET_GENERATED]
    assert not unknown, f"README tables typed in by hand (make them generated blocks): {unknown}"


def test_a_changed_number_is_caught():
    block = next(b for b in R.BLOCKS if b.name == "npu-experts")
    if not block.available():
        pytest.skip("no npu_experts.jsonl")
    text = block.text()
    assert "**" in text
    edited = R.replace(README, block, text.replace("**", "**9", 1))
    assert any(p.startswith("npu-experts:") for p in R.stale(edited))
    assert R.stale(R.write(edited)) == R.stale(README)


def test_the_program_cache_bounds_in_the_readme_are_the_constants():
    from kcgym.limits import MAX_CACHED_PROGRAM_CHARS, MAX_CACHED_PROGRAMS

    text = " ".join(README.split())
    assert f"`MAX_CACHED_PROGRAMS` = {MAX_CACHED_PROGRAMS} entries" in text
    assert f"`MAX_CACHED_PROGRAM_CHARS` = {MAX_CACHED_PROGRAM_CHARS:,} source characters" in text
