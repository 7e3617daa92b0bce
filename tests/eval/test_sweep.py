"""``kcgym sweep``: a grid of hw configs end to end (records, resume, plots, invalid points) and its usage errors."""

from __future__ import annotations

import json

import pytest

from kcgym import cli
from kcgym.eval.records import EpisodeRecord, hw_point
from kcgym.eval.report import load_runs, sweep_table
from kcgym.eval.sweep import SweepError, grid, parse_axes, parse_axis
from kcgym.limits import MAX_SWEEP_POINTS
from kcgym.registry import ACCELERATORS

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
NPU = ACCELERATORS["NPU"]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_2x2_sweep_of_npu_relu_end_to_end(capsys, tmp_path):
    out = tmp_path / "sweep"
    argv = ["sweep", "npu", "--tasks", "relu", "--configs", "C1", "--hw", "MLEN=32,64", "--hw",
            "hbm_bytes_per_cycle=32,64", "--out", str(out)]
    code, stdout, err = run(capsys, *argv)
    assert code == 0, err
    assert "4 points over MLEN, hbm_bytes_per_cycle" in err
    assert err.count("invalid: KernelCraft-NPU-relu C1 [MLEN=32,") == 2  # said before the run, once per point
    records = load_runs([out])
    assert len(records) == 8  # 4 points x (compiler, expert)
    invalid = [r for r in records if r.status == "invalid"]
    assert len(invalid) == 4 and {r.hw_overrides["MLEN"] for r in invalid} == {32}
    assert all(r.excluded_reason == "MLEN must equal VLEN (matrix tiles are built from vector rows)" for r in invalid)
    played = [r for r in records if r.status == "done"]
    assert len(played) == 4 and all(r.success for r in played)
    for r in played:  # the hw values are recorded, and they are the machine the episode ran on
        assert r.hw["hbm_bytes_per_cycle"] == r.hw_overrides["hbm_bytes_per_cycle"] and r.hw["MLEN"] == 64
    by = {(r.agent, r.hw_overrides["hbm_bytes_per_cycle"]): r for r in played}
    assert by["compiler", 32].cycles > by["compiler", 64].cycles  # less bandwidth, more cycles
    assert by["expert", 32].baseline_cycles == by["compiler", 32].cycles  # the baseline follows the machine
    # table and plots: one PNG per swept parameter
    assert "| NPU | relu | C1 | 32 | 32 | invalid: MLEN must equal VLEN" in stdout
    assert f"| NPU | relu | C1 | 64 | 64 | {by['compiler', 64].cycles:,} |" in stdout
    for name in ("MLEN", "hbm_bytes_per_cycle"):
        assert (out / "plots" / f"sweep_NPU_relu_C1_{name}.png").read_bytes()[:8] == PNG_MAGIC
    # resume: nothing is played again and nothing is recorded twice
    lines = (out / "episodes.jsonl").read_text().splitlines()
    code, stdout, err = run(capsys, *argv, "--resume", "--no-report")
    assert code == 0, err
    assert "4 of 4 episodes recorded, nothing left to run" in err
    assert (out / "episodes.jsonl").read_text().splitlines() == lines
    # a third value on one axis: only the new points are recorded (MLEN=128 is invalid too: no JAX compile)
    code, _, err = run(capsys, *argv[:-6], "--hw", "MLEN=32,64,128", *argv[-4:], "--resume", "--no-report",
                       "--quiet")
    assert code == 0, err
    new = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()[len(lines):]]
    assert sorted((r["agent"], r["hw_overrides"]["hbm_bytes_per_cycle"], r["status"]) for r in new) == [
        ("compiler", 32, "invalid"), ("compiler", 64, "invalid"), ("expert", 32, "invalid"), ("expert", 64, "invalid")]
    assert all(r["hw_overrides"]["MLEN"] == 128 for r in new)
    code, stdout, _ = run(capsys, "report", str(out), "--sweep", "--no-plots")
    assert code == 0 and "| NPU | relu | C1 | 128 | 64 | invalid: MLEN must equal VLEN" in stdout


@pytest.mark.parametrize(("hw", "message"), [
    (["MLN=32,64"], "unknown NPU hw field 'MLN' (did you mean 'MLEN'?); valid: MLEN, VLEN,"),
    (["MLEN=32,abc"], "MLEN takes integer values, got 'abc'"),
    (["MLEN=32.5"], "MLEN takes integer values, got '32.5'"),
    (["MLEN"], "expected FIELD=v1,v2,..."),
    (["MLEN=32,,64"], "an empty value"),
    (["MLEN=32,32"], "the value 32 is given twice"),
    (["MLEN=32", "MLEN+VLEN=64"], "hw field 'MLEN' is swept by two --hw axes"),
    (["MLEN+VLN=32"], "unknown NPU hw field 'VLN' (did you mean 'VLEN'?)"),
])
def test_bad_fields_and_values_are_usage_errors(capsys, tmp_path, hw, message):
    argv = ["sweep", "NPU", "--tasks", "relu", "--out", str(tmp_path / "s")]
    for h in hw:
        argv += ["--hw", h]
    code, _, err = run(capsys, *argv)
    assert code == 2 and message in err and "Traceback" not in err, err
    assert not (tmp_path / "s").exists()  # nothing is started


