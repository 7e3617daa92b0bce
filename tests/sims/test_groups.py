"""``groups.pack`` (shared by the NPU's and VLIW's trace paths) against the implementation it replaced, kept
here as the reference: a three-key ``lexsort`` and int64 index arithmetic."""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.sims import groups


def reference_pack(kinds, order_key, levels, fields, seqs, widths, n_kinds, group_width, chunk_size):
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
    g_fields = np.zeros((total, group_width, fields.shape[1]), np.int32)
    g_fields[gid, pos % width] = fields[order]
    g_seq = np.full((total, group_width), groups.NO_SEQ, np.int32)
    g_seq[gid, pos % width] = seqs[order]
    return g_kind, g_fields, g_seq, n_groups


def _chunk(n_groups: int) -> int:
    return 4 if n_groups <= 4 else 16


def _same(got, want) -> None:
    assert got[3] == want[3]
    for a, b in zip(got[:3], want[:3], strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


def _case(rng, n: int, n_kinds: int, max_level: int, order: str):
    kinds = rng.integers(0, n_kinds, n).astype(np.int32)
    levels = rng.integers(1, max_level + 1, n).astype(np.int32)
    if order == "runs":  # a levelled trace: levels climb in runs (the pre-pass's usual shape), program order
        levels = (np.cumsum(rng.integers(0, 2, n)) % max_level + 1).astype(np.int32)
    fields = rng.integers(-2**31, 2**31, (n, 5)).astype(np.int32)
    seqs = np.sort(rng.integers(0, 4 * n + 1, n)).astype(np.int32)
    # "sorted" has ties (index order breaks them); "merged": the NPU's merged programs (program << 32 | seq)
    key = {"index": None, "runs": None, "sorted": np.sort(rng.integers(0, n // 2 + 1, n)),
           "random": rng.permutation(n).astype(np.int64), "merged": seqs.astype(np.int64) + (
               (np.arange(n) * 3 // max(n, 1)).astype(np.int64) << 32)}[order]
    return kinds, key, levels, fields, seqs


@pytest.mark.parametrize("order", ["index", "sorted", "random", "merged", "runs"])
@pytest.mark.parametrize("widths", [(4, 4, 2), (3, 4, 1)])  # powers of two (a mask) and not (a division)
def test_pack_matches_reference(order: str, widths: tuple) -> None:
    rng = np.random.default_rng(len(order) * 7 + widths[0])
    for n, max_level in ((0, 1), (1, 1), (2, 1), (37, 3), (500, 40), (3000, 7)):
        kinds, key, levels, fields, seqs = _case(rng, n, len(widths), max_level, order)
        ref_key = np.arange(n) if key is None else key
        got = groups.pack(kinds, key, levels, fields, seqs, widths, len(widths), 4, _chunk)
        _same(got, reference_pack(kinds, ref_key, levels, fields, seqs, widths, len(widths), 4, _chunk))


def test_pack_levels_past_int32_key() -> None:
    """Levels whose ``level * kinds + kind`` key would wrap int32 sort as int64 (and still match): levels near
    2**32 / 7 wrap to small positive int32 keys, which would sort among the small levels'."""
    rng = np.random.default_rng(3)
    n = 400
    kinds = rng.integers(0, 7, n).astype(np.int32)
    levels = np.where(rng.random(n) < 0.5, rng.integers(1, 60, n), -(-2**32 // 7) + rng.integers(0, 60, n))
    fields = rng.integers(0, 100, (n, 3)).astype(np.int32)
    seqs = np.arange(n, dtype=np.int32)
    widths = (32, 32, 32, 8, 8, 32, 32)
    got = groups.pack(kinds, None, levels, fields, seqs, widths, 7, 32, _chunk)
    _same(got, reference_pack(kinds, np.arange(n), levels, fields, seqs, widths, 7, 32, _chunk))
