"""Stages of the VLIW attention and decoder templates, run alone on raw EXT images.

The task-level tests (test_kernels.py) check whole kernels against tolerances; these pin the
numerics the stages promise: RMSNorm rounded once, the narrow projection as exact as a GEMM.
"""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.sims.vliw import ACCELERATOR
from kcgym.sims.vliw.compiler.attention import attention_stage, narrow_matmul_stage
from kcgym.sims.vliw.compiler.decoder import rmsnorm_stage
from kcgym.sims.vliw.compiler.emit import Asm
from kcgym.tasks import composite_math as cm
from kcgym.tasks.families import matmul_bf16
from kcgym.tasks.numerics import random_bf16
from tests.sims.vliw.harness import fault_name, run

HW = ACCELERATOR.make_hw()


@pytest.mark.parametrize("h", [64, 128, 256])
def test_rmsnorm_stage_rounds_once_like_the_reference(h):
    rows = 8
    x = random_bf16(np.random.default_rng(h), (rows, h), low=-3.0, high=3.0)
    asm = Asm("rmsnorm")
    rmsnorm_stage(asm, (rows, h), 0, 2 * rows * h, 1.0 / h, cm.NORM_EPS)
    st, _ = run(asm.text(), np.concatenate([x.ravel(), np.zeros(rows * h)]), HW, 1_000_000)
    assert fault_name(st) == "NONE"
    got = np.asarray(st.ext[rows * h : 2 * rows * h]).reshape(rows, h)
    want = cm.rmsnorm(x)
    assert np.mean(got == want) >= 0.99  # a value next to a rounding boundary may go either way ...
    np.testing.assert_allclose(got, want, rtol=2.0**-7)  # ... by one ulp


def test_narrow_projection_matches_a_bf16_gemm():
    m, k, n = 8, 64, 16
    rng = np.random.default_rng(0)
    x, w = random_bf16(rng, (m, k), scale=1.0), random_bf16(rng, (k, n), low=-0.2, high=0.2)
    asm = Asm("narrow")
    narrow_matmul_stage(asm, HW, (m, k, n), 0, 2 * m * k, 2 * (m * k + k * n))
    st, _ = run(asm.text(), np.concatenate([x.ravel(), w.ravel(), np.zeros(m * n)]), HW, 1_000_000)
    assert fault_name(st) == "NONE"
    got = np.asarray(st.ext[m * k + k * n : m * k + k * n + m * n]).reshape(m, n)
    np.testing.assert_allclose(got, matmul_bf16(x, w), rtol=2.0**-7, atol=1e-6)


def test_attention_stage_names_what_it_cannot_take():
    with pytest.raises(ValueError, match="power-of-two group"):
        attention_stage(Asm("x"), HW, 8, 16, 3, 3, 0.25, (0, 32), (0, 32), (0, 32), (0, 32))
    with pytest.raises(ValueError, match="does not fit"):
        attention_stage(Asm("x"), HW, 128, 512, 1, 1, 0.25, (0, 1024), (0, 1024), (0, 1024), (0, 1024))
