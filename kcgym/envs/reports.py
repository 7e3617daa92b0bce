"""Turning a :class:`KernelReport` into what an agent reads (text) and what code reads (info).

The same renderings serve the env's tools and ``kcgym check``, so a person debugging a
kernel at the terminal sees exactly what the agent saw.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from kcgym.evaluation import KernelReport, SetResult
from kcgym.sims.profiling import render_line_profile
from kcgym.tasks.base import Tolerance
from kcgym.tasks.compare import RowStats, row_stats

MAX_VIEW_ROWS = 64
MAX_SET_LINES = 16  # input sets listed one per line in a final report; the rest are summarised
MARGIN_TEXT = "tolerance margin = max |err| / (atol + rtol |expected|); above 1 fails"
MAX_PROFILE_INFO_ROWS = 200  # lines / loops of the attribution kept in a tool's info (hottest first)


def fmt_int(n: int | None) -> str:
    return "n/a" if n is None else f"{n:,}"


def fmt_rate(rate: float) -> str:
    """Percent, rounded *down* so that 99.999% never reads as 100.00%."""
    return f"{math.floor(rate * 10000) / 100:.2f}%"


def fmt_float(x: float) -> str:
    if x is None or not math.isfinite(x):
        return str(x)
    return f"{x:.6g}"


def fmt_margin(m: float | None) -> str:
    """A tolerance margin: 3 significant digits (rounded up, so 0.9996 never reads as passing 1.00)."""
    if m is None:
        return "n/a"
    if not math.isfinite(m):
        return "inf"
    if m == 0:
        return "0"
    digits = 2 - math.floor(math.log10(m))
    return f"{math.ceil(m * 10**digits) / 10**digits:.{max(digits, 0)}f}"


def tolerance_text(tol: Tolerance) -> str:
    return f"|actual - expected| <= {tol.atol:g} + {tol.rtol:g} * |expected|, and finite"


def _clean(x: Any) -> Any:
    """Info values must compare equal across identical runs: NaN becomes None."""
    if isinstance(x, float) and math.isnan(x):
        return None
    if isinstance(x, (np.floating, np.integer)):
        return _clean(x.item())
    return x


def report_info(report: KernelReport) -> dict[str, Any]:
    """The structured fields of a report that go into ``info`` (plain Python types only)."""
    return {
        "assembled": report.assembled,
        "correct": report.correct,
        "match_rate": _clean(float(report.match_rate)),
        "cycles": report.cycles,
        "baseline_cycles": report.baseline_cycles,
        "speedup": _clean(report.speedup),
        "roofline_cycles": report.roofline_cycles,
        "below_roofline": report.below_roofline,
        "sol_cycles": report.sol_cycles,
        "sol_share": _clean(report.sol_share),
        "beats_sol": report.beats_sol,
        "sol_binding": report.sol.binding.name if report.sol is not None and report.sol.binding else None,
        "static_instructions": report.static_instructions,
        "instructions": report.instructions,
        "fault": report.fault.model_dump() if report.fault is not None else None,
        "first_nonfinite_line": report.first_nonfinite_line,
        "error_class": report.error_class,
        "max_margin": _clean(report.max_margin),
        "sets": [set_info(s) for s in report.sets],
    }


def set_info(s: SetResult) -> dict[str, Any]:
    """One input set's verdict as plain types (inf margins and errors become None)."""
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else _clean(v)) for k, v in vars(s).items()}


def _source_line(source: str, line: int | None) -> str | None:
    if line is None:
        return None
    lines = source.splitlines()
    return lines[line - 1].strip() if 0 < line <= len(lines) else None


def render_diagnostics(report: KernelReport) -> str:
    n_err = sum(1 for d in report.diagnostics if d.severity == "error")
    head = f"Assembly FAILED with {n_err} error(s); nothing was run. Fix every error below and try again."
    return head + "\n\n" + report.diagnostics_text.strip()


