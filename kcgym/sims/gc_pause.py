"""The cyclic garbage collector paused while a pre-pass runs.

A pre-pass allocates millions of small tuples and lists that live until it ends (snapshots, walks, decoded
records); each of Python's full collections on the way walks every one of them, and every object the process
holds besides, to find no cycles (the pre-pass frees its objects by reference count). Pausing it took 10-15% off
the VLIW pre-pass of batch_matmul C4's kernels. The collector's state is restored afterwards (enabled, unless it was
off already), and what the pre-pass left for it is collected at the next collection as usual.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
