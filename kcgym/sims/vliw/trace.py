"""Trace-ahead simulation of the VLIW tile: a scalar pre-pass, then only the data path in JAX.

On the VLIW the PC, scalar and pointer registers, the loop stack, DMA geometry, the scoreboard and every
fault never depend on tensor data (``machine.py``'s design). So :func:`prepass` runs the control side once
per program in plain Python -- the same scoreboard, the same checks in the same order as
:meth:`~kcgym.sims.vliw.machine.Machine.step` -- and records every data operation with its operands
resolved to rows of one buffer: renamed vector-register and accumulator values, renamed DM lines (every
VST and DMA in gives the lines it writes fresh rows, so reuse of a DM buffer does not serialise its
users), and EXT. Each operation gets a *level* (one more than the levels of what it must follow:
read-after-write, write-after-write, write-after-read on rows), and each level's operations of one kind
are packed into fixed-width groups. The JAX part (:class:`DataPath`) loops over those groups (in
fixed-size chunks, so one compile serves every program length), on every input set at once: per group a
gather, the arithmetic and one scatter. The interpreter in ``machine.py`` stays the oracle
(``tests/sims/vliw/test_trace_differential.py``): results are bit-identical to it. The structure follows
the NPU's ``kcgym/sims/npu/trace.py``.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from array import array
from collections.abc import Sequence
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from kcgym.limits import CYCLE_LIMIT
from kcgym.sims import compile_ahead, groups
from kcgym.sims.gc_pause import collector_paused
from kcgym.sims.interpreter import bf16
from kcgym.sims.jax_cache import enable_persistent_cache
from kcgym.sims.trace_cache import TraceCache
from kcgym.sims.vliw import blocks as B
from kcgym.sims.vliw import machine as M
from kcgym.sims.vliw import rolled
from kcgym.sims.vliw.config import LANES, LINE_BYTES, VECTOR_BYTES, VLIWConfig
from kcgym.sims.vliw.isa import CLASSES, make_isa

TRACE_CACHE_SIZE = 32  # pre-passed programs kept per process (program + hw + EXT limit and bucket + budget)
TRACE_CACHE_BYTES = 256 << 20  # and at most this much of their groups
# Data operations one trace may record (about 50 bytes each while pre-passing); a longer program runs on the
# interpreter. batch_matmul's C4 and C5 experts (double-buffered loops; C4's are too long to roll) fit, and their warm
# and first simulates on the trace path beat the interpreter's warm ones several times over (their rows in
# benchmarks/results/speed_sweep.jsonl). Memory grows with the limit: a trace this long takes GBs to pre-pass.
TRACE_MAX_OPS = 12_000_000
# Programs of more dynamic bundles than this (``static_count``; or an unknown count) roll their steady loops
# (``rolled``); shorter ones step every iteration. Rolling trades a shorter pre-pass (the first simulate, the
# one an eval episode feels) for more groups (rolled segments pack into more groups than one levelled trace:
# a slower warm simulate). ``python benchmarks/bench_roll.py`` times both (benchmarks/results/speed_roll.jsonl):
# on batch_matmul C3, decoder_llama C4 and decoder_t5 C4 (1.1M-1.4M bundles) rolling saved several times more
# first-simulate CPU than it added warm; below 1M it was mixed (matmul C5, 0.9M: a gain; linear C5, 0.83M: a
# slower first simulate too). So: from 1M bundles.
ROLL_ABOVE = 1_000_000
GROUP_WIDTH = 32  # data operations executed together in one loop step (a level's ops of one kind)
# ... or WIDE_WIDTH where a trace's levels fill such groups so well that they number at most WIDE_BELOW times the
# GROUP_WIDTH groups (fewer loop steps; a wide group costs 1.4-1.5x a narrow one: the data path of matmul C3 and
# C4 then takes ~25% less CPU, conv2d C3's, whose levels are narrow, would take 35% more)
WIDE_WIDTH = 64
WIDE_BELOW = 0.65
GROUP_CHUNK = 2048  # groups per call of the jitted data path: one compile serves programs of any length
# A trace of at least this many operations and rolled groups is planned and sent a few parts at a time on its first
# run (``_streamed``: at least STREAM_SEND_GROUPS groups a send), each send's chunks run while the next parts are
# scheduled and packed; both constants tune speed only
STREAM_MIN_OPS = 200_000
STREAM_SEND_GROUPS = 4096
SMALL_CHUNK = 128  # ... except programs of at most this many groups, whose one call sends a smaller array
X_SLOTS = 16384  # renamed vector-register values (a slot is reused after X_SLOTS writes; levels keep it safe)
C_SLOTS = 8192  # renamed accumulator values (a tile of VMMULs takes one per VMMUL)
LINE_SLOTS = 16384  # renamed DM lines beyond the DM's own (a DMA in of 16 KB takes 256)
N_FIELDS = 8  # operand fields of one data operation
FLUSH_OPS = 1 << 16  # data operations the pre-pass holds in a list before moving them to their array (memory)

# data-operation kinds (one lax.switch branch each). K_LD: VLD, VLDB and VST (a row copy or a broadcast).
# The multiply-accumulates have branches of their own, computing only their formula as the interpreter's
# vector slot does: XLA contracts ``cd + a * b`` and orders VMMUL's sums the same way only in that shape.
K_LD, K_VEC, K_MOV, K_DMAI, K_DMAO, K_MAC, K_MMUL = range(7)
N_KINDS = 7
DMAO_WIDTH = 8  # a DMA-out line writes 32 single elements of EXT: its groups stay narrow
WIDTH = tuple(DMAO_WIDTH if k == K_DMAO else GROUP_WIDTH for k in range(N_KINDS))
WIDE = (tuple(DMAO_WIDTH if k == K_DMAO else WIDE_WIDTH for k in range(N_KINDS)), WIDE_BELOW)  # (``groups.pack``)
ROLL_WIDTHS = tuple(DMAO_WIDTH if k == K_DMAO else rolled.ROLL_WIDTH for k in range(N_KINDS))  # iterations per
# rolled group
assert rolled.ROLL_WIDTH == GROUP_WIDTH  # (a rolled chunk runs on the levelled groups' data path: ``unrolled``)
NO_SEQ = groups.NO_SEQ

_I32 = 1 << 32
_SUB = make_isa(VLIWConfig()).sub_ids  # sub-op ids do not depend on the config
_CLS = M.CLS


def _w(x: int) -> int:
    """int32 wrap-around (the interpreter's integer arithmetic)."""
    x &= 0xFFFFFFFF
    return x - _I32 if x & 0x80000000 else x


class Trace(NamedTuple):
    """What the pre-pass found: the control side's final state, the data operations and where values ended."""

    ctl: np.ndarray
    r: np.ndarray
    p: np.ndarray
    ready: np.ndarray
    loops: np.ndarray
    line_ready: np.ndarray
    line_read: np.ndarray
    dma_free: np.ndarray
    busy: np.ndarray
    counts: np.ndarray
    ops: np.ndarray | None  # int32[n, 4 + N_FIELDS]: kind, seq, pc, level, fields (program order)
    x_rows: tuple  # row of each vector register's final value
    c_rows: tuple
    line_rows: np.ndarray  # row of each DM line's final content
    exotic: bool  # an address wrapped around int32, or the trace is too long: leave it to the oracle
    mmul: bool  # the program ran a VMMUL (see ``run``: exact for bf16 vector registers only)
    rolls: tuple = ()  # (data operations before it, rolled.Rolled) of each rolled loop segment, in order


class Layout(NamedTuple):
    """Row offsets of the data path's row buffer: line slots | x slots | c slots | rolled loops' rows | dump
    row (EXT is a separate flat buffer: a DMA addresses it by element)."""

    x: int
    c: int
    dump: int
    ext_rows: int  # EXT rows of LANES elements (the pre-pass's unit of EXT dependencies)
    roll: int  # first of the rolled segments' rows (``rolled.ROLL_ROWS``)


def layout_of(hw: VLIWConfig, H: int, roll_rows: int = 0) -> Layout:
    """``roll_rows``: rows for rolled segments (``rolled.ROLL_ROWS`` where the trace has any; else none, so
    a trace without them runs on the same buffer as before rolling existed)."""
    o_x = hw.dm_lines + LINE_SLOTS
    o_c = o_x + 12 + X_SLOTS
    o_roll = o_c + 8 + C_SLOTS
    return Layout(o_x, o_c, o_roll + roll_rows, -(-H // LANES), o_roll)


def _decode(machine: M.Machine, words: np.ndarray) -> list:
    """Per bundle: (slots, ready indices read, (index, latency) written, end latency, used slot list)."""
    S, F = machine.S, machine.F
    rows = words.reshape(-1, S, F)
    ops, fields = rows[:, :, 0], rows[:, :, 3:]
    rbase, wbase = machine.read_base[ops], machine.write_base[ops]
    ridx = np.where(rbase >= 0, np.clip(rbase + fields, 0, M.N_READY - 1), 0)
    widx = np.where(wbase >= 0, wbase + fields, M.N_READY)
    wlat = machine.write_latency[ops]
    end = np.maximum(np.max(np.where(wbase >= 0, wlat, 0), axis=(1, 2)), 1)
    n = rows.shape[0]
    # reads: each bundle's distinct non-zero indices, ascending; writes: (index, latency) in slot order. As
    # flat lists cut per bundle (a Python loop over every operand field cost ~10 us a bundle)
    srt = np.sort(ridx.reshape(n, -1), axis=1)
    keep = srt != 0
    keep[:, 1:] &= srt[:, 1:] != srt[:, :-1]
    w_i, w_t = widx.reshape(n, -1), wlat.reshape(n, -1)
    w_on = w_i < M.N_READY
    r_flat, wi_flat, wt_flat = srt[keep].tolist(), w_i[w_on].tolist(), w_t[w_on].tolist()
    r_end, w_end = np.cumsum(keep.sum(axis=1)).tolist(), np.cumsum(w_on.sum(axis=1)).tolist()
    out = []
    r0 = w0 = 0
    for row, e, r1, w1 in zip(rows.tolist(), end.tolist(), r_end, w_end, strict=True):
        out.append((row, r_flat[r0:r1], list(zip(wi_flat[w0:w1], wt_flat[w0:w1], strict=True)), e))
        r0, w0 = r1, w1
    return out


DMA_ROWS_MEMO = 4096  # DMA geometries whose EXT rows are kept (``_dma_ext_rows``; a few KB each at most)


# ---- per-bundle records: the static half of a bundle, decoded once per program ----------------------------
# control kinds of a record (the CTL slot's instruction as the pre-pass acts on it; 0: nothing to do)
CK_NONE, CK_LOOPI, CK_LOOP, CK_J, CK_BEQZ, CK_BNEZ, CK_HALT, CK_DMA = range(8)
VECTOR_MASK = VECTOR_BYTES - 1  # (a power of two: ``addr & VECTOR_MASK`` is ``addr % VECTOR_BYTES``)
_SCL_P_READS = 10  # scalar sub-ops from PADD on read a pointer register as their a operand (PADD, PADDI, MOVP)


def _records(dec: list, dm_bytes: int) -> list:
    """Per decoded bundle, what :func:`prepass` needs of it, resolved once: the scoreboard's reads and
    writes, and per active slot its register indices (clamped as the interpreter clamps them), access size,
    data-operation kind and static fields, so the per-bundle loop does only the dynamic work. A record:
    ``(reads, writes, end latency, ld0, ld1, st, vec, scl, mov, ctl, slow, multi)``; an inactive slot is None;
    ``slow``: the bundle always takes the exact checks (a DMA); ``multi``: two or more DM accesses (banks)."""
    S_VLDB, S_VMPYL, S_VMACL, S_VMPY = _SUB["VLDB"], _SUB["VMPYL"], _SUB["VMACL"], _SUB["VMPY"]
    S_VMAC, S_VMMUL, S_PMOVI, S_PADDI = _SUB["VMAC"], _SUB["VMMUL"], _SUB["PMOVI"], _SUB["PADDI"]
    S_VCONV, S_VUPS, S_VBCST, S_VBCSTL, S_VINS, S_CZERO = (_SUB[m] for m in ("VCONV", "VUPS", "VBCST", "VBCSTL", "VINS",
                                                                              "CZERO"))
    S_DMAO, S_DMAIT, S_DMAOT = _SUB["DMAO"], _SUB["DMAIT"], _SUB["DMAOT"]
    C_LD, C_ST, C_VEC, C_SCL, C_MOV, C_CTL, C_DMA = (_CLS[c] for c in ("LD", "ST", "VEC", "SCL", "MOV", "CTL", "DMA"))
    ctl_kind = {_SUB[m]: k for m, k in (("LOOPI", CK_LOOPI), ("LOOP", CK_LOOP), ("J", CK_J), ("BEQZ", CK_BEQZ),
                                         ("BNEZ", CK_BNEZ), ("HALT", CK_HALT))}
    vec_reads_c = {_SUB["VRADD"], _SUB["VEXP2C"], _SUB["VINVC"]}
    vec_reads_cd = {_SUB["VMAC"], _SUB["VMACL"], _SUB["VMMUL"]}

    def xr(f: int) -> int:
        return min(max(f, 0), 11)

    out = []
    for row, reads, writes, end_lat in dec:
        ld0, ld1, st_, vec, scl, mov, ctl = row
        lds: list = []
        for ins in (ld0, ld1):
            if ins[1] != C_LD:
                lds.append(None)
                continue
            size = 2 if ins[2] == S_VLDB else VECTOR_BYTES
            lds.append((ins[4] & 7, dm_bytes - size, size - 1, int(ins[2] == S_VLDB), xr(ins[3]), ins[5]))
        st = (st_[4] & 7, xr(st_[3]), st_[5]) if st_[1] == C_ST else None
        v = None
        if vec[1] == C_VEC:
            vsub, f0, f1, f2, f3 = vec[2], vec[3], vec[4], vec[5], vec[6]
            mode = 1 if vsub in vec_reads_c else 2 if vsub in vec_reads_cd else 0
            to_c = vsub >= S_VMPY
            kind = K_MMUL if vsub == S_VMMUL else K_MAC if vsub in (S_VMAC, S_VMACL) else K_VEC
            v = (kind, vsub, mode, xr(f1), xr(f2), f1 & 7, f0 & 7, f3 & 15, f3 & 1, to_c, (f0 & 7) if to_c else xr(f0),
                 vsub in (S_VMPYL, S_VMACL))
        s = None
        if scl[1] == C_SCL:
            ssub, f0, f1, f2 = min(max(scl[2], 0), 12), scl[3], scl[4], scl[5]
            to_p = S_PMOVI <= ssub <= S_PADDI
            i1 = (f1 & 7) if ssub >= _SCL_P_READS else (f1 & 15)
            i2 = f2 & 31 if ssub in (5, 6) else f2 & 15 if ssub in (1, 3, 4, 10) else f2
            s = (ssub, i1, i2, to_p, (f0 & 7) if to_p else (f0 & 15), f1)
        m = None
        if mov[1] == C_MOV:
            msub, f0, f1, f2 = mov[2], mov[3], mov[4], mov[5]
            to_c = msub in (S_VUPS, S_CZERO)
            a_c = msub == S_VCONV
            rmode = 0 if msub in (S_CZERO, S_VBCST) else 1 if msub == S_VINS else 2
            m = (msub, a_c, (f1 & 7) if a_c else xr(f1), xr(f0), f2 & 15, f1, rmode, to_c, (f0 & 7) if to_c else xr(f0),
                 msub in (S_VBCSTL, S_VINS))
        c: tuple = (CK_NONE,)
        if ctl[1] == C_DMA:
            csub = ctl[2]
            c = (CK_DMA, ctl[3] & 7, ctl[4] & 15, ctl[5] & 15, ctl[6], ctl[7], ctl[8], csub in (S_DMAO, S_DMAOT),
                 csub in (S_DMAIT, S_DMAOT))
        elif ctl[1] == C_CTL and ctl[2] in ctl_kind:
            k = ctl_kind[ctl[2]]
            c = (k, ctl[3] if k in (CK_LOOPI, CK_J) else ctl[3] & 15, ctl[4])
        n_mem = (lds[0] is not None) + (lds[1] is not None) + (st is not None)
        out.append((tuple(reads), tuple(writes), end_lat, lds[0], lds[1], st, v, s, m, c, c[0] == CK_DMA, n_mem > 1))
    return out


def _exact_checks(row: list, r: list, p: list, depth: int, hw: VLIWConfig, limit: int) -> tuple[int, int, int, bool]:
    """The bundle's checks in the interpreter's order: ``(fault code, detail, slot, wrapped)``; ``wrapped``: an
    address whose bounds check passed only by wrapping around int32 (the trace leaves such a program to the
    oracle). :func:`prepass` screens each bundle with cheaper tests that imply no fault and no wrap and
    calls this only where they do not (and on every DMA)."""
    S_VLDB, S_VMPYL, S_VMACL, S_VBCSTL, S_VINS = (_SUB[m] for m in ("VLDB", "VMPYL", "VMACL", "VBCSTL", "VINS"))
    C_LD, C_ST, C_VEC, C_MOV, C_CTL, C_DMA = (_CLS[c] for c in ("LD", "ST", "VEC", "MOV", "CTL", "DMA"))
    dm_bytes = hw.dm_bytes
    ld0, ld1, st_, vec, scl, mov, ctl_ins = row
    code = detail = fslot = 0
    a0 = a1 = sa = 0
    on0, on1, on_st = ld0[1] == C_LD, ld1[1] == C_LD, st_[1] == C_ST
    for slot, ins, on in ((M.S_LD0, ld0, on0), (M.S_LD1, ld1, on1)):
        if not on:
            continue
        addr = p[ins[4] & 7]
        if slot == M.S_LD0:
            a0 = addr
        else:
            a1 = addr
        size = 2 if ins[2] == S_VLDB else VECTOR_BYTES
        if not (addr >= 0 and _w(addr + size) <= dm_bytes):
            code, detail = M.F_OOB_DM, addr
        elif addr % size:
            code, detail = M.F_MISALIGNED, addr
        if code:
            fslot = slot
            break
    if on_st:
        sa = p[st_[4] & 7]
        if not code:
            if not (sa >= 0 and _w(sa + VECTOR_BYTES) <= dm_bytes):
                code, detail, fslot = M.F_OOB_DM, sa, M.S_ST
            elif sa % VECTOR_BYTES:
                code, detail, fslot = M.F_MISALIGNED, sa, M.S_ST
    if vec[1] == C_VEC and not code and vec[2] in (S_VMPYL, S_VMACL):
        lane = r[vec[6] & 15]
        if not 0 <= lane < LANES:
            code, detail, fslot = M.F_BAD_LANE, lane, M.S_VEC
    if mov[1] == C_MOV and not code and mov[2] in (S_VBCSTL, S_VINS):
        lane = r[mov[5] & 15]
        if not 0 <= lane < LANES:
            code, detail, fslot = M.F_BAD_LANE, lane, M.S_MOV
    is_dma = ctl_ins[1] == C_DMA
    pm = total = 0
    if is_dma:
        pm, re, rs = p[ctl_ins[3] & 7], r[ctl_ins[4] & 15], r[ctl_ins[5] & 15]
        n_r, rowbytes = ctl_ins[6], ctl_ins[7]
        total = _w(n_r * rowbytes)
        last = _w(re + _w((n_r - 1) * rs))
        lo, hi = min(re, last), _w(max(re, last) + rowbytes)
        if not code:
            if not (pm >= 0 and _w(pm + total) <= dm_bytes):
                code, detail, fslot = M.F_OOB_DM, pm, M.S_CTL
            elif pm % LINE_BYTES:
                code, detail, fslot = M.F_MISALIGNED, pm, M.S_CTL
            elif re % 2 or rs % 2:
                code, detail, fslot = M.F_MISALIGNED, rs if re % 2 == 0 else re, M.S_CTL
            elif not (lo >= 0 and hi <= 2 * limit):
                code, detail, fslot = M.F_OOB_EXT, lo if lo < 0 else hi, M.S_CTL
    csub = ctl_ins[2]
    is_loop = ctl_ins[1] == C_CTL and csub in (_SUB["LOOP"], _SUB["LOOPI"])
    count = r[ctl_ins[3] & 15] if csub == _SUB["LOOP"] else ctl_ins[3]
    if is_loop and count > 0 and not code and depth >= hw.loop_depth:
        code, detail, fslot = M.F_LOOP_DEPTH, depth, M.S_CTL
    wrapped = bool((on0 and a0 + (2 if ld0[2] == S_VLDB else VECTOR_BYTES) > dm_bytes) or (
        on1 and a1 + (2 if ld1[2] == S_VLDB else VECTOR_BYTES) > dm_bytes) or (
        on_st and sa + VECTOR_BYTES > dm_bytes) or (is_dma and pm + total > dm_bytes))
    return code, detail, fslot, wrapped


@functools.lru_cache(maxsize=DMA_ROWS_MEMO)
def _dma_ext_rows(re: int, rs: int, n_r: int, width: int, per_strip: int, tot_e: int, dma_elems: int, H: int,
                  is_out: bool) -> np.ndarray | slice | None:
    """The EXT rows (of LANES elements) a DMA's elements touch (``Machine._dma``'s element order), each at
    least once -- the pre-pass takes maxima over them and assigns them one level, so repeats do not matter --
    or None for a DMA out past the EXT image. The common case (whole strips, no int32 wrap-around, inside
    the image) from each DMA row's run of elements (its strips lie side by side in EXT), a slice where the
    runs overlap or abut; else element by element as the interpreter. Memoised (a kernel's loops repeat a few
    geometries: matmul C3's 272 DMAs a pre-pass): the arrays are read-only."""
    rows = _ext_rows_of(re, rs, n_r, width, per_strip, tot_e, dma_elems, H, is_out)
    if isinstance(rows, np.ndarray):
        rows.flags.writeable = False
    return rows


def _ext_rows_of(re: int, rs: int, n_r: int, width: int, per_strip: int, tot_e: int, dma_elems: int, H: int,
                 is_out: bool) -> np.ndarray | slice | None:
    n_strips = tot_e // per_strip
    if (0 < tot_e <= dma_elems and n_r >= 1 and n_strips * per_strip == tot_e
            and abs(re) + (n_r + 1) * abs(rs) + 2 * tot_e + 2 * width < 1 << 30):
        run, rs2, first = n_strips * width, rs // 2, re // 2
        last = first + (n_r - 1) * rs2
        lo, hi = min(first, last), max(first, last) + run - 1
        if lo >= 0 and hi < H:
            if abs(rs2) <= run:
                return slice(lo // LANES, hi // LANES + 1)
            s = first + np.arange(n_r, dtype=np.int64) * rs2
            offs = np.append(np.arange(0, run, LANES), run - 1)  # every row a run spans has one of these
            return _distinct_runs(((s[:, None] + offs[None, :]) // LANES).reshape(-1))
    e = np.arange(min(tot_e, dma_elems), dtype=np.int32)
    within = e % np.int32(per_strip)
    with np.errstate(over="ignore"):
        ext_idx = (np.int32(re // 2) + (within // np.int32(width)) * np.int32(rs // 2)
                   + (e // np.int32(per_strip)) * np.int32(width) + within % np.int32(width))
    if is_out:
        ext_idx = np.where(ext_idx < 0, ext_idx + H, ext_idx)
        if (ext_idx < 0).any() or (ext_idx >= H).any():
            return None
    return _distinct_runs(np.clip(ext_idx, 0, H - 1) // LANES)


def _distinct_runs(rows: np.ndarray) -> np.ndarray:
    """``rows`` without repeats of the entry before (cheaper than ``np.unique``; later repeats stay)."""
    keep = np.ones(len(rows), bool)
    np.not_equal(rows[1:], rows[:-1], out=keep[1:])
    return rows[keep]


def _steps_alike(hist: list, passes: int) -> bool:
    """Whether the last ``passes`` back-edges of ``hist`` (snapshots, oldest first) each moved the scalar and
    pointer registers by the same deltas and took the same steps: then a period of ``passes`` back-edges is
    that of one repeated, and a roll that failed for one fails for it too (speed only: it is not tried)."""
    at = hist[-1 - passes:]
    moves = {(tuple(_w(b - a) for a, b in zip(x[6], y[6], strict=True)),
              tuple(_w(b - a) for a, b in zip(x[7], y[7], strict=True)), y[8] - x[8])
             for x, y in zip(at[:-1], at[1:], strict=True)}
    return len(moves) == 1


def _same_since(before: list, now: list, t0: int, t1: int) -> bool:
    """Every ``max(a - t0, 0) == max(b - t1, 0)`` of ``before`` and ``now`` (the DM lines' DMA times at two
    back-edges, relative to each one's cycle; past times count as zero): as arrays, since a DM has a thousand
    lines and the check is made at every back-edge of a loop that may roll."""
    a = np.array(before, np.int64) - t0
    b = np.array(now, np.int64) - t1
    return bool(np.array_equal(np.maximum(a, 0), np.maximum(b, 0)))


# Decoded bundles kept per process, by config and bundle words (``_decoded``): a batch of similar kernels (an RL
# batch, a benchmark's variants) decodes a bundle they share once. The memo is emptied when full; an entry holds
# up to ~8 KB (tracemalloc over matmul C3's bundles), so ~32 MB at most (a default-config program: <= 1,024 bundles).
ROW_MEMO_ENTRIES = 4096
_ROW_MEMO: dict = {}  # (config, word dtype, row width) -> {bundle words: (``_decode`` entry, ``_records`` record)}


def _decoded(machine: M.Machine, words: np.ndarray, hw: VLIWConfig) -> tuple[list, list]:
    """``(_decode(machine, words), _records(that, hw.dm_bytes))``, each bundle looked up in (and a new one added
    to) the memo: both are functions of the bundle's words and the config alone. The entries are shared by every
    program that has the bundle: read-only."""
    w = np.ascontiguousarray(words)
    keys = w.view(np.dtype((np.void, w.dtype.itemsize * w.shape[1]))).ravel().tolist()
    cfg = (hw, w.dtype.str, w.shape[1])
    memo = _ROW_MEMO.get(cfg)
    if memo is None:
        if len(_ROW_MEMO) >= 8:  # (a few configs per process)
            _ROW_MEMO.clear()
        memo = _ROW_MEMO[cfg] = {}
    got = [memo.get(k) for k in keys]
    new = [i for i, g in enumerate(got) if g is None]
    if new:
        dec = _decode(machine, w[new])
        if len(memo) + len(new) > ROW_MEMO_ENTRIES:
            memo.clear()
        for i, d, rec in zip(new, dec, _records(dec, hw.dm_bytes), strict=True):
            got[i] = memo[keys[i]] = (d, rec)
    return [g[0] for g in got], [g[1] for g in got]  # type: ignore[index]


def _class_counts(cls: np.ndarray, used: np.ndarray, ex: np.ndarray) -> np.ndarray:
    """Executed operations per class: each used slot counts its bundle's executions. One exact int64
    scatter-add (a masked sum per class: 0.06-0.08 ms of a ~2 ms C1 matmul pre-pass, this 0.021 ms); classes
    outside ``CLASSES`` (words no decoder accepts) count nowhere, as in that list."""
    on = used & (cls >= 0) & (cls < len(CLASSES))
    counts = np.zeros(len(CLASSES), np.int64)
    np.add.at(counts, cls[on], np.broadcast_to(ex[:, None], cls.shape)[on])
    return counts


@functools.lru_cache(maxsize=16)
def _machine(hw: VLIWConfig) -> M.Machine:
    """The interpreter's decode tables of a config (read-only here), built once, not per pre-pass."""
    return M.Machine(hw)


def prepass(words: np.ndarray, hw: VLIWConfig, limit: int, max_steps: int, H: int, roll: bool = True) -> Trace:
    """Run the control side of ``words`` (the padded program) exactly as ``Machine.run_one`` does;
    ``roll``: roll steady loops (``rolled``) instead of stepping every iteration."""
    machine = _machine(hw)
    words = np.asarray(words)
    n_rows = len(words)
    halt = machine.halt_row
    tail = n_rows
    differs = np.flatnonzero(np.any(words != halt, axis=1))  # decode up to the first trailing halt row only
    tail = min(n_rows, (int(differs[-1]) + 2) if len(differs) else 1)
    dec, recs = _decoded(machine, words[:tail], hw)
    n_dec = len(dec)
    lay = layout_of(hw, H, rolled.ROLL_ROWS if roll else 0)
    n_lines, depth_max = hw.dm_lines, hw.loop_depth
    dm_bytes, bank, penalty = hw.dm_bytes, hw.bank_bytes, hw.branch_penalty
    dma_lat, dma_bw = hw.dma_latency, hw.dma_bytes_per_cycle
    dma_elems = machine.dma_elems
    st_lim = dm_bytes - VECTOR_BYTES
    r = [0] * 16
    p = [0] * 8
    ready = [0] * M.N_READY
    loops = [[0, 0, 0] for _ in range(depth_max)]
    line_ready = [0] * n_lines  # (lists: the hot loop reads single entries)
    line_read = [0] * n_lines
    dma_free = [0, 0]
    dma_busy = [0, 0]
    execs = [0] * n_dec
    pc = steps = halted = fault = fault_pc = fault_detail = fault_slot = t_issue = t_end = depth = 0
    exotic = False
    # ---- rolled loops (``rolled``): per loop depth, the state at its last back-edge and the tries left
    structs: dict = {}
    snaps: list = [None] * depth_max
    tries = [0] * depth_max
    dyn_tries: dict = {}  # loop -> tries at its path-dependent body since it last rolled
    periods: dict = {}  # loop -> the back-edges of its iterations when it last rolled (``rolled.PERIOD_MAX``)
    walks = rolled.Walks()  # loop bodies walked so far, re-based where one rolls again
    follows = rolled.Follows()  # path-dependent loop bodies followed so far
    rolls: list = []
    roll_mmul = False
    kinds = (K_LD, K_VEC, K_MOV, K_DMAI, K_DMAO, K_MAC, K_MMUL)
    # ---- renaming and levels -------------------------------------------------------------------
    n_res = lay.dump
    lw = [0] * n_res  # level of the last write of each row (line, x and c slots)
    lr = [0] * n_res  # highest level that read it
    ext_lw = np.zeros(lay.ext_rows + 1, np.int64)
    ext_lr = np.zeros(lay.ext_rows + 1, np.int64)
    xs = [lay.x + i for i in range(12)]  # register -> row of its value (initial zeros)
    cs = [lay.c + i for i in range(8)]
    lines = list(range(n_lines))  # DM line -> row of its content (initial zeros)
    line_held = [False] * n_res
    for i in range(n_lines):
        line_held[i] = True
    nx = nc = nl = 0  # ring positions of x, c and line slots
    ops = array("i")  # the data operations (the hot loop collects them in ``buf``, moved here now and then)
    buf: list = []
    emit = buf.extend  # (a list takes a tuple several times faster than the array does)
    check_at = min(FLUSH_OPS, TRACE_MAX_OPS)
    n_ops = 0

    def new_x() -> int:
        nonlocal nx
        while True:
            row = lay.x + 12 + nx % X_SLOTS
            nx += 1
            if row not in xs:
                return row

    def new_c() -> int:
        nonlocal nc
        while True:
            row = lay.c + 8 + nc % C_SLOTS
            nc += 1
            if row not in cs:
                return row

    def new_line(line: int) -> int:
        nonlocal nl
        while True:
            row = nl % (n_lines + LINE_SLOTS)
            nl += 1
            if not line_held[row]:
                break
        line_held[lines[line]] = False
        line_held[row] = True
        lines[line] = row
        return row

    def level(reads, writes) -> int:
        lvl = 0
        for x in reads:
            if lw[x] > lvl:
                lvl = lw[x]
        for x in writes:
            if lw[x] > lvl:
                lvl = lw[x]
            if lr[x] > lvl:
                lvl = lr[x]
        lvl += 1
        for x in reads:
            if lr[x] < lvl:
                lr[x] = lvl
        for x in writes:
            lw[x] = lvl
        return lvl

    LB, xbase, cbase, n_ring = LINE_BYTES, lay.x + 12, lay.c + 8, n_lines + LINE_SLOTS
    L_START, L_END, L_COUNT = M.L_START, M.L_END, M.L_COUNT
    i32_lo, i32_hi = -0x80000000, 0x7FFFFFFF
    push = False
    count = rv = pm = re = rs = 0
    a0 = a1 = sa = d0 = d1 = dv = dm = ln0 = ln1 = lns = 0
    vc = mc = False
    # ---- compiled runs of bundles (``blocks``): per entry bundle, (code, data operations, bundles), False
    # where none starts there; entries counted until one is compiled
    block_after = B.BLOCK_AFTER
    blocks: list = [None] * n_dec
    hits = [0] * n_dec
    if block_after is not None:  # bundles their LOOPIs run too few times to repay a compile: never counted
        for q in B.cold_bundles(recs, CK_LOOPI):
            blocks[q] = False
    loop_ends = frozenset(c[2] for *_, c, _, _ in recs if c[0] in (CK_LOOPI, CK_LOOP))
    consts = dict(CYCLE_LIMIT=CYCLE_LIMIT, LB=LB, ST_LIM=st_lim, VECTOR_MASK=VECTOR_MASK, LANES=LANES, BANK=bank,
                  XBASE=xbase, CBASE=cbase, X_SLOTS=X_SLOTS, C_SLOTS=C_SLOTS, N_RING=n_ring, K_LD=K_LD, K_MOV=K_MOV,
                  I32_LO=i32_lo, I32_HI=i32_hi)
    block_key = (hw, tuple(consts.items()), words.dtype.str, words.shape[1:])  # (with a block's words: what its
    # code is a function of)
    ns = dict(r=r, p=p, ready=ready, line_ready=line_ready, line_read=line_read, lw=lw, lr=lr, xs=xs, cs=cs,
              lines=lines, line_held=line_held, execs=execs, emit=emit, _w=_w)
    force = False

    while not halted and steps < max_steps:
        cur = pc if pc < n_dec else n_dec - 1  # past the decoded rows: the trailing halt row (JAX clamps too)
        blocked = False  # ``blocks``: a compiled run of bundles ran, up to this one (``cur``)
        if block_after is not None and pc < n_dec and not force:
            bk = blocks[pc]
            if bk is None:
                hits[pc] += 1
                if hits[pc] >= block_after:
                    n_b = B.extent(recs, pc, loop_ends, n_dec)
                    bkey = (block_key, n_b, words[pc:pc + n_b].tobytes())
                    bk = blocks[pc] = (*B.compile_block(recs, pc, n_b, consts, ns, bkey), n_b) if n_b else False
            if bk:
                fn, ops_b, dt_b, n_b = bk
                if n_ops + ops_b > check_at and n_ops + ops_b <= TRACE_MAX_OPS:  # (flushed here, not inside)
                    ops.fromlist(buf)
                    buf.clear()
                    check_at = min(n_ops + FLUSH_OPS, TRACE_MAX_OPS)
                if (steps + n_b <= max_steps and n_ops + ops_b <= check_at
                        and (t_issue if t_issue > t_end else t_end) + dt_b <= CYCLE_LIMIT):
                    j, t_issue, t_end, steps, nx, nc, nl, n_ops = fn(pc, t_issue, t_end, steps, nx, nc, nl, n_ops)
                    if j < n_b:  # bundle j needs the exact checks (a fault or a wrap-around)
                        pc += j
                        force = True
                        continue
                    pc = cur = pc + n_b - 1
                    blocked = True
        force = False
        if blocked:
            taken = False
            next_pc = pc + 1
        else:
            reads, writes, end_lat, ld0, ld1, st_, vec, scl, mov, ctl, slow, multi = recs[cur]
            steps += 1
            clock = t_issue if t_issue > t_end else t_end
            if clock > CYCLE_LIMIT:  # the interpreter's first check
                halted, fault, fault_pc, fault_detail, fault_slot = 1, M.F_CYCLE_LIMIT, pc, clock, -1
                break
            dep = 0
            for i in reads:
                v = ready[i]
                if v > dep:
                    dep = v
            # ---- checks: a screen that implies no fault and no wrap-around, else the exact ones; with the DM
            # lines' timing of accesses that pass it (reading it has no effect where the bundle then faults)
            ok = not slow
            if ld0 is not None:
                p0, lim0, m0, b0, xd0, inc0 = ld0
                a0 = p[p0]
                if a0 < 0 or a0 > lim0 or a0 & m0:
                    ok = False
                else:
                    ln0 = a0 // LB
                    v = line_ready[ln0]
                    if v > dep:
                        dep = v
            if ld1 is not None:
                p1, lim1, m1, b1, xd1, inc1 = ld1
                a1 = p[p1]
                if a1 < 0 or a1 > lim1 or a1 & m1:
                    ok = False
                else:
                    ln1 = a1 // LB
                    v = line_ready[ln1]
                    if v > dep:
                        dep = v
            if st_ is not None:
                ps, xsrc, incs = st_
                sa = p[ps]
                if sa < 0 or sa > st_lim or sa & VECTOR_MASK:
                    ok = False
                else:
                    lns = sa // LB
                    v = line_ready[lns]
                    if v > dep:
                        dep = v
                    v = line_read[lns]
                    if v > dep:
                        dep = v
            if vec is not None:
                kind, vsub, mode, ia, ib, ica, icd, ilane, h, vc, vreg, vchk = vec
                if vchk and not 0 <= r[ilane] < LANES:
                    ok = False
            if mov is not None:
                msub, a_c, ma, mt, mlane, f1, rmode, mc, mreg, mchk = mov
                if mchk and not 0 <= r[mlane] < LANES:
                    ok = False
            ck = ctl[0]
            push = False
            if ck:
                if ck == CK_LOOPI:
                    count = ctl[1]
                    push = count > 0
                elif ck == CK_LOOP:
                    count = r[ctl[1]]  # (the pre-bundle registers: the scalar slot writes later)
                    push = count > 0
                elif ck in (CK_BEQZ, CK_BNEZ):
                    rv = r[ctl[1]]
                elif ck == CK_DMA:
                    pm, re, rs = p[ctl[1]], r[ctl[2]], r[ctl[3]]
                if push and depth >= depth_max:
                    ok = False
            if not ok:
                code, detail, fslot, wrapped = _exact_checks(dec[cur][0], r, p, depth, hw, limit)
                if code:
                    halted, fault, fault_pc, fault_detail, fault_slot = 1, code, pc, detail, fslot
                    break
                if wrapped:
                    exotic = True  # an address whose bounds check passed only by wrapping around int32: the oracle's
                    break
            # ---- timing ------------------------------------------------------------------------------
            t = t_issue if t_issue > dep else dep
            if multi:
                on0, on1, on_st = ld0 is not None, ld1 is not None, st_ is not None
                k0, k1, k2 = a0 // bank, a1 // bank, sa // bank
                t += (on0 and on1 and k0 == k1) + (on0 and on_st and k0 == k2) + (on1 and on_st and k1 == k2)
            for i, lat in writes:
                ready[i] = t + lat
            ready[0] = 0
            execs[cur] += 1
            seq = steps
            # ---- data operations, in the interpreter's order (loads read the DM before the store); renaming and
            # levels inlined (``new_x``, ``new_c``, ``new_line``, ``level``): a fresh row never is one read here
            if ld0 is not None:
                src = lines[ln0]
                while True:
                    d0 = xbase + nx % X_SLOTS
                    nx += 1
                    if d0 not in xs:
                        break
                lvl = lw[src]
                if lw[d0] > lvl:
                    lvl = lw[d0]
                if lr[d0] > lvl:
                    lvl = lr[d0]
                lvl += 1
                if lr[src] < lvl:
                    lr[src] = lvl
                lw[d0] = lvl
                emit((K_LD, seq, cur, lvl, d0, src, (a0 // 2) % LANES if b0 else 0, b0, 0, 0, 0, 0))
                n_ops += 1
            if ld1 is not None:
                src = lines[ln1]
                while True:
                    d1 = xbase + nx % X_SLOTS
                    nx += 1
                    if d1 not in xs:
                        break
                lvl = lw[src]
                if lw[d1] > lvl:
                    lvl = lw[d1]
                if lr[d1] > lvl:
                    lvl = lr[d1]
                lvl += 1
                if lr[src] < lvl:
                    lr[src] = lvl
                lw[d1] = lvl
                emit((K_LD, seq, cur, lvl, d1, src, (a1 // 2) % LANES if b1 else 0, b1, 0, 0, 0, 0))
                n_ops += 1
            if st_ is not None:
                src = xs[xsrc]
                while True:
                    dst = nl % n_ring
                    nl += 1
                    if not line_held[dst]:
                        break
                line_held[lines[lns]] = False
                line_held[dst] = True
                lines[lns] = dst
                lvl = lw[src]
                if lw[dst] > lvl:
                    lvl = lw[dst]
                if lr[dst] > lvl:
                    lvl = lr[dst]
                lvl += 1
                if lr[src] < lvl:
                    lr[src] = lvl
                lw[dst] = lvl
                emit((K_LD, seq, cur, lvl, dst, src, 0, 0, 0, 0, 0, 0))
                n_ops += 1
            if vec is not None:
                a = xs[ia]
                b = xs[ib]
                ca = cs[ica]
                cd = cs[icd]
                if vc:
                    while True:
                        dv = cbase + nc % C_SLOTS
                        nc += 1
                        if dv not in cs:
                            break
                else:
                    while True:
                        dv = xbase + nx % X_SLOTS
                        nx += 1
                        if dv not in xs:
                            break
                if mode == 1:
                    lvl = lw[ca]
                else:
                    lvl = lw[a]
                    if lw[b] > lvl:
                        lvl = lw[b]
                    if mode and lw[cd] > lvl:
                        lvl = lw[cd]
                if lw[dv] > lvl:
                    lvl = lw[dv]
                if lr[dv] > lvl:
                    lvl = lr[dv]
                lvl += 1
                if mode == 1:
                    if lr[ca] < lvl:
                        lr[ca] = lvl
                else:
                    if lr[a] < lvl:
                        lr[a] = lvl
                    if lr[b] < lvl:
                        lr[b] = lvl
                    if mode and lr[cd] < lvl:
                        lr[cd] = lvl
                lw[dv] = lvl
                lane = r[ilane]
                emit((kind, seq, cur, lvl, dv, a, b, ca, cd, 0 if lane < 0 else LANES - 1 if lane >= LANES else lane, h,
                      vsub))
                n_ops += 1
            if mov is not None:
                a = cs[ma] if a_c else xs[ma]
                tgt = xs[mt]
                if mc:
                    while True:
                        dm = cbase + nc % C_SLOTS
                        nc += 1
                        if dm not in cs:
                            break
                else:
                    while True:
                        dm = xbase + nx % X_SLOTS
                        nx += 1
                        if dm not in xs:
                            break
                lvl = 0
                if rmode:
                    lvl = lw[a]
                    if rmode == 1 and lw[tgt] > lvl:
                        lvl = lw[tgt]
                if lw[dm] > lvl:
                    lvl = lw[dm]
                if lr[dm] > lvl:
                    lvl = lr[dm]
                lvl += 1
                if rmode:
                    if lr[a] < lvl:
                        lr[a] = lvl
                    if rmode == 1 and lr[tgt] < lvl:
                        lr[tgt] = lvl
                lw[dm] = lvl
                emit((K_MOV, seq, cur, lvl, dm, a, tgt, r[mlane], f1, msub, 0, 0))
                n_ops += 1
            # the register renames, in the interpreter's order (after every read of this bundle)
            if ld0 is not None:
                xs[xd0] = d0
            if ld1 is not None:
                xs[xd1] = d1
            if vec is not None:
                (cs if vc else xs)[vreg] = dv
            if mov is not None:
                (cs if mc else xs)[mreg] = dm
            # ---- registers -------------------------------------------------------------------------------
            if scl is not None:  # read before the post-increments below (all slots read the pre-bundle state)
                ssub, i1, i2, to_p, sreg, f1 = scl
                if ssub == 2:
                    val = r[i1] + i2
                elif ssub == 11:
                    val = p[i1] + i2
                elif ssub == 0 or ssub == 8:
                    val = f1
                elif ssub == 1:
                    val = r[i1] + r[i2]
                elif ssub == 3:
                    val = r[i1] - r[i2]
                elif ssub == 4:
                    val = r[i1] * r[i2]
                elif ssub == 5:
                    val = r[i1] << i2
                elif ssub == 6:
                    val = r[i1] >> i2
                elif ssub == 7:
                    val = r[i1] & i2
                elif ssub == 9:
                    val = r[i1]
                elif ssub == 10:
                    val = p[i1] + r[i2]
                else:
                    val = p[i1]
            if ld0 is not None:
                v = a0 + inc0
                p[p0] = v if i32_lo <= v <= i32_hi else _w(v)
            if ld1 is not None:
                v = a1 + inc1
                p[p1] = v if i32_lo <= v <= i32_hi else _w(v)
            if st_ is not None:
                v = sa + incs
                p[ps] = v if i32_lo <= v <= i32_hi else _w(v)
            if scl is not None:  # written last: the scalar slot's write wins (the interpreter's order)
                if not i32_lo <= val <= i32_hi:
                    val = _w(val)
                if to_p:
                    p[sreg] = val
                else:
                    r[sreg] = val
                r[0] = 0
            # ---- control ---------------------------------------------------------------------------------
            taken = False
            next_pc = pc + 1
            if ck:
                if ck in (CK_LOOPI, CK_LOOP):
                    if push:
                        loops[depth] = [pc + 1, ctl[2], count]
                        snaps[depth], tries[depth] = None, 0
                        depth += 1
                    else:
                        taken, next_pc = True, ctl[2]
                elif ck == CK_J:
                    taken, next_pc = True, ctl[1]
                elif ck == CK_BEQZ:
                    if rv == 0:
                        taken, next_pc = True, ctl[2]
                elif ck == CK_BNEZ:
                    if rv != 0:
                        taken, next_pc = True, ctl[2]
                elif ck == CK_HALT:
                    halted = 1
        edge = 0
        if not taken and depth > 0:
            top = loops[depth - 1]
            if pc + 1 == top[L_END]:
                if top[L_COUNT] > 1:
                    top[L_COUNT] -= 1
                    next_pc = top[L_START]
                    edge = depth
                else:
                    depth -= 1
        if not blocked:
            t_issue = t + 1 + (penalty if taken else 0)
            if t + end_lat > t_end:
                t_end = t + end_lat
            if slow:  # a DMA
                n_r, rowbytes, is_out, tiled = ctl[4], ctl[5], ctl[7], ctl[8]
                total = _w(n_r * rowbytes)
                l0, l1 = pm // LINE_BYTES, (pm + total + LINE_BYTES - 1) // LINE_BYTES
                pend_w = max(line_ready[l0:l1]) if l1 > l0 else 0
                pend_r = max(line_read[l0:l1]) if l1 > l0 else 0
                eng = int(is_out)
                dp = pend_w if is_out else max(pend_w, pend_r)
                start = max(t, dma_free[eng], dp)
                occ = (total + dma_bw - 1) // dma_bw
                done = start + dma_lat + occ
                if is_out:
                    line_read[l0:l1] = [x if x > done else done for x in line_read[l0:l1]]
                else:
                    line_ready[l0:l1] = [done] * len(line_ready[l0:l1])
                dma_busy[eng] += occ
                if done > t_end:
                    t_end = done
                dma_free[eng] = start + occ
                # the data: one operation per DM line, all of one DMA at one level
                width = max((ctl[6] if tiled else rowbytes) // 2, 1)
                per_strip = max(n_r * width, 1)
                tot_e = total // 2
                ext_rows = _dma_ext_rows(re, rs, n_r, width, per_strip, tot_e, dma_elems, H, is_out)
                if ext_rows is None:
                    exotic = True  # past the EXT image: the interpreter drops those writes
                    break
                n_l = l1 - l0
                if is_out:
                    rows_in = lines[l0:l1]
                    lvl = max(int(ext_lw[ext_rows].max()), int(ext_lr[ext_rows].max()),
                              max(map(lw.__getitem__, rows_in))) + 1
                    for x in rows_in:
                        if lr[x] < lvl:
                            lr[x] = lvl
                    ext_lw[ext_rows] = lvl
                    blk = np.empty((n_l, 4 + N_FIELDS), np.int32)  # the DMA's operations, a row per line
                    blk[:] = (K_DMAO, seq, cur, lvl, 0, 0, re, rs, width, per_strip, tot_e, 0)
                    blk[:, 4] = rows_in
                else:
                    partial = tot_e % LANES != 0
                    old = lines[l0:l1]
                    at = nl % n_ring
                    run = at + n_l <= n_ring and not any(line_held[at:at + n_l])
                    if run:
                        # the ring's next n_l rows are free: ``new_line`` would take them in order (a row it frees
                        # is held before, so not among them)
                        new = list(range(at, at + n_l))
                        nl += n_l
                        for x in old:
                            line_held[x] = False
                        line_held[at:at + n_l] = [True] * n_l
                        lines[l0:l1] = new
                    else:
                        new = [new_line(ln) for ln in range(l0, l1)]
                    lvl = int(ext_lw[ext_rows].max())
                    if partial and lw[old[-1]] > lvl:
                        lvl = lw[old[-1]]
                    if run:  # (rows at..at + n_l - 1: slices of the lists, not an index at a time)
                        lvl = max(lvl, max(lw[at:at + n_l]), max(lr[at:at + n_l])) + 1
                    else:
                        lvl = max(lvl, max(map(lw.__getitem__, new)), max(map(lr.__getitem__, new))) + 1
                    if partial and lr[old[-1]] < lvl:
                        lr[old[-1]] = lvl
                    if run:
                        lw[at:at + n_l] = [lvl] * n_l
                    else:
                        for x in new:
                            lw[x] = lvl
                    ext_lr[ext_rows] = np.maximum(ext_lr[ext_rows], lvl)  # (fancy indexing: a copy, not a view)
                    blk = np.empty((n_l, 4 + N_FIELDS), np.int32)
                    blk[:] = (K_DMAI, seq, cur, lvl, 0, 0, 0, re, rs, width, per_strip, tot_e)
                    blk[:, 4] = new
                    blk[:, 5] = old
                blk[:, 5 if is_out else 6] = np.arange(0, n_l * LANES, LANES)
                ops.fromlist(buf)  # (in order: what the list holds first)
                buf.clear()
                ops.frombytes(blk.tobytes())
                n_ops += n_l
        pc = next_pc
        if n_ops > check_at:
            if n_ops > TRACE_MAX_OPS:
                exotic = True
                break
            ops.fromlist(buf)
            buf.clear()
            check_at = min(n_ops + FLUSH_OPS, TRACE_MAX_OPS)
        if not edge or not roll:
            continue
        # ---- a loop's back-edge: roll the remaining iterations where they are steady (``rolled``) ----
        d = edge - 1
        lp = loops[d]
        key = (lp[M.L_START], lp[M.L_END])
        if key not in structs:
            structs[key] = rolled.structure(dec, key[0], key[1], n_dec)
        st_body = structs[key]
        if st_body is None or min(lp[M.L_COUNT], rolled.ROLL_ROWS // st_body.rows) < rolled.ROLL_MIN or (
                tries[d] >= rolled.ROLL_TRIES) or dyn_tries.get(key, 0) >= rolled.DYNAMIC_TRIES:
            continue
        snap = (t_issue, ready[:], line_ready[:], line_read[:], dma_free[:], t_end, r[:], p[:], steps,
                execs[:], dma_busy[:], [lq[:] for lq in loops], depth, n_ops, xs[:], cs[:], lines[:], len(rolls))
        hist = snaps[d] = (snaps[d] or [])[-rolled.PERIOD_MAX:] + [snap]  # the latest back-edges, oldest first
        first = periods.get(key, 1)  # (the period this loop last rolled with, first: its others cost a walk each)
        if len(hist) <= first:
            continue
        tries[d] += 1
        st_one = st_body
        for passes in sorted(range(1, len(hist)), key=lambda n: n != first):  # one back-edge, else several
            prev, st_body = hist[-1 - passes], st_one
            if passes > 1 and (_steps_alike(hist, passes) or lp[M.L_COUNT] // passes < rolled.ROLL_MIN):
                continue  # (every back-edge moved the registers alike: a longer period fails as the first did; or
                # too few iterations of it are left to roll)
            if passes > 1 and st_body is not rolled.DYNAMIC:
                skey = (key, passes)
                if skey not in structs:
                    structs[skey] = rolled.facts(dec, st_body.pcs * passes)
                st_body = structs[skey]
                if st_body is None:
                    continue
            T0, T1 = prev[0], t_issue
            period, n_steps = T1 - T0, steps - prev[8]
            if (st_body is not rolled.DYNAMIC and n_steps != len(st_body.pcs)) or period <= 0 or prev[12] != depth:
                continue
            if any(max(a - T0, 0) != max(b - T1, 0) for a, b in zip(prev[1], ready, strict=True)) or any(
                    max(a - T0, 0) != max(b - T1, 0) for a, b in zip(prev[4], dma_free, strict=True)) or (
                    max(prev[5] - T0, 0) != max(t_end - T1, 0)):
                continue
            if not (_same_since(prev[2], line_ready, T0, T1) and _same_since(prev[3], line_read, T0, T1)):
                continue
            if any(prev[11][i] != loops[i] for i in range(depth_max) if i != d) or prev[11][d][:2] != lp[:2]:
                continue
            dr = [_w(b - a) for a, b in zip(prev[6], r, strict=True)]
            dp_ = [_w(b - a) for a, b in zip(prev[7], p, strict=True)]
            branches: list = []
            if st_body is rolled.DYNAMIC:  # branches or register LOOPs: the path the template took
                dyn_tries[key] = dyn_tries.get(key, 0) + 1
                path = follows.follow(dec, key[0], key[1], n_dec, prev[6], prev[7], dr, dp_, passes)
                if path is None or isinstance(path, rolled.Structure) or len(path[0]) != n_steps:
                    continue
                pkey = (key, tuple(path[0]))
                if pkey not in structs:
                    structs[pkey] = rolled.facts(dec, path[0])
                st_body, branches = structs[pkey], path[1]
                if st_body is None:
                    continue
            walked = walks.walk(dec, st_body, prev[6], prev[7], dr, dp_, xs, cs, kinds)
            if walked is None:
                continue
            t_ops, events, wk = walked
            events = events + branches  # (a copy: the walk is cached)
            if any(wk.r[i] != (r[i], dr[i]) for i in range(16)) or any(
                    wk.p[i] != (p[i], dp_[i]) for i in range(8)):
                continue
            k_max = min(lp[M.L_COUNT] // passes, (max_steps - steps) // n_steps,
                        rolled.ROLL_ROWS // max(wk.n_local, 1) - 1,
                        (CYCLE_LIMIT - max(t_issue, t_end)) // period)  # none past CYCLE_LIMIT: the tail faults
            k = rolled.iterations_ok(t_ops, events, k_max, hw, limit, H, np.asarray(prev[2], np.int64),
                                     np.asarray(prev[3], np.int64), T0, wk.memo)
            if k >= rolled.ROLL_MIN and rolled.ext_disjoint(events, k, wk.memo):
                break
        else:
            continue
        # the template iteration joins the segment: its stepped data operations are dropped and the renaming
        # it did is undone (the rows it took are never written, as those operations never run)
        ops.fromlist(buf)  # (here, not at every back-edge: batch_matmul C5's expert has 282k of them)
        buf.clear()
        del ops[prev[13] * (4 + N_FIELDS):]
        del rolls[prev[17]:]  # (an inner loop's segments inside the template: the walk covers their data)
        n_ops = prev[13]
        for row_ in lines:
            line_held[row_] = False
        xs[:], cs[:], lines[:] = prev[14], prev[15], prev[16]
        for row_ in lines:
            line_held[row_] = True
        # evict values still held in the rolled rows (an earlier segment's), then the segment itself
        remap: dict = {}
        for reg in range(12):
            if xs[reg] >= lay.roll:
                dst = new_x()
                ops.extend((K_LD, steps, cur, level((xs[reg],), (dst,)), dst, xs[reg], 0, 0, 0, 0, 0, 0))
                n_ops += 1
                remap[xs[reg]], xs[reg] = dst, dst
        for reg in range(8):
            if cs[reg] >= lay.roll:
                dst = new_c()
                ops.extend((K_LD, steps, cur, level((cs[reg],), (dst,)), dst, cs[reg], 0, 0, 0, 0, 0, 0))
                n_ops += 1
                remap[cs[reg]], cs[reg] = dst, dst
        for ln in range(n_lines):
            held = lines[ln]
            if held >= lay.roll:
                dst = new_line(ln)
                ops.extend((K_LD, steps, cur, level((held,), (dst,)), dst, held, 0, 0, 0, 0, 0, 0))
                n_ops += 1
                remap[held] = dst
        seg, x_out, c_out, l_out = rolled.build(t_ops, wk, k, lay.roll, np.asarray(lines, np.int32), prev[8] + 1,
                                                n_steps, st_body.pcs, remap, ROLL_WIDTHS, part_chunk)
        rolls.append((n_ops, seg))
        roll_mmul = roll_mmul or any(o.kind == K_MMUL for o in t_ops)
        for reg, row_ in x_out.items():
            xs[reg] = row_
        for reg, row_ in c_out.items():
            cs[reg] = row_
        for ln, row_ in l_out.items():
            line_held[lines[ln]] = False
            line_held[row_] = True
            lines[ln] = row_
        # the control side after k more iterations: each one is the template shifted by ``period`` cycles
        shift = k * period
        t_issue += shift
        t_end += shift
        for i in st_body.ready_w:
            ready[i] += shift
        ready[0] = 0
        for e_ in st_body.engines:
            dma_free[e_] += shift
        moved_in = np.zeros(n_lines, bool)
        moved_out = np.zeros(n_lines, bool)
        for ev in events:
            if ev.kind == "dma":
                n_r_, rb_ = ev.extra[5], ev.extra[6]
                sl = slice(ev.addr // LINE_BYTES, (ev.addr + n_r_ * rb_ + LINE_BYTES - 1) // LINE_BYTES)
                (moved_out if ev.extra[0] else moved_in)[sl] = True
        for i in np.flatnonzero(moved_in).tolist():
            line_ready[i] += shift
        for i in np.flatnonzero(moved_out).tolist():
            line_read[i] += shift
        for i in range(16):
            r[i] = _w(r[i] + k * dr[i])
        for i in range(8):
            p[i] = _w(p[i] + k * dp_[i])
        r[0] = 0
        for q in set(st_body.pcs):
            execs[q] += k * (execs[q] - prev[9][q])
        for e_ in range(2):
            dma_busy[e_] += k * (dma_busy[e_] - prev[10][e_])
        steps += k * n_steps
        snaps[d] = None
        dyn_tries[key] = 0
        periods[key] = passes
        if k * passes == lp[M.L_COUNT]:
            lp[M.L_COUNT] = 1
            depth -= 1
            pc = lp[M.L_END]
        else:
            lp[M.L_COUNT] -= k * passes
    # ---- final state ------------------------------------------------------------------------------------
    ex = np.asarray(execs, np.int64)
    rows3 = words[:n_dec].reshape(n_dec, machine.S, machine.F)  # (the decoded rows)
    cls = rows3[:, :, 1]
    used = cls != _CLS["NOP"]
    busy = np.zeros(len(M.BUSY_KEYS), np.int64)
    busy[: machine.S] = (used * ex[:, None]).sum(axis=0)
    busy[M.BUSY_KEYS.index("DMA_IN")] = dma_busy[0]
    busy[M.BUSY_KEYS.index("DMA_OUT")] = dma_busy[1]
    counts = _class_counts(cls, used, ex)
    ctl = np.zeros(M.N_CTL, np.int64)
    ctl[[M.PC, M.STEPS, M.HALTED, M.FAULT, M.FAULT_PC, M.FAULT_DETAIL, M.T_ISSUE, M.T_END, M.DEPTH,
         M.FAULT_SLOT]] = [pc, steps, halted, fault, fault_pc, fault_detail, t_issue, t_end, depth, fault_slot]
    i32 = np.int32
    ops.fromlist(buf)
    op_arr = None if exotic else np.frombuffer(ops, i32).reshape(-1, 4 + N_FIELDS)
    ready_l, read_l = (np.array(a, np.int64).astype(i32) for a in (line_ready, line_read))
    return Trace(ctl.astype(i32), np.array(r, i32), np.array(p, i32), np.array(ready, i32),
                 np.array(loops, i32), ready_l, read_l, np.array(dma_free, i32),
                 busy.astype(i32), counts.astype(i32), op_arr, tuple(xs), tuple(cs), np.array(lines, i32), exotic,
                 bool(op_arr is not None and (roll_mmul or np.any(op_arr[:, 0] == K_MMUL))), tuple(rolls))


# ---- scheduling: fixed-width groups of one level and kind ---------------------------------------------
class Groups(NamedTuple):
    kind: np.ndarray  # int32[G] (-1: padding)
    fields: np.ndarray  # int32[G, GROUP_WIDTH or WIDE_WIDTH, N_FIELDS]
    seq: np.ndarray  # int32[G, GROUP_WIDTH or WIDE_WIDTH]: dynamic step of each lane (NO_SEQ on padding)
    n: np.int32  # groups in use (the rest pad the chunk)


def chunk_size(n_groups: int) -> int:
    return SMALL_CHUNK if n_groups <= SMALL_CHUNK else GROUP_CHUNK


def part_chunk(n_groups: int) -> int:
    """The chunk of one part of a trace with rolled segments: such a trace has many parts of a few hundred
    groups, and padding each to a GROUP_CHUNK would hold several times the groups it runs; and one chunk size
    for all its parts is one compile of each data-path function, not two (``bench_roll``: a compile saved on a
    first simulate, a few more calls on a warm one)."""
    return SMALL_CHUNK


def levelled_part_chunk(n_groups: int) -> int:
    """The chunk of one part of a levelled plan with expanded segments (not mixed): a part of fewer than
    GROUP_CHUNK groups in SMALL_CHUNKs, a longer one in GROUP_CHUNKs. Such a plan has a part per segment and
    between segments (swiglu C5's expert: 321 parts of a few hundred groups each); ``chunk_size`` would pad each one
    of them to a GROUP_CHUNK, six times the groups it runs, sent to the device and packed on the host."""
    return GROUP_CHUNK if n_groups >= GROUP_CHUNK else SMALL_CHUNK


def schedule(ops: np.ndarray, chunk=chunk_size, wide: bool = True) -> Groups:
    """Pack each level's operations of one kind, in program order, into groups of that kind's width.
    Operations of one level touch disjoint rows (the pre-pass levelled them), so a group's lanes can
    gather, compute and scatter at once; levels run in order, so every value is the oracle's. ``wide``: 64-lane
    groups where the levels fill them (``WIDE``); a trace with rolled segments keeps GROUP_WIDTH, the width its
    rolled chunks unroll to (one shape for both kinds of chunk: ``DataPath.packed_mixed``)."""
    g_kind, g_fields, g_seq, n_groups = groups.pack(ops[:, 0], None, ops[:, 3], ops[:, 4:], ops[:, 1], WIDTH,
                                                    N_KINDS, GROUP_WIDTH, chunk, WIDE if wide else None)
    return Groups(g_kind, g_fields, g_seq, np.int32(n_groups))


def schedule_rolled(seg: rolled.Rolled, chunk=chunk_size, wide: bool = True) -> Groups:
    """``schedule(rolled.expand(seg), chunk, wide)`` without the expanded operations (millions for batch_matmul
    C5's expert): the segment's template operations laid out as items of their iterations (``groups.pack_items``),
    each lane's fields and step computed in its slot's order and scattered once. The same Groups
    (``tests/sims/vliw/test_trace_rolled.py``)."""
    assert seg.level is not None
    g = np.flatnonzero((seg.kind >= 0) & (seg.cnt > 0))
    order, slot, g_kind, n_groups, width = groups.pack_items(seg.kind[g], seg.level[g], seg.cnt[g], WIDTH, N_KINDS,
                                                             GROUP_WIDTH, chunk, WIDE if wide else None)
    g = g[order]
    cnt, m = rolled.lanes(seg, g)
    total = len(g_kind)
    g_fields = np.zeros((total * width, N_FIELDS), np.int32)  # padding lanes: their writes dumped
    g_fields[slot] = rolled.lane_fields(seg, g, cnt, m)
    g_seq = np.full(total * width, NO_SEQ, np.int32)
    g_seq[slot] = rolled.lane_steps(seg, g, cnt, m)
    return Groups(g_kind, g_fields.reshape(total, width, N_FIELDS), g_seq.reshape(total, width), np.int32(n_groups))


# ---- the compact data-path state: only the rows and EXT elements a trace touches --------------------------
# The pre-pass's row numbers span every ring slot and the rolled region (40k-75k rows of 128 bytes an input
# set) and EXT is a whole bucket (4 MB), but a small kernel touches a few KB of them: :func:`compact`
# renumbers the rows the trace references densely (row 0: a zero row no operation writes) and keeps EXT's
# elements [0, W) only, so the data path's state, its initial and final transfers move KB, not 37 MB.
# Each (rows, window) size is one compile of the data path (about as long as the compile before the compact
# state), so there are few: a fresh process simulating the C1 compiler kernels of matmul, softmax, layernorm,
# conv2d, gemv and relu compiled for nearly every one with a smallest window of 4096 elements; with 16384 the
# small ones share one size (one compile more than before it: gemv's larger chunk at the smallest rows).
COMPACT_ROWS_MIN = 1024  # smallest row-buffer size (rows of LANES f32)
COMPACT_EXT_MIN = 1 << 14  # smallest EXT window (elements)
COMPACT_STEP = 4  # sizes grow by this factor up to the full buffer or EXT
# which operand fields of each kind are rows (the others are lanes, flags, immediates, EXT geometry)
ROW_FIELDS = ((0, 1), (0, 1, 2, 3, 4), (0, 1, 2), (0, 1), (0,), (0, 1, 2, 3, 4), (0, 1, 2, 3, 4))
_ROW_MASK = np.zeros((N_KINDS, N_FIELDS), bool)
for _k, _fs in enumerate(ROW_FIELDS):
    _ROW_MASK[_k, list(_fs)] = True
_ROW_COLS = tuple(j for j in range(N_FIELDS) if _ROW_MASK[:, j].any())
# a DMA line's EXT fields (first element, re, rs, width, per_strip, elements) as ``_ext_index`` reads them
EXT_FIELDS = {K_DMAI: (2, 3, 4, 5, 6, 7), K_DMAO: (1, 2, 3, 4, 5, 6)}
_SAFE_BOUND = 1 << 30  # |terms| of a DMA element's index below this: int32 arithmetic on the device is exact
_DIV_EXACT = 1 << 24  # DMA elements below this: exact in float32 (``_divmod``)


def _size(need: int, lo: int, full: int) -> int:
    """The smallest of ``lo * COMPACT_STEP ** i`` that holds ``need``, or ``full`` where that is not smaller."""
    n = lo
    while n < need:
        n *= COMPACT_STEP
    return n if n < full else full


def _ext_bounds(e0, re, rs, width, per_strip, tot) -> tuple[int, int, bool]:
    """(lowest, highest) EXT element the live lanes of these DMA lines can touch (``_ext_index`` of elements
    ``e0 .. min(e0 + LANES, tot) - 1``, term by term), and whether the bound is exact arithmetic (no int32
    wrap-around, positive widths). int64 arrays, one entry per line."""
    live = e0 < tot
    e0, re, rs, width, per_strip, tot = (a[live] for a in (e0, re, rs, width, per_strip, tot))
    if not len(e0):
        return 0, -1, True
    safe = bool(np.all((width >= 1) & (per_strip >= 1) & (e0 >= 0)))
    if not safe:
        return 0, -1, False
    end = np.minimum(e0 + LANES, tot) - 1
    if np.any(end >= _DIV_EXACT):  # (a proven window's divisions take the float path: ``_divmod``)
        return 0, -1, False
    a = re // 2
    b = ((per_strip - 1) // width) * (rs // 2)
    c_lo, c_hi = (e0 // per_strip) * width, (end // per_strip) * width
    safe = bool(np.all(np.abs(a) + np.abs(b) + c_hi + width + tot < _SAFE_BOUND))
    return int((a + np.minimum(b, 0) + c_lo).min()), int((a + np.maximum(b, 0) + c_hi + width - 1).max()), safe


def _ext_window(ops: np.ndarray, segs: list, H: int) -> int:
    """W: EXT elements ``[0, W)`` hold every element the trace's DMAs can touch (H where not shown: an index
    that may wrap around int32, fall below 0 or past the image, where the interpreter clips or wraps)."""
    lo, hi, safe = 0, -1, True
    for kind, cols in EXT_FIELDS.items():
        g = ops[ops[:, 0] == kind][:, 4:][:, list(cols)].astype(np.int64)
        if len(g):
            lo_k, hi_k, ok = _ext_bounds(*g.T)
            lo, hi, safe = min(lo, lo_k), max(hi, hi_k), safe and ok
        for seg in segs:
            sel = (seg.kind == kind) & (seg.cnt > 0)
            if not sel.any():
                continue
            c0, c1, md = (a[sel][:, list(cols)].astype(np.int64) for a in (seg.c0, seg.c1, seg.mode))
            if np.any(md != rolled.F_AFF) or np.any(c1[:, 2:] != 0):  # (only e0 and re may move)
                return H
            m0 = seg.m0[sel].astype(np.int64)
            for m in (m0, m0 + seg.cnt[sel] - 1):  # (the bounds are monotone in e0 and re: their ends bound)
                v = c0 + c1 * m[:, None]
                if np.any(np.abs(v) >= _SAFE_BOUND):
                    return H
                lo_k, hi_k, ok = _ext_bounds(*v.T)
                lo, hi, safe = min(lo, lo_k), max(hi, hi_k), safe and ok
    if not safe or lo < 0 or hi >= H:
        return H
    return _size(hi + 1, COMPACT_EXT_MIN, H)


def _table_lines(seg: rolled.Rolled, act: np.ndarray) -> np.ndarray | None:
    """Which DM lines' entries of a rolled segment's table its F_LINE fields can read (each field's lines
    over the iterations of its group, end to end), or None where a field's address may wrap around int32."""
    n = len(seg.table)
    marks = np.zeros(n + 1, np.int64)
    m_lo = seg.m0.astype(np.int64)
    m_hi = m_lo + seg.cnt - 1
    for j in range(N_FIELDS):
        sel = act & (seg.mode[:, j] == rolled.F_LINE)
        if not sel.any():
            continue
        c0, c1 = seg.c0[sel, j].astype(np.int64), seg.c1[sel, j].astype(np.int64)
        a, b = c0 + c1 * m_lo[sel], c0 + c1 * m_hi[sel]
        if np.any(np.abs(a) >= _SAFE_BOUND) or np.any(np.abs(b) >= _SAFE_BOUND):
            return None
        lo = np.clip(np.minimum(a, b) // LINE_BYTES, 0, n - 1)
        hi = np.clip(np.maximum(a, b) // LINE_BYTES, 0, n - 1)
        np.add.at(marks, lo, 1)
        np.add.at(marks, hi + 1, -1)
    return np.cumsum(marks[:n]) > 0


def compact(tr: Trace, hw: VLIWConfig, H: int) -> tuple[Trace, int, int]:
    """``(trace, rows, W)``: the trace with its rows renumbered for a buffer of ``rows`` rows (the last the
    dump row) -- the rows its operations reference densely from 1, the rolled region after them shifted
    whole (rolled rows are affine in the iteration), row 0 a zero row no operation writes, where every
    register and DM line that no operation references ends (they keep their initial zeros) -- and the EXT
    window W (``_ext_window``). The full layout (unchanged rows) where that is not smaller."""
    ops = tr.ops
    assert ops is not None
    lay = layout_of(hw, H, rolled.ROLL_ROWS if tr.rolls else 0)
    full = lay.dump + 1
    segs = [seg for _, seg in tr.rolls]
    W = _ext_window(ops, segs, H)
    kinds, f = ops[:, 0], ops[:, 4:]
    present = np.zeros(lay.roll, bool)
    roll_hi = 0

    def note(rows: np.ndarray) -> bool:
        nonlocal roll_hi
        if not rows.size:
            return True
        if rows.min() < 0 or rows.max() >= lay.dump:
            return False
        present[rows[rows < lay.roll]] = True
        roll_hi = max(roll_hi, int(rows.max()) - lay.roll + 1)
        return True

    sels = {j: _ROW_MASK[kinds, j] for j in _ROW_COLS}
    ok = all(note(f[sel, j]) for j, sel in sels.items())
    seg_sels = []
    for seg in segs:
        act = seg.cnt > 0
        kk = np.maximum(seg.kind, 0)
        lines = _table_lines(seg, act)
        ok = ok and lines is not None and note(seg.table[lines])
        s_sel = []
        for j in range(N_FIELDS):
            sel = _ROW_MASK[kk, j] & act & (seg.mode[:, j] != rolled.F_LINE)
            s_sel.append(sel)
            c0, c1 = seg.c0[sel, j].astype(np.int64), seg.c1[sel, j].astype(np.int64)
            m_lo = seg.m0[sel].astype(np.int64)
            m_hi = (seg.m0[sel] + seg.cnt[sel] - 1).astype(np.int64)
            moving = c1 != 0  # (rolled rows: from its first iteration on, c0 itself may lie below; rolled.build)
            ok = ok and not np.any(seg.mode[sel, j] != rolled.F_AFF) and not np.any(c1 < 0) and not np.any(
                moving & (c0 + c1 * m_lo < lay.roll)) and note(c0 + c1 * m_lo) and note(c0 + c1 * m_hi)
        seg_sels.append(s_sel)
    finals = np.concatenate([np.asarray(tr.x_rows), np.asarray(tr.c_rows), tr.line_rows]).astype(np.int64)
    ok = ok and note(finals[finals >= lay.roll])
    n_used = int(present.sum())
    rows = _size(n_used + roll_hi + 2, COMPACT_ROWS_MIN, full)
    if not ok or rows == full:
        return tr, full, W
    lut = np.zeros(lay.roll, np.int32)  # unreferenced rows: the zero row
    lut[present] = np.arange(1, n_used + 1, dtype=np.int32)
    shift = 1 + n_used - lay.roll

    def renum(v: np.ndarray) -> np.ndarray:
        return np.where(v >= lay.roll, v + shift, lut[np.minimum(v, lay.roll - 1)]).astype(np.int32)

    if not ops.flags.writeable:
        ops = ops.copy()
        f = ops[:, 4:]
    for j, sel in sels.items():
        if sel.any():
            f[sel, j] = renum(f[sel, j])
    rolls = []
    for (n_before, seg), s_sel in zip(tr.rolls, seg_sels, strict=True):
        c0 = seg.c0.copy()
        for j, sel in enumerate(s_sel):  # (a moving row is in the rolled region: shifted whole)
            c0[sel, j] = np.where(seg.c1[sel, j] != 0, c0[sel, j] + shift, renum(c0[sel, j]))
        rolls.append((n_before, seg._replace(c0=c0, table=renum(seg.table))))
    return tr._replace(ops=ops, rolls=tuple(rolls), x_rows=tuple(renum(np.asarray(tr.x_rows)).tolist()),
                       c_rows=tuple(renum(np.asarray(tr.c_rows)).tolist()), line_rows=renum(tr.line_rows)), rows, W


# ---- the data path in JAX ----------------------------------------------------------------------------
class Writes(NamedTuple):
    """A group's writes, applied after the kind switch (XLA would copy a buffer a branch updates)."""

    r_i: jax.Array  # int32[lanes]: whole rows (lanes: the group's width)
    r_v: jax.Array  # f32[lanes, N, LANES] (N: input sets)
    el_i: jax.Array  # int32[DMAO_WIDTH * LANES]: single elements of EXT (a DMA out; W: none)
    el_v: jax.Array  # f32[DMAO_WIDTH * LANES, N]
    nan: jax.Array  # int32[lanes, N]: each lane's step where its vector or move result is non-finite, else NO_SEQ
    # (per lane, not the group's minimum: a merged group's lanes belong to different programs, ``run_many``)


def _pick(sub: jax.Array, options: list) -> jax.Array:
    """``options[sub]`` per lane, as one fused select chain (the last option for any larger ``sub``)."""
    res = options[-1]
    for k in range(len(options) - 2, -1, -1):
        res = jnp.where(sub == k, options[k], res)
    return res


def _first_bad(val: jax.Array, seq: jax.Array, on: jax.Array) -> jax.Array:
    bad = ~jnp.all(jnp.isfinite(val), axis=2) & on[:, None]
    return jnp.where(bad, seq[:, None], NO_SEQ)


def _divmod(a: jax.Array, d: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(a // d, a % d)`` of int32 ``0 <= a < _DIV_EXACT`` and ``d >= 1`` through a float32 division: XLA's integer
    division runs element by element on the CPU (it was most of a DMA group's time). Exact there: ``a`` is exact
    in float32 and so is ``d`` where ``d <= a`` (a larger ``d`` gives 0), the rounded quotient's floor is ``q`` or,
    rounded up to the next integer, ``q + 1`` (rounding is monotone and ``q`` representable), which one step
    corrects. Other lanes get some value (their results are masked)."""
    q = jnp.floor(a.astype(jnp.float32) / d.astype(jnp.float32)).astype(jnp.int32)
    q = q - (q * d > a).astype(jnp.int32)
    return q, a - q * d


def _ext_index(f: jax.Array, e: jax.Array, fast: bool = False) -> jax.Array:
    """EXT element of DMA element ``e`` (``f``: re, rs, width, per_strip), as ``Machine._dma`` computes it.
    ``fast``: every live lane's ``e`` lies in ``[0, _DIV_EXACT)`` and its width and elements per strip are positive
    (a proven EXT window, ``_ext_bounds``), so the divisions take ``_divmod``."""
    re, rs, width, per_strip = (f[:, k][:, None] for k in range(4))
    if fast:
        strip, within = _divmod(e, per_strip)
        row, col = _divmod(within, width)
        return re // 2 + row * (rs // 2) + strip * width + col
    within = e % per_strip
    return re // 2 + (within // width) * (rs // 2) + (e // per_strip) * width + within % width


def _lane(v: jax.Array, lane: jax.Array) -> jax.Array:
    """``v[g, n, lane[g]]`` as [G, N, 1]: a lane of each group lane's vector (``lane``: int32[G, 1])."""
    return jnp.take_along_axis(v, jnp.broadcast_to(lane[:, None, :], (*v.shape[:2], 1)), axis=2)


class DataPath:
    """The data side of the VLIW for one config, EXT bucket ``H`` and compact state (``compact``): a buffer
    of ``rows`` rows (the last the dump row) and EXT elements ``[0, W)``. One branch per kind, a whole group
    at once. Padding lanes (``seq == NO_SEQ``) read row 0 and write to the dump row. ``programs`` > 1: that
    many programs' rows and EXT windows side by side (``run_many``), a first non-finite step for each. A
    proven EXT window (``W < H`` of one program; every merged program's) lets DMAs divide in float32
    (``_ext_index``).

    Every input set at once, not ``vmap``-ped over them: a buffer row holds the row of every input set
    (``[rows, N * LANES]``, EXT ``[W, N]``), since every operation's rows and elements are the same in each, so a
    group gathers and scatters whole rows of a 2-D array (XLA:CPU's batched gathers and scatters of a
    ``vmap``-ped ``[N, rows, LANES]`` buffer cost about three times as much; matmul C3's groups: ~20% less data-path
    CPU in all). The arithmetic is the same per element, on ``[lanes, N, LANES]``."""

    def __init__(self, hw: VLIWConfig, H: int, rows: int, W: int, programs: int = 1):
        self.hw, self.H, self.rows, self.W, self.programs = hw, H, rows, W, programs
        self.fast = programs > 1 or W < H
        self.dump = rows - 1
        self.ce = DMAO_WIDTH * LANES

    def none(self, r_i, r_v, nan=None) -> Writes:
        ce, n_sets = self.ce, r_v.shape[1]
        return Writes(r_i=r_i, r_v=r_v, el_i=jnp.full(ce, self.W, jnp.int32), el_v=jnp.zeros((ce, n_sets), jnp.float32),
                      nan=jnp.full((r_i.shape[0], n_sets), NO_SEQ, jnp.int32) if nan is None else nan)

    def first(self, nan: jax.Array, w: Writes, prog: jax.Array | None) -> jax.Array:
        """The first non-finite step so far of each input set: of the one program (``[N]``), or of each
        (``[programs, N]``; ``prog``: each lane's program)."""
        if self.programs == 1:
            return jnp.minimum(nan, jnp.min(w.nan, axis=0))
        return nan.at[prog].min(w.nan)

    def dst(self, f: jax.Array, on: jax.Array) -> jax.Array:
        return jnp.where(on, f[:, 0], self.dump)

    @staticmethod
    def rows_of(mem: jax.Array, ext: jax.Array, idx: jax.Array) -> jax.Array:
        """Rows ``idx`` of every input set: f32[len(idx), N, LANES]."""
        return mem[idx].reshape(idx.shape[0], ext.shape[1], LANES)

    def b_ld(self, st: tuple, f: jax.Array, seq: jax.Array, on: jax.Array) -> Writes:
        mem, ext = st
        row = self.rows_of(mem, ext, f[:, 1])
        val = jnp.where(f[:, 3:4, None] == 1, jnp.broadcast_to(_lane(row, f[:, 2:3]), row.shape), row)
        return self.none(self.dst(f, on), val)

    def b_vec(self, st: tuple, f: jax.Array, seq: jax.Array, on: jax.Array) -> Writes:
        mem, ext = st
        a, b, ca = (self.rows_of(mem, ext, f[:, k]) for k in (1, 2, 3))
        bl = _lane(b, f[:, 5:6])
        full = lambda v: jnp.broadcast_to(v[..., None], a.shape)  # noqa: E731
        val = _pick(f[:, 7:8, None], [
            bf16(a + b), bf16(a - b), bf16(a * b), jnp.maximum(a, b), jnp.minimum(a, b), full(jnp.max(a, axis=2)),
            full(bf16(jnp.sum(ca, axis=2))), bf16(jnp.exp2(a)), bf16(1.0 / a), bf16(lax.rsqrt(a)),
            bf16(jnp.exp2(ca)), bf16(1.0 / ca), a * b, a * b, a * bl])  # (VMAC, VMACL, VMMUL: their own kinds)
        return self.none(self.dst(f, on), val, _first_bad(val, seq, on))

    def b_mac(self, st: tuple, f: jax.Array, seq: jax.Array, on: jax.Array) -> Writes:
        mem, ext = st
        a, b, cd = (self.rows_of(mem, ext, f[:, k]) for k in (1, 2, 4))
        b = jnp.where(f[:, 7:8, None] == _SUB["VMACL"], _lane(b, f[:, 5:6]), b)
        val = cd + a * b
        return self.none(self.dst(f, on), val, _first_bad(val, seq, on))

    def b_mmul(self, st: tuple, f: jax.Array, seq: jax.Array, on: jax.Array) -> Writes:
        """VMMUL as the interpreter's reduce runs: products added to a zero in k order (each a contracted
        multiply-add), then the 4x4 block added to half h of the tile."""
        mem, ext = st
        a, b, cd = (self.rows_of(mem, ext, f[:, k]) for k in (1, 2, 4))
        G, N = a.shape[:2]
        A, B = a.reshape(G, N, 4, 8), b.reshape(G, N, 8, 4)
        prod = jnp.zeros((G, N, 4, 4), jnp.float32)
        for k in range(8):
            prod = prod + A[:, :, :, k, None] * B[:, :, None, k, :]
        half = (jnp.arange(LANES) % 8 // 4)[None, None, :] == f[:, 6:7, None]
        val = jnp.where(half, cd + jnp.tile(prod, (1, 1, 1, 2)).reshape(G, N, LANES), cd)
        return self.none(self.dst(f, on), val, _first_bad(val, seq, on))

    def b_mov(self, st: tuple, f: jax.Array, seq: jax.Array, on: jax.Array) -> Writes:
        mem, ext = st
        xa, xt = self.rows_of(mem, ext, f[:, 1]), self.rows_of(mem, ext, f[:, 2])
        lane = f[:, 3:4, None]
        lanes = jnp.arange(LANES)[None, None, :]
        one = _lane(xa, jnp.clip(f[:, 3:4], 0, LANES - 1))
        imm = bf16(lax.bitcast_convert_type(f[:, 4:5, None], jnp.float32))
        val = _pick(f[:, 5:6, None], [bf16(xa), xa, xa, jnp.broadcast_to(imm, xa.shape),
                                      jnp.broadcast_to(one, xa.shape), jnp.where(lanes == lane, xa, xt),
                                      jnp.zeros_like(xa)])
        return self.none(self.dst(f, on), val, _first_bad(val, seq, on))

    def b_dmai(self, st: tuple, f: jax.Array, seq: jax.Array, on: jax.Array) -> Writes:
        mem, ext = st
        e = f[:, 2:3] + jnp.arange(LANES, dtype=jnp.int32)[None, :]
        idx = _ext_index(f[:, 3:7], e, self.fast)
        loaded = ext[jnp.clip(idx, 0, self.W - 1)].transpose(0, 2, 1)  # (a live lane's index lies in [0, W))
        val = jnp.where((e < f[:, 7:8])[:, None, :], loaded, self.rows_of(mem, ext, f[:, 1]))
        return self.none(self.dst(f, on), val)

    def b_dmao(self, st: tuple, f: jax.Array, seq: jax.Array, on: jax.Array) -> Writes:
        mem, ext = st
        n, width, n_sets = DMAO_WIDTH, f.shape[0], ext.shape[1]  # (a group of any width, or ROLL_WIDTH)
        f, on = f[:n], on[:n]
        e = f[:, 1:2] + jnp.arange(LANES, dtype=jnp.int32)[None, :]
        idx = _ext_index(f[:, 2:6], e, self.fast)
        idx = jnp.where(idx < 0, idx + self.H, idx)
        live = (e < f[:, 6:7]) & on[:, None] & (idx >= 0) & (idx < self.W)
        w = self.none(jnp.full(width, self.dump, jnp.int32), jnp.zeros((width, n_sets, LANES), jnp.float32))
        return w._replace(el_i=jnp.where(live, idx, self.W).reshape(-1),
                          el_v=self.rows_of(mem, ext, f[:, 0]).transpose(0, 2, 1).reshape(-1, n_sets))

    @staticmethod
    def apply(mem: jax.Array, ext: jax.Array, w: Writes) -> tuple[jax.Array, jax.Array]:
        return mem.at[w.r_i].set(w.r_v.reshape(w.r_i.shape[0], -1)), ext.at[w.el_i].set(w.el_v, mode="drop")

    def initial(self, ext: jax.Array):
        """(row buffer, EXT window, first non-finite steps) of the input sets' EXT windows ``ext`` (f32[N, W]):
        registers and DM start at zero. Merged (``programs`` > 1): each program gets its own copy of the window."""
        n_sets = ext.shape[0]
        mem = jnp.zeros((self.rows, n_sets * LANES), jnp.float32)
        if self.programs == 1:
            return mem, ext.T, jnp.full(n_sets, NO_SEQ, jnp.int32)
        return mem, jnp.tile(ext.T, (self.programs, 1)), jnp.full((self.programs, n_sets), NO_SEQ, jnp.int32)

    def run_chunk(self, state, kinds: jax.Array, fields: jax.Array, seqs: jax.Array, n_groups: jax.Array,
                  progs: jax.Array | None = None):
        """The first ``n_groups`` groups of a chunk, in order (``progs``: each lane's program, merged)."""
        branches = [self.b_ld, self.b_vec, self.b_mov, self.b_dmai, self.b_dmao, self.b_mac, self.b_mmul]
        assert len(branches) == N_KINDS

        def body(i: jax.Array, state):
            mem, ext, nan = state
            seq = seqs[i]
            w = lax.switch(jnp.maximum(kinds[i], 0), branches, (mem, ext), fields[i], seq, seq != NO_SEQ)
            return (*self.apply(mem, ext, w), self.first(nan, w, None if progs is None else progs[i]))

        return lax.fori_loop(0, n_groups, body, state)  # a while loop: padding groups cost nothing


    def packed_chunk(self, state, pack: jax.Array):
        """``run_chunk`` of a chunk sent as one array (``pack_groups``): its groups up to the padding. Merged:
        each lane's program in the last column."""
        kinds = pack[:, 0, N_FIELDS + 1]
        progs = None if self.programs == 1 else pack[:, :, N_FIELDS + 2]
        return self.run_chunk(state, kinds, pack[:, :, :N_FIELDS], pack[:, :, N_FIELDS], jnp.sum(kinds >= 0), progs)

    def packed_mixed(self, state, pack: jax.Array, pack_r: jax.Array, table: jax.Array, is_rolled: jax.Array):
        """A chunk of a trace with rolled segments: levelled groups (``pack``) or, where ``is_rolled``, a rolled
        segment's (``pack_r``, its ``table``) unrolled in place (``unrolled``). One function for both: one compile."""
        return self.packed_chunk(state, lax.cond(is_rolled, unrolled, lambda _p, _t: pack, pack_r, table))

    def final(self, state, x_rows: jax.Array, c_rows: jax.Array, line_rows: jax.Array):
        """What the State needs, input set first: the registers', DM's and EXT's rows (not the whole buffer), the
        first non-finite steps."""
        mem, ext, nan = state
        n_sets = ext.shape[1]

        def rows(idx: jax.Array) -> jax.Array:
            return self.rows_of(mem, ext, idx).transpose(1, 0, 2)

        return rows(x_rows), rows(c_rows), rows(line_rows).reshape(n_sets, -1), ext.T, nan.T


@functools.lru_cache(maxsize=32)
def data_runner(hw_json: str, H: int, rows: int, W: int, programs: int = 1):
    """``(initial, chunk, final, mixed chunk)``: the jitted data path for one config, EXT bucket and compact state
    (``DataPath``; ``programs`` side by side, ``run_many``), every input set at once."""
    enable_persistent_cache()
    dp = DataPath(_config(hw_json), H, rows, W, programs)
    return (jax.jit(dp.initial), jax.jit(dp.packed_chunk, donate_argnums=0),  # (chunks: in place)
            jax.jit(dp.final), jax.jit(dp.packed_mixed, donate_argnums=0))


def pack_groups(g: Groups, part: slice) -> np.ndarray:
    """One chunk of levelled groups as one array (one transfer, not four): int32[ch, width, N_FIELDS + 2]
    of each lane's fields, its step, and the group's kind (-1: padding, which ends the chunk's groups). Groups
    of merged programs (``run_many``) carry each lane's program as one more field: the last column."""
    kind = g.kind[part]
    fields = g.fields[part]
    lanes = np.broadcast_to(kind[:, None, None], (len(kind), fields.shape[1], 1))
    return np.concatenate([fields[:, :, :N_FIELDS], g.seq[part][:, :, None], lanes, fields[:, :, N_FIELDS:]], axis=2)


def pack_rolled(g: rolled.Rolled, part: slice) -> np.ndarray:
    """One chunk of a rolled segment as one array: int32[ch, 3 * N_FIELDS + 5] of c0, c1, mode, kind (-1:
    padding), seq0, m0, cnt and the segment's steps per iteration."""
    kind = g.kind[part]
    return np.concatenate([g.c0[part], g.c1[part], g.mode[part], np.stack(
        [kind, g.seq0[part], g.m0[part], g.cnt[part], np.full(len(kind), g.seq_step, np.int32)], axis=1)], axis=1)


def unrolled(pack: jax.Array, table: jax.Array) -> jax.Array:
    """A chunk of a rolled segment (``pack_rolled``) and its table as levelled groups (``pack_groups``): group
    ``i`` is one template operation for iterations ``m0[i] .. m0[i] + cnt[i] - 1``, one a lane, its fields
    computed here (rows and addresses affine in the iteration, DM lines' rows from the table, a VLDB's lane),
    on the device, a chunk at a time (the trace keeps the compact segment), inside the data path's call
    (``DataPath.packed_mixed``). A lane past ``cnt`` is padding: its step is NO_SEQ, as a step of a run never
    is, since steps stay below CYCLE_LIMIT."""
    F = N_FIELDS
    lane = jnp.arange(rolled.ROLL_WIDTH, dtype=jnp.int32)[None, :]
    c0, c1, md = pack[:, None, :F], pack[:, None, F:2 * F], pack[:, None, 2 * F:3 * F]
    kind, seq0, m0, cnt, seq_step = (pack[:, 3 * F + j, None] for j in range(5))
    on = lane < cnt
    m = m0 + jnp.where(on, lane, 0)
    v = c0 + c1 * m[:, :, None]
    rows = v[:, :, :2]  # (only fields 0 and 1 hold DM lines' rows, only field 2 a VLDB's lane)
    rows = jnp.where(md[:, :, :2] == rolled.F_LINE, table[jnp.clip(rows // LINE_BYTES, 0, table.shape[0] - 1)], rows)
    lane_f = jnp.where(md[:, :, 2] == rolled.F_LANE, v[:, :, 2] % LANES, v[:, :, 2])
    seq = jnp.where(on, seq0 + seq_step * m, NO_SEQ)
    return jnp.concatenate([rows, lane_f[:, :, None], v[:, :, 3:], seq[:, :, None],
                            jnp.broadcast_to(kind[:, :, None], seq.shape + (1,))], axis=2)


@functools.lru_cache(maxsize=4)
def _mixed_fillers(hw_json: str) -> tuple:
    """The arguments ``DataPath.packed_mixed`` does not read for a chunk of either kind, on the device once:
    (levelled pack, rolled pack, table, False, True)."""
    return tuple(jax.device_put(a) for a in (
        np.zeros((SMALL_CHUNK, GROUP_WIDTH, N_FIELDS + 2), np.int32),
        np.zeros((SMALL_CHUNK, 3 * N_FIELDS + 5), np.int32),
        np.zeros(_config(hw_json).dm_lines, np.int32), np.bool_(False), np.bool_(True)))


@functools.lru_cache(maxsize=16)
def _config(hw_json: str) -> VLIWConfig:
    return VLIWConfig.model_validate_json(hw_json)


class Plan(NamedTuple):
    """The data path of one trace: its parts in order -- levelled groups (``Groups``) between the rolled
    segments (``rolled.Rolled``) -- and where each step's operations came from (the first non-finite line)."""

    parts: tuple  # Groups or Rolled, in program order
    n: int  # groups in all
    op_seq: np.ndarray  # the levelled operations' steps, ascending, and their bundles
    op_pc: np.ndarray
    nbytes: int
    rows: int  # the compact state (``compact``): rows of the data path's buffer, EXT elements it holds
    ext: int
    segs: tuple = ()  # the trace's rolled segments (each a part itself where ``mixed``, else expanded: ``plan``)
    mixed: bool = False  # parts of rolled segments: every chunk is a mixed one (``DataPath.packed_mixed``)

    def pc_of(self, seq: int) -> int:
        for seg in self.segs:
            if seg.seq_lo <= seq <= seg.seq_hi:
                return seg.pc_of(seq)
        return int(self.op_pc[np.searchsorted(self.op_seq, seq)])


def plan(tr: Trace, rows: int, ext: int) -> Plan:
    """Schedule the levelled operations between rolled segments, part by part (each part runs after the
    one before it, so its levels need not know the others'). Without segments: one part, as before.
    ``rows``, ``ext``: the compact state the trace's rows are numbered for (``compact``)."""
    expanded, mixed = _plan_layout(tr)
    return _plan_of(tr, list(_plan_parts(tr, expanded, mixed)), rows, ext, mixed)


def _plan_layout(tr: Trace) -> tuple[list[bool], bool]:
    """Which rolled segments of a trace run levelled (``rolled.expand``), and whether any stays rolled (then every
    chunk is a mixed one): all of them where their operations, one per iteration, number EXPAND_MIN_LANES or more
    and stay within EXPAND_MAX_OPS with the rest (``whole``), else each segment of fewer than EXPAND_BELOW
    iterations (its rolled groups would run half empty) as far as EXPAND_MAX_OPS goes (memory); a plan with no
    segment left rolled has no mixed chunk, and its parts take wide groups."""
    ops = tr.ops
    assert ops is not None
    lanes = sum(int(seg.cnt[seg.kind >= 0].sum()) for _, seg in tr.rolls)
    whole = rolled.EXPAND_MIN_LANES <= lanes <= rolled.EXPAND_MAX_OPS - len(ops)
    expanded, room = [], rolled.EXPAND_MAX_OPS - len(ops)
    for _, seg in tr.rolls:
        n = int(seg.cnt[seg.kind >= 0].sum())
        flat = whole or (rolled.iterations(seg) < rolled.EXPAND_BELOW and n <= room)
        room -= n if flat and not whole else 0
        expanded.append(flat)
    return expanded, not all(expanded)


def _plan_parts(tr: Trace, expanded: list[bool], mixed: bool):
    """The parts of a plan (``plan``), one at a time, in program order."""
    ops = tr.ops
    assert ops is not None
    chunk = _plan_chunk(mixed, bool(tr.rolls))
    at, first = 0, True
    for (n_before, seg), flat in zip((*tr.rolls, (len(ops), None)), (*expanded, True), strict=True):
        if n_before > at or (seg is None and first):
            first = False
            yield schedule(ops[at:n_before], chunk, not mixed)
        at = n_before
        if seg is not None:
            first = False
            yield schedule_rolled(seg, chunk, not mixed) if flat else seg


def _plan_of(tr: Trace, parts: list, rows: int, ext: int, mixed: bool) -> Plan:
    ops = tr.ops
    assert ops is not None
    n = sum(int(g.n) for g in parts)
    nbytes = sum(a.nbytes for g in parts for a in (g[:3] if isinstance(g, Groups) else g[:7]))
    return Plan(tuple(parts), n, np.ascontiguousarray(ops[:, 1]), np.ascontiguousarray(ops[:, 2]), nbytes, rows,
                ext, tuple(seg for _, seg in tr.rolls), mixed)


def _plan_chunk(mixed: bool, segments: bool):
    """How a plan's parts are chunked: mixed ones (``part_chunk``), levelled ones with expanded segments
    (``levelled_part_chunk``), or one levelled trace (``chunk_size``)."""
    return part_chunk if mixed else levelled_part_chunk if segments else chunk_size


def _entry_bytes(entry) -> int:
    return 0 if entry[1] is None else entry[1].nbytes


_TRACES = TraceCache(TRACE_CACHE_SIZE, TRACE_CACHE_BYTES, _entry_bytes)


def _prepassed(words: np.ndarray, hw: VLIWConfig, limit: int, max_steps: int, H: int, count: int | None) -> Trace:
    """The pre-pass of a program of ``count`` dynamic bundles (``static_count``): rolling its steady loops
    from ``ROLL_ABOVE``, with the cyclic garbage collector paused (``gc_pause``)."""
    with collector_paused():
        return prepass(words, hw, limit, max_steps, H, count is None or count > ROLL_ABOVE)


def traced(words: np.ndarray, hw_json: str, limit: int, max_steps: int, H: int, done: tuple | None = None,
           feed: _Feed | None = None):
    """(Trace, Groups, chunks) of a program, cached by program, config, EXT limit and bucket, and step
    budget; ``chunks``: the groups as device arrays, a chunk at a time (sent once, not per run). ``done``:
    the program's pre-pass where the caller made it (``run_many``: a program it leaves to run alone), as
    ``(trace, None)`` or compacted, ``(trace, (rows, W))``. ``feed``: where the trace is not cached and holds at
    least STREAM_MIN_OPS operations and rolled groups, its plan is made, sent and handed to ``feed`` a few parts
    at a time (``_streamed``), so a run of the first parts overlaps the scheduling of the rest."""
    words = np.ascontiguousarray(words, np.int32)
    key = (hashlib.sha1(words.tobytes()).hexdigest(), words.shape, hw_json, int(limit), int(max_steps), H)
    hit = _TRACES.get(key)
    if hit is not None:
        return hit
    hw = _config(hw_json)
    tr, sizes = done or (_prepassed(words, hw, int(limit), int(max_steps), H, static_count(words)), None)
    pl = chunks = None
    if not tr.exotic and tr.ops is not None:
        if sizes is None:
            tr, rows, W = compact(tr, hw, H)
        else:
            rows, W = sizes
        size = len(tr.ops) + sum(len(seg.kind) for _, seg in tr.rolls)
        if feed is not None and size >= STREAM_MIN_OPS and feed.begin(tr, rows, W):
            pl, chunks = _streamed(tr, rows, W, hw_json, feed)
        else:
            pl = plan(tr, rows, W)
            chunks = _device_chunks(pl.parts, pl.mixed, bool(pl.segs), hw_json)
    tr = tr._replace(ops=None)  # scheduled: the cache keeps only what a run needs
    _TRACES.put(key, (tr, pl, chunks))
    return tr, pl, chunks


def _streamed(tr: Trace, rows: int, W: int, hw_json: str, feed: _Feed) -> tuple[Plan, list]:
    """``plan`` and ``_device_chunks`` a few parts at a time (at least STREAM_SEND_GROUPS groups a send), each
    send handed to ``feed`` (its data-path calls are asynchronous: they run on another core while the next parts
    are scheduled and packed). The same parts and chunks as ``plan`` makes, so the same results."""
    expanded, mixed = _plan_layout(tr)
    parts: list = []
    chunks: list = []
    at = 0
    runs = _Runs()
    for part in _plan_parts(tr, expanded, mixed):
        parts.append(part)
        if sum(int(g.n) for g in parts[at:]) >= STREAM_SEND_GROUPS:
            sent = _device_chunks(parts[at:], mixed, bool(tr.rolls), hw_json, runs, last=False)
            feed(sent)
            chunks += sent
            at = len(parts)
    sent = _device_chunks(parts[at:], mixed, bool(tr.rolls), hw_json, runs)
    feed(sent)
    chunks += sent
    return _plan_of(tr, parts, rows, W, mixed), chunks


class _Feed:
    """A run's data path fed by a streamed plan (``_streamed``). ``begin`` sets it up once the compact state is
    known (False where the run will leave the program to the interpreter: nothing to feed); each call queues the
    chunks sent, and the data-path function each needs is compiled for its shapes on the background thread
    (``compile_ahead``; at once where this process compiled it before), so a compile overlaps the scheduling of
    the next parts too; queued chunks are dispatched in order as their functions are ready (``finish``: all)."""

    def __init__(self, hw_json: str, ext: np.ndarray, ext_limit: int):
        self.hw_json, self.ext, self.ext_limit = hw_json, ext, ext_limit
        self.state = None
        self.started = False
        self.pending: list = []
        self.bf16: bool | None = None  # (``_bf16_inputs``, once checked)

    def begin(self, tr: Trace, rows: int, W: int) -> bool:
        if tr.mmul:
            self.bf16 = _bf16_inputs(self.ext, self.ext_limit)
            if not self.bf16:
                return False
        H = self.ext.shape[1]
        self.key = ("vliw", self.hw_json, H, rows, W)
        self.fns = data_runner(self.hw_json, H, rows, W)
        self.window = self.ext if W == H else self.ext[:, :W]
        spec = jax.ShapeDtypeStruct(self.window.shape, self.window.dtype)
        self.ready = compile_ahead.ahead((*self.key, "initial", spec.shape), lambda: self.fns[0].lower(spec).compile())
        self.state_spec = None
        self.started = True
        return True

    def __call__(self, chunks: list) -> None:
        _, chunk, _, mixed = self.fns
        for is_mixed, part in chunks:
            fn = mixed if is_mixed else chunk
            shapes = tuple((tuple(a.shape), str(a.dtype)) for a in part)
            self.pending.append((fn, part, compile_ahead.ahead((*self.key, is_mixed, shapes),
                                                               functools.partial(self._compile, fn, part))))
        self._dispatch(wait=False)

    def _compile(self, fn, part: tuple) -> None:
        if self.state_spec is None:
            self.state_spec = jax.eval_shape(self.fns[0], self.window)
        fn.lower(self.state_spec, *part).compile()

    def _dispatch(self, wait: bool) -> None:
        if self.state is None:
            if not (wait or self.ready.done()):
                return
            compile_ahead.wait(self.ready)
            self.state = self.fns[0](self.window)
        while self.pending and (wait or self.pending[0][2].done()):
            fn, part, fut = self.pending.pop(0)
            compile_ahead.wait(fut)
            self.state = fn(self.state, *part)

    def finish(self):
        self._dispatch(wait=True)
        return self.state


def _bf16_inputs(ext: np.ndarray, ext_limit: int) -> bool:
    """Whether EXT below the limit holds bf16 values only (VMMUL's fused multiply-adds match the interpreter's
    bit for bit when its operands are bf16, as every task's inputs are: products are exact. A DMA reads EXT below
    ext_limit only)."""
    below = ext[:, : int(ext_limit)]
    if below.strides[-1] != below.itemsize:  # (elements not adjacent: no uint16 view; a caller's transposed image)
        return not np.any(below.view(np.uint32) & 0xFFFF)
    return not below.view(np.uint16)[:, _LOW_HALF::2].any()  # (a strided view: no copy of a 64 MB image)


_LOW_HALF = 0 if sys.byteorder == "little" else 1  # the uint16 half of a float32 that bf16 rounding clears


def _device_chunks(parts: Sequence, mixed: bool, segments: bool, hw_json: str,
                   runs: _Runs | None = None, last: bool = True) -> list[tuple[bool, tuple]]:
    """A plan's chunks (of ``parts``, a plan's or some of them) as ``(mixed, arguments)`` on the device: every
    array sent in one ``device_put`` (it costs per call; batch_matmul C5's plan has thousands of segments). A
    levelled plan with expanded segments chunks runs of its parts (``_Runs``; ``runs``: the plan's, where its
    parts come a few at a time, ``last``: these are the last)."""
    fill = _mixed_fillers(hw_json) if mixed else None  # (with rolled segments every chunk is mixed)
    host: list[np.ndarray] = []
    layout: list[tuple[bool, int, int]] = []  # (rolled?, index of its pack in host, of its segment's table)
    if not mixed and segments:
        runs = runs or _Runs()
        for g in parts:
            host += runs.add(g)
        host += runs.close() if last else []
        layout = [(False, i, -1) for i in range(len(host))]
    else:
        for g in parts:
            ch = _plan_chunk(mixed, segments)(int(g.n))
            table = -1
            if not isinstance(g, Groups):
                host.append(g.table)  # (one per segment)
                table = len(host) - 1
            for c in range(0, max(int(g.n), 1), ch):
                part = slice(c, c + ch)
                host.append(pack_groups(g, part) if isinstance(g, Groups) else pack_rolled(g, part))
                layout.append((table >= 0, len(host) - 1, table))
    dev = jax.device_put(host)
    chunks: list[tuple[bool, tuple]] = []
    for rolled_part, at, table in layout:
        if not rolled_part:
            chunks.append((False, (dev[at],)) if fill is None else (True, (dev[at], *fill[1:4])))
        else:
            assert fill is not None
            chunks.append((True, (fill[0], dev[at], dev[table], fill[4])))
    return chunks


WIDEN_SHARE = 0.125  # (``_Runs``) narrow groups widened: at most this share of the wide ones, or WIDEN_MIN, so
WIDEN_MIN = 1024  # their cost stays within ~6% of the data path, or a few ms (a wide group costs ~1.45x a narrow one)


class _Runs:
    """The chunks of a levelled plan with expanded segments: consecutive parts of one group width run as one
    sequence of groups, chunked in GROUP_CHUNKs (the last padded to one) where it holds that many, else in
    SMALL_CHUNKs, as ``levelled_part_chunk`` chunks a part; and narrow parts (a loop's prologue, the stepped
    bundles between segments) are widened to join the wide groups beside them while the narrow groups widened
    stay within WIDEN_SHARE of the wide ones (or WIDEN_MIN). So a plan of wide segments takes one chunk shape,
    one compile: batch_matmul C5's expert took three (its narrow prologue; the SMALL_CHUNK tails of its 64 parts),
    1.7 s of compile each. The groups run in the parts' order, each as it was, so the results are the same."""

    def __init__(self) -> None:
        self.held: list[Groups] = []  # the open run's parts not yet chunked (the first from ``self.at`` on)
        self.at = 0
        self.n = 0  # groups held
        self.full = False  # the open run sent a GROUP_CHUNK
        self.wide_n = self.widened = 0

    def add(self, g: Groups) -> list[np.ndarray]:
        """The chunks ``g`` completes."""
        out: list[np.ndarray] = []
        n, wide = int(g.n), g.fields.shape[1] == WIDE_WIDTH
        self.wide_n += n if wide else 0
        if self.held and (self.held[0].fields.shape[1] == WIDE_WIDTH) != wide:
            narrow = self.n if wide else n  # the groups to widen: the held run's, or g's
            if (wide and self.full) or self.widened + narrow > max(WIDEN_SHARE * self.wide_n, WIDEN_MIN):
                out += self.close()
            elif wide:
                self.held = [_widened(h) for h in self.held]
                self.widened += narrow
            else:
                g = _widened(g)
                self.widened += narrow
        self.held.append(g)
        self.n += n
        while self.n >= GROUP_CHUNK:
            out.append(self._take(GROUP_CHUNK))
            self.full = True
        return out

    def close(self) -> list[np.ndarray]:
        """The open run's last chunks."""
        out: list[np.ndarray] = []
        if self.n and self.full:
            out.append(self._take(GROUP_CHUNK))
        while self.n > 0:
            out.append(self._take(SMALL_CHUNK))
        self.held, self.at, self.n, self.full = [], 0, 0, False
        return out

    def _take(self, ch: int) -> np.ndarray:
        """The next ``ch`` groups held, packed (``pack_groups``), padded where fewer are held."""
        packs, want = [], ch
        while want and self.held:
            g = self.held[0]
            k = min(int(g.n) - self.at, want)
            packs.append(pack_groups(g, slice(self.at, self.at + k)))
            want -= k
            self.n -= k
            self.at += k
            if self.at == int(g.n):
                self.held.pop(0)
                self.at = 0
        if want:
            pad = np.zeros((want, *packs[0].shape[1:]), np.int32)
            pad[:, :, N_FIELDS] = NO_SEQ
            pad[:, :, N_FIELDS + 1] = -1
            packs.append(pad)
        return packs[0] if len(packs) == 1 else np.concatenate(packs)


def _widened(g: Groups) -> Groups:
    """Narrow groups as wide ones: the same lanes, then padding lanes (no step: their writes are dumped)."""
    n, w = g.fields.shape[:2]
    fields = np.zeros((n, WIDE_WIDTH, g.fields.shape[2]), np.int32)
    fields[:, :w] = g.fields
    seq = np.full((n, WIDE_WIDTH), NO_SEQ, np.int32)
    seq[:, :w] = g.seq
    return g._replace(fields=fields, seq=seq)


def run(hw_json: str, words: np.ndarray, ext: np.ndarray, ext_limit, max_steps,
        scratch: bool = False, whole: bool = True) -> M.State | None:
    """The interpreter's final State (as numpy, batched over input sets), or None for the rare program
    the data path leaves to the oracle. Profiling counters are not kept (``prof`` as unprofiled).
    ``scratch``: ``ext`` is the caller's to overwrite (an image it does not read again): the final EXT is
    written into it, where a copy of the whole image (4 MB an input set) would cost more than the run.
    ``whole=False``: EXT only up to the limit (or the window, if wider), all a run's results read (``run_batch``:
    the image is shared, and copying it whole took longer than matmul C3's data path)."""
    ext = np.asarray(ext, np.float32)
    N, H = ext.shape
    count = static_count(words, rolled.ROLL_TRIES + 2)
    if count is not None and count > TRACE_MAX_OPS:
        return None  # too long a trace (its LOOPI counts say so): the interpreter, without a wasted pre-pass
    feed = _Feed(hw_json, ext, int(ext_limit))
    tr, groups, chunks = traced(words, hw_json, int(ext_limit), int(max_steps), H, feed=feed)
    if groups is None or (tr.mmul and not (feed.bf16 if feed.bf16 is not None else _bf16_inputs(ext, int(ext_limit)))):
        return None
    W = groups.ext
    initial, chunk, final, mixed = data_runner(hw_json, H, groups.rows, W)
    if feed.started:
        state = feed.finish()
    else:  # (not streamed: the chunks now)
        state = initial(ext if W == H else ext[:, :W])
        for is_mixed, part in chunks:
            state = (mixed if is_mixed else chunk)(state, *part)
    x, c, dm, ext_w, first = (np.asarray(a) for a in jax.device_get(
        final(state, np.asarray(tr.x_rows, np.int32), np.asarray(tr.c_rows, np.int32), tr.line_rows)))
    cols = H if whole else max(int(ext_limit), W)
    if cols <= W:
        ext_out = ext_w
    elif not whole:
        ext_out = np.concatenate([ext_w, ext[:, W:cols]], axis=1)
    else:  # EXT past the window keeps its initial contents
        ext_out = ext if scratch and ext.flags.writeable else ext.copy()
        ext_out[:, :W] = ext_w
    return _state(tr, x, c, dm, ext_out, first, groups.pc_of)


def _state(tr: Trace, x: np.ndarray, c: np.ndarray, dm: np.ndarray, ext: np.ndarray, first: np.ndarray,
           pc_of) -> M.State:
    """The State of a trace's run from its data path's final values (batched over input sets); ``first``: each
    input set's first non-finite step, ``pc_of``: a step's bundle."""
    N = len(first)

    def each(a: np.ndarray) -> np.ndarray:
        return np.broadcast_to(a, (N, *a.shape)).copy()

    nan_pc = np.full(N, -1, np.int32)
    for i in np.flatnonzero(first != NO_SEQ):
        nan_pc[i] = pc_of(int(first[i]))
    fields: dict = dict(
        ctl=each(tr.ctl), r=each(tr.r), p=each(tr.p), ready=each(tr.ready), loops=each(tr.loops),
        line_ready=each(tr.line_ready), line_read=each(tr.line_read), dma_free=each(tr.dma_free),
        busy=each(tr.busy), counts=each(tr.counts), x=x, c=c, nan_pc=nan_pc, dm=dm, ext=ext,
        prof=np.zeros((N, 1, M.N_PROF), np.int32))
    return M.State(**fields)


# ---- many programs in one data-path call -------------------------------------------------------------------
# Programs per data-path call of run_many. From ``python benchmarks/bench_vliw_merge.py`` (its rows in
# benchmarks/results/scoring_merge_vliw.jsonl): on matmul C1 the CPU per distinct kernel falls by a quarter
# from one program a call to 8 and is flat from 8 to 64, the merged call's own share growing slowly with the
# size; 16 keeps a batch scorer's chunks (at most this many kernels) few and the merged state small.
MERGE_PROGRAMS = 16
# ... and a call's most rows (of every program together: the state is rows x 128 bytes an input set)
MERGE_ROWS = 1 << 16
# A program merges where it executes at most MERGE_MAX_BUNDLES bundles (``static_count``; where that is unknown,
# a branch: after its pre-pass, if its trace holds at most MERGE_MAX_OPS data operations), its compact state is
# compact (``compact``: rows below the full layout, a proven EXT window) and its EXT window holds at most
# MERGE_EXT elements (each program gets its own copy of the window); else it runs alone (``run``), where its
# own levels fill the groups. Tuning constants: every path gives the same results.
MERGE_MAX_BUNDLES = 1 << 16
MERGE_MAX_OPS = 1 << 16
MERGE_EXT = 1 << 16
_FIELD_RE = {K_DMAI: 4 + 3, K_DMAO: 4 + 2}  # the ops column of a DMA's EXT byte address (``_ext_index``'s re)


class _Merging(NamedTuple):
    """A program ready for a merged call: its compact trace (``ops`` kept) and the rows and EXT it needs."""

    at: int  # its place in the batch
    trace: Trace
    rows: int  # rows 1 .. rows of the compact buffer (row 0: the zero row; no dump row)
    ext: int  # its EXT window


def _mergeable(i: int, words: np.ndarray, hw_json: str, limit: int, max_steps: int, H: int,
               bf16_ext: bool) -> _Merging | None:
    """Program ``i`` pre-passed and compacted as ``traced`` does it, or None where it runs alone (its pre-pass,
    if made, then in ``traced``'s cache for that run)."""
    words = np.ascontiguousarray(words, np.int32)
    count = static_count(words)
    if count is not None and count > MERGE_MAX_BUNDLES:
        return None
    hw = _config(hw_json)
    tr = _prepassed(words, hw, limit, max_steps, H, count)
    if tr.exotic or tr.ops is None or tr.rolls or (tr.mmul and not bf16_ext) or len(tr.ops) > MERGE_MAX_OPS:
        traced(words, hw_json, limit, max_steps, H, (tr, None))
        return None
    tr, rows, W = compact(tr, hw, H)
    if rows == layout_of(hw, H).dump + 1 or W >= H or W > MERGE_EXT:
        traced(words, hw_json, limit, max_steps, H, (tr, (rows, W)))
        return None
    ops = tr.ops
    assert ops is not None
    used = max(int(ops[:, 4:][_ROW_MASK[ops[:, 0]]].max(initial=0)), *tr.x_rows, *tr.c_rows,
               int(tr.line_rows.max(initial=0)))
    return _Merging(i, tr, used, W)


def _merged_rows(n: int) -> int:
    """A merged call's buffer for ``n`` rows: at least COMPACT_ROWS_MIN, rounded up to an eighth of an octave
    (a few compiles per config, at most an eighth of the buffer unused)."""
    if n <= COMPACT_ROWS_MIN:
        return COMPACT_ROWS_MIN
    step = 1 << max((n - 1).bit_length() - 3, 0)
    return -(-n // step) * step


def _run_merged(hw_json: str, part: list[_Merging], ext: np.ndarray, limit: int, whole: bool) -> list[M.State]:
    """One data-path call for the programs of ``part``: program ``p``'s rows ``1 .. rows`` move to its own range
    of one buffer (row 0 stays the shared zero row, the dump row is shared), its DMAs address its own copy of
    the EXT window, and its operations keep their levels, so the programs' levels run together in the same
    groups; each lane carries its program (its first non-finite step)."""
    N, H = ext.shape
    slots = max(2, 1 << (len(part) - 1).bit_length())  # programs' EXT copies and first steps (few compiles)
    Wm = max(m.ext for m in part)
    rows = _merged_rows(2 + sum(m.rows for m in part))  # (the zero row, the programs' rows, the dump row)
    ops = np.concatenate([m.trace.ops for m in part])  # type: ignore[misc]
    sizes = [len(m.trace.ops) for m in part]  # type: ignore[arg-type]
    prog = np.repeat(np.arange(len(part), dtype=np.int32), sizes)
    base = np.cumsum([0] + [m.rows for m in part[:-1]]).astype(np.int32)  # row r of program p: r + base[p]
    kinds = ops[:, 0]
    f = ops[:, 4:]
    mask = _ROW_MASK[kinds] & (f > 0)
    f[mask] += np.broadcast_to(base[prog][:, None], f.shape)[mask]
    for kind, col in _FIELD_RE.items():  # (``_ext_index`` halves re: 2 * Wm bytes a program)
        sel = kinds == kind
        ops[sel, col] += 2 * Wm * prog[sel]
    g_kind, g_fields, g_seq, n_groups = groups.pack(kinds, np.arange(len(ops)), ops[:, 3],
                                                    np.concatenate([f, prog[:, None]], axis=1), ops[:, 1], WIDTH,
                                                    N_KINDS, GROUP_WIDTH, chunk_size, WIDE)
    g = Groups(g_kind, g_fields, g_seq, np.int32(n_groups))
    initial, chunk, final, _ = data_runner(hw_json, H, rows, slots * Wm, slots)
    state = initial(ext[:, :Wm])
    ch = chunk_size(n_groups)
    for at in range(0, max(n_groups, 1), ch):
        state = chunk(state, pack_groups(g, slice(at, at + ch)))

    def moved(m: _Merging, p: int, what) -> np.ndarray:
        r = np.asarray(what, np.int32)
        return np.where(r > 0, r + base[p], 0).astype(np.int32)

    if whole:
        sel = [np.concatenate([moved(m, p, getattr(m.trace, k)) for p, m in enumerate(part)])
               for k in ("x_rows", "c_rows", "line_rows")]
    else:  # what no result reads (registers, DM) stays on the device
        sel = [np.zeros(0, np.int32)] * 3
    x, c, dm, ext_w, first = (np.asarray(a) for a in jax.device_get(final(state, *sel)))
    dm = dm.reshape(N, -1)
    out = []
    n_x, n_c, n_l = (len(getattr(part[0].trace, k)) for k in ("x_rows", "c_rows", "line_rows"))
    cols = H if whole else max(limit, Wm)  # (a result reads EXT below the limit only)
    for p, m in enumerate(part):
        ext_out = np.empty((N, cols), np.float32)
        ext_out[:, :Wm] = ext_w[:, p * Wm:(p + 1) * Wm]
        ext_out[:, Wm:] = ext[:, Wm:cols]  # (past the window: its initial contents)
        tr = m.trace
        op_seq, op_pc = tr.ops[:, 1], tr.ops[:, 2]  # type: ignore[index]
        if whole:
            st = _state(tr, x[:, p * n_x:(p + 1) * n_x], c[:, p * n_c:(p + 1) * n_c],
                        dm[:, p * n_l * LANES:(p + 1) * n_l * LANES], ext_out, first[:, p],
                        lambda seq, s=op_seq, pc=op_pc: int(pc[np.searchsorted(s, seq)]))
        else:
            st = _state(tr, x, c, dm, ext_out, first[:, p],
                        lambda seq, s=op_seq, pc=op_pc: int(pc[np.searchsorted(s, seq)]))
        out.append(st)
    return out


def run_many(hw_json: str, programs: list[np.ndarray], ext: np.ndarray, ext_limit, max_steps,
             whole: bool = True) -> list[M.State | None]:
    """The final State of each program on the same EXT images, as :func:`run` gives it, bit for bit, from one
    data-path call per ``MERGE_PROGRAMS`` programs (fewer where their rows pass ``MERGE_ROWS``), each in its
    own rows and EXT window (:func:`_run_merged`). None: a program that does not merge (``_mergeable``: the
    caller runs it alone). Nothing is cached: each program is assumed new (batch scoring of distinct kernels).
    ``whole=False``: only what a run's results read -- control state, counts, the first non-finite line, EXT up
    to the limit -- the registers and DM come back empty."""
    ext = np.asarray(ext, np.float32)
    N, H = ext.shape
    limit, steps = int(ext_limit), int(max_steps)
    bf16_ext = _bf16_inputs(ext, limit)  # (VMMUL: see ``run``)
    out: list[M.State | None] = [None] * len(programs)
    todo = iter(range(len(programs)))
    ahead: list[_Merging] = []
    while True:
        for i in todo:
            m = _mergeable(i, programs[i], hw_json, limit, steps, H, bf16_ext)
            if m is not None:
                ahead.append(m)
            if len(ahead) == MERGE_PROGRAMS:
                break
        if not ahead:
            break
        used = np.cumsum([m.rows for m in ahead])
        take = max(1, int(np.searchsorted(used, MERGE_ROWS - 2, "right")))
        part, ahead = ahead[:take], ahead[take:]
        for m, st in zip(part, _run_merged(hw_json, part, ext, limit, whole), strict=True):
            out[m.at] = st
    return out


def run_batch(hw_json: str, programs: list[np.ndarray], ext: np.ndarray, ext_limit, max_steps,
              whole: bool = True) -> list[M.State]:
    """The final State of each program on the same EXT images, bit for bit what :func:`batched_runner`'s runner
    gives it alone: through :func:`run_many` where two or more programs merge (unless ``KCGYM_SIM=oracle``;
    ``whole`` as there, for these too), the rest one by one."""
    runner = batched_runner(hw_json)[1]
    out: list = [None] * len(programs)
    if sim_mode() != "oracle" and len(programs) > 1:
        out = run_many(hw_json, programs, ext, ext_limit, max_steps, whole)
    for i, w in enumerate(programs):
        if out[i] is None:
            out[i] = jax.device_get(runner(w, ext, ext_limit, max_steps, whole=whole))
    return out


# ---- dispatch --------------------------------------------------------------------------------------------
SIM_ENV = "KCGYM_SIM"  # KCGYM_SIM=oracle: every program on the interpreter; =trace: none (tests, benchmarks)
# Programs of at most this many dynamic bundles (``dynamic_count``) run on the interpreter: there the trace
# path's fixed cost per distinct program (pre-pass, schedule, sending the groups, three jitted calls) exceeds
# what it saves. A simulator tuning constant, not a budget: both paths give the same results. From
# ``python benchmarks/bench_speed.py --crossover --machines VLIW`` (benchmarks/results/speed_crossover.jsonl,
# its VLIW "choice" row: the threshold that minimises the summed CPU time of distinct kernels over its rows).
# With the compact data-path state (``compact``) the trace path's fixed cost is about the warm interpreter's
# even on the smallest kernels: three runs chose 0, 51 and 241 bundles, their rows pooled chose 0 (none: the
# interpreter is then never compiled in an ``auto`` process, its compile saved too).
ORACLE_MAX_BUNDLES = 0


def sim_mode() -> str:
    """``oracle``, ``trace`` or ``auto`` (the default: by program size, see ``ORACLE_MAX_BUNDLES``)."""
    mode = os.environ.get(SIM_ENV, "").strip().lower()
    return mode if mode in ("oracle", "trace") else "auto"


@functools.lru_cache(maxsize=1)
def _ctl_ids() -> tuple[int, int, int, int, int, int, int]:
    return (_CLS["CTL"], _SUB["LOOPI"], _SUB["LOOP"], _SUB["HALT"], _SUB["J"], _SUB["BEQZ"], _SUB["BNEZ"])


def static_count(words: np.ndarray, rollable: int | None = None) -> int | None:
    """The bundles a program executes, read off its LOOPI counts (nested bodies multiply) up to its first
    HALT; None where a LOOP (register count) or a branch makes it unknown. Cost: a pass over the CTL slots.
    ``rollable``: count at most that many iterations of a LOOPI whose body has no other control (the
    bundles the pre-pass steps where ``rolled`` rolls the rest; an estimate of the trace's length)."""
    isa = make_isa(VLIWConfig())
    ctl = np.asarray(words).reshape(len(words), len(isa.slot_units), isa.n_fields)[:, M.S_CTL]
    cls_ctl, loopi, loop, halt, j, beqz, bnez = _ctl_ids()
    is_ctl = ctl[:, 1] == cls_ctl
    subs = ctl[:, 2]
    if np.any(is_ctl & np.isin(subs, (loop, j, beqz, bnez))):
        return None
    halts = np.flatnonzero(is_ctl & (subs == halt))
    end = int(halts[0]) + 1 if len(halts) else len(words)
    mult = np.ones(end, np.int64)
    other = np.concatenate([[0], np.cumsum(is_ctl & (subs != loopi))])
    for pc in np.flatnonzero(is_ctl[:end] & (subs[:end] == loopi)).tolist():
        stop, n = int(ctl[pc, 4]), int(ctl[pc, 3])
        if rollable is not None and stop > pc + 1 and other[min(stop, len(words))] == other[pc + 1]:
            n = min(n, rollable)
        mult[pc + 1:stop] *= n
    return int(mult.sum())


def dynamic_count(words: np.ndarray, stop: int) -> int:
    """``static_count``, or ``stop + 1`` where unknown or past ``stop`` (the dispatch's test)."""
    count = static_count(words)
    return stop + 1 if count is None else min(count, stop + 1)


@functools.lru_cache(maxsize=64)
def batched_runner(hw_json: str, profile: bool = False):
    """``(machine, runner)``: ``runner(words, ext, ext_limit, max_steps)`` returns the final State batched
    over input sets, the same as the interpreter's bit for bit. The trace-ahead path unless profiling,
    ``KCGYM_SIM=oracle``, or a program of at most ``ORACLE_MAX_BUNDLES`` bundles (the interpreter is
    faster there; it runs with that many steps at most, and a program that has not halted by then goes on
    to the trace path)."""
    machine, oracle = M.batched_runner(hw_json, profile)
    if profile:
        return machine, oracle

    def runner(words, ext, ext_limit, max_steps, scratch: bool = False, whole: bool = True):
        mode = sim_mode()
        if mode == "oracle":
            return oracle(words, ext, ext_limit, max_steps)
        if mode == "auto" and dynamic_count(words, ORACLE_MAX_BUNDLES) <= ORACLE_MAX_BUNDLES:
            steps = min(int(max_steps), ORACLE_MAX_BUNDLES)
            st = oracle(words, ext, ext_limit, np.int32(steps))
            if steps == int(max_steps) or np.asarray(st.ctl)[0, M.HALTED]:
                return st
        st = run(hw_json, words, ext, ext_limit, max_steps, scratch, whole)
        return oracle(words, ext, ext_limit, max_steps) if st is None else st

    return machine, runner
