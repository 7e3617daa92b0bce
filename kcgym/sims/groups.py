"""Packing a levelled trace into fixed-width groups: the step shared by the NPU's and VLIW's trace-ahead paths.

A trace-ahead pre-pass gives every data operation a *level* (operations of one level touch disjoint
rows). Each level's operations of one kind, in program order, are packed into groups of that kind's
width, so that one loop step of the JAX data path gathers, computes and scatters a whole group; padding
lanes carry ``NO_SEQ`` and their writes go to a dump row. The group count is padded to whole chunks (one
compile serves any program length).

The order is a sort of millions of operations on the first simulate of a long program (a VLIW C5 expert
packs ~9M): where the order key is already program order (both callers' usual case) it is one stable sort
of one int32 key ``level * kinds + kind`` (timsort: a levelled trace is long ascending runs, so it is near
linear), not a three-key ``lexsort``; index arithmetic is int32 and the fields are scattered once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

NO_SEQ = np.iinfo(np.int32).max  # the sequence number of a padding lane


def pack(kinds: np.ndarray, order_key: np.ndarray | None, levels: np.ndarray, fields: np.ndarray, seqs: np.ndarray,
         widths: Sequence[int], n_kinds: int, group_width: int, chunk_size: Callable[[int], int],
         wider: tuple[Sequence[int], float] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``(group kind, group fields, group sequence numbers, number of real groups)`` of ``n`` operations.

    ``order_key`` orders operations within a level and kind (program order; ``None``: the operations' own
    order); ``fields`` is int32[n, F]; ``widths[kind]`` is the lanes a group of that kind uses (at most
    ``group_width``). ``wider``: ``(widths, ratio)``, wider groups to take instead where the levels fill them so
    well that they number at most ``ratio`` times the groups of ``widths`` (the group fields' width then their
    widest). Index arithmetic is int32 (the arrays are hundreds of MB on a long trace), int64 where it would not
    fit."""
    n = len(kinds)
    idx = np.int64 if n >= 1 << 31 else np.int32
    lv = np.asarray(levels)
    wide = n and int(lv.max()) >= ((1 << 31) - n_kinds) // n_kinds
    key = lv.astype(np.int64 if wide else np.int32) * n_kinds + kinds
    if n and int(key.min()) >= 0 and (order_key is None or bool(np.all(order_key[1:] >= order_key[:-1]))):
        order = np.argsort(key, kind="stable")  # ties keep index order, which is order_key's: the lexsort's
    else:
        order = np.lexsort((np.arange(n) if order_key is None else order_key, kinds, levels))
    key = key[order]
    k_sorted = kinds[order]
    new_run = np.ones(n, bool)
    new_run[1:] = key[1:] != key[:-1]
    del key
    if wider is not None and n:
        starts = np.flatnonzero(new_run)
        length, run_kind = np.diff(starts, append=n), k_sorted[starts]
        n_wide, n_narrow = (int(np.sum(-(-length // np.asarray(ws, np.int64)[run_kind]))) for ws in (wider[0], widths))
        if n_wide <= wider[1] * n_narrow:
            widths, group_width = wider[0], max(wider[0])
    at = np.arange(n, dtype=idx)
    run_start = np.maximum.accumulate(np.where(new_run, at, 0))
    w = np.asarray(widths, idx)
    pos = at - run_start
    # (widths that are powers of two, as both callers' are: a mask, not a division)
    lane = pos & (w - 1)[k_sorted] if np.all(w & (w - 1) == 0) else pos % w[k_sorted]
    del at, run_start, pos
    gid = np.cumsum(new_run | (lane == 0), dtype=idx) - 1
    n_groups = int(gid[-1]) + 1 if n else 0
    ch = chunk_size(n_groups)
    total = max(1, -(-n_groups // ch)) * ch
    g_kind = np.full(total, -1, np.int32)
    g_kind[gid] = k_sorted
    slot = np.empty(n, np.int64 if total * group_width >= 1 << 31 else idx)  # each operation's lane, in its order
    slot[order] = gid * group_width + lane
    g_fields = np.zeros((total * group_width, fields.shape[1]), np.int32)  # padding lanes: their writes dumped
    g_fields[slot] = fields
    g_seq = np.full(total * group_width, NO_SEQ, np.int32)
    g_seq[slot] = seqs
    return g_kind, g_fields.reshape(total, group_width, -1), g_seq.reshape(total, group_width), n_groups


def pack_items(kinds: np.ndarray, levels: np.ndarray, counts: np.ndarray, widths: Sequence[int], n_kinds: int,
               group_width: int, chunk_size: Callable[[int], int],
               wider: tuple[Sequence[int], float] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """``pack``'s layout of *items*, each ``counts[i]`` operations in a row of one kind and level (a rolled loop's
    template operation over its iterations), without the operations one by one: ``(item order, each operation's
    slot in that order, group kinds, real groups, group width)``. The same groups as ``pack`` of the operations
    expanded item by item in index order: items sorted stably by level and kind, so an item's operations stay
    together and in order. The caller computes the operations' fields in item order and scatters them to the
    slots (``vliw.trace.schedule_rolled``)."""
    n_i = len(kinds)
    order = np.lexsort((np.arange(n_i), kinds, levels))
    k_s, l_s, c_s = kinds[order], levels[order], counts[order].astype(np.int64)
    new_run = np.ones(n_i, bool)
    new_run[1:] = (k_s[1:] != k_s[:-1]) | (l_s[1:] != l_s[:-1])
    starts = np.flatnonzero(new_run)
    run_len = np.add.reduceat(c_s, starts) if n_i else np.zeros(0, np.int64)
    run_kind = k_s[starts]
    if wider is not None and n_i:
        n_wide, n_narrow = (int(np.sum(-(-run_len // np.asarray(ws, np.int64)[run_kind]))) for ws in (wider[0], widths))
        if n_wide <= wider[1] * n_narrow:
            widths, group_width = wider[0], max(wider[0])
    w = np.asarray(widths, np.int64)[run_kind]
    run_groups = -(-run_len // w)
    g_start = np.cumsum(run_groups) - run_groups
    n_groups = int(run_groups.sum())
    n = int(c_s.sum())
    idx = np.int64 if n >= 1 << 31 else np.int32
    op_start = np.cumsum(run_len) - run_len
    pos = np.arange(n, dtype=idx) - np.repeat(op_start.astype(idx), run_len)  # each operation's place in its run
    if np.all(w == group_width):  # (a run's operations fill its groups' lanes in a row)
        slot = pos + np.repeat((g_start * group_width).astype(np.int64 if n_groups * group_width >= 1 << 31 else idx),
                               run_len)
    else:
        w_op = np.repeat(w.astype(idx), run_len)
        slot = (np.repeat(g_start.astype(np.int64), run_len) + pos // w_op) * group_width + pos % w_op
    ch = chunk_size(n_groups)
    total = max(1, -(-n_groups // ch)) * ch
    g_kind = np.full(total, -1, np.int32)
    g_kind[:n_groups] = np.repeat(run_kind, run_groups)
    return order, slot, g_kind, n_groups, group_width
