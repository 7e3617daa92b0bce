"""Input images kept on the device across runs: the same hidden inputs are not sent again per kernel.

Batch scoring runs thousands of distinct programs on the *same* input images (one HBM image per input
set, the same for every kernel of a batch). Sending such an image to the device as a NumPy argument of a
jitted call is the largest fixed cost of a small NPU run (a C1 HBM bucket of four input sets is 1 MB).
:func:`on_device` keeps the last few images it sent, each with a host
copy, and returns the device array again when a new image is bit for bit the same (compared as raw
bytes: NaN poison and its payload included), so a hit costs one memory compare.
"""

from __future__ import annotations

import threading

import jax
import numpy as np

DEVICE_INPUTS = 4  # images kept (a batch needs one per simulator; a few more for interleaved scorers)
MAX_DEVICE_INPUT_BYTES = 16 << 20  # an image larger than this is sent every time, not kept (host copy + device)

_LOCK = threading.Lock()
_KEPT: list[tuple[np.ndarray, jax.Array]] = []  # (host copy, device array), most recent last


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    word = np.uint64 if a.nbytes % 8 == 0 else np.uint8  # compare the bits, so NaN equals its own copy
    return bool(np.array_equal(a.reshape(-1).view(word), b.reshape(-1).view(word)))


def on_device(x: np.ndarray | jax.Array, dtype: type = np.float32) -> jax.Array:
    """``x`` as a device array of ``dtype``: the one sent before when a kept image is bit-identical, else sent
    now (a device array is returned as it is)."""
    if isinstance(x, jax.Array):
        return x if x.dtype == dtype else x.astype(dtype)
    x = np.ascontiguousarray(x, dtype)
    if x.nbytes > MAX_DEVICE_INPUT_BYTES:
        return jax.device_put(x)
    with _LOCK:
        for i, (host, dev) in enumerate(_KEPT):
            if _same(host, x):
                _KEPT.append(_KEPT.pop(i))
                return dev
    dev = jax.device_put(x)
    with _LOCK:
        _KEPT.append((x.copy(), dev))
        del _KEPT[:-DEVICE_INPUTS]
    return dev


def clear() -> None:
    """Forget every kept image (tests)."""
    with _LOCK:
        _KEPT.clear()