def _mismatch_detail(report: KernelReport, name: str, index: tuple[int, ...] | None) -> str:
    if index is None or name not in report.outputs or name not in report.expected:
        return ""
    try:
        exp = report.expected[name]
        act = np.asarray(report.outputs[name]).reshape(exp.shape)
        got, want = fmt_float(float(act[index])), fmt_float(float(exp[index]))
        return f", first mismatch at {list(index)}: got {got}, expected {want}"
    except (ValueError, IndexError):
        return ""


def render_outputs(report: KernelReport) -> list[str]:
    lines = []
    for c in report.comparisons:
        shape = "x".join(str(s) for s in c.shape)
        text = f"  {c.name} [{shape}]: {c.n_match}/{c.n_elements} elements match ({fmt_rate(c.match_rate)})"
        if c.n_nonfinite:
            text += f", {c.n_nonfinite} NaN/Inf"
        if math.isfinite(c.max_abs_error):
            text += f", max abs error {fmt_float(c.max_abs_error)}"
        text += f", tolerance margin {fmt_margin(c.max_margin)}"
        text += _mismatch_detail(report, c.name, c.first_mismatch)
        lines.append(text)
    return lines


def _set_line(s: SetResult) -> str:
    verdict = "correct" if s.correct else f"INCORRECT ({s.n_mismatch} element(s) off, match {fmt_rate(s.match_rate)})"
    text = f"    {s.name}: {verdict}, max abs error {fmt_float(s.max_abs_error)}, margin {fmt_margin(s.max_margin)}"
    if s.n_nonfinite:
        text += f", {s.n_nonfinite} NaN/Inf"
    if s.fault is not None:
        text += f", fault {s.fault}"
    return text


def render_sets(sets: list[SetResult]) -> list[str]:
    """Every input set's verdict, one line each (bounded: past MAX_SET_LINES the rest are summarised)."""
    n_bad = sum(not s.correct for s in sets)
    worst = max(sets, key=lambda s: s.max_margin)
    lines = [
        f"  Every input set ({len(sets) - n_bad}/{len(sets)} correct; worst margin {fmt_margin(worst.max_margin)} "
        f"on {worst.name}):"
    ]
    shown = sets[:MAX_SET_LINES]
    lines.extend(_set_line(s) for s in shown)
    rest = sets[MAX_SET_LINES:]
    if rest:
        lines.append(f"    ... {len(rest)} more set(s), {sum(not s.correct for s in rest)} of them incorrect")
    for s in shown:
        if s.description:
            lines.append(f"    ({s.name}: {s.description})")
    return lines


def render_timing(report: KernelReport) -> list[str]:
    lines = [f"  Cycles: {fmt_int(report.cycles)}   (dynamic {report.issue_unit}: {fmt_int(report.instructions)})"]
    if report.baseline_cycles is not None:
        if report.speedup is not None:
            lines.append(
                f"  Baseline (template compiler): {fmt_int(report.baseline_cycles)} cycles -> "
                f"speedup {report.speedup:.3f}x"
            )
        else:
            lines.append(
                f"  Baseline (template compiler): {fmt_int(report.baseline_cycles)} cycles "
                "(speedup counts only for correct kernels)"
            )
    if report.roofline_cycles is not None:
        lines.append(f"  Roofline lower bound: {fmt_int(report.roofline_cycles)} cycles")
    if report.sol is not None:
        share = f" -> {report.sol_share:.1%} of speed of light" if report.sol_share is not None else ""
        binding = report.sol.binding.name if report.sol.binding else "none"
        lines.append(f"  Speed of light: {fmt_int(report.sol.cycles)} cycles (binding: {binding}){share}")
        if report.beats_sol:
            lines.append("  NOTE: fewer cycles than the speed of light (beats_sol): scored as if at the speed of "
                         "light; please report this kernel, the bound has a gap")
    return lines


def render_sol_terms(report: KernelReport) -> list[str]:
    """The speed of light's terms for ``profile``, binding first, each with its share of the kernel's cycles."""
    if report.sol is None or not report.sol.terms:
        return []
    out = ["  Speed-of-light terms (lower bounds on cycles, binding first):"]
    out.extend("    " + line for line in report.sol.lines(report.cycles))
    return out


