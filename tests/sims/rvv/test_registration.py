"""The RVV compiler's and experts' registration tables, and the layer rule between them and the accelerator."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from kcgym.sims.rvv import ACCELERATOR, compiler, expert
from kcgym.tasks import tasks_for

HW = ACCELERATOR.make_hw()


def test_every_rvv_task_has_one_compiler_template():
    assert set(compiler.TEMPLATES) == set(tasks_for("int8"))


def test_experts_are_registered_for_known_tasks_only():
    assert set(expert.EXPERTS) <= set(compiler.TEMPLATES)


def test_unknown_task_is_a_clear_key_error():
    task = tasks_for("int8")["relu"]
    cfg = task.config("RVV", 1)

    class Unknown(type(task)):
        name = "no_such_task"

    with pytest.raises(KeyError, match="no template for task 'no_such_task'"):
        compiler.compile_task(Unknown(), cfg, HW, ACCELERATOR.layout(task, cfg, HW))


def test_expert_is_none_where_its_configs_do_not_apply():
    task = tasks_for("int8")["relu"]
    assert ACCELERATOR.expert(task, task.config("RVV", 1), HW) is None


@pytest.mark.parametrize("module", [compiler, expert])
def test_baselines_do_not_import_the_accelerator(module):
    """compiler/expert sit below accelerator.py (which calls them): no import back, not even a lazy one."""
    tree = ast.parse(Path(module.__file__).read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert "kcgym.sims.rvv.accelerator" not in imported
