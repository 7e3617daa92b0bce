"""The QEMU yardstick for RVV scoring rates (``benchmarks/bench_rvv_qemu.py``): the repeated-call harness leaves the
kernel's result unchanged, the bound comes from the warm run, and a first run below the start-up noise is not
printed as a time."""

from __future__ import annotations

import pytest

from kcgym.sims.rvv.qemu import unavailable_reason
from tests.bench_modules import load

B = load("bench_rvv_qemu")


def _row(**kw) -> dict:
    row = {"machine": "RVV", "task": "matmul", "config": 1, "instructions": 24_000, "runs": 800, "qemu_empty_ms": 12.0,
           "qemu_once_ms": 12.5, "qemu_loop_ms": 400.0, "qemu_empty_loop_ms": 20.0, "first_ms": 0.5, "warm_ms": 0.4,
           "warm_instructions_per_s": 6e7, "ceiling_kernels_per_s": 5000.0, "target_kernels_per_s": 2000,
           "repeats": 31, "cpus": 2, "date": "2026-12-02", "load": 1.0}
    return {**row, **kw}


def test_render_states_the_target_as_a_share_of_the_bound_and_hides_negative_first_runs():
    text = B.render([_row(), _row(config=3, first_ms=-0.2, target_kernels_per_s=100, ceiling_kernels_per_s=400.0)])
    assert "matmul C1 40%, matmul C3 25%" in text
    assert "below the noise" in text and "-0.2" not in text
    assert "| 5,000 | 2000 |" in text


@pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))
def test_measure_matmul_c1_under_qemu():
    row = B.measure("matmul", 1, repeats=1)
    assert row["runs"] >= 2 and row["instructions"] > 0
    assert row["warm_ms"] > 0 and row["ceiling_kernels_per_s"] == pytest.approx(row["cpus"] / row["warm_ms"] * 1e3,
                                                                                  rel=1e-2)


def test_repeated_harness_calls_the_kernel_from_a_clean_state():
    from kcgym.sims.rvv.config import RVVConfig

    text = B.repeated("    ret", 3, RVVConfig())
    assert text.count("call __kcgym_bench_body") == 1 and "li t0, 3" in text
    assert all(f"li x{i}, 0" in text for i in range(4, 32))
