"""Input images kept on the device (``kcgym.sims.device_inputs``): reused only when bit for bit the same."""

from __future__ import annotations

import jax
import numpy as np

from kcgym.sims import device_inputs as D


def test_a_bit_identical_image_is_not_sent_again_and_any_other_is():
    D.clear()
    a = np.full((4, 1024), np.nan, np.float32)
    a[:, :10] = 1.5
    first = D.on_device(a)
    assert D.on_device(a.copy()) is first  # same bytes, another array: the kept device array
    np.testing.assert_array_equal(np.asarray(first).view(np.uint32), a.view(np.uint32))
    b = a.copy()
    b.view(np.uint32)[0, 500] ^= 1  # another NaN payload: a different image
    assert D.on_device(b) is not first
    c = a.copy()
    c[0, 0] = -1.5
    assert D.on_device(c) is not first
    assert D.on_device(a.reshape(2, 2048)) is not first  # same bytes, another shape
    assert D.on_device(first) is first  # a device array passes through


def test_the_kept_images_are_bounded(monkeypatch):
    D.clear()
    for i in range(3 * D.DEVICE_INPUTS):
        D.on_device(np.full(64, i, np.float32))
    assert len(D._KEPT) == D.DEVICE_INPUTS
    monkeypatch.setattr(D, "MAX_DEVICE_INPUT_BYTES", 1 << 12)
    big = np.zeros(1025, np.float32)
    assert isinstance(D.on_device(big), jax.Array) and len(D._KEPT) == D.DEVICE_INPUTS
