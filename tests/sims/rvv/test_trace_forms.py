"""The RVV data path's vector-arithmetic forms (``trace.VARITH_FORMS``: width form and SEW constant in the branch)
against its general vector-arithmetic branch, and :func:`trace.vec_kind`, which picks them.

Each form's branch must write exactly what the general branch writes for every operation of the form: random
register contents, tainted and concrete scalars, immediates, every source, signedness, masked and unmasked,
vl from 0 to VLMAX at every LMUL, ta/ma bits -- the branches run one operation per step, as the data path runs
them (an unbatched operation, the switches staying switches). The whole-state differential test
(``test_trace_differential.py``: the ISA programs run every mnemonic through these branches) is the other half.
"""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest
from jax import lax

from kcgym.sims.rvv import ACCELERATOR, trace
from kcgym.sims.rvv import isa as I
from kcgym.sims.rvv import machine as M
from kcgym.sims.xla_options import older_fusion_emitters

HW = ACCELERATOR.make_hw()
MEM = 256
ROWS = 96  # random operations per form


def _rows(form: tuple[int, int, tuple[str, ...]], rng: np.random.Generator, n: int = ROWS) -> np.ndarray:
    wf, sew, names = form
    rows = np.zeros((n, trace.N_REC), np.int32)
    lmuls = [m for m in (1, 2, 4, 8) if m * max(1, 2 * (wf in (I.W_WIDEN, I.W_WIDEN_W, I.W_NARROW))) <= 8]
    lmul = rng.choice(lmuls, n)
    vtype = (I.SEW_CODE[sew] << 3) | np.array([I.LMUL_CODE[m] for m in lmul]) | (rng.integers(0, 4, n) << 6)
    vlmax = lmul * (8 * M.VLENB) // sew
    rows[:, trace.R_KIND] = trace.K_VARITH
    rows[:, trace.R_CLS] = trace.C_VARITH
    rows[:, trace.R_SUB] = rng.choice([I.OP[name] for name in names], n)
    for field in (trace.R_RD, trace.R_RS1, trace.R_RS2):
        rows[:, field] = rng.integers(0, 32, n)
    rows[:, trace.R_IMM] = rng.integers(-16, 16, n)
    rows[:, trace.R_VM] = rng.integers(0, 2, n)
    rows[:, trace.R_SRC] = rng.integers(0, 3, n)
    rows[:, trace.R_W] = wf
    rows[:, trace.R_SGN] = rng.integers(0, 4, n)
    rows[:, trace.R_X1] = rng.integers(-(1 << 31), 1 << 31, n, dtype=np.int64).astype(np.int32)
    rows[:, trace.R_T1] = rng.integers(0, 2, n)
    rows[:, trace.R_VTYPE] = vtype
    rows[:, trace.R_VL] = rng.integers(0, vlmax + 1)
    rows[: n // 8, trace.R_VL] = vlmax[: n // 8]  # (the whole group: no tail)
    return rows


def _data(rng: np.random.Generator) -> trace.Data:
    x = rng.integers(-(1 << 31), 1 << 31, (trace.X_BAD + 1,), dtype=np.int64).astype(np.int32)
    x[0] = 0
    x[1:4] = (0, -1, -(1 << 31))  # (edge values: a tainted scalar of 0, -1, INT_MIN)
    vrf = rng.integers(0, 256, M.VRF_BYTES + M.LANES, dtype=np.uint8)
    vrf[M.VLENB:2 * M.VLENB] = rng.choice([0, 0x7F, 0x80, 0xFF], M.VLENB).astype(np.uint8)  # v1: saturation edges
    return trace.Data(x=jax.numpy.asarray(x), vrf=jax.numpy.asarray(vrf),
                      mem=jax.numpy.zeros(MEM + M.LANES, jax.numpy.uint8))


def _kinds(rows: np.ndarray) -> np.ndarray:
    """The kind the pre-pass records for each row (``trace.vec_kind`` of its class, operation, width form, vtype)."""
    return np.array([trace.vec_kind(int(r[trace.R_CLS]), int(r[trace.R_SUB]), int(r[trace.R_W]), int(r[trace.R_VTYPE]))
                     for r in rows], np.int32)


@functools.cache
def _runner(form: tuple | None):
    """The branch's packed Writes of each row, one row per step (the rows unbatched: as the data path runs them)."""
    dp = trace.DataPath(HW, MEM)
    branch = functools.partial(dp.b_varith, form=form)

    def run(d: trace.Data, rows: jax.Array):
        return lax.map(lambda f: dp._packed(branch, d, f), rows)

    return jax.jit(run, compiler_options=older_fusion_emitters())


@pytest.mark.parametrize("i", range(len(trace.VARITH_FORMS)),
                         ids=[f"w{wf}-e{sew}-{names[0]}" for wf, sew, names in trace.VARITH_FORMS])
def test_each_form_writes_what_the_general_branch_writes(i):
    form = trace.VARITH_FORMS[i]
    rng = np.random.default_rng(i)
    rows = _rows(form, rng)
    for seed in range(2):
        d = _data(np.random.default_rng(100 + seed))
        want = jax.device_get(_runner(None)(d, rows))
        got = jax.device_get(_runner(form)(d, rows))
        for name, a, b in zip(("windows", "positions", "x"), got, want, strict=True):
            np.testing.assert_array_equal(a, b, err_msg=f"{name} of {form[:2]}")


def test_vec_kind_picks_the_form_of_each_arithmetic_operation():
    rng = np.random.default_rng(0)
    for i, form in enumerate(trace.VARITH_FORMS):
        kinds = _kinds(_rows(form, rng, 8))
        assert set(kinds.tolist()) == {trace.K_VFORM + i}, form[:2]


def test_vec_kind_leaves_the_rest_to_the_general_branch():
    rng = np.random.default_rng(1)
    same32 = _rows(trace.VARITH_FORMS[0], rng, 8)
    other = {
        "a slow operation": (trace.R_SUB, I.OP["divu"]),
        "an operation outside its width form": (trace.R_SUB, I.OP["nclip"]),
        "a merge": (trace.R_W, I.W_MERGE),
        "an illegal vtype": (trace.R_VTYPE, M.VILL),
        "a widening form at e32": (trace.R_W, I.W_WIDEN),
        "narrowing at e32": (trace.R_W, I.W_NARROW),
        "an operation that reads an unsigned operand": (trace.R_SUB, I.OP["ssra"]),
        "e16": (trace.R_VTYPE, I.SEW_CODE[16] << 3),
    }
    for what, (field, value) in other.items():
        rows = same32.copy()
        rows[:, field] = value
        assert set(_kinds(rows).tolist()) == {trace.K_VARITH}, what
    compare = same32[:1].copy()
    compare[:, trace.R_W] = I.W_MASK
    assert _kinds(compare).tolist() == [trace.K_VMASK]  # (compares: the shared branch)


def test_the_signed_form_holds_the_operations_that_read_only_signed_operands():
    """W_SAME's form: every operation of the width form whose handler reads no unsigned operand (the probe,
    ``trace._signed_only``, checked against hand-picked ones both ways), none of the slow ones."""
    (names,) = [set(names) for wf, _, names in trace.VARITH_FORMS if wf == I.W_SAME]
    assert {"add", "sub", "rsub", "mul", "macc", "nmsac", "madd", "nmsub", "mv", "and", "min", "max"} <= names
    assert not {"sll", "srl", "sra", "ssra", "minu", "maxu", "saddu", "ssubu"} & names
    assert not trace.FORM_SLOW & names


def test_both_data_path_variants_run_every_form():
    """Both data-path variants (with and without the rare classes' branches) compile every form, with the same
    result."""
    rng = np.random.default_rng(5)
    rows = np.concatenate([_rows(form, rng, 24) for form in trace.VARITH_FORMS])
    rows = rows[rng.permutation(len(rows))]
    part = np.zeros((trace.OP_CHUNK, trace.N_REC), np.int32)
    part[: len(rows)] = rows
    part[: len(rows), trace.R_KIND] = _kinds(rows)
    assert set(part[: len(rows), trace.R_KIND].tolist()) == set(range(trace.K_VFORM, trace.K_VFORM + len(
        trace.VARITH_FORMS)))
    mems = np.random.default_rng(6).integers(0, 256, (2, MEM), dtype=np.uint8)
    finals = []
    for full in (True, False):
        initial, chunk = trace.data_runner(HW.model_dump_json(), MEM, full, full)
        d = initial(mems)
        d = d._replace(vrf=jax.numpy.asarray(np.random.default_rng(7).integers(0, 256, d.vrf.shape, dtype=np.uint8)))
        finals.append(jax.device_get(chunk(d, part, np.int32(len(rows)), np.int32(MEM))))
    for name, a, b in zip(trace.Data._fields, *finals, strict=True):
        np.testing.assert_array_equal(a, b, err_msg=name)


# programs whose vector arithmetic takes the forms' branches (e32 signed operations, vsext.vf4 to e32), run whole
# against the interpreter: operands aliasing the destination, masked (v0.t) and tail elements, vl and LMUL changing
# between consecutive form operations, a scalar operand loaded from data, mixed with the general branch (a shift);
# then cut by the step budget inside the run, and ending in a fault after the forms' operations
FORM_PROGRAM = """li a0, 0x20000000
vsetvli t0, x0, e8, m8, ta, mu
vle8.v v0, (a0)
addi a1, a0, 128
vle8.v v8, (a1)
addi a1, a0, 256
vle8.v v16, (a1)
lw s1, 384(a0)
lb s2, 389(a0)
li t1, 7
vsetvli t0, t1, e8, m1, ta, mu
vle8.v v24, (a0)
vsetvli t0, t1, e32, m4, tu, mu
vsext.vf4 v4, v24
vmacc.vx v4, s1, v8
vmacc.vx v8, s2, v8
vadd.vv v8, v8, v8, v0.t
li t1, 13
vsetvli t0, t1, e32, m2, tu, mu
vsext.vf4 v12, v26, v0.t
vmul.vx v12, v12, s1
vnmsac.vv v12, v8, v16, v0.t
vsll.vi v12, v12, 3
vmadd.vx v14, s2, v12
vsub.vx v2, v12, s2
vrsub.vi v2, v2, -5, v0.t
vsetvli t0, x0, e32, m8, ta, ma
vmax.vv v16, v16, v8
vmin.vx v16, v16, s1
vsadd.vv v24, v16, v8
vssub.vx v24, v24, s2
vmv.v.x v8, s2
vmacc.vv v16, v24, v8
addi a2, a0, 512
vse32.v v16, (a2)
vsetvli t0, x0, e32, m4, ta, ma
vse32.v v4, (a0)
"""
FORM_ENDINGS = {"runs": "ret\n", "faults": "li t1, 1\nvsetvl t0, x0, t1\nvadd.vv v3, v8, v16\nret\n"}


@pytest.mark.parametrize("max_steps", [20_000_000, 21, 29])
@pytest.mark.parametrize("ending", list(FORM_ENDINGS))
def test_programs_through_the_forms_match_the_interpreter(monkeypatch, ending, max_steps):
    from kcgym.sims.rvv.accelerator import machine_inputs, simulate_images

    program = ACCELERATOR.assemble(FORM_PROGRAM + FORM_ENDINGS[ending], HW)
    images = np.random.default_rng(11).integers(0, 256, (2, 4096), dtype=np.uint8)
    trace._TRACES.clear()
    states = []
    for sim in ("trace", "oracle"):
        monkeypatch.setenv(trace.SIM_ENV, sim)
        states.append(simulate_images(program, images, HW, max_steps, None))
    for field in M.State._fields:
        np.testing.assert_array_equal(np.asarray(getattr(states[0], field)), np.asarray(getattr(states[1], field)),
                                      err_msg=field)
    words, mems = machine_inputs(program, images, HW)
    assert trace.run_info(HW.model_dump_json(), words, program.length, mems, images.shape[1],
                          max_steps)[1].path == "trace"
    if max_steps == 20_000_000:  # (both forms and the general branch ran)
        ops = trace.prepass(words, program.length, HW, HW.model_dump_json(), images.shape[1], max_steps).ops
        assert {trace.K_VFORM, trace.K_VFORM + 1, trace.K_VARITH} <= set(ops[:, trace.R_KIND].tolist())
        assert int(states[0].ctl[0, M.FAULT]) == (M.F_ILLEGAL_GROUP if ending == "faults" else 0)
    else:
        assert int(states[0].ctl[0, M.STEPS]) == max_steps
