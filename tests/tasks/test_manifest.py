"""The task manifest: every entry well formed, every declaration the task instances expose its own."""

from __future__ import annotations

import pytest

from kcgym.tasks import manifest, tasks_for
from kcgym.tasks.schema import DTYPES, configs, evaluate, resolve

ENTRIES = list(manifest.MANIFEST)
VARIANTS = [(e, family) for e in ENTRIES for family in e.variants]


def test_names_are_unique_and_every_entry_runs_somewhere():
    assert len({e.name for e in ENTRIES}) == len(ENTRIES)
    assert {e.name: e for e in ENTRIES} == manifest.BY_NAME
    for e in ENTRIES:
        assert e.level in (1, 2, 3) and e.title and e.variants and (e.machines() or e.unsupported), e.name
        assert not set(e.unsupported) & set(e.machines()), e.name  # a machine runs a task or says why not


@pytest.mark.parametrize(("entry", "family"), VARIANTS, ids=[f"{e.name}-{f}" for e, f in VARIANTS])
def test_variant_is_well_formed_and_is_what_its_task_exposes(entry, family):
    variant = entry.variants[family]
    task = tasks_for(family)[entry.name]
    assert task.entry is entry and task.variant is variant  # the loader bound this very entry
    assert (task.name, task.title, task.level, task.category) == (entry.name, entry.title, entry.level,
                                                                   variant.category)
    assert task.tolerance is variant.tolerance and task.configs_by_accelerator is variant.shapes
    names = [t.name for t in variant.tensors]
    roles = [t.role for t in variant.tensors]
    assert len(set(names)) == len(names) and roles == sorted(roles)  # inputs first, then outputs
    assert "input" in roles and "output" in roles
    assert all(t.dtype in DTYPES for t in variant.tensors)
    assert all(t.role == "input" for t in variant.tensors if t.constant)
    inputs = {t.name for t in variant.tensors if t.role == "input"}
    assert set(variant.domain) <= inputs  # a domain names an input (int8 fills in the rest, see Int8Task)
    for machine, rows in variant.shapes.items():
        assert len(rows) == 5, (machine, "C1..C5")
        for index, params in enumerate(rows, start=1):
            cfg = task.config(machine, index)
            names_now = resolve(variant, params)
            for decl, spec in zip(variant.tensors, task.tensors(cfg), strict=True):
                assert spec.shape == evaluate(decl.shape, names_now) and all(d > 0 for d in spec.shape)
                assert spec.dtype == decl.dtype and task.dtype_of(spec.name).itemsize in (1, 4)


def test_lookups_follow_the_manifest_order():
    assert manifest.families() == ["bf16", "int8", "int32"]
    assert [e.name for e in manifest.entries("int8")] == list(manifest.tasks_on("RVV"))
    assert list(manifest.unsupported_on("RVV")) == [e.name for e in ENTRIES if "RVV" in e.unsupported]
    assert list(manifest.unsupported_on("NPU")) == list(manifest.tasks_on("CPU"))  # only the CPU's own tasks


def test_shape_expressions():
    assert evaluate("M, K", {"M": 4, "K": 64}) == (4, 64)
    assert evaluate("n", {"n": 8}) == (8,)
    assert evaluate("256", {}) == (256,)
    assert evaluate("k * k * c, h // nh", {"k": 3, "c": 2, "h": 10, "nh": 3}) == (18, 3)
    assert evaluate("n / hidden", {"n": 128, "hidden": 64}) == (2,)
    with pytest.raises(ValueError, match="not a multiple"):
        evaluate("n / hidden", {"n": 100, "hidden": 64})
    with pytest.raises(ValueError, match="unknown name 'q'; known: n"):
        evaluate("q", {"n": 1})
    with pytest.raises(ValueError, match="only integers, names"):
        evaluate("n ** 2", {"n": 2})
    with pytest.raises(ValueError, match="one value for each"):
        configs("M N", (1, 2, 3))
