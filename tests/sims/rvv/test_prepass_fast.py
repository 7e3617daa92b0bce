"""The RVV pre-pass's fast paths (``trace.PREPASS_FAST``: per-program decoded scalar ALU -- addi, lui and auipc
on paths of their own --, branch, vsetvl, vector ALU and unit-stride memory instructions) against its general
path: the same Trace -- control state, scoreboard, counts, taint and every recorded data operation -- or the same
give-up, on generated programs for the specialised paths (:func:`specialised`), every compiler and expert kernel
at C1, the ISA programs, the raw and hostile programs, to the end and under a small step budget.
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


EXTREMES = (0, 1, -1, 2047, -2048, 0x7FFFFFFF, -(1 << 31), 0x7FFFF800, -0x7FFFF800, 0x12345678)


def specialised(seed: int, n: int = 60) -> str:
    """A generated program for the pre-pass's specialised fast paths: addi (wrapping past int32), lui and auipc,
    every branch condition on signed and unsigned extremes (taken and not, forward and a backward loop),
    vsetvli/vsetivli/vsetvl on AVLs from 0 to past 2**31, and vector arithmetic on register groups, masked and
    multiply-adding (the registers an instruction waits for) between them."""
    rng = np.random.default_rng(seed)
    regs = ("a0", "a1", "a2", "a3", "a4", "a5", "s2", "s3")
    lines = [f"    li {r}, {int(rng.choice(EXTREMES))}" for r in regs]
    for i in range(n):
        a, b, d = (str(r) for r in rng.choice(regs, 3))
        kind = int(rng.integers(0, 7))
        if kind == 0:
            lines.append(f"    addi {d}, {a}, {int(rng.choice((2047, -2048, 1, -1, int(rng.integers(-2048, 2048)))))}")
        elif kind == 1:
            lines.append(f"    {rng.choice(('lui', 'auipc'))} {d}, {int(rng.integers(0, 1 << 20))}")
        elif kind == 2:
            cond = rng.choice(("beq", "bne", "blt", "bge", "bltu", "bgeu"))
            lines += [f"    {cond} {a}, {b if rng.random() < 0.8 else a}, 1f", f"    addi {d}, {d}, 3", "1:"]
        elif kind == 3:
            lines += [f"    li t0, {int(rng.integers(1, 5))}", f"b{i}:", f"    addi {d}, {a}, -7",
                      "    addi t0, t0, -1", f"    {rng.choice(('bne', 'blt'))} zero, t0, b{i}"]
        elif kind == 4:
            sew, lmul = int(rng.choice((8, 16, 32))), int(rng.choice((1, 2, 4, 8)))
            lines.append(f"    vsetvli {d if rng.random() < 0.7 else 'x0'}, {a if rng.random() < 0.8 else 'x0'}, "
                         f"e{sew}, m{lmul}, ta, mu")
        elif kind == 5:
            lines.append(f"    vsetivli {d}, {int(rng.integers(0, 32))}, e{int(rng.choice((8, 16, 32)))}, "
                         f"m{int(rng.choice((1, 2, 4)))}, ta, ma")
        else:
            vset = "vsetvli t1, a0, e16, m4, ta, mu" if rng.random() < 0.5 else "vsetivli t1, 8, e8, m1, ta, mu"
            lines += [f"    {vset}",
                      f"    {rng.choice(('vadd.vv', 'vmacc.vv', 'vmul.vv'))} v{4 * int(rng.integers(1, 4))}, "
                      f"v{4 * int(rng.integers(1, 8))}, v{4 * int(rng.integers(1, 8))}"
                      f"{', v0.t' if rng.random() < 0.5 else ''}"]
    return "\n".join(lines + ["    ret"]) + "\n"


def assert_same_prepass(got, want, name: str) -> bool:
    """Two pre-pass outcomes are the same: every Trace field bit for bit, or the same give-up; whether a Trace."""
    if isinstance(want, trace.Trace):
        assert isinstance(got, trace.Trace), name
        for field in want._fields:
            np.testing.assert_array_equal(getattr(got, field), getattr(want, field), err_msg=f"{name} {field}")
        return True
    assert got == want, name
    return False


def c1_kernels():
    """Every RVV compiler and expert kernel at C1: (name, source, EXT bytes)."""
    for name, task in tasks_for("int8").items():
        cfg = task.config("RVV", 1)
        ext = ACCELERATOR.ext_size(task, cfg, HW, ACCELERATOR.layout(task, cfg, HW))
        yield f"{name} compiler", ACCELERATOR.compile(task, cfg, HW), ext
        expert = ACCELERATOR.expert(task, cfg, HW)
        if expert is not None:
            yield f"{name} expert", expert, ext


def _programs():
    for seed in range(8):
        yield f"specialised {seed}", specialised(seed), 4096
    yield from c1_kernels()
    for seed in (0, 1):
        for k, (source, _) in enumerate(P.programs(seed=seed)):
            yield f"isa {seed}/{k}", source, 4096
    for name, source in {**RAW, **HOSTILE}.items():
        yield name, source, 4096


def _prepass(monkeypatch, fast: bool, program, ext: int, max_steps: int, roll: bool | None = None):
    """The pre-pass's Trace (or its give-up), its fast paths on or off, loop rolling as configured or as given."""
    monkeypatch.setattr(trace, "PREPASS_FAST", fast)
    if roll is not None:
        monkeypatch.setattr(trace, "PREPASS_ROLL", roll)
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
        fast_used += assert_same_prepass(fast, general, name)
    assert fast_used > 30