def render_run(report: KernelReport, source: str, tol: Tolerance, what: str) -> str:
    """The body of ``simulate`` (and of the final evaluation): verdict, outputs, timing, faults."""
    if report.internal_error is not None:
        return report.diagnostics_text
    if not report.assembled:
        return render_diagnostics(report)
    out = [f"{what}:"]
    if report.correct and not report.below_roofline:
        out.append(f"  Result: CORRECT (match rate {fmt_rate(report.match_rate)})")
    elif report.correct:
        out.append(f"  Result: SUSPICIOUS (outputs match, match rate {fmt_rate(report.match_rate)})")
    else:
        out.append(
            f"  Result: INCORRECT (match rate {fmt_rate(report.match_rate)}; every element must match)"
        )
    if report.fault is not None:
        out.append("  " + report.fault.render().replace("\n", "\n  "))
    if report.first_nonfinite_line is not None:
        src = _source_line(source, report.first_nonfinite_line)
        out.append(
            f"  First NaN/Inf was produced at line {report.first_nonfinite_line}"
            + (f": {src}" if src else "")
        )
    out.append("  Outputs (input set 1):")
    out.extend("  " + line for line in render_outputs(report))
    out.append(f"  ({MARGIN_TEXT})")
    if len(report.sets) > 1:
        out.extend(render_sets(report.sets))
    if not report.correct:
        out.append(f"  Tolerance: {tolerance_text(tol)}")
    out.extend(render_timing(report))
    if report.below_roofline:
        out.append(
            "  WARNING: fewer cycles than the roofline lower bound, which is physically impossible: "
            "this is a simulator bug or an exploit, and it is scored as incorrect."
        )
    if report.diagnostics:
        out.append("  Assembler warnings:")
        out.append("    " + report.diagnostics_text.strip().replace("\n", "\n    "))
    return "\n".join(out)


def render_profile(report: KernelReport, tol: Tolerance) -> str:
    if not report.assembled:
        return render_diagnostics(report)
    cycles = report.cycles or 0
    out = ["Profile of the current kernel (visible input set 1):"]
    verdict = "correct" if report.correct else f"INCORRECT, match rate {fmt_rate(report.match_rate)}"
    out.append(f"  Kernel is {verdict}.")
    if report.fault is not None:
        out.append("  " + report.fault.render().replace("\n", "\n  ") + "  (counts below stop at the fault)")
    out.extend(render_timing(report))
    if report.roofline_cycles and cycles:
        out.append(
            f"  Roofline bound / cycles: {report.roofline_cycles / cycles:.1%} (100% = at the hardware limit)"
        )
    out.extend(render_sol_terms(report))
    out.append(f"  Static {report.issue_unit}: {fmt_int(report.static_instructions)}")
    total = sum(report.counts_by_category.values())
    out.extend(_share_table(f"Dynamic operations by category ({total:,} operations):", report.counts_by_category,
                            total))
    out.extend(_share_table("Unit utilisation (busy cycles / total cycles):", report.unit_busy, cycles))
    if report.line_profile is not None:
        out.extend(render_line_profile(report.line_profile, speed_of_light_text(report)))
    return "\n".join(out)


def speed_of_light_text(report: KernelReport) -> str | None:
    """The binding speed-of-light term for the profile's attribution footer (None without a bound)."""
    term = report.sol.binding if report.sol is not None else None
    if term is None:
        return None
    return f"{term.name} ({term.cycles:,} cycles)"

def _share_table(title: str, values: dict[str, int], denominator: int | None) -> list[str]:
    """A titled table of counts, largest first, each with its share of ``denominator``."""
    if not values:
        return []
    width = max(len(k) for k in values)
    rows = [f"  {title}"]
    for k, v in sorted(values.items(), key=lambda kv: (-kv[1], kv[0])):
        share = v / denominator if denominator else 0.0
        rows.append(f"    {k.ljust(width)}  {v:>12,}  {share:6.1%}")
    return rows


