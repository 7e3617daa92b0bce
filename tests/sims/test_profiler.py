"""The profiler's cycle attribution: it adds up, leaves the timing alone, and its text stays bounded."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from kcgym.envs.kernel_env import TOOL_OUTPUT_MAX_CHARS
from kcgym.envs.reports import render_profile
from kcgym.evaluation import Evaluator
from kcgym.registry import ACCELERATORS, SUPPORTED, task_for
from kcgym.sims.profiling import (
    MAX_PROFILE_LINES,
    MAX_PROFILE_LOOPS,
    LineProfile,
    ProfileRow,
    line_profile,
    render_line_profile,
)

ALL_C1 = [(acc, task) for acc in ("NPU", "VLIW", "RVV") for task in SUPPORTED[acc]]
QUICK = {("NPU", "relu"), ("NPU", "matmul"), ("VLIW", "relu"), ("VLIW", "matmul"), ("VLIW", "softmax"),
         ("RVV", "relu"), ("RVV", "matmul")}


def _compiler_run(acc_name: str, task_name: str, index: int = 1):
    acc = ACCELERATORS[acc_name]
    task = task_for(acc_name, task_name)
    hw = acc.make_hw()
    cfg = task.config(acc_name, index)
    program = acc.assemble(acc.compile(task, cfg, hw), hw)
    inputs = Evaluator(acc, task, cfg, hw).input_sets(0, 1)
    (plain,) = acc.run(program, task, cfg, hw, inputs, 50_000_000)
    (prof,) = acc.run(program, task, cfg, hw, inputs, 50_000_000, profile=True)
    return acc, program, plain, prof


@pytest.mark.parametrize("acc_name,task_name", [
    pytest.param(a, t, marks=() if (a, t) in QUICK else pytest.mark.slow) for a, t in ALL_C1])
def test_attribution_adds_up_for_every_compiler_kernel_at_c1(acc_name, task_name):
    acc, program, plain, prof = _compiler_run(acc_name, task_name)
    assert prof.fault is None and plain.fault is None
    # the profiling interpreter changes nothing: same cycles, instructions, unit busy and outputs
    assert (prof.cycles, prof.instructions, prof.unit_busy) == (plain.cycles, plain.instructions, plain.unit_busy)
    for name, value in plain.outputs.items():
        np.testing.assert_array_equal(prof.outputs[name], value)
    pc = prof.profile
    assert pc.total_cycles == prof.cycles and pc.drain >= 0
    assert (pc.table >= 0).all()
    # executions per PC add up to the dynamic count (the implicit halt is not an instruction)
    assert int(pc.table[:, 0].sum()) == prof.instructions
    lp = line_profile(program, pc, acc.loop_ranges(program), prof.cycles, prof.unit_busy)
    assert lp.attributed == prof.cycles
    assert all(a.cycles >= b.cycles for a, b in zip(lp.lines, lp.lines[1:], strict=False))  # hottest first


def test_loops_are_found_and_counted():
    for acc_name in ("NPU", "VLIW", "RVV"):
        acc, program, _, prof = _compiler_run(acc_name, "relu")
        lp = line_profile(program, prof.profile, acc.loop_ranges(program), prof.cycles)
        assert lp.loops, acc_name
        assert all(r.executions >= 1 for r in lp.loops)
        assert max(r.cycles for r in lp.loops) <= prof.cycles


def test_text_form_is_bounded_however_large_the_kernel():
    names = ("a", "b")
    rows = [ProfileRow(f"line {i}", "X" * 500, 10, 10 + i, {"a": i, "b": 1}, i) for i in range(5000)]
    lp = LineProfile(cycles=10**9, lines=rows, loops=rows[:3000], drain=5, stall_names=names)
    text = "\n".join(render_line_profile(lp, "memory: 123 cycles"))
    assert len(text) < 8_000 < TOOL_OUTPUT_MAX_CHARS
    assert text.count("XXX...") == MAX_PROFILE_LINES  # each shown line's source, cut to MAX_SOURCE_COLS
    assert text.count("\n    line ") == MAX_PROFILE_LINES + MAX_PROFILE_LOOPS
    assert "Binding speed-of-light term: memory: 123 cycles" in text


@pytest.mark.parametrize("acc_name", ["VLIW", "NPU", "RVV"])
def test_profile_text_fits_the_tool_bound_at_the_largest_config(acc_name):
    acc = ACCELERATORS[acc_name]
    task = task_for(acc_name, "relu")
    hw = acc.make_hw()
    cfg = task.configs(acc_name)[-1]
    ev = Evaluator(acc, task, cfg, hw)
    source = acc.compile(task, cfg, hw)
    inputs = ev.input_sets(0, 1)
    report = ev.evaluate(source, inputs)
    report.line_profile = ev.attribute(source, inputs[0])
    assert report.line_profile.attributed == report.cycles
    text = render_profile(report, task.tolerance)
    assert "Cycle attribution" in text and len(text) < TOOL_OUTPUT_MAX_CHARS


def test_vliw_profile_labels_bundles_and_operations():
    """The VLIW front end issues bundles; the category table counts operations (issue 13)."""
    acc = ACCELERATORS["VLIW"]
    task = task_for("VLIW", "matmul")
    hw = acc.make_hw()
    cfg = task.config("VLIW", 1)
    ev = Evaluator(acc, task, cfg, hw)
    source = acc.expert(task, cfg, hw)
    report = ev.evaluate(source, ev.input_sets(0, 1))
    text = render_profile(report, task.tolerance)
    ops = sum(report.counts_by_category.values())
    assert ops > report.instructions  # several operations per bundle
    assert f"dynamic bundles: {report.instructions:,}" in text
    assert f"Dynamic operations by category ({ops:,} operations)" in text


def test_cli_profile(tmp_path):
    acc = ACCELERATORS["VLIW"]
    task = task_for("VLIW", "relu")
    hw = acc.make_hw()
    kernel = tmp_path / "k.s"
    kernel.write_text(acc.compile(task, task.config("VLIW", 1), hw))
    out = subprocess.run([sys.executable, "-m", "kcgym.cli", "profile", "KernelCraft-VLIW-relu", str(kernel)],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "Cycle attribution" in out.stdout and "Hottest lines" in out.stdout
    js = subprocess.run([sys.executable, "-m", "kcgym.cli", "profile", "KernelCraft-VLIW-relu", str(kernel), "--json"],
                        capture_output=True, text=True, timeout=600)
    import json

    info = json.loads(js.stdout)
    assert info["attribution"]["attributed"] == info["cycles"]
    bad = tmp_path / "bad.s"
    bad.write_text("NOT_AN_OP x0\n")
    out = subprocess.run([sys.executable, "-m", "kcgym.cli", "profile", "KernelCraft-VLIW-relu", str(bad)],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode != 0 and ":1:1: error[E001]" in out.stdout


def test_profile_names_the_binding_speed_of_light_term():
    from kcgym.envs.reports import speed_of_light_text

    acc = ACCELERATORS["VLIW"]
    task = task_for("VLIW", "relu")
    hw = acc.make_hw()
    cfg = task.config("VLIW", 1)
    ev = Evaluator(acc, task, cfg, hw)
    source = acc.compile(task, cfg, hw)
    inputs = ev.input_sets(0, 1)
    report = ev.evaluate(source, inputs)
    report.line_profile = ev.attribute(source, inputs[0])
    term = report.sol.binding
    assert term is not None and speed_of_light_text(report) == f"{term.name} ({term.cycles:,} cycles)"
    text = render_profile(report, task.tolerance)
    assert f"Binding speed-of-light term: {term.name} ({term.cycles:,} cycles)" in text
    report.sol = None  # an accelerator without a bound: the line is left out
    assert speed_of_light_text(report) is None
    assert "Binding speed-of-light term" not in render_profile(report, task.tolerance)
