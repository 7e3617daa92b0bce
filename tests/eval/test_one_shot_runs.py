"""Zero-shot and one-shot runs of one agent are different runs: separate keys, rows and report cells."""

from __future__ import annotations

from kcgym import cli
from kcgym.eval.records import EpisodeRecord
from kcgym.eval.report import load_runs, render
from kcgym.eval.store import RunStore


def _rec(**kw) -> EpisodeRecord:
    base = dict(agent="llm", model="m", env_id="KernelCraft-NPU-relu", accelerator="NPU", task="relu", level=1,
                config=1, run=0, seed=0, suite_version="t", success=True, cycles=100, baseline_cycles=100,
                speedup=1.0)
    return EpisodeRecord(**(base | kw))


def test_the_setting_is_part_of_the_key_and_the_label():
    zero, one = _rec(), _rec(one_shot=True)
    assert zero.key != one.key and "one-shot" in one.key.text and "one-shot" not in zero.key.text
    assert (zero.label, one.label) == ("llm:m", "llm:m one-shot")
    old = EpisodeRecord.model_validate_json(zero.model_dump_json(exclude={"one_shot", "hw_overrides"}))
    assert old.key == zero.key  # records written before the setting existed read as zero-shot


def test_the_store_keeps_both_settings(tmp_path):
    store = RunStore(tmp_path)
    store.create()
    store.append(_rec())
    store.append(_rec(one_shot=True, success=False, error_class="functional", speedup=None))
    records = store.records()
    assert len(records) == 2 and len(store.finished()) == 2


def test_eval_one_shot_is_a_separate_run_with_resume_and_side_by_side_in_the_report(capsys, tmp_path):
    out = tmp_path / "run"
    common = ["eval", "--agent", "compiler", "--accelerators", "NPU", "--tasks", "relu", "--out", str(out),
              "--quiet", "--no-plots"]
    assert cli.main(common) == 0
    capsys.readouterr()
    assert cli.main([*common, "--one-shot", "--resume"]) == 0  # the one-shot episode is not "already recorded"
    err = capsys.readouterr().err
    assert "0 of 1 episodes recorded, 1 left to run" in err
    records = load_runs([out])
    assert sorted(r.label for r in records) == ["compiler", "compiler one-shot"]
    assert [r.one_shot for r in sorted(records, key=lambda r: r.label)] == [False, True]
    assert cli.main([*common, "--one-shot", "--resume"]) == 0
    assert "nothing left to run" in capsys.readouterr().err
    text = render(records, [out])
    assert "| compiler | 1 | 1/1 (100%)" in text and "| compiler one-shot | 1 | 1/1 (100%)" in text
    assert "Cells: successes/episodes for compiler, compiler one-shot (in that order)" in text
