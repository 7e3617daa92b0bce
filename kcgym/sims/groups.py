"""Packing a levelled trace into fixed-width groups: the step shared by the NPU's and VLIW's trace-ahead paths.

A trace-ahead pre-pass gives every data operation a *level* (operations of one level touch disjoint
rows). Each level's operations of one kind, in program order, are packed into groups of that kind's
width, so that one loop step of the JAX data path gathers, computes and scatters a whole group; padding
lanes carry ``NO_SEQ`` and their writes go to a dump row. The group count is padded to whole chunks (one
compile serves any program length).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

NO_SEQ = np.iinfo(np.int32).max  # the sequence number of a padding lane


def pack(kinds: np.ndarray, order_key: np.ndarray, levels: np.ndarray, fields: np.ndarray, seqs: np.ndarray,
         widths: Sequence[int], n_kinds: int, group_width: int,
         chunk_size: Callable[[int], int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``(group kind, group fields, group sequence numbers, number of real groups)`` of ``n`` operations.

    ``order_key`` orders operations within a level and kind (program order); ``fields`` is int32[n, F];
    ``widths[kind]`` is the lanes a group of that kind uses (at most ``group_width``)."""
    n = len(kinds)
    lv = np.asarray(levels, np.int64)
    order = np.lexsort((order_key, kinds, lv))
    key = (lv * n_kinds + kinds)[order]
    new_run = np.ones(n, bool)
    new_run[1:] = key[1:] != key[:-1]
    run_start = np.maximum.accumulate(np.where(new_run, np.arange(n), 0))
    pos = np.arange(n) - run_start
    width = np.asarray(widths)[kinds[order]]
    new_group = new_run | (pos % width == 0)
    gid = np.cumsum(new_group) - 1
    n_groups = int(gid[-1]) + 1 if n else 0
    ch = chunk_size(n_groups)
    total = max(1, -(-n_groups // ch)) * ch
    g_kind = np.full(total, -1, np.int32)
    g_kind[gid] = kinds[order]
    g_fields = np.zeros((total, group_width, fields.shape[1]), np.int32)  # padding lanes: their writes dumped
    g_fields[gid, pos % width] = fields[order]
    g_seq = np.full((total, group_width), NO_SEQ, np.int32)
    g_seq[gid, pos % width] = seqs[order]
    return g_kind, g_fields, g_seq, n_groups