def profile_info(report: KernelReport) -> dict[str, Any]:
    cycles = report.cycles or 0
    info: dict[str, Any] = {
        "counts": dict(report.counts_by_category),
        "unit_busy": dict(report.unit_busy),
        "utilisation": {k: (v / cycles if cycles else 0.0) for k, v in report.unit_busy.items()},
    }
    if report.line_profile is not None:
        lp = report.line_profile.to_dict()
        lp["lines"] = lp["lines"][:MAX_PROFILE_INFO_ROWS]
        lp["loops"] = lp["loops"][:MAX_PROFILE_INFO_ROWS]
        info["attribution"] = lp
    return info


def _row_view(expected: np.ndarray) -> tuple[int, ...]:
    """The 2-D shape rows are shown in; a long 1-D output is cut into rows of a vector width."""
    if expected.ndim > 1:
        return expected.shape
    n = expected.size
    for width in (64, 32, 16, 8):
        if n > width and n % width == 0:
            return (n // width, width)
    return (1, n)


def view_output(
    report: KernelReport, tol: Tolerance, rows: int, output: str | None
) -> tuple[str, dict[str, Any]] | str:
    """Per-row statistics of one output, mismatching rows first; an error string if impossible."""
    names = list(report.expected)
    if not report.outputs or not names:
        return "The last simulation produced no outputs to compare (it did not assemble)."
    name = output if output is not None else names[0]
    if name not in names:
        return f"Unknown output {output!r}; this task's outputs are: {', '.join(names)}."
    if name not in report.outputs:
        return f"The simulator returned no values for output {name!r}."
    expected = report.expected[name]
    view = _row_view(expected)
    actual = np.asarray(report.outputs[name]).reshape(expected.shape)
    stats = row_stats(actual.reshape(view), expected.reshape(view), tol)
    bad = [s for s in stats if s.n_match < s.n]
    good = [s for s in stats if s.n_match == s.n]
    rows = max(1, min(rows, MAX_VIEW_ROWS))
    chosen = (bad + good)[:rows]
    shape = "x".join(str(s) for s in expected.shape)
    head = [
        f"Output {name} [{shape}]"
        + (f", viewed as {view[0]} rows of {view[1]}" if view != expected.shape else "")
    ]
    n_match = sum(s.n_match for s in stats)
    n_all = sum(s.n for s in stats)
    head.append(
        f"{n_match}/{n_all} elements match ({fmt_rate(n_match / n_all if n_all else 1.0)}); "
        f"{len(bad)} of {len(stats)} rows have mismatches"
        + (f" (rows {_ranges([s.row for s in bad])})" if bad else "")
        + "."
    )
    head.append(f"Tolerance: {tolerance_text(tol)}")
    head.append(f"Showing {len(chosen)} row(s), mismatching rows first:")
    table = [
        f"{'row':>5} {'match':>11} {'max_err':>10} {'act_min':>10} {'act_max':>10} "
        f"{'exp_min':>10} {'exp_max':>10} {'nan/inf':>7}"
    ]
    for s in chosen:
        table.append(
            f"{s.row:>5} {f'{s.n_match}/{s.n}':>11} {fmt_float(s.max_abs_error):>10} "
            f"{fmt_float(s.actual_min):>10} {fmt_float(s.actual_max):>10} "
            f"{fmt_float(s.expected_min):>10} {fmt_float(s.expected_max):>10} {s.n_nonfinite:>7}"
        )
    info = {
        "output": name,
        "row_shape": list(view),
        "rows": [_row_dict(s) for s in chosen],
        "bad_rows": len(bad),
    }
    return "\n".join(head + table), info


def _row_dict(s: RowStats) -> dict[str, Any]:
    return {k: _clean(v) for k, v in vars(s).items()}


def _ranges(rows: list[int], limit: int = 20) -> str:
    """``1-4, 7, 9-12`` — compact, bounded."""
    parts: list[str] = []
    i = 0
    while i < len(rows) and len(parts) < limit:
        j = i
        while j + 1 < len(rows) and rows[j + 1] == rows[j] + 1:
            j += 1
        parts.append(str(rows[i]) if i == j else f"{rows[i]}-{rows[j]}")
        i = j + 1
    return ", ".join(parts) + (", ..." if i < len(rows) else "")
