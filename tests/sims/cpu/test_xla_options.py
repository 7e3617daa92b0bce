"""The CPU interpreter compiled with XLA's older fusion emitters (``kcgym.sims.xla_options``) against the
same interpreter with XLA's defaults: every field of the final state, bit for bit, on compiler and expert
kernels and on programs that fault or run out of steps (C1 in the default tier, C2-C5 under ``-m slow``)."""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.evaluation import Evaluator
from kcgym.registry import ACCELERATORS, SUPPORTED, task_for
from kcgym.sims.cpu import accelerator as A
from kcgym.sims.cpu import machine as M
from tests.sims.cpu import adversarial

CPU = ACCELERATORS["CPU"]
MAX_STEPS = 2_000_000
HACKS = ("out_of_bounds", "spin")  # a faulting program, one that runs out of steps
HACK_STEPS = 3_000


def _cases(configs: tuple[int, ...]) -> list:
    return [pytest.param(name, c, kind, id=f"{name}-C{c}-{kind}") for c in configs for name in SUPPORTED["CPU"]
            for kind in ("compiler", "expert") if any(cfg.index == c for cfg in task_for("CPU", name).configs("CPU"))]


def _states(name: str, index: int, kind: str, monkeypatch: pytest.MonkeyPatch):
    hw = CPU.make_hw()
    task = task_for("CPU", name)
    cfg = task.config("CPU", index)
    if kind in HACKS:
        source = getattr(adversarial, kind)(task, CPU.layout(task, cfg, hw), hw)
    else:
        source = CPU.compile(task, cfg, hw) if kind == "compiler" else CPU.expert(task, cfg, hw)
    if source is None:
        pytest.skip(f"no {kind} kernel for {name} C{index}")
    program = CPU.assemble(source, hw)
    sets = Evaluator(CPU, task, cfg, hw).input_sets(0, 2)
    images = np.stack([CPU.ext_image(task, cfg, hw, inputs) for inputs in sets])
    steps = HACK_STEPS if kind in HACKS else MAX_STEPS
    ours = A.simulate_images(program, images, hw, steps)
    with monkeypatch.context() as m:
        m.setattr(M, "runner", _default_runner)
        theirs = A.simulate_images(program, images, hw, steps)
    return ours, theirs


_DEFAULT_RUNNERS: dict = {}
_UNCACHED_RUNNER = M.runner.__wrapped__


def _default_runner(hw_json: str, batched: bool = False, profile: bool = False):
    """``machine.runner`` compiled with XLA's defaults, once per config (as ``runner`` is)."""
    key = (hw_json, batched, profile)
    if key not in _DEFAULT_RUNNERS:
        with pytest.MonkeyPatch.context() as m:
            m.setattr(M, "older_fusion_emitters", lambda: {})
            _DEFAULT_RUNNERS[key] = _UNCACHED_RUNNER(*key)
    return _DEFAULT_RUNNERS[key]


def _same(ours, theirs) -> None:
    for field in M.State._fields:
        assert np.array_equal(getattr(ours, field), getattr(theirs, field)), field


@pytest.mark.parametrize(("name", "index", "kind"), _cases((1,)))
def test_older_fusion_emitters_same_state_c1(name, index, kind, monkeypatch):
    _same(*_states(name, index, kind, monkeypatch))


@pytest.mark.parametrize("kind", HACKS)
def test_older_fusion_emitters_same_state_on_hacks(kind, monkeypatch):
    ours, theirs = _states(SUPPORTED["CPU"][0], 1, kind, monkeypatch)
    if kind == "out_of_bounds":
        assert int(ours.ctl[0, M.FAULT]) != 0
    else:
        assert int(ours.ctl[0, M.FAULT]) == 0 and int(ours.ctl[0, M.STEPS]) == HACK_STEPS
    _same(ours, theirs)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "index", "kind"), _cases((2, 3, 4, 5)))
def test_older_fusion_emitters_same_state(name, index, kind, monkeypatch):
    _same(*_states(name, index, kind, monkeypatch))