@pytest.mark.parametrize(("argv", "message"), [
    (["sweep", "NPX", "--hw", "MLEN=32"], "unknown accelerator 'NPX'"),
    (["sweep", "NPU", "--tasks", "relux", "--hw", "MLEN=32"], "unknown task 'relux' (did you mean 'relu'?)"),
    (["sweep", "NPU", "--agent", "expret", "--hw", "MLEN=32"], "unknown agent 'expret' (did you mean 'expert'?)"),
    (["sweep", "NPU", "--hw", "MLEN=32", "--resume"], "--resume needs --out DIR"),
    (["report", "--sweep", "."], "no episodes.jsonl"),
])
def test_other_usage_errors(capsys, argv, message):
    code, _, err = run(capsys, *argv)
    assert code == 2 and message in err, err


def test_a_sweep_needs_an_axis(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["sweep", "NPU", "--tasks", "relu"])
    assert e.value.code == 2 and "--hw" in capsys.readouterr().err


def test_the_grid_is_the_cartesian_product_and_tied_fields_move_together():
    axes = parse_axes(NPU, ["MLEN+VLEN=32,64", "BLEN=4,8,16"])
    points = grid(axes)
    assert len(points) == 6 and points[0] == hw_point({"MLEN": 32, "VLEN": 32, "BLEN": 4})
    assert points[-1] == hw_point({"MLEN": 64, "VLEN": 64, "BLEN": 16})
    assert parse_axis(NPU, "hbm_latency= 50, 100").values == (50, 100)
    with pytest.raises(SweepError, match=f"at most {MAX_SWEEP_POINTS}"):
        parse_axes(NPU, ["hbm_latency=" + ",".join(map(str, range(1, 20))),
                         "hbm_bytes_per_cycle=" + ",".join(map(str, range(1, 20)))])


def test_a_point_the_compiler_cannot_map_is_invalid_not_a_failure():
    from kcgym.eval.sweep import invalid_reason
    from kcgym.registry import task_for

    task = task_for("NPU", "matmul")
    big = task.config("NPU", 5)
    reason = invalid_reason(NPU, task, big, hw_point({"msram_tiles": 1}))
    assert reason is not None and reason.startswith("the compiler cannot map matmul C5 to it:"), reason
    assert invalid_reason(NPU, task, task.config("NPU", 1), hw_point({"hbm_latency": 50})) is None


def _rec(**kw) -> EpisodeRecord:
    base = dict(agent="compiler", env_id="KernelCraft-NPU-relu", accelerator="NPU", task="relu", level=1, config=1,
                run=0, seed=0, suite_version="t", success=True, cycles=100, baseline_cycles=100, speedup=1.0,
                sol_cycles=50)
    return EpisodeRecord(**(base | kw))


def test_the_sweep_table_shows_failures_and_keeps_default_runs_apart():
    records = [
        _rec(hw_overrides={"BLEN": 4}),
        _rec(hw_overrides={"BLEN": 8}, cycles=80, baseline_cycles=80),
        _rec(agent="expert", hw_overrides={"BLEN": 4}, cycles=50, speedup=2.0),
        _rec(agent="expert", hw_overrides={"BLEN": 8}, success=False, error_class="functional", speedup=None),
        _rec(),  # an ordinary eval record: not a sweep point
    ]
    table = sweep_table(records)
    assert "| NPU | relu | C1 | 4 | 100 | 50 | 100 (1.00x, 50% SOL) | 50 (2.00x, 100% SOL) |" in table
    assert "| NPU | relu | C1 | 8 | 80 | 50 | 80 (1.00x, 62% SOL) | fail (F) |" in table
    assert table.count("\n") == 3  # header, rule, two points: the default-machine record is not a row


def test_report_sweep_of_a_run_without_sweep_points_is_a_usage_error(capsys, tmp_path):
    out = tmp_path / "run"
    assert run(capsys, "eval", "--import", "tests.eval.fake_suite", "--accelerators", "FAKE", "--agent", "compiler",
               "--out", str(out), "--quiet", "--no-report")[0] == 0
    code, _, err = run(capsys, "report", str(out), "--sweep")
    assert code == 2 and "no hardware-sweep records" in err


def test_an_eval_report_keeps_sweep_points_out_of_its_tables():
    from kcgym.eval.report import render

    records = [_rec(), _rec(hw_overrides={"BLEN": 8}, cycles=80, baseline_cycles=80)]
    text = render(records)
    assert "| compiler | 1 | 1/1 (100%)" in text  # the default-machine episode alone
    assert "## Hardware sweep" in text and "| NPU | relu | C1 | 8 | 80 |" in text


def test_an_expert_that_does_not_fit_a_point_is_excluded_not_failed():
    import gymnasium as gym

    from baselines.fixed import ExpertAgent

    env = gym.make("KernelCraft-NPU-relu", hw={"MLEN": 128, "VLEN": 128}, docs_in_prompt=False)
    reason = ExpertAgent().excluded(env)
    assert reason is not None and reason.startswith("no expert for this hw config: the expert relu needs"), reason
