"""``benchmarks/bench_speed.py --cold``: its cells (compiler kernels, then expert kernels), how its rows are told
apart (an expert's row never replaces the compiler kernel's of the same task and config), and the README table."""

from __future__ import annotations

from tests.bench_modules import load

B = load("bench_speed")


def _row(kernel: str | None, new_s: float) -> dict:
    return {"kind": "cold_process", "machine": "VLIW", "task": "batch_matmul", "config": 5, "repeats": 1,
            "new_s": new_s, "new_cpu_s": new_s, "load1": 0.5, **({"kernel": kernel} if kernel else {})}


def test_cells_are_compiler_kernels_then_experts():
    cells = B._cold_cells(["VLIW"])
    assert cells[:len(B.COLD_KERNELS["VLIW"])] == [("VLIW", t, c, "compiler") for t, c in B.COLD_KERNELS["VLIW"]]
    assert ("VLIW", "batch_matmul", 5, "expert") in cells
    assert B._cold_cells(["NPU"]) == [("NPU", t, c, "compiler") for t, c in B.COLD_KERNELS["NPU"]]


def test_expert_and_compiler_rows_have_their_own_keys():
    compiler, expert = _row(None, 1.0), _row("expert", 2.0)
    assert B._cold_key(compiler) != B._cold_key(expert)
    assert B._cold_key(compiler) == B._cold_key(_row("compiler", 3.0))  # (rows before the field: compiler ones)
    assert B._cold_key({**compiler, "kind": "prepass"}) != B._cold_key(compiler)


def test_readme_table_names_the_expert_row():
    text = B.readme_table([_row(None, 1.25), _row("expert", 7.5)])
    lines = [line for line in text.splitlines() if line.startswith("| VLIW | batch_matmul")]
    assert sorted(lines) == ["| VLIW | batch_matmul (expert) | C5 | - | - | 7.50 | 7.50 | 0.5 |",
                             "| VLIW | batch_matmul | C5 | - | - | 1.25 | 1.25 | 0.5 |"]
