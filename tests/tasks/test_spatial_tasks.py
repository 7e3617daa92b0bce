"""The spatial tasks (conv2d, depthwise_conv, conv_block): references against direct loops, configs, inputs."""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.tasks import TASKS
from kcgym.tasks.numerics import round_bf16
from kcgym.tasks.spatial import im2col, pad_same

U = 2.0**-8  # bf16 unit roundoff


def direct_conv(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Same-padded convolution by explicit loops in float64, independent of the im2col path."""
    h, wd, _ = x.shape
    k = w.shape[0]
    xp = np.zeros((h + k - 1, wd + k - 1, x.shape[2]))
    xp[k // 2 : k // 2 + h, k // 2 : k // 2 + wd] = x
    y = np.zeros((h, wd, w.shape[-1]))
    for i in range(h):
        for j in range(wd):
            for kh in range(k):
                for kw in range(k):
                    y[i, j] += xp[i + kh, j + kw] @ w[kh, kw].astype(np.float64)
    return y


@pytest.mark.parametrize("name", ["conv2d", "conv_block", "depthwise_conv"])
@pytest.mark.parametrize("accelerator", ["NPU", "VLIW"])
def test_five_configs_of_growing_work_with_whole_vector_rows(name, accelerator):
    task = TASKS[name]
    cfgs = task.configs(accelerator)
    assert [c.index for c in cfgs] == [1, 2, 3, 4, 5]
    macs = [task.macs(c) for c in cfgs]
    assert macs == sorted(macs) and macs[0] < macs[-1]
    width = 64 if accelerator == "NPU" else 32
    for c in cfgs:
        for key in ("cin", "cout", "c"):
            if key in c.params:
                assert c[key] % width == 0, (c.label, key)
        assert c["k"] % 2 == 1 and c["H"] % 4 == 0
        if accelerator == "NPU" and name != "depthwise_conv":
            assert c["k"] ** 2 * c["cin"] // 64 <= 16  # one output strip's weights fit the MSRAM


@pytest.mark.parametrize("index", [1, 2, 5])
def test_conv2d_reference_matches_direct_loops(index):
    task = TASKS["conv2d"]
    cfg = task.config("NPU", index)
    inp = task.generate_inputs(cfg, np.random.default_rng(index))
    want = direct_conv(inp["X"].astype(np.float64), inp["W"])
    got = task.reference(cfg, inp)["Y"]
    assert np.all(np.abs(got - want) <= U * np.abs(want) + 1e-5)  # one rounding of an exact sum
    assert 0.7 < got.std() < 1.3  # O(1) outputs


def test_conv2d_padding_is_zero_and_same_size():
    x = np.ones((4, 4, 1), np.float32)
    w = np.ones((3, 3, 1, 1), np.float32)
    y = TASKS["conv2d"].reference(TASKS["conv2d"].config("NPU", 2), {"X": x, "W": w})["Y"][..., 0]
    assert y.shape == (4, 4)
    assert y[0, 0] == 4 and y[0, 1] == 6 and y[1, 1] == 9  # corner, edge, interior tap counts
    with pytest.raises(ValueError, match="odd kernel size"):
        pad_same(x, 2)
    assert im2col(np.arange(8, dtype=np.float32).reshape(2, 2, 2), 1).shape == (4, 2)


def test_depthwise_rounds_every_multiply_and_add_in_tap_order():
    task = TASKS["depthwise_conv"]
    cfg = task.config("NPU", 1)
    inp = task.generate_inputs(cfg, np.random.default_rng(3))
    x, w = inp["X"], inp["W"]
    got = task.reference(cfg, inp)["Y"]
    # pixel (3, 4), channel 5, by hand
    acc = None
    for kh in range(3):
        for kw in range(3):
            prod = round_bf16(np.float32(x[3 + kh - 1, 4 + kw - 1, 5] * w[kh, kw, 5]))
            acc = prod if acc is None else round_bf16(np.float32(acc + prod))
    assert got[3, 4, 5] == acc
    exact = direct_conv(x.astype(np.float64)[..., :1], np.diag(w[..., 0].reshape(-1)).reshape(3, 3, 1, 9)[..., :1])
    assert exact.shape == (8, 8, 1)
    # channels do not mix: changing channel 0 of X changes only channel 0 of Y
    x2 = x.copy()
    x2[..., 0] += 1
    diff = task.reference(cfg, {"X": x2, "W": w})["Y"] != got
    assert diff[..., 0].any() and not diff[..., 1:].any()
    assert 0.7 < got.std() < 1.3


def test_conv_block_is_conv_then_affine_then_relu():
    block, conv = TASKS["conv_block"], TASKS["conv2d"]
    cfg = block.config("NPU", 2)
    inp = block.generate_inputs(cfg, np.random.default_rng(5))
    c = conv.reference(cfg, {"X": inp["X"], "W": inp["W"]})["Y"]
    y = block.reference(cfg, inp)["Y"]
    want = np.maximum(round_bf16(round_bf16(c * inp["scale"]) + inp["shift"]), 0)
    np.testing.assert_array_equal(y, want)
    positive = (y > 0).mean()
    assert 0.3 < positive < 0.7  # the ReLU matters: about half the outputs are clipped
    assert np.all(inp["scale"] >= 0.5) and np.all(np.abs(inp["shift"]) <= 1)
