"""The RVV pre-pass's fast paths (``trace.PREPASS_FAST``: per-program decoded scalar ALU, branch, vsetvl,
vector ALU and unit-stride memory instructions) against its general path: the same Trace -- control state,
scoreboard, counts, taint and every recorded data operation -- or the same give-up, on every compiler and
expert kernel at C1, the ISA programs, the raw and hostile programs, to the end and under a small step budget.
(No JAX: the differential test checks the general path against the interpreter.)"""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.sims.rvv import ACCELERATOR, trace
from kcgym.sims.rvv.accelerator import machine_inputs
from kcgym.tasks import tasks_for
from tests.sims.rvv import isa_programs as P
from tests.sims.rvv.test_trace_differential import HOSTILE, RAW

HW = ACCELERATOR.make_hw()


def _programs():
    for name, task in tasks_for("int8").items():
        cfg = task.config("RVV", 1)
        ext = ACCELERATOR.ext_size(task, cfg, HW, ACCELERATOR.layout(task, cfg, HW))
        yield f"{name} compiler", ACCELERATOR.compile(task, cfg, HW), ext
        expert = ACCELERATOR.expert(task, cfg, HW)
        if expert is not None:
            yield f"{name} expert", expert, ext
    for seed in (0, 1):
        for k, (source, _) in enumerate(P.programs(seed=seed)):
            yield f"isa {seed}/{k}", source, 4096
    for name, source in {**RAW, **HOSTILE}.items():
        yield name, source, 4096


def _prepass(monkeypatch, fast: bool, program, ext: int, max_steps: int):
    monkeypatch.setattr(trace, "PREPASS_FAST", fast)
    words, mems = machine_inputs(program, np.zeros((1, ext), np.uint8), HW)
    try:
        return trace.prepass(words, program.length, HW, HW.model_dump_json(), ext, max_steps,
                             mems[0, :HW.dtcm_bytes].tobytes())
    except trace.GiveUp as e:
        return e.args


@pytest.mark.parametrize("max_steps", [50_000_000, 777])
def test_fast_paths_match_the_general_path(monkeypatch, max_steps):
    fast_used = 0
    for name, source, ext in _programs():
        program = ACCELERATOR.assemble(source, HW)
        general = _prepass(monkeypatch, False, program, ext, max_steps)
        fast = _prepass(monkeypatch, True, program, ext, max_steps)
        if isinstance(general, trace.Trace):
            assert isinstance(fast, trace.Trace), name
            for field in general._fields:
                np.testing.assert_array_equal(getattr(fast, field), getattr(general, field), err_msg=f"{name} {field}")
            fast_used += 1
        else:
            assert fast == general, name
    assert fast_used > 30
