"""The paper's and KernelBench's metrics over episode records (pure functions, no I/O).

Excluded episodes (e.g. no expert kernel for a task) are never counted: not as failures,
not in denominators.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from kcgym.eval.records import EpisodeRecord

FAST_P = (0.0, 1.0, 1.2, 2.0)
ERROR_CLASSES = ("syntax", "functional", "below_roofline", "tool_use", "api", "harness")


def counted(records: Iterable[EpisodeRecord]) -> list[EpisodeRecord]:
    """The records that count: played episodes, not excluded ones."""
    return [r for r in records if r.status == "done"]


def success_rate(records: Sequence[EpisodeRecord]) -> float | None:
    rs = counted(records)
    return sum(r.success for r in rs) / len(rs) if rs else None


def fast_p(records: Sequence[EpisodeRecord], p: float) -> float | None:
    """KernelBench fast_p: share of ALL counted episodes that are correct with speedup > p."""
    rs = counted(records)
    if not rs:
        return None
    return sum(1 for r in rs if r.success and r.speedup is not None and r.speedup > p) / len(rs)


def geomean_speedup(records: Sequence[EpisodeRecord]) -> float | None:
    """Geometric mean of speedup over the correct episodes only."""
    s = [r.speedup for r in counted(records) if r.success and r.speedup]
    return math.exp(sum(math.log(x) for x in s) / len(s)) if s else None


def geomean_sol_share(records: Sequence[EpisodeRecord]) -> float | None:
    """Geometric mean of sol_cycles / cycles over the correct episodes with a speed of light (1.0 = at it)."""
    s = [r.sol_share for r in counted(records) if r.sol_share]
    return math.exp(sum(math.log(x) for x in s) / len(s)) if s else None


def mean(values: Iterable[float | int | None]) -> float | None:
    v = [float(x) for x in values if x is not None]
    return sum(v) / len(v) if v else None


def turns_to_first_correct(records: Sequence[EpisodeRecord]) -> float | None:
    """Mean turn at which a correct kernel first appeared, over episodes that had one."""
    return mean(r.first_correct_turn for r in counted(records) if r.success)


def solved_within(record: EpisodeRecord, budget: int) -> bool:
    """Would this episode have succeeded with a budget of ``budget`` turns?

    A success counts if its first correct kernel (or, when it never simulated, its submit)
    came at or before ``budget``.
    """
    if not record.success:
        return False
    turn = record.first_correct_turn if record.first_correct_turn is not None else record.turns
    return turn <= budget


def success_curve(records: Sequence[EpisodeRecord], max_budget: int) -> list[float]:
    """Success rate for turn budgets 1..max_budget (the paper's budgets are 15/20/25)."""
    rs = counted(records)
    if not rs:
        return []
    return [sum(solved_within(r, b) for r in rs) / len(rs) for b in range(1, max_budget + 1)]


def error_counts(records: Sequence[EpisodeRecord]) -> dict[str, int]:
    counts = dict.fromkeys(ERROR_CLASSES, 0)
    for r in counted(records):
        if not r.success and r.error_class:
            counts[r.error_class] = counts.get(r.error_class, 0) + 1
    return counts
