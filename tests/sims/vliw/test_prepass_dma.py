"""The VLIW pre-pass's DMA fast paths (``kcgym/sims/vliw/trace.py``): the EXT rows a DMA touches, found from
its rows' runs (a slice where they overlap or abut), against every element as the interpreter addresses it;
and DMA geometries -- strided with gaps, overlapping, negative strides, tiled, enough
DMAs in to wrap the ring of renamed DM lines -- through the trace path against the interpreter, whole state."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from kcgym.sims.vliw import machine as M
from kcgym.sims.vliw import trace
from kcgym.sims.vliw.accelerator import ACCELERATOR
from kcgym.sims.vliw.config import LANES, VLIWConfig
from tests.sims.vliw.test_trace_differential import _ext, _run_state, assert_same_state

HW = VLIWConfig()


@pytest.fixture(autouse=True)
def _trace_path(monkeypatch):
    """The trace path for the short programs here too (by default they take the oracle)."""
    monkeypatch.setenv(trace.SIM_ENV, "trace")


def _every_element(re: int, rs: int, n_r: int, width: int, per_strip: int, tot_e: int, dma_elems: int, H: int,
                   is_out: bool) -> set | None:
    """The rows as ``Machine._dma`` addresses the elements (int32 arithmetic), None: a DMA out past the image."""
    e = np.arange(min(tot_e, dma_elems), dtype=np.int64)
    within = e % per_strip
    idx = (re // 2 + (within // width) * (rs // 2) + (e // per_strip) * width + within % width)
    idx = ((idx + (1 << 31)) % (1 << 32) - (1 << 31)).astype(np.int64)  # (wrapped as int32)
    if is_out:
        idx = np.where(idx < 0, idx + H, idx)
        if (idx < 0).any() or (idx >= H).any():
            return None
    return set((np.clip(idx, 0, H - 1) // LANES).tolist())


def _as_set(rows) -> set | None:
    if rows is None:
        return None
    if isinstance(rows, slice):
        return set(range(rows.start, rows.stop))
    return set(np.asarray(rows).tolist())


GEOMETRIES = [  # (re, rs, n_r, rowbytes, tbytes or 0)
    (0, 0, 1, 8192, 0), (64, 0, 1, 100, 0), (1000, 1024, 8, 512, 16), (0, 512, 8, 512, 16), (0, 256, 256, 16, 8),
    (2048, 64, 16, 64, 0), (4096, 32, 8, 64, 0), (4096, -512, 8, 64, 0), (30000, 2, 4, 34, 0), (0, 96, 4, 24, 16),
    (32000, 64, 4, 64, 0), (32700, 0, 1, 200, 0), (-64, 64, 2, 64, 0), (2 ** 30, 2 ** 30, 4, 64, 0),
]


@pytest.mark.parametrize("is_out", [False, True])
@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_ext_rows_are_the_elements_rows(geometry, is_out):
    re, rs, n_r, rowbytes, tbytes = geometry
    H = 16384
    width = max((tbytes or rowbytes) // 2, 1)
    per_strip = max(n_r * width, 1)
    tot_e = (n_r * rowbytes) // 2
    args = (re, rs, n_r, width, per_strip, tot_e, HW.dma_max_bytes // 2, H, is_out)
    assert _as_set(trace._dma_ext_rows(*args)) == _every_element(*args)


def test_ext_rows_take_the_cheap_forms():
    """Overlapping or abutting rows give a slice, rows with gaps an index array (the fast path ran)."""
    assert isinstance(trace._dma_ext_rows(0, 512, 8, 256, 2048, 2048, 8192, 16384, False), slice)
    rows = trace._dma_ext_rows(0, 1024, 8, 8, 64, 64, 8192, 16384, False)
    assert isinstance(rows, np.ndarray) and sorted(rows.tolist()) == [16 * i for i in range(8)]


def _dmas(lines: list[str]) -> str:
    return "\n".join(["VBCST x1, 2.0", "MOVI r5, 64", "MOVI r6, -512", "MOVI r7, 1024", "MOVI r8, 96", *lines]) + "\n"


PROGRAMS = {
    "strided_gaps": ["MOVI r1, 256", "PMOVI p1, 4096", "DMAI p1, r1, r7, 8, 32", "NOP", "VLD x2, p1, 0",
                     "PMOVI p2, 8192", "VST x2, p2, 0", "MOVI r2, 20000", "DMAO p2, r2, r7, 2, 32"],
    "overlapping_rows": ["MOVI r1, 100", "DMAI p0, r1, r5, 8, 128", "NOP", "VLD x2, p0, 64", "VADD x3, x2, x1",
                         "NOP", "NOP", "VST x3, p0, 0", "MOVI r2, 24000", "DMAO p0, r2, r5, 4, 128"],
    "negative_stride": ["MOVI r1, 8000", "DMAI p0, r1, r6, 8, 64", "NOP", "VLD x2, p0, 128", "MOVI r2, 26000",
                        "DMAO p0, r2, r6, 4, 64"],
    "tiled": ["MOVI r1, 512", "DMAIT p0, r1, r8, 4, 32, 16", "NOP", "VLD x2, p0, 0", "MOVI r2, 28000",
                      "DMAOT p0, r2, r8, 4, 32, 16"],
    # 17408 renamed DM line rows: 80 DMAs in of 256 lines into one half of DM go round the ring while the
    # other half's rows (one DMA in before) stay live and must be skipped
    "ring_wrap": ["PMOVI p1, 16384", "MOVI r2, 16384", "DMAI p1, r2, r0, 1, 16384", "MOVI r1, 0",
                  "DMAI p0, r1, r0, 1, 16384", "LOOPI 80, end", "MOVI r2, 16384",
                  "DMAI p1, r2, r0, 1, 16384", "ADDI r1, r1, 0", "end:", "PMOVI p4, 16320", "VLD x5, p4, 0",
                  "PMOVI p3, 32768", "VST x5, p3, 0", "MOVI r3, 30000", "DMAO p3, r3, r0, 1, 64"],
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_dma_geometries_whole_state(name):
    program = ACCELERATOR.assemble(_dmas(PROGRAMS[name]), HW)
    hw_json = HW.model_dump_json()
    ext = _ext(11)
    trace._TRACES.clear()
    new = _run_state(trace.batched_runner(hw_json)[1], program, ext, 100_000)
    assert_same_state(new, _run_state(M.batched_runner(hw_json)[1], program, ext, 100_000))
    assert trace._TRACES and all(entry[1] is not None for entry in trace._TRACES.values())  # the trace path ran it
    trace._TRACES.clear()


def test_geometries_cover_every_form():
    """The grid reaches the slice, the index array and the element-by-element form (and a DMA out past EXT)."""
    forms = set()
    for (re, rs, n_r, rowbytes, tbytes), is_out in itertools.product(GEOMETRIES, (False, True)):
        width = max((tbytes or rowbytes) // 2, 1)
        rows = trace._dma_ext_rows(re, rs, n_r, width, max(n_r * width, 1), n_r * rowbytes // 2, 8192, 16384, is_out)
        forms.add("none" if rows is None else type(rows).__name__)
    assert forms == {"slice", "ndarray", "none"}


def test_memoised_rows_are_the_computed_ones_and_read_only():
    """``_dma_ext_rows`` is memoised across DMAs and programs: asked again (in any order) it gives what
    ``_ext_rows_of`` computes, as arrays no caller can change."""
    trace._dma_ext_rows.cache_clear()
    grid = [(re, rs, n_r, max((tb or rb) // 2, 1), is_out, rb) for (re, rs, n_r, rb, tb), is_out
            in itertools.product(GEOMETRIES, (False, True))]
    for _ in range(2):
        for re, rs, n_r, width, is_out, rb in grid + grid[::-1]:
            args = (re, rs, n_r, width, max(n_r * width, 1), n_r * rb // 2, 8192, 16384, is_out)
            got, want = trace._dma_ext_rows(*args), trace._ext_rows_of(*args)
            assert type(got) is type(want)
            if isinstance(got, np.ndarray):
                np.testing.assert_array_equal(got, want)
                with pytest.raises(ValueError):
                    got[:1] = -1
            else:
                assert got == want
    assert trace._dma_ext_rows.cache_info().hits >= 3 * len(grid)
