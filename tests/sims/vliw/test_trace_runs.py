"""How a levelled plan with expanded segments is chunked (``trace._Runs``): consecutive parts of one width run as one
sequence of groups in GROUP_CHUNKs, narrow parts beside wide ones widened within a budget, and every group sent once,
in the parts' order, as it was (padding lanes and padding groups aside) -- so the data path runs the same groups.
The kernels' results through it are checked against the interpreter by the differential and streamed tests."""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.sims.vliw import trace
from kcgym.sims.vliw.trace import GROUP_CHUNK, GROUP_WIDTH, N_FIELDS, NO_SEQ, SMALL_CHUNK, WIDE_WIDTH

RNG = np.random.default_rng(16)


def groups(n: int, width: int, pad: int = 3) -> trace.Groups:
    """``n`` groups of random lanes (the last lanes of each padding), then ``pad`` padding groups (as
    ``groups.pack`` pads a part to its chunk)."""
    total = n + pad
    kind = np.full(total, -1, np.int32)
    kind[:n] = RNG.integers(0, trace.N_KINDS, n)
    fields = np.zeros((total, width, N_FIELDS), np.int32)
    seq = np.full((total, width), NO_SEQ, np.int32)
    lanes = RNG.integers(1, width + 1, n)
    for i, k in enumerate(lanes.tolist()):
        fields[i, :k] = RNG.integers(-1000, 1000, (k, N_FIELDS))
        seq[i, :k] = RNG.integers(0, 1 << 20, k)
    return trace.Groups(kind, fields, seq, np.int32(n))


def lanes_of(packs: list[np.ndarray]) -> list[tuple]:
    """Each real group of the chunks, in order: its kind and its real lanes (fields and step)."""
    out = []
    for pk in packs:
        for grp in pk:
            if grp[0, N_FIELDS + 1] < 0:
                continue
            real = grp[:, N_FIELDS] != NO_SEQ
            out.append((int(grp[0, N_FIELDS + 1]), grp[real, :N_FIELDS + 1].tobytes()))
    return out


def chunked(parts: list[trace.Groups], sends: int = 1) -> list[np.ndarray]:
    """The host chunks of ``parts`` given to one ``_Runs`` in ``sends`` batches (as ``_streamed`` sends them)."""
    runs = trace._Runs()
    out: list[np.ndarray] = []
    per = -(-len(parts) // sends)
    for at in range(0, len(parts), per):
        for g in parts[at:at + per]:
            out += runs.add(g)
    return out + runs.close()


def expected(parts: list[trace.Groups]) -> list[tuple]:
    return lanes_of([trace.pack_groups(g, slice(0, int(g.n))) for g in parts])


@pytest.mark.parametrize("sends", [1, 3])
def test_a_narrow_prologue_joins_wide_parts_in_one_shape(sends):
    """batch_matmul C5's expert's shape: a narrow prologue, then wide parts of a few thousand and a few hundred
    groups -- one chunk shape (GROUP_CHUNK x WIDE_WIDTH), the same groups in the same order."""
    parts = [groups(147, GROUP_WIDTH)] + [groups(n, WIDE_WIDTH) for n in (4336, 331, 4336, 360, 2999)]
    packs = chunked(parts, sends)
    assert {pk.shape for pk in packs} == {(GROUP_CHUNK, WIDE_WIDTH, N_FIELDS + 2)}
    assert len(packs) == -(-sum(int(g.n) for g in parts) // GROUP_CHUNK)
    assert lanes_of(packs) == expected(parts)


def test_narrow_parts_past_the_budget_stay_narrow():
    """Narrow parts as many as the wide ones (swiglu C5's expert: its stepped inner loops between wide segments)
    are not all widened: past WIDEN_MIN (and WIDEN_SHARE of the wide groups) they run narrow, each run in
    SMALL_CHUNKs where it is shorter than a GROUP_CHUNK."""
    parts = [groups(392 if i % 2 == 0 else 291, GROUP_WIDTH if i % 2 == 0 else WIDE_WIDTH) for i in range(20)]
    packs = chunked(parts)
    widths = {pk.shape[1] for pk in packs}
    assert widths == {GROUP_WIDTH, WIDE_WIDTH}
    assert {pk.shape[0] for pk in packs} == {SMALL_CHUNK}
    narrow_sent = sum(int((pk[:, 0, N_FIELDS + 1] >= 0).sum()) for pk in packs if pk.shape[1] == GROUP_WIDTH)
    narrow = sum(int(g.n) for g in parts if g.fields.shape[1] == GROUP_WIDTH)
    wide = sum(int(g.n) for g in parts if g.fields.shape[1] == WIDE_WIDTH)
    widened = narrow - narrow_sent
    assert 0 < widened <= max(trace.WIDEN_SHARE * wide, trace.WIDEN_MIN)
    assert lanes_of(packs) == expected(parts)


def test_a_narrow_plan_is_never_widened():
    parts = [groups(n, GROUP_WIDTH) for n in (100, 3000, 50)]
    packs = chunked(parts, 2)
    assert {pk.shape for pk in packs} == {(GROUP_CHUNK, GROUP_WIDTH, N_FIELDS + 2)}
    assert lanes_of(packs) == expected(parts)


def test_a_narrow_run_already_sent_is_not_widened():
    """A narrow run that sent a GROUP_CHUNK keeps its width to its end (its groups sent cannot be widened)."""
    parts = [groups(2100, GROUP_WIDTH), groups(5000, WIDE_WIDTH)]
    packs = chunked(parts)
    assert [pk.shape[:2] for pk in packs] == [(GROUP_CHUNK, GROUP_WIDTH), (GROUP_CHUNK, GROUP_WIDTH)] + [
        (GROUP_CHUNK, WIDE_WIDTH)] * 3
    assert lanes_of(packs) == expected(parts)


def test_padding_groups_end_a_chunk():
    """A chunk's padding groups come after its real ones (the data path runs a chunk's groups up to its count)."""
    packs = chunked([groups(10, WIDE_WIDTH), groups(2500, WIDE_WIDTH)])
    for pk in packs:
        kinds = pk[:, 0, N_FIELDS + 1]
        real = int((kinds >= 0).sum())
        assert (kinds[:real] >= 0).all() and (kinds[real:] == -1).all()
        assert (pk[real:, :, N_FIELDS] == NO_SEQ).all()
