"""Metric definitions on hand-made records (no simulation)."""

from __future__ import annotations

import pytest

from kcgym.eval import metrics as M
from kcgym.eval.records import EpisodeRecord


def rec(success: bool, speedup: float | None = None, first: int | None = None, turns: int = 5, **kw) -> EpisodeRecord:
    base = dict(agent="a", env_id="KernelCraft-X-t", accelerator="X", task="t", level=1, config=1, run=0, seed=0,
                suite_version="0", max_turns=15)
    base.update(kw)
    return EpisodeRecord(success=success, speedup=speedup, first_correct_turn=first, turns=turns, **base)


RECORDS = [
    rec(True, 1.0, first=2),
    rec(True, 2.5, first=4),
    rec(True, 1.1, first=9),
    rec(False, error_class="syntax"),
    rec(False, error_class="tool_use"),
    rec(False, status="excluded", excluded_reason="no expert"),
]


def test_fast_p_counts_failures_in_the_denominator_and_is_strict():
    assert M.fast_p(RECORDS, 0) == pytest.approx(3 / 5)
    assert M.fast_p(RECORDS, 1.0) == pytest.approx(2 / 5)  # speedup exactly 1.0 is not "faster"
    assert M.fast_p(RECORDS, 1.2) == pytest.approx(1 / 5)
    assert M.fast_p(RECORDS, 2.0) == pytest.approx(1 / 5)


def test_geomean_over_correct_only_and_excluded_never_counted():
    assert M.geomean_speedup(RECORDS) == pytest.approx((1.0 * 2.5 * 1.1) ** (1 / 3))
    assert M.success_rate(RECORDS) == pytest.approx(3 / 5)
    assert M.error_counts(RECORDS)["syntax"] == 1 and M.error_counts(RECORDS)["tool_use"] == 1
    assert M.success_rate([RECORDS[-1]]) is None and M.geomean_speedup([]) is None


def test_turns_to_first_correct_and_success_vs_budget():
    assert M.turns_to_first_correct(RECORDS) == pytest.approx(5.0)
    curve = M.success_curve(RECORDS, 10)
    assert curve[0] == 0 and curve[1] == pytest.approx(1 / 5) and curve[3] == pytest.approx(2 / 5)
    assert curve[8] == pytest.approx(3 / 5) and curve[9] == curve[8]
    # a success that never simulated counts at its last turn
    assert M.solved_within(rec(True, 1.0, first=None, turns=3), 3) and not M.solved_within(rec(True, 1.0, turns=3), 2)


def test_reports_order_agents_the_same_whatever_order_workers_finished(tmp_path):
    """Concurrent workers append in finishing order; a report's agent columns must not follow it."""
    from kcgym.eval.report import by_agent, load_runs
    from kcgym.eval.store import RunStore

    orders = []
    for i, agents in enumerate((("search", "expert", "compiler"), ("compiler", "search", "expert"))):
        store = RunStore(tmp_path / f"run{i}")
        store.create()
        for agent in agents:
            store.append(rec(True, 1.0, agent=agent))
        orders.append(list(by_agent(load_runs([tmp_path / f"run{i}"]))))
    assert orders[0] == orders[1] == ["compiler", "expert", "search"]


def test_percent_of_speed_of_light_per_agent_and_per_cell(tmp_path):
    from kcgym.eval import report
    from kcgym.eval.plots import write_plots

    records = [
        rec(True, 2.0, cycles=200, sol_cycles=100),  # 50% of SOL
        rec(True, 4.0, cycles=100, sol_cycles=100, config=2),  # at SOL
        rec(True, 8.0, cycles=50, sol_cycles=100, beats_sol=True, config=3),  # beat it: counted as 100%
        rec(False, cycles=10, sol_cycles=100, error_class="functional"),  # failures have no share
        rec(True, 1.5),  # no bound recorded (an old record): left out
    ]
    assert [r.sol_share for r in records] == [0.5, 1.0, 1.0, None, None]
    assert M.geomean_sol_share(records) == pytest.approx(0.5 ** (1 / 3))
    assert M.geomean_sol_share(records[3:]) is None
    text = report.render(records)
    assert "geomean % of SOL" in text and "| 79% |" in text  # 0.5 ** (1/3) = 0.794
    assert "2.00 (50%)" in text and "4.00 (100%)" in text and "8.00 (100%*)" in text
    names = {p.name for p in write_plots(records, tmp_path)}
    assert {"sol_X.png", "speedup_X.png"} <= names
