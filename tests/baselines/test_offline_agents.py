"""The offline agents: the search's mutations, and the main job's promise on the real NPU."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from baselines import make_agent
from baselines.search import mutate
from kcgym.eval.runner import run_eval
from kcgym.eval.store import load_records
from kcgym.eval.suite import plan

KERNEL = "; header\nA 1\nB 2\n\nC 3   ; note\nD 4\n"


def test_mutations_move_or_delete_one_instruction_and_keep_comments():
    rng = np.random.default_rng(0)
    original = Counter(KERNEL.splitlines())
    kinds = set()
    for _ in range(50):
        out = mutate(KERNEL, rng)
        lines = Counter(out.splitlines())
        assert lines["; header"] == 1 and lines[""] == 1
        diff = original - lines
        if not diff:
            kinds.add("move")
            assert sorted(out.splitlines()) == sorted(KERNEL.splitlines())
        else:
            kinds.add("delete")
            assert sum(diff.values()) == 1 and not (lines - original)
    assert kinds == {"move", "delete"}


def test_unknown_agent_suggests_a_name():
    with pytest.raises(KeyError, match="did you mean 'search'"):
        make_agent("serch")


def test_main_job_promise_on_the_npu(tmp_path):
    """Compiler: success and speedup 1.0; expert: beats it where it exists, excluded elsewhere; search: >= 1."""
    from kcgym.registry import task_for
    from kcgym.sims.npu import ACCELERATOR

    tasks = ("relu", "mha")  # one task with an expert kernel, one without (checked below)
    specs = plan(accelerators=["NPU"], tasks=list(tasks), configs=[1])
    run_eval(specs, ["compiler", "expert", "search", "random"], tmp_path, progress=False,
             options={"search_budget": 6})
    records = {(r.agent, r.task): r for r in load_records(tmp_path / "episodes.jsonl")}
    for task in tasks:
        comp = records["compiler", task]
        assert comp.success and comp.speedup == pytest.approx(1.0) and comp.cycles == comp.baseline_cycles
        search = records["search", task]
        assert search.success and search.speedup >= 1.0
        assert records["random", task].error_class != "harness"
    hw = ACCELERATOR.make_hw()
    has_expert = {}
    for t in tasks:
        task = task_for("NPU", t)
        has_expert[t] = ACCELERATOR.expert(task, task.config("NPU", 1), hw) is not None
    assert has_expert == {"relu": True, "mha": False}
    assert records["expert", "mha"].status == "excluded"
    assert records["expert", "relu"].success and records["expert", "relu"].speedup > 1.0
