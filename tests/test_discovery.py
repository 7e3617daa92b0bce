"""Registration by discovery: compiler templates and experts are found in their packages' modules."""

from __future__ import annotations

import sys

import pytest

from kcgym.discovery import collect, expert_dispatch, template
from kcgym.registry import SUPPORTED


def _package(tmp_path, name: str, modules: dict[str, str]) -> str:
    pkg = tmp_path / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for mod, text in modules.items():
        (pkg / f"{mod}.py").write_text(text)
    return name


def test_collect_merges_every_modules_table_and_refuses_a_second_claim(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    ok = _package(tmp_path, "kcgym_disc_ok", {"a": "T = {'x': 1}", "b": "T = {'y': 2}", "c": "OTHER = 3"})
    assert collect(ok, "T") == {"x": 1, "y": 2}
    bad = _package(tmp_path, "kcgym_disc_bad", {"a": "T = {'x': 1}", "b": "T = {'x': 2}"})
    with pytest.raises(ValueError, match=r"T\['x'\] is defined by both a and b"):
        collect(bad, "T")
    for name in [m for m in sys.modules if m.startswith("kcgym_disc_")]:
        monkeypatch.delitem(sys.modules, name)


def test_every_supported_task_has_a_discovered_template():
    from kcgym.sims.npu.compiler import TEMPLATES as NPU_TEMPLATES
    from kcgym.sims.vliw.compiler import TEMPLATES as VLIW_TEMPLATES

    assert set(SUPPORTED["NPU"]) <= set(NPU_TEMPLATES)
    assert set(SUPPORTED["VLIW"]) <= set(VLIW_TEMPLATES)


def test_template_lookup_names_the_compiler_and_expert_dispatch_says_none():
    assert template({"x": len}, "x", "the NPU compiler") is len
    with pytest.raises(KeyError, match="the VLIW compiler has no template for 'y'"):
        template({"x": len}, "y", "the VLIW compiler")

    class T:
        name = "x"

    kernel = expert_dispatch({"x": lambda task, *rest: f"{task.name} {rest}"})
    assert kernel(T(), 1, 2, 3) == "x (1, 2, 3)"
    T.name = "y"
    assert kernel(T(), 1, 2, 3) is None
