"""Trace-ahead simulation of the NPU: a scalar pre-pass, then only the data path in JAX.

On the NPU the program counter, loop counters, addresses, faults and the whole timing model never
depend on tensor data (``machine.py``'s design). So :func:`prepass` runs the control side once per
program in plain Python -- the same scoreboard, the same checks, in the same order as the handlers of
:class:`~kcgym.sims.npu.machine.Machine` -- and records every data operation with its operands
resolved to rows. :func:`schedule` then orders those operations into *levels* by their true
dependencies (rows of VSRAM/MSRAM/HBM, FP SRAM words, FP registers and the accumulators, the last
two renamed per value so that independent chains overlap) and packs each level's operations of one
kind into fixed-width groups. The JAX part (:class:`DataPath`) is a loop over those groups (in
fixed-size chunks, so one compile serves every program length), ``vmap``-ped over input sets: per
group a gather, the arithmetic and one scatter per buffer, no control, no scoreboard, no fault logic.
The interpreter in ``machine.py`` stays the oracle (``tests/sims/npu/test_trace_differential.py``):
results are bit-identical to it.
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from kcgym.limits import CYCLE_LIMIT
from kcgym.sims import compile_ahead, groups
from kcgym.sims.device_inputs import on_device
from kcgym.sims.gc_pause import collector_paused
from kcgym.sims.jax_cache import enable_persistent_cache
from kcgym.sims.npu import machine as M
from kcgym.sims.npu.config import NPUConfig
from kcgym.sims.npu.isa import CLASSES, UNITS, make_isa
from kcgym.sims.trace_cache import TraceCache

TRACE_CACHE_SIZE = 32  # pre-passed programs kept per process (program + hw + HBM limit + budget)
TRACE_CACHE_BYTES = 256 << 20  # and at most this much of their schedules (a C5 composite's is tens of MB)
# A program of more dynamic instructions than this (``dynamic_count``) is streamed on its first run (``_streamed``):
# every STREAM_PART_OPS data operations (at the next loop back-edge) are levelled, packed and sent, and their
# groups run on another core while the pre-pass goes on. A part's groups do not share levels with the next
# part's (a few more groups); both constants tune speed only.
STREAM_ABOVE = 500_000
STREAM_PART_OPS = 1 << 16
GROUP_WIDTH = 16  # data operations executed together in one loop step (a level's ops of one kind)
GROUP_CHUNK = 2048  # groups per call of the jitted data path: one compile serves programs of any length
SMALL_CHUNK = 128  # ... except programs of at most this many groups, whose one call sends a smaller array
FP_SLOTS = 64  # renamed FP register values (a slot is reused after FP_SLOTS writes; dependencies keep it safe)
ACC_SLOTS = 256  # renamed accumulator lifetimes (M_MM chains up to M_MM_WO)
MV_SLOTS = 16  # renamed MV accumulator lifetimes
N_FIELDS = 8  # operand fields of one data operation
PROG = N_FIELDS - 1  # the field no kind uses: a merged run's program index (run_many)

# data-operation kinds (one lax.switch branch each)
(K_SFP, K_FLD, K_FST, K_VEC, K_VRED, K_MM, K_MV, K_WOMM, K_WOMV, K_LDV, K_STV, K_LDM) = range(12)
N_KINDS = 12
# lanes per group by kind: a tile load writes MLEN MSRAM rows, so its groups stay narrow
WIDTH = tuple(1 if k == K_LDM else GROUP_WIDTH for k in range(N_KINDS))

_I32 = 1 << 32


def _w(x: int) -> int:
    """int32 wrap-around (the interpreter's integer arithmetic)."""
    x &= 0xFFFFFFFF
    return x - _I32 if x & 0x80000000 else x


class Trace(NamedTuple):
    """What the pre-pass found: the control side's final state and the data operations in order."""

    ctl: np.ndarray  # int32[N_CTL], as the interpreter's State.ctl at the end
    gp: np.ndarray
    ar: np.ndarray
    unit_free: np.ndarray
    busy: np.ndarray
    counts: np.ndarray
    fp_ready: np.ndarray
    vs_ready: np.ndarray
    vs_read: np.ndarray
    ms_ready: np.ndarray
    ms_read: np.ndarray
    im: np.ndarray
    ops: list  # (kind, seq, pc, fields...) per data operation, program order
    acc_slot: int  # slot holding the accumulator at the end
    mv_slot: int
    fp_slots: tuple  # slot of each FP register at the end
    exotic: bool  # an HBM row progression wrapped around int32: leave this program to the oracle


@functools.lru_cache(maxsize=16)
def _costs(hw_json: str) -> tuple[list[int], list[int]]:
    """Occupancy and latency per opcode (the interpreter's tables)."""
    hw = NPUConfig.model_validate_json(hw_json)
    isa = make_isa(hw)
    return [int(x) for x in isa.table("occupancy", hw)], [int(x) for x in isa.table("latency", hw)]


def prepass(words: np.ndarray, hw: NPUConfig, limit: int, max_steps: int, whole: bool = True,
            sink: Callable[[list], None] | None = None) -> Trace:
    """Run the control side of ``words`` (a padded program) exactly as ``Machine.run_one`` does.
    ``whole=False``: the final scoreboard rows and INT SRAM (``vs_ready`` .. ``im``, which no run result
    reads) come back empty, which spares converting thousands of list entries per program. ``sink``: the data
    operations so far are handed to it, in order, at a loop's back-edge once there are ``STREAM_PART_OPS`` of
    them (``_streamed``: their groups run while the pre-pass goes on); the Trace keeps only the rest."""
    occ_t, lat_t = _costs(hw.model_dump_json())
    V, L, B, R = hw.VLEN, hw.MLEN, hw.BLEN, hw.v_prefetch_rows
    kv = max(B, R)
    vrows, mrows = hw.vsram_rows, hw.msram_rows
    vsize = hw.vsram_size
    words = np.asarray(words)
    tail = len(words)
    if tail and words[-1, 1] == 0 and words[-1, 2] == make_isa(hw).sub_ids["C_HALT"]:  # padded with halts:
        differs = np.flatnonzero(np.any(words != words[-1], axis=1))  # convert up to the first one only
        tail = min(tail, (int(differs[-1]) + 2) if len(differs) else 1)
    prog = words[:tail].tolist()
    n_prog = len(prog)
    gp = [0] * 16
    ar = [M.UNSET] * 8
    im = [0] * hw.intsram_size
    unit_free = [0] * len(UNITS)
    busy = [0] * len(UNITS)
    counts = [0] * len(CLASSES)
    fp_ready = [0] * 8
    vs_ready = [0] * (vrows + kv)
    vs_read = [0] * (vrows + kv)
    # MSRAM rows change only at tile loads (rare) but are read in blocks by every M_MM: keep the block
    # maxima of ms_ready until the next load, and fold the readers' times into ms_read only when a load asks
    ms_ready = np.zeros(mrows + L, np.int64)
    ms_read = np.zeros(mrows + L, np.int64)
    ms_ready_max: dict = {}
    ms_read_pending: dict = {}

    def ms_ready_of(row: int, n: int) -> int:
        v = ms_ready_max.get((row, n))
        if v is None:
            v = ms_ready_max[(row, n)] = int(ms_ready[row:row + n].max())
        return v

    def ms_read_flush() -> None:
        for (row, n), v in ms_read_pending.items():
            np.maximum(ms_read[row:row + n], v, out=ms_read[row:row + n])
        ms_read_pending.clear()

    def ms_read_note(row: int, n: int, v: int) -> None:
        if ms_read_pending.get((row, n), -1) < v:
            ms_read_pending[(row, n)] = v
    pc = steps = halted = fault = fault_pc = fault_detail = t_issue = t_end = 0
    stride, acc_ready, mv_ready = M.UNSET, 0, 0
    ops: list = []
    exotic = False
    fps = list(range(8))  # FP register -> the slot of its value (slots 0..7 hold the initial zeros)
    fp_next = [0]

    def new_fp(reg: int) -> int:
        """A fresh slot for a new value of FP register ``reg`` (never one a register still holds)."""
        while True:
            slot = 8 + fp_next[0] % FP_SLOTS
            fp_next[0] += 1
            if slot not in fps:
                break
        if reg != 0:
            fps[reg] = slot
        return slot
    acc_slot, next_acc = 0, 1
    mv_slot, next_mv = 0, 1
    U_S, U_V, U_M, U_D = M.U_SCALAR, M.U_VECTOR, M.U_MATRIX, M.U_DMA
    mm_occ, mv_occ = hw.mm_occupancy, hw.mv_occupancy
    mm_av_max = min(vsize - B * V, vrows * V)  # an M_MM vector operand at most here is in VSRAM, with no wrap

    def clip(x: int, lo: int, hi: int) -> int:
        return lo if x < lo else hi if x > hi else x

    while not halted and steps < max_steps:
        ins = prog[pc] if pc < n_prog else prog[-1]  # past a full bucket: JAX's clamped index
        op, cls, sub, f0, f1, f2, f3, f4 = ins
        cur = pc
        pc += 1
        steps += 1
        counts[cls] += 1
        if cls <= 1:  # CTRL and SINT (most of a kernel's steps): the scalar unit, no dependencies, no data
            occ = occ_t[op]
            uf = unit_free[U_S]
            start = t_issue if t_issue > uf else uf
            end, ready = start + occ, start + lat_t[op]
            t_issue = start + 1
            if end > t_end:
                t_end = end
            if ready > t_end:
                t_end = ready
            unit_free[U_S] = end
            busy[U_S] += occ
            if cls == 0:
                if sub == 0:
                    ar[f0] = _w(gp[f1] + gp[f2])
                elif sub == 1:
                    stride = gp[f0]
                elif sub == 2:
                    gp[f0] = f1
                elif sub == 3:
                    dec = gp[f0] - 1
                    if dec < -0x80000000:
                        dec = _w(dec)
                    gp[f0] = dec
                    if dec != 0:
                        pc = f1
                        if sink is not None and len(ops) >= STREAM_PART_OPS:
                            sink(ops)
                            ops = []
                elif sub == 5:
                    halted = 1
            elif sub < 5:  # S_ADD/ADDI/SUB/MUL/LUI_INT
                a = gp[f1 & 15]
                x = a + f2 if sub == 1 else a + gp[f2 & 15] if sub == 0 else a - gp[f2 & 15] if sub == 2 else \
                    a * gp[f2 & 15] if sub == 3 else f1 << 12
                gp[f0] = x if -0x80000000 <= x <= 0x7FFFFFFF else _w(x)  # (_w only where it wraps)
            else:  # S_LD_INT / S_ST_INT
                idx = _w(gp[f1 & 15] + f2)
                if not 0 <= idx < hw.intsram_size:
                    halted, fault, fault_pc, fault_detail = 1, M.F_OOB_INTSRAM, cur, idx
                elif sub == 5:
                    gp[f0] = _w(im[idx])
                else:
                    gp[0] = 0
                    im[idx] = gp[f0]
            if t_end > CYCLE_LIMIT and not fault:  # the interpreter's last check (machine._past_cycle_limit)
                halted, fault, fault_pc, fault_detail = 1, M.F_CYCLE_LIMIT, cur, t_end
            gp[0] = 0
            continue
        if cls == 5:  # M_MM (most data operations of a long kernel): in bounds and aligned, the path below inline
            am, av = gp[f0], gp[f1]
            tmm = sub == 1
            nr = B if tmm else L
            if 0 <= av <= mm_av_max and av % V == 0 and am >= 0 and am // L + nr <= mrows and (
                    am % L == 0 if tmm else am % B == 0):
                rv, mrow = av // V, am // L
                key = (mrow, nr)
                v = ms_ready_max.get(key)
                if v is None:
                    v = ms_ready_max[key] = int(ms_ready[mrow:mrow + nr].max())
                dep = max(0, max(vs_ready[rv:rv + B]), v)
                uf = unit_free[U_M]
                start = t_issue if t_issue > uf else uf
                if dep > start:
                    start = dep
                occ = occ_t[op]
                end, ready = start + occ, start + lat_t[op]
                t_issue = start + 1
                t_end = max(t_end, end, ready)
                unit_free[U_M] = end
                busy[U_M] += occ
                if t_end <= CYCLE_LIMIT:
                    ops.append((K_MM, steps, cur, acc_slot, rv, mrow, 0 if tmm else am % L, 1 if tmm else 0))
                else:
                    halted, fault, fault_pc, fault_detail = 1, M.F_CYCLE_LIMIT, cur, t_end
                acc_ready = ready
                t = start + mm_occ
                vs_read[rv:rv + B] = [t if x < t else x for x in vs_read[rv:rv + B]]
                if ms_read_pending.get(key, -1) < t:
                    ms_read_pending[key] = t
                continue
        checks: list = []
        # ---- dependencies and unit (the handler's _schedule arguments) ----
        unit, dep, occ, lat = U_S, 0, occ_t[op], lat_t[op]
        if cls == 2:  # SFP
            if sub <= 6:
                dep = max(fp_ready[f1 & 7], fp_ready[f2 & 7] if sub <= 3 else 0)
            elif sub == 8:
                dep = fp_ready[f0 & 7]
        elif cls == 3:  # VEC
            unit = U_V
            uses_b, uses_f = sub < 4, 4 <= sub <= 8
            ad, aa, ab = gp[f0], gp[f1], gp[f2 & 15]
            rd, ra, rb = clip(ad // V, 0, vrows), clip(aa // V, 0, vrows), clip(ab // V, 0, vrows)
            dep = max(vs_ready[ra], vs_ready[rb] if uses_b else 0, fp_ready[f2 & 7] if uses_f else 0,
                      vs_ready[rd], vs_read[rd])
        elif cls == 4:  # VRED
            unit = U_V
            aa = gp[f1]
            ra = clip(aa // V, 0, vrows)
            dep = max(vs_ready[ra], fp_ready[f0])
        elif cls == 5:  # MM
            unit = U_M
            am, av = gp[f0], gp[f1]
            rv = clip(av // V, 0, vrows)
            tmm = sub == 1
            mrow = clip(am // L, 0, mrows)
            nr = B if tmm else L
            dep = max(0, max(vs_ready[rv:rv + B]), ms_ready_of(mrow, nr))
        elif cls == 6:  # MV
            unit = U_M
            am, av = gp[f0], gp[f1]
            rv = clip(av // V, 0, vrows)
            mrow = clip(am // L, 0, mrows)
            dep = max(0, vs_ready[rv], ms_ready_of(mrow, L))
        elif cls == 7:  # WO
            unit = U_M
            mvwo = sub == 1
            addr = _w(gp[f0] + f1)
            row = clip(addr // V, 0, vrows)
            nr = 1 if mvwo else B
            dep = max(mv_ready if mvwo else acc_ready, 0, max(vs_ready[row:row + nr]), max(vs_read[row:row + nr]))
        elif cls == 8 or cls == 9:  # DMAV / DMAM
            unit = U_D
            width, nrow = (V, f4) if cls == 8 else (L, L)
            base = _w(ar[f2 & 7] + gp[f1])
            st_ = stride if f3 == 1 else width
            starts = [_w(base + r * st_) for r in range(R if cls == 8 else L)]
            live = starts[:nrow]
            lo, hi = min(live), max(live)
            okh = lo >= 0 and _w(hi + width) <= limit
            mis = [s for s in live if s % V != 0]
            bad = (mis[0] if mis else starts[0]) if okh else (lo if lo < 0 else hi)
            if cls == 8:
                av = gp[f0]
                rv = clip(av // V, 0, vrows)
                store = sub == 1
                d = max(vs_ready[rv:rv + nrow])
                if not store:
                    d = max(d, max(vs_read[rv:rv + nrow]))
                dep = max(0, d)
                occ = (2 * nrow * V + hw.hbm_bytes_per_cycle - 1) // hw.hbm_bytes_per_cycle
                lat = hw.hbm_latency + occ
                checks = [(av >= 0 and _w(av + nrow * V) <= vsize, M.F_OOB_VSRAM, av),
                          (av % V == 0, M.F_MISALIGNED, av), (okh, M.F_OOB_HBM, bad), (not mis, M.F_MISALIGNED, bad)]
            else:
                am = gp[f0]
                mrow = clip(am // L, 0, mrows)
                ms_read_flush()
                dep = max(0, ms_ready_of(mrow, L), int(ms_read[mrow:mrow + L].max()))
                checks = [(am >= 0 and mrow + L <= mrows, M.F_OOB_MSRAM, am), (am % L == 0, M.F_MISALIGNED, am),
                          (okh, M.F_OOB_HBM, bad), (not mis, M.F_MISALIGNED, bad)]
        # ---- _schedule ----
        uf = unit_free[unit]
        start = t_issue if t_issue > uf else uf
        if dep > start:
            start = dep
        end, ready = start + occ, start + lat
        t_issue = t_issue + 1 if unit == U_D else start + 1
        t_end = max(t_end, end, ready)
        unit_free[unit] = end
        busy[unit] += occ
        # ---- checks, effects, data operations (per handler) ----
        if cls == 2:
            idx = _w(gp[f1 & 15] + f2) if sub in (7, 8) else 0
            if sub in (7, 8):
                checks = [(0 <= idx < hw.fpsram_size, M.F_OOB_FPSRAM, idx)]
        elif cls == 3:
            okb = uses_b is False or (ab >= 0 and _w(ab + V) <= vsize)
            alb = uses_b is False or ab % V == 0
            checks = [(ad >= 0 and _w(ad + V) <= vsize, M.F_OOB_VSRAM, ad),
                      (aa >= 0 and _w(aa + V) <= vsize, M.F_OOB_VSRAM, aa),
                      (okb, M.F_OOB_VSRAM, ab), (ad % V == 0, M.F_MISALIGNED, ad), (aa % V == 0, M.F_MISALIGNED, aa),
                      (alb, M.F_MISALIGNED, ab)]
        elif cls == 4:
            checks = [(aa >= 0 and _w(aa + V) <= vsize, M.F_OOB_VSRAM, aa), (aa % V == 0, M.F_MISALIGNED, aa)]
        elif cls == 5:
            checks = [(av >= 0 and _w(av + B * V) <= vsize, M.F_OOB_VSRAM, av), (am >= 0 and mrow + nr <= mrows,
                      M.F_OOB_MSRAM, am), (av % V == 0, M.F_MISALIGNED, av),
                      ((am % L == 0) if tmm else (am % B == 0), M.F_MISALIGNED, am)]
        elif cls == 6:
            checks = [(av >= 0 and _w(av + V) <= vsize, M.F_OOB_VSRAM, av), (am >= 0 and mrow + L <= mrows,
                      M.F_OOB_MSRAM, am), (av % V == 0, M.F_MISALIGNED, av), (am % L == 0, M.F_MISALIGNED, am)]
        elif cls == 7:
            checks = [(addr >= 0 and addr // V + nr <= vrows, M.F_OOB_VSRAM, addr),
                      ((addr % V == 0) if mvwo else (addr % B == 0), M.F_MISALIGNED, addr)]
        ok = True
        for cond, code, detail in [*checks, (t_end <= CYCLE_LIMIT, M.F_CYCLE_LIMIT, t_end)]:  # the limit last
            if not cond:
                ok, halted, fault, fault_pc, fault_detail = False, 1, code, cur, detail
                break
        if cls == 2:
            if sub == 8:
                if ok:
                    ops.append((K_FST, steps, cur, idx, fps[f0 & 7]))
            elif ok:
                src1, src2 = fps[f1 & 7], fps[f2 & 7]
                slot = new_fp(f0)
                if sub == 7:
                    ops.append((K_FLD, steps, cur, slot, idx))
                else:
                    ops.append((K_SFP, steps, cur, slot, src1, src2, sub, f1))
                fp_ready[f0 & 7] = ready
        elif cls == 3:
            if ok:
                vs_ready[rd] = ready
                ops.append((K_VEC, steps, cur, rd, ra, rb, fps[f2 & 7], sub))
            vs_read[ra] = max(vs_read[ra], start + 1)
            if uses_b:
                vs_read[rb] = max(vs_read[rb], start + 1)
        elif cls == 4:
            if ok:
                src1 = fps[f0]
                ops.append((K_VRED, steps, cur, new_fp(f0), src1, ra, sub, int(f0 != 0)))
            fp_ready[f0] = ready
            vs_read[ra] = max(vs_read[ra], start + 1)
        elif cls == 5:
            if ok:
                ops.append((K_MM, steps, cur, acc_slot, rv, mrow, 0 if tmm else am % L, int(tmm)))
            acc_ready = ready
            t = start + mm_occ
            for r in range(rv, rv + B):
                if vs_read[r] < t:
                    vs_read[r] = t
            ms_read_note(mrow, nr, t)
        elif cls == 6:
            if ok:
                ops.append((K_MV, steps, cur, mv_slot, rv, mrow, sub))
            mv_ready = ready
            vs_read[rv] = max(vs_read[rv], start + mv_occ)
            ms_read_note(mrow, L, start + mv_occ)
        elif cls == 7:
            if mvwo:
                ops.append((K_WOMV, steps, cur, mv_slot, row, int(ok)))
                mv_slot, next_mv = next_mv % MV_SLOTS, next_mv + 1
            else:
                ops.append((K_WOMM, steps, cur, acc_slot, row, addr % V, int(ok)))
                acc_slot, next_acc = next_acc % ACC_SLOTS, next_acc + 1
            if ok:
                vs_ready[row:row + nr] = [ready] * nr
        elif cls == 8:
            if ok:
                srow = st_ // V if nrow > 1 else 0
                exotic |= base + (nrow - 1) * st_ != live[-1]  # a wrapped-around progression (oracle only)
                if store:  # rows are written in order: with STRIDE 0 only the last one lands
                    first, n_eff = (rv + nrow - 1, 1) if srow == 0 and nrow > 1 else (rv, nrow)
                    ops.append((K_STV, steps, cur, first, n_eff, base // V, srow))
                else:
                    vs_ready[rv:rv + nrow] = [ready] * nrow
                    ops.append((K_LDV, steps, cur, rv, nrow, base // V, srow))
            if store:
                for r in range(rv, rv + nrow):
                    if vs_read[r] < start + occ:
                        vs_read[r] = start + occ
        elif cls == 9 and ok:
            ms_ready[mrow:mrow + L] = ready
            ms_ready_max.clear()
            exotic |= base + (L - 1) * st_ != starts[-1]
            ops.append((K_LDM, steps, cur, mrow, base // V, st_ // V, 1))
    ms_read_flush()
    ctl = np.zeros(M.N_CTL, np.int32)
    ctl[[M.PC, M.STEPS, M.HALTED, M.FAULT, M.FAULT_PC, M.FAULT_DETAIL, M.T_ISSUE, M.T_END, M.STRIDE,
         M.ACC_READY, M.MV_READY]] = [pc, steps, halted, fault, fault_pc, fault_detail, t_issue, t_end, stride,
                                      acc_ready, mv_ready]
    i32 = np.int32
    if whole:
        rows = (np.array(vs_ready, i32), np.array(vs_read, i32), ms_ready.astype(i32), ms_read.astype(i32),
                np.array(im, i32))
    else:
        rows = (_EMPTY,) * 5
    return Trace(ctl, np.array(gp, i32), np.array(ar, i32), np.array(unit_free, i32), np.array(busy, i32),
                 np.array(counts, i32), np.array(fp_ready, i32), *rows, ops, acc_slot, mv_slot, tuple(fps), exotic)


_EMPTY = np.zeros(0, np.int32)  # a field a partial Trace or State (whole=False) does not hold
_EMPTY.flags.writeable = False


# ---- scheduling: dependency levels, then fixed-width groups ------------------------------------
class Dims(NamedTuple):
    """Row counts of the machine's memories as the data path holds them."""

    vs: int  # VSRAM rows (the interpreter's padded count)
    ms: int
    hbm: int  # HBM rows of VLEN elements
    fpm: int
    fp: int  # FP value slots (8 initial + FP_SLOTS)
    acc: int
    mv: int


def dims_of(hw: NPUConfig, H: int) -> Dims:
    kv = max(hw.BLEN, hw.v_prefetch_rows)
    return Dims(hw.vsram_rows + kv, hw.msram_rows + hw.MLEN, H // hw.VLEN, hw.fpsram_size, 8 + FP_SLOTS, ACC_SLOTS,
                MV_SLOTS)


# (field, memory) pairs per kind: which operand fields are rows, words or slots of which memory (Dims order:
# 0 vs, 1 ms, 2 hbm, 3 fpm, 4 fp, 5 acc, 6 mv), so a merged run can move program p's into its own range
_FIELD_SPACE = {K_SFP: ((0, 4), (1, 4), (2, 4)), K_FLD: ((0, 4), (1, 3)), K_FST: ((0, 3), (1, 4)),
                K_VEC: ((0, 0), (1, 0), (2, 0), (3, 4)), K_VRED: ((0, 4), (1, 4), (2, 0)),
                K_MM: ((0, 5), (1, 0), (2, 1)), K_MV: ((0, 6), (1, 0), (2, 1)), K_WOMM: ((0, 5), (1, 0)),
                K_WOMV: ((0, 6), (1, 0)), K_LDV: ((0, 0), (2, 2)), K_STV: ((0, 0), (2, 2)), K_LDM: ((0, 1), (1, 2))}
_SPACE = np.full((N_KINDS, N_FIELDS), len(Dims._fields), np.int64)  # kind, field -> memory (len: none)
for _k, _pairs in _FIELD_SPACE.items():
    for _f, _m in _pairs:
        _SPACE[_k, _f] = _m


class Groups(NamedTuple):
    kind: np.ndarray  # int32[G] (-1: padding)
    fields: np.ndarray  # int32[G, GROUP_WIDTH, N_FIELDS]
    seq: np.ndarray  # int32[G, GROUP_WIDTH]: dynamic step of each lane (NO_SEQ on padding)
    op_seq: np.ndarray  # int32[ops]: the dynamic step of each data operation, ascending
    op_pc: np.ndarray  # int32[ops]: its pc (for the first non-finite value's line)
    n: np.int32  # groups in use (the rest pad the bucket)


NO_SEQ = groups.NO_SEQ


class Levelled(NamedTuple):
    """Every data operation of one program with its dependency level, before packing into groups."""

    kinds: np.ndarray  # int32[ops]
    seqs: np.ndarray  # int32[ops]: dynamic step, ascending
    levels: np.ndarray  # int[ops]
    fields: np.ndarray  # int32[ops, N_FIELDS]
    pcs: np.ndarray  # int32[ops]


def schedule(ops: list, hw: NPUConfig, d: Dims) -> Groups:
    """The operations of one program levelled (:func:`levelled`) and packed into groups."""
    lv = levelled(ops, hw, d)
    g_kind, g_fields, g_seq, n_groups = groups.pack(lv.kinds, lv.seqs, lv.levels, lv.fields, lv.seqs, WIDTH, N_KINDS,
                                                    GROUP_WIDTH, chunk_size)
    return Groups(g_kind, g_fields, g_seq, lv.seqs, lv.pcs, np.int32(n_groups))


def levelled(ops: list, hw: NPUConfig, d: Dims) -> Levelled:
    """Level each data operation by its dependencies (read-after-write, write-after-write and
    write-after-read on rows, words and value slots), then pack each level's operations of one kind
    into groups of GROUP_WIDTH. Operations in one level touch disjoint state, so a group's lanes can
    gather, compute and scatter at once; levels run in order, so every value is the oracle's."""
    return Leveller(hw, d).level(ops)


class Leveller:
    """:func:`levelled` a part at a time: the parts of one program's operations, in order, get the levels one
    call on all of them would give (each part's levels continue from the state the parts before it left)."""

    def __init__(self, hw: NPUConfig, d: Dims):
        self.hw, self.d = hw, d
        o_m = d.vs + d.ms + d.hbm + d.fpm + d.fp + d.acc
        self.lw = [0] * (o_m + d.mv)  # level of the last write of each resource
        self.lr = [0] * (o_m + d.mv)  # highest level that read it
        # (first MSRAM resource, rows) -> highest write level, until the next tile load
        self.tile_write: dict = {}
        # (first MSRAM resource, rows) -> highest level that read it, folded into lr at a load
        self.tile_read: dict = {}
        self.tile = (0, 0)
        self.lw_full = [0] * d.vs  # VSRAM rows: level of the last whole-row write (lw: of any write, partial too)
        self.lw_blk: dict[int, int] = {}  # VSRAM (row, BLEN column block): level of the last M_MM_WO into it

    def level(self, ops: list) -> Levelled:
        """The next part of the program's operations, levelled."""
        hw, d = self.hw, self.d
        B, L = hw.BLEN, hw.MLEN
        o_ms = d.vs
        o_h = o_ms + d.ms
        o_f = o_h + d.hbm
        o_s = o_f + d.fpm
        o_a = o_s + d.fp
        o_m = o_a + d.acc
        lw, lr, tile_write, tile_read = self.lw, self.lr, self.tile_write, self.tile_read
        tile, lw_full, lw_blk = self.tile, self.lw_full, self.lw_blk
        levels = [0] * len(ops)
        nblk = hw.VLEN // B

        def rows(base: int, n: int, step: int) -> range:
            return range(o_h + base, o_h + base + n * step, step) if step else range(o_h + base, o_h + base + 1)

        for i, op in enumerate(ops):
            k = op[0]
            if k == K_MM:  # (most operations of a long kernel: the general path below, inline)
                a, s = o_a + op[3], op[4]
                tile = (o_ms + op[5], B if op[7] else L)
                lvl = tile_write.get(tile)
                if lvl is None:
                    lvl = tile_write[tile] = max(lw[tile[0]:tile[0] + tile[1]])
                lvl = max(lvl, lw[a], lr[a], *lw[s:s + B]) + 1
                levels[i] = lvl
                if tile_read.get(tile, 0) < lvl:
                    tile_read[tile] = lvl
                lr[a] = lw[a] = lvl
                for r in range(s, s + B):
                    if lr[r] < lvl:
                        lr[r] = lvl
                continue
            f = op[3:]
            if k == K_SFP:
                sub = f[3]
                rd = (o_s + f[1], o_s + f[2]) if sub <= 3 else (o_s + f[1],) if sub <= 6 else ()
                wr = (o_s + f[0],)
            elif k == K_FLD:
                rd, wr = (o_f + f[1],), (o_s + f[0],)
            elif k == K_FST:
                rd, wr = (o_s + f[1],), (o_f + f[0],)
            elif k == K_VEC:
                sub = f[4]
                rd = (f[1], f[2]) if sub < 4 else (f[1], o_s + f[3]) if sub <= 8 else (f[1],)
                wr = (f[0],)
            elif k == K_VRED:
                rd, wr = (o_s + f[1], f[2]), (o_s + f[0],)
            elif k == K_MM:
                rd, wr = (o_a + f[0], *range(f[1], f[1] + B)), (o_a + f[0],)
                tile = (o_ms + f[2], B if f[4] else L)
            elif k == K_MV:
                rd, wr = (o_m + f[0], f[1]), (o_m + f[0],)
                tile = (o_ms + f[2], L)
            elif k == K_WOMM:  # partial rows: ordered against whole-row writes, readers and its own column block
                rd, wr = (o_a + f[0],), (o_a + f[0],)
            elif k == K_WOMV:
                rd, wr = (o_m + f[0],), (o_m + f[0], f[1])
            elif k == K_LDV:
                rd, wr = rows(f[2], f[1], f[3]), range(f[0], f[0] + f[1])
            elif k == K_STV:
                rd, wr = range(f[0], f[0] + f[1]), rows(f[2], f[1], f[3])
            else:  # K_LDM
                rd, wr = rows(f[1], L, f[2]), range(o_ms + f[0], o_ms + f[0] + L)
                for (a, n), v in tile_read.items():  # the tile readers' levels, for this load's write-after-read
                    lr[a:a + n] = [x if x > v else v for x in lr[a:a + n]]
                tile_read.clear()
                tile_write.clear()
            lvl = 0
            if k in (K_MM, K_MV):  # MSRAM rows change only at tile loads: their write levels per block, cached
                lvl = tile_write.get(tile)
                if lvl is None:
                    lvl = tile_write[tile] = max(lw[tile[0]:tile[0] + tile[1]])
            for r in rd:
                if lw[r] > lvl:
                    lvl = lw[r]
            for r in wr:
                if lw[r] > lvl:
                    lvl = lw[r]
                if lr[r] > lvl:
                    lvl = lr[r]
            if k == K_WOMM:
                blocks = range(f[1] * nblk + f[2] // B, (f[1] + B) * nblk, nblk)
                for r in range(f[1], f[1] + B):
                    lvl = max(lvl, lw_full[r], lr[r])
                for c in blocks:
                    b = lw_blk.get(c, 0)
                    if b > lvl:
                        lvl = b
            lvl += 1
            levels[i] = lvl
            if k in (K_MM, K_MV) and tile_read.get(tile, 0) < lvl:
                tile_read[tile] = lvl
            for r in rd:
                if lr[r] < lvl:
                    lr[r] = lvl
            for r in wr:
                lw[r] = lvl
                if r < d.vs:
                    lw_full[r] = lvl
            if k == K_WOMM:
                for r in range(f[1], f[1] + B):
                    if lw[r] < lvl:
                        lw[r] = lvl
                for c in blocks:
                    lw_blk[c] = lvl
        self.tile = tile
        table = _table(ops)
        kinds, seqs, pcs, fields = table[:, 0].copy(), table[:, 1].copy(), table[:, 2].copy(), table[:, 3:].copy()
        return Levelled(kinds, seqs, np.asarray(levels), fields, pcs)


def _table(ops: list) -> np.ndarray:
    """The operations as int32[ops, 3 + N_FIELDS] (kind, seq, pc, fields; a kind's unused fields 0): one
    ``np.array`` per tuple length (an M_MM's 8, ...), which converts equal tuples faster than padding each one
    for ``np.fromiter`` (decoder_t5 C5's 583k operations: 0.36 s against 0.48-0.6 s)."""
    out = np.zeros((len(ops), 3 + N_FIELDS), np.int32)
    lens = np.fromiter(map(len, ops), np.int32, count=len(ops))
    for n in np.unique(lens).tolist():
        at = np.flatnonzero(lens == n)
        out[at, :n] = np.array(ops if len(at) == len(ops) else [ops[i] for i in at.tolist()], np.int32)
    return out


def chunk_size(n_groups: int) -> int:
    return SMALL_CHUNK if n_groups <= SMALL_CHUNK else GROUP_CHUNK


# ---- the data path in JAX ----------------------------------------------------------------------
class Data(NamedTuple):
    """The data state of one input set. VSRAM, MSRAM, HBM rows and the MV accumulators are all rows
    of VLEN (= MLEN) elements, kept in one buffer so that a group's writes are one scatter."""

    mem: jax.Array  # f32[rows + 1, VLEN]: VSRAM | MSRAM | HBM | MV slots | dump row
    fpm: jax.Array  # f32[fpm + 1]
    fp: jax.Array  # f32[fp + 1]
    acc: jax.Array  # f32[acc + 1, BLEN, BLEN]
    nan_seq: jax.Array  # int32: first step that produced a non-finite value (NO_SEQ if none)


class Writes(NamedTuple):
    """A group's writes, applied after the kind switch (XLA would copy a buffer a branch updates)."""

    r_i: jax.Array  # int32[CR]: whole rows of ``mem``
    r_v: jax.Array
    el_r: jax.Array  # int32[CE]: single elements of ``mem`` (M_MM_WO blocks)
    el_c: jax.Array
    el_v: jax.Array
    fp_i: jax.Array  # int32[W]: FP value slots
    fp_v: jax.Array
    fpm_i: jax.Array
    fpm_v: jax.Array
    acc_i: jax.Array  # int32[W]: accumulator slots
    acc_v: jax.Array
    nan: jax.Array  # int32: the group's first step with a non-finite value


_HI = lax.Precision.HIGHEST
_mm = jax.vmap(lambda a, b: jnp.matmul(a, b, precision=_HI))  # the interpreter's matmuls, one per lane


def _pick(sub: jax.Array, options: list) -> jax.Array:
    """``options[sub]`` per lane, as one fused select chain (the last option for any larger ``sub``)."""
    res = options[-1]
    for k in range(len(options) - 2, -1, -1):
        res = jnp.where(sub == k, options[k], res)
    return res


def _first_bad(bad: jax.Array, seq: jax.Array, f: jax.Array, programs: int) -> jax.Array:
    """The first step with a non-finite value: of the group (one program), or per program (``f[:, PROG]``)."""
    bad = bad.reshape(bad.shape[0], -1).any(axis=1)
    at = jnp.where(bad, seq, NO_SEQ)
    if programs == 1:
        return jnp.min(at)
    return jnp.full(programs, NO_SEQ, jnp.int32).at[f[:, PROG]].min(at)


class DataPath:
    """The data side of the NPU for one config: one branch per kind, each a whole group at once.
    Padding lanes (``seq == NO_SEQ``) read row 0 and write to the dump row/slot."""

    def __init__(self, hw: NPUConfig, d: Dims, programs: int = 1, private: int = 0):
        self.hw, self.d, self.programs = hw, d, programs  # d: of all ``programs`` together
        W, B, R, L = GROUP_WIDTH, hw.BLEN, hw.v_prefetch_rows, hw.MLEN
        if not private:  # one program: VSRAM | MSRAM | HBM, each row field relative to its memory
            self.o_ms = d.vs
            self.o_h = self.o_ms + d.ms
            self.o_mv = self.o_h + d.hbm
            self.h_hi = d.hbm - 1
        else:  # compact (run_many): the shared HBM image, then ``private`` rows; row fields are absolute rows
            self.o_ms = self.o_h = 0
            self.o_mv = d.hbm + private
            self.h_hi = self.o_mv - 1
        self.private = private
        self.dump = self.o_mv + d.mv
        self.cr = max(W * R, 2 * W, WIDTH[K_LDM] * L)
        self.ce = W * B * B

    def none(self) -> Writes:
        hw, d, W = self.hw, self.d, GROUP_WIDTH
        f32, i32 = jnp.float32, jnp.int32
        return Writes(
            r_i=jnp.full(self.cr, self.dump, i32), r_v=jnp.zeros((self.cr, hw.VLEN), f32),
            el_r=jnp.full(self.ce, self.dump, i32), el_c=jnp.zeros(self.ce, i32), el_v=jnp.zeros(self.ce, f32),
            fp_i=jnp.full(W, d.fp, i32), fp_v=jnp.zeros(W, f32), fpm_i=jnp.full(W, d.fpm, i32),
            fpm_v=jnp.zeros(W, f32), acc_i=jnp.full(W, d.acc, i32), acc_v=jnp.zeros((W, hw.BLEN, hw.BLEN), f32),
            nan=jnp.int32(NO_SEQ) if self.programs == 1 else jnp.full(self.programs, NO_SEQ, i32))

    def rows(self, idx: jax.Array, val: jax.Array, live: jax.Array) -> Writes:
        """Whole-row writes (``idx``: [...], ``val``: [..., VLEN]); dead ones go to the dump row."""
        idx = jnp.where(live, idx, self.dump).reshape(-1)
        val = val.reshape(-1, self.hw.VLEN)
        n = idx.shape[0]
        if n < self.cr:
            idx = jnp.concatenate([idx, jnp.full(self.cr - n, self.dump, idx.dtype)])
            val = jnp.concatenate([val, jnp.zeros((self.cr - n, val.shape[1]), val.dtype)])
        return self.none()._replace(r_i=idx, r_v=val)

    def b_sfp(self, st: Data, f: jax.Array, seq: jax.Array, on: jax.Array) -> Writes:
        x, y, sub = st.fp[f[:, 1]], st.fp[f[:, 2]], f[:, 3]
        li = lax.bitcast_convert_type(f[:, 4], jnp.float32)
        res = _pick(sub, [x + y, x - y, x * y, jnp.maximum(x, y), jnp.exp(x), 1.0 / x, jnp.sqrt(x), li, li, li])
        return self.none()._replace(fp_i=jnp.where(on, f[:, 0], self.d.fp), fp_v=res,
                                    nan=_first_bad(~jnp.isfinite(res), seq, f, self.programs))

    def b_fld(self, st: Data, f: jax.Array, seq: jax.Array, on: jax.Array) -> Writes:
        res = st.fpm[f[:, 1]]
        return self.none()._replace(fp_i=jnp.where(on, f[:, 0], self.d.fp), fp_v=res,
                                    nan=_first_bad(~jnp.isfinite(res), seq, f, self.programs))

    def b_fst(self, st: Data, f: jax.Array, seq: jax.Array, on: jax.Array) -> Writes:
        return self.none()._replace(fpm_i=jnp.where(on, f[:, 0], self.d.fpm), fpm_v=st.fp[f[:, 1]])

    def b_vec(self, st: Data, f: jax.Array, seq: jax.Array, on: jax.Array) -> Writes:
        a, b, s = st.mem[f[:, 1]], st.mem[f[:, 2]], st.fp[f[:, 3]][:, None]
        res = M.bf16(_pick(f[:, 4][:, None], [a + b, a - b, a * b, jnp.maximum(a, b), a + s, a - s, s - a, a * s,
                                              jnp.maximum(a, s), jnp.exp(a), 1.0 / a]))
        return self.rows(f[:, 0], res, on)._replace(nan=_first_bad(~jnp.isfinite(res), seq, f, self.programs))

    def b_vred(self, st: Data, f: jax.Array, seq: jax.Array, on: jax.Array) -> Writes:
        row, cur = st.mem[f[:, 2]], st.fp[f[:, 1]]
        res = jnp.where(f[:, 3] == 0, cur + jnp.sum(row, axis=1), jnp.maximum(cur, jnp.max(row, axis=1)))
        return self.none()._replace(fp_i=jnp.where(on, f[:, 0], self.d.fp), fp_v=res,
                                    nan=_first_bad(~jnp.isfinite(res) & (f[:, 4] == 1), seq, f, self.programs))

    def b_mm(self, st: Data, f: jax.Array, seq: jax.Array, on: jax.Array) -> Writes:
        B, L = self.hw.BLEN, self.hw.MLEN
        slot, rv, mrow, col, tmm = f[:, 0], f[:, 1], f[:, 2] + self.o_ms, f[:, 3], f[:, 4]
        window = jax.vmap(lambda r, c, shape: lax.dynamic_slice(st.mem, (r, c), shape), in_axes=(0, 0, None))
        v = window(rv, jnp.zeros_like(rv), (B, L))
        m_cols, m_rows = window(mrow, col, (L, B)), window(mrow, jnp.zeros_like(mrow), (B, L))
        prod = jnp.where((tmm == 1)[:, None, None], _mm(v, jnp.swapaxes(m_rows, 1, 2)), _mm(v, m_cols))
        return self.none()._replace(acc_i=jnp.where(on, slot, self.d.acc), acc_v=st.acc[slot] + prod)

    def b_mv(self, st: Data, f: jax.Array, seq: jax.Array, on: jax.Array) -> Writes:
        L = self.hw.MLEN
        slot, rv, mrow, sub = f[:, 0] + self.o_mv, f[:, 1], f[:, 2] + self.o_ms, f[:, 3]
        v, T = st.mem[rv], st.mem[mrow[:, None] + jnp.arange(L)]
        prod = jnp.where((sub == 1)[:, None], _mm(T, v), _mm(v, T))
        return self.rows(slot, st.mem[slot] + prod, on)

    def b_womm(self, st: Data, f: jax.Array, seq: jax.Array, on: jax.Array) -> Writes:
        B = self.hw.BLEN
        slot, row, col, ok = f[:, 0], f[:, 1], f[:, 2], (f[:, 3] == 1) & on
        blk = M.bf16(st.acc[slot])  # [W, B, B]
        rows = jnp.broadcast_to(jnp.where(ok[:, None, None], row[:, None, None] + jnp.arange(B)[None, :, None],
                                          self.dump), blk.shape)
        cols = jnp.broadcast_to(col[:, None, None] + jnp.arange(B)[None, None, :], blk.shape)
        return self.none()._replace(
            el_r=rows.reshape(-1), el_c=cols.reshape(-1), el_v=blk.reshape(-1),
            acc_i=jnp.where(on, slot, self.d.acc), acc_v=jnp.zeros_like(blk),
            nan=_first_bad(~jnp.isfinite(jnp.max(blk, axis=(1, 2))) & ok, seq, f, self.programs))

    def b_womv(self, st: Data, f: jax.Array, seq: jax.Array, on: jax.Array) -> Writes:
        slot, row, ok = f[:, 0] + self.o_mv, f[:, 1], (f[:, 2] == 1) & on
        m = M.bf16(st.mem[slot])
        w = self.rows(jnp.stack([row, slot], 1), jnp.stack([m, jnp.zeros_like(m)], 1), jnp.stack([ok, on], 1))
        return w._replace(nan=_first_bad(~jnp.isfinite(jnp.max(m, axis=1)) & ok, seq, f, self.programs))

    def b_ldv(self, st: Data, f: jax.Array, seq: jax.Array, on: jax.Array) -> Writes:
        r = jnp.arange(self.hw.v_prefetch_rows)
        rv, nrow, base, srow = f[:, 0], f[:, 1], f[:, 2], f[:, 3]
        live = (r[None, :] < nrow[:, None]) & on[:, None]
        loaded = st.mem[self.o_h + jnp.clip(base[:, None] + r * srow[:, None], 0, self.h_hi)]  # [W, R, V]
        w = self.rows(rv[:, None] + r, loaded, live)
        return w._replace(nan=_first_bad(~jnp.isfinite(loaded) & live[:, :, None], seq, f, self.programs))

    def b_stv(self, st: Data, f: jax.Array, seq: jax.Array, on: jax.Array) -> Writes:
        r = jnp.arange(self.hw.v_prefetch_rows)
        src, nrow, base, srow = f[:, 0], f[:, 1], f[:, 2], f[:, 3]
        live = (r[None, :] < nrow[:, None]) & on[:, None]
        return self.rows(self.o_h + base[:, None] + r * srow[:, None], st.mem[src[:, None] + r], live)

    def b_ldm(self, st: Data, f: jax.Array, seq: jax.Array, on: jax.Array) -> Writes:
        n = WIDTH[K_LDM]
        f, seq, on = f[:n], seq[:n], on[:n]
        r = jnp.arange(self.hw.MLEN)
        mrow, base, srow = f[:, 0] + self.o_ms, f[:, 1], f[:, 2]
        tile = st.mem[self.o_h + jnp.clip(base[:, None] + r * srow[:, None], 0, self.h_hi)]  # [n, L, L]
        w = self.rows(mrow[:, None] + r, tile, jnp.broadcast_to(on[:, None], (n, self.hw.MLEN)))
        return w._replace(nan=_first_bad(~jnp.isfinite(tile) & on[:, None, None], seq, f, self.programs))

    @staticmethod
    def apply(st: Data, w: Writes) -> Data:
        return Data(mem=st.mem.at[w.r_i].set(w.r_v).at[w.el_r, w.el_c].set(w.el_v),
                    fpm=st.fpm.at[w.fpm_i].set(w.fpm_v), fp=st.fp.at[w.fp_i].set(w.fp_v),
                    acc=st.acc.at[w.acc_i].set(w.acc_v), nan_seq=jnp.minimum(st.nan_seq, w.nan))

    def initial(self, hbm: jax.Array, fpm: jax.Array, src: jax.Array | None = None) -> Data:
        """The state before the first group: zero SRAMs, the HBM image (one input set). Merged (``src``: the
        HBM row each private row starts as, ``d.hbm`` for a zero row): the HBM image once, shared by every
        program, then the programs' private rows."""
        hw, d = self.hw, self.d
        f32 = jnp.float32
        V = hw.VLEN
        P = self.programs
        if not self.private:
            mem = jnp.concatenate([jnp.zeros((d.vs + d.ms, V), f32), hbm.reshape(d.hbm, V),
                                   jnp.zeros((d.mv + 1, V), f32)])
        else:
            rows = hbm.reshape(d.hbm, V)
            private = jnp.concatenate([rows, jnp.zeros((1, V), f32)])[src]
            mem = jnp.concatenate([rows, private, jnp.zeros((d.mv + 1, V), f32)])
        return Data(mem=mem, fpm=jnp.concatenate([jnp.tile(fpm, P), jnp.zeros(1, f32)]), fp=jnp.zeros(d.fp + 1, f32),
                    acc=jnp.zeros((d.acc + 1, hw.BLEN, hw.BLEN), f32),
                    nan_seq=jnp.int32(NO_SEQ) if P == 1 else jnp.full(P, NO_SEQ, jnp.int32))

    def run_chunk(self, st: Data, kinds: jax.Array, fields: jax.Array, seqs: jax.Array, n_groups: jax.Array) -> Data:
        """The first ``n_groups`` groups of a chunk, in order, on one input set."""
        branches = [self.b_sfp, self.b_fld, self.b_fst, self.b_vec, self.b_vred, self.b_mm, self.b_mv, self.b_womm,
                    self.b_womv, self.b_ldv, self.b_stv, self.b_ldm]
        assert len(branches) == N_KINDS

        def body(i: jax.Array, st: Data) -> Data:
            seq = seqs[i]
            w = lax.switch(jnp.maximum(kinds[i], 0), branches, st, fields[i], seq, seq != NO_SEQ)
            return self.apply(st, w)

        return lax.fori_loop(0, n_groups, body, st)  # a while loop: padding groups cost nothing


@functools.lru_cache(maxsize=16)
def data_runner(hw_json: str, H: int, programs: int = 1, private: int = 0):
    """``(initial, chunk)``: the jitted, input-set-``vmap``-ped data path for one config and HBM bucket
    (``private`` > 0: of ``programs`` programs at once in a compact memory of that many private rows,
    :func:`run_many`)."""
    enable_persistent_cache()
    hw = NPUConfig.model_validate_json(hw_json)
    d = dims_of(hw, H)
    if private:  # one HBM image, the SRAMs only as private rows (compact_rows)
        d = Dims(0, 0, d.hbm, *(programs * x for x in d[3:]))
    dp = DataPath(hw, d, programs, private)
    # the state is donated: each chunk updates the memories in place instead of copying them (MBs per call)
    initial = jax.vmap(dp.initial, in_axes=(0, None, None) if private else (0, None))
    return (jax.jit(initial),
            jax.jit(jax.vmap(dp.run_chunk, in_axes=(0, None, None, None, None)), donate_argnums=0))


def _entry_bytes(entry) -> int:
    if entry[1] is None:
        return 0  # the arrays of Groups and of the chunks sent (a streamed trace keeps only these)
    return sum(a.nbytes for a in entry[1][:5]) + sum(a.nbytes for part in entry[2] for a in part)


_TRACES = TraceCache(TRACE_CACHE_SIZE, TRACE_CACHE_BYTES, _entry_bytes)


@functools.lru_cache(maxsize=16)
def _config(hw_json: str) -> NPUConfig:
    return NPUConfig.model_validate_json(hw_json)


def traced(words: np.ndarray, hw: NPUConfig, hw_json: str, limit: int, max_steps: int, H: int,
           feed: _Feed | None = None):
    """(Trace, Groups, chunks) of a program, cached by program, config, HBM limit and bucket, and step
    budget; ``chunks``: the groups as device arrays, a chunk at a time (sent once, not per run). ``feed``:
    where the program is not cached and runs more than ``STREAM_ABOVE`` instructions, it is streamed
    (:func:`_streamed`): each part's chunks are handed to ``feed`` as they are sent, so a run of them overlaps
    the rest of the pre-pass (its groups then come back without their host arrays: the chunks hold them)."""
    words = np.ascontiguousarray(words, np.int32)
    key = (hashlib.sha1(words.tobytes()).hexdigest(), words.shape, hw_json, int(limit), int(max_steps), H)
    hit = _TRACES.get(key)
    if hit is not None:
        return hit
    with collector_paused():  # (``gc_pause``: its millions of tuples hold no cycles)
        if feed is not None and dynamic_count(words, STREAM_ABOVE) > STREAM_ABOVE:
            tr, groups, chunks = _streamed(words, hw, int(limit), int(max_steps), dims_of(hw, H), feed)
        else:
            tr = prepass(words, hw, int(limit), int(max_steps))
            groups = None if tr.exotic else schedule(tr.ops, hw, dims_of(hw, H))
            chunks = None if groups is None else _sent(groups, chunk_size(int(groups.n)))
    tr = tr._replace(ops=[])  # scheduled: the cache keeps only what a run needs
    _TRACES.put(key, (tr, groups, chunks))
    return tr, groups, chunks


def _sent(g: Groups, ch: int) -> list:
    """The groups on the device, ``ch`` to a chunk, each with its count of groups in use."""
    return jax.device_put([  # one call for every array: it costs per call
        (g.kind[c:c + ch], g.fields[c:c + ch], g.seq[c:c + ch], np.int32(min(ch, g.n - c)))
        for c in range(0, max(int(g.n), 1), ch)])


def _streamed(words: np.ndarray, hw: NPUConfig, limit: int, max_steps: int, d: Dims,
              feed: _Feed) -> tuple[Trace, Groups | None, list | None]:
    """A long program's pre-pass with its schedule made a part at a time (``prepass``'s ``sink``): each part
    levelled where the parts before it left off (``Leveller``: the levels of one call), packed into groups of
    its own, sent, and handed to ``feed``, whose asynchronous data-path calls then run on another core while
    the pre-pass goes on. A part's groups run after the parts before it, so every dependency holds (its levels
    only order it within the part): results bit for bit as :func:`traced`'s. An exotic program (left to the
    oracle) comes back without groups, whatever was fed."""
    feed.begin()
    lev = Leveller(hw, d)
    chunks: list = []
    seqs: list[np.ndarray] = []
    pcs: list[np.ndarray] = []
    n = 0

    def sink(ops: list) -> None:
        nonlocal n
        lv = lev.level(ops)
        g_kind, g_fields, g_seq, n_g = groups.pack(lv.kinds, lv.seqs, lv.levels, lv.fields, lv.seqs, WIDTH,
                                                   N_KINDS, GROUP_WIDTH, lambda _: GROUP_CHUNK)
        part = _sent(Groups(g_kind, g_fields, g_seq, lv.seqs, lv.pcs, np.int32(n_g)), GROUP_CHUNK)
        feed(part)
        chunks.extend(part)
        seqs.append(lv.seqs)
        pcs.append(lv.pcs)
        n += n_g

    tr = prepass(words, hw, limit, max_steps, sink=sink)
    if tr.exotic:
        return tr, None, None
    if tr.ops or not chunks:
        sink(tr.ops)
    return tr, Groups(_EMPTY, _EMPTY, _EMPTY, np.concatenate(seqs), np.concatenate(pcs), np.int32(n)), chunks


def _state(tr: Trace, data: Data, first: np.ndarray, p: int, d: Dims, op_seq: np.ndarray, op_pc: np.ndarray,
           vs: np.ndarray, ms: np.ndarray, hbm: np.ndarray, mv: np.ndarray, whole: bool = True) -> M.State:
    """Program ``p``'s final State from the data path's (host) state, its memories (``vs``, ``ms``, ``hbm``:
    [N, rows, VLEN], ``hbm`` flat; ``mv``: its MV accumulator's row) and the pre-pass's control side;
    ``first``: its first non-finite step per input set; ``d``: the dims of one program. ``whole=False``: only
    the fields a run's results read (``accelerator.Final``), the others empty."""
    N = data.mem.shape[0]

    def each(x: np.ndarray) -> np.ndarray:
        return np.broadcast_to(x, (N, *x.shape)).copy()

    hit = first != NO_SEQ
    nan_pc = np.full(N, -1, np.int32)
    if hit.any():
        nan_pc[hit] = op_pc[np.searchsorted(op_seq, first[hit])]
    zeros = np.zeros((N, 1), np.int32)
    prof = np.zeros((N, 1, M.N_PROF), np.int32)
    if not whole:
        return M.State(ctl=each(tr.ctl), counts=each(tr.counts), busy=each(tr.busy), nan_pc=nan_pc, hbm=hbm,
                       prof=prof, **{f: _EMPTY for f in M.State._fields if f not in Final._fields})
    return M.State(
        ctl=each(tr.ctl), gp=each(tr.gp), ar=each(tr.ar), unit_free=each(tr.unit_free), busy=each(tr.busy),
        counts=each(tr.counts), fp_ready=each(tr.fp_ready), vs_ready=each(tr.vs_ready), vs_read=each(tr.vs_read),
        ms_ready=each(tr.ms_ready), ms_read=each(tr.ms_read), im=each(tr.im),
        fp=np.asarray(data.fp)[:, [p * d.fp + s for s in tr.fp_slots]],
        acc=np.asarray(data.acc)[:, p * d.acc + tr.acc_slot], mv=mv, nan_pc=nan_pc, vs=vs, ms=ms, hbm=hbm,
        fpm=np.asarray(data.fpm)[:, p * d.fpm:(p + 1) * d.fpm], prof=prof, vsr_dma=zeros, vs_dma=zeros,
        ms_dma=zeros)


class Final(NamedTuple):
    """What a run's results read of the final :class:`machine.State` (``final_state``, ``read_region``, the
    profiler): fetched alone, the memories a kernel's results never read stay on the device."""

    ctl: Any
    counts: Any
    busy: Any
    nan_pc: Any
    hbm: Any
    prof: Any


def _union(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of the row ranges ``[lo, hi)`` (each non-empty) as disjoint ranges: their starts and ends,
    ascending (touching ranges are joined)."""
    if not len(lo):
        return lo, hi
    order = np.argsort(lo, kind="stable")
    lo, hi = lo[order], hi[order]
    reach = np.maximum.accumulate(hi)
    new = np.ones(len(lo), bool)
    new[1:] = lo[1:] > reach[:-1]
    at = np.flatnonzero(new)
    return lo[at], reach[np.r_[at[1:] - 1, len(lo) - 1]]


def _rows_of(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Every row of the disjoint ranges ``[starts, ends)``, in order."""
    sizes = ends - starts
    return np.repeat(starts - np.cumsum(sizes) + sizes, sizes) + np.arange(int(sizes.sum()))


def _remap(x: np.ndarray, starts: np.ndarray, dest: np.ndarray) -> np.ndarray:
    """Rows ``x`` (each inside one of the ranges starting at ``starts``) moved so that range ``c`` starts at
    ``dest[c]``; a row outside every range (an operand no lane uses) lands somewhere harmless."""
    if not len(starts):
        return np.zeros_like(x)
    c = np.clip(np.searchsorted(starts, x, "right") - 1, 0, len(starts) - 1)
    return dest[c] + x - starts[c]


class Compact(NamedTuple):
    """Programs merged into one compact memory (:func:`compact_rows`): their operand fields with every
    VSRAM, MSRAM and HBM row moved to a row of the merged memory, and where each private row came from."""

    fields: np.ndarray  # int64[ops, N_FIELDS]: the programs' Levelled.fields one after another, rows moved
    src: np.ndarray  # int32[rows]: the HBM row each private row starts as (d.hbm: a zero row)
    local: np.ndarray  # int64[rows]: each private row's SRAM row (VSRAM, then MSRAM after d.vs), or d.vs + d.ms
    #                    + 1 + its HBM row
    bounds: np.ndarray  # int64[programs, 4]: program p's private SRAM rows are [p, 0]..[p, 1], its HBM ones [p, 2]..
    hbm_rows: int  # the private rows that are HBM rows: the first ones (what a run's results read back)


@functools.lru_cache(maxsize=16)
def _reach_tables(B: int, L: int, R: int) -> tuple[np.ndarray, ...]:
    """Per kind, what the data path's branches touch: up to three SRAM reaches (operand field, MSRAM or not,
    rows; 0 rows: the DMA's row count, at most R) and one HBM reach (base field, rows as before, row-step
    field, written)."""
    sram = {K_VEC: ((0, 0, 1), (1, 0, 1), (2, 0, 1)), K_VRED: ((2, 0, 1),), K_MM: ((1, 0, B), (2, 1, L)),
            K_MV: ((1, 0, 1), (2, 1, L)), K_WOMM: ((1, 0, B),), K_WOMV: ((1, 0, 1),), K_LDV: ((0, 0, 0),),
            K_STV: ((0, 0, 0),), K_LDM: ((0, 1, L),)}
    hbm = {K_LDV: (2, 0, 3, False), K_STV: (2, 0, 3, True), K_LDM: (1, L, 2, False)}
    s_field = np.full((N_KINDS, 3), -1, np.int64)
    s_ms, s_rows = np.zeros((N_KINDS, 3), np.int64), np.zeros((N_KINDS, 3), np.int64)
    for kind, reaches in sram.items():
        for j, (field, ms, rows) in enumerate(reaches):
            s_field[kind, j], s_ms[kind, j], s_rows[kind, j] = field, ms, rows
    h_field, h_rows = np.full(N_KINDS, -1, np.int64), np.zeros(N_KINDS, np.int64)
    h_step, h_written = np.zeros(N_KINDS, np.int64), np.zeros(N_KINDS, bool)
    for kind, (field, rows, step, written) in hbm.items():
        h_field[kind], h_rows[kind], h_step[kind], h_written[kind] = field, rows, step, written
    return s_field, s_ms, s_rows, h_field, h_rows, h_step, h_written


def compact_rows(lvs: list[Levelled], hw: NPUConfig, d: Dims) -> Compact:
    """The programs ``lvs`` moved into one compact memory: after the HBM image (rows ``0..d.hbm``, shared:
    every HBM row a program only reads stays there), each program's private rows, in order: the VSRAM and
    MSRAM rows it touches (the reach of every gather, window and scatter of the data path, so each block
    stays contiguous), then its own copy of the HBM rows it writes (every range of HBM it reads or writes
    that holds a written row: a strided DMA's whole span). Untouched memory is never read, and every touched
    row starts as it would alone (zero SRAM, the input HBM), so the results are the same. One pass over the
    operations of all programs (the numpy calls are shared by the batch)."""
    s_field, s_ms, s_rows, h_field, h_rows, h_step, h_written = _reach_tables(hw.BLEN, hw.MLEN, hw.v_prefetch_rows)
    P = len(lvs)
    k = np.concatenate([lv.kinds for lv in lvs])
    fields = np.concatenate([lv.fields for lv in lvs])
    f = fields.astype(np.int64)
    h_off = d.vs + d.ms + 1  # a program's HBM rows as keys past its SRAM ones, its next program's past a gap
    key = np.repeat(np.arange(P, dtype=np.int64) * (h_off + d.hbm + 1), [len(lv.kinds) for lv in lvs])
    n_dma = np.clip(f[:, 1], 0, hw.v_prefetch_rows)  # rows an H_PREFETCH_V / H_STORE_V moves (its lanes)
    ops = np.arange(len(k))[:, None]
    # SRAM reaches: MSRAM rows follow the d.vs VSRAM rows
    field = s_field[k]
    lo = f[ops, np.maximum(field, 0)] + s_ms[k] * d.vs + key[:, None]
    n = np.where(s_rows[k] > 0, s_rows[k], n_dma[:, None])
    m = (field >= 0) & (n > 0)
    # HBM reaches: a strided DMA's whole span, from its lowest row
    hm = np.flatnonzero(h_field[k] >= 0)
    kh, fh = k[hm], f[hm]
    count = np.where(h_rows[kh] > 0, h_rows[kh], n_dma[hm])
    span = (count - 1) * fh[np.arange(len(hm)), h_step[kh]]
    first = fh[np.arange(len(hm)), h_field[kh]] + key[hm] + h_off
    live = count > 0
    h_lo, h_hi = (first + np.minimum(span, 0))[live], (first + np.maximum(span, 0) + 1)[live]
    starts, ends = _union(np.concatenate([lo[m], h_lo]), np.concatenate([lo[m] + n[m], h_hi]))
    period = h_off + d.hbm + 1
    sram = starts % period < h_off
    written = np.zeros(len(starts), bool)  # an HBM range with a written row is its program's own copy
    written[np.searchsorted(starts, h_lo[h_written[kh][live]], "right") - 1] = True
    size_h = np.where(written, ends - starts, 0)
    size_s = np.where(sram, ends - starts, 0)
    n_h = int(size_h.sum())
    dest = np.where(written, d.hbm + np.cumsum(size_h) - size_h,  # own HBM rows first, then the SRAM rows
                    np.where(sram, d.hbm + n_h + np.cumsum(size_s) - size_s, starts % period - h_off))  # only read:
    space = _SPACE[k]                                                                          # the shared image
    rows = space <= 2
    moved = f + key[:, None] + np.where(space == 1, d.vs, np.where(space == 2, h_off, 0))
    fields = f.copy()
    fields[rows] = _remap(moved[rows], starts, dest)
    keys_h, keys_s = _rows_of(starts[written], ends[written]), _rows_of(starts[sram], ends[sram])
    local = np.concatenate([keys_h, keys_s]) % period
    edges = np.arange(P, dtype=np.int64)[:, None] * period + np.array([0, period])
    return Compact(fields, np.concatenate([local[:n_h] - h_off, np.full(len(keys_s), d.hbm)]).astype(np.int32),
                   local, np.concatenate([n_h + np.searchsorted(keys_s, edges), np.searchsorted(keys_h, edges)], 1),
                   n_h)


def run(hw_json: str, words: np.ndarray, hbm: np.ndarray, fpm: np.ndarray, limit, max_steps) -> M.State | None:
    """The interpreter's final State (as numpy, batched over input sets), or None for the rare program
    the data path leaves to the oracle. Profiling counters are not kept (``prof`` as unprofiled)."""
    hw = _config(hw_json)
    hbm, fpm = on_device(hbm), on_device(fpm)
    N, H = hbm.shape
    feed = _Feed(hw_json, H, hbm, fpm)
    tr, groups, chunks = traced(words, hw, hw_json, int(limit), int(max_steps), H, feed)
    if groups is None:
        return None
    if feed.data is not None or feed.pending:
        data = feed.finish()
    else:
        initial, chunk = data_runner(hw_json, H)
        data = initial(hbm, fpm)
        for part in chunks:
            data = chunk(data, *part)
    data = jax.device_get(data)
    d = dims_of(hw, H)
    mem = np.asarray(data.mem)
    o_h = d.vs + d.ms
    return _state(tr, data, np.asarray(data.nan_seq), 0, d, groups.op_seq, groups.op_pc, mem[:, :d.vs],
                  mem[:, d.vs:o_h], mem[:, o_h:o_h + d.hbm].reshape(N, H), mem[:, o_h + d.hbm + tr.mv_slot])


class _Feed:
    """A run's data path fed by a streamed pre-pass (``_streamed``): ``begin`` starts compiling its functions
    for this run's shapes on the background thread (``compile_ahead``), each part's chunks are queued until
    that is done and then dispatched (asynchronously: they run while the pre-pass goes on), ``finish`` sends
    the rest and returns the final state."""

    def __init__(self, hw_json: str, H: int, hbm: jax.Array, fpm: jax.Array):
        self.hw_json, self.H, self.hbm, self.fpm = hw_json, H, hbm, fpm
        self.compiled: Future | None = None
        self.data: Any = None
        self.pending: list = []

    def begin(self) -> None:
        key = ("npu", self.hw_json, self.H, self.hbm.shape, self.fpm.shape, GROUP_CHUNK)
        shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in (self.hbm, self.fpm)]
        self.compiled = compile_ahead.ahead(key, functools.partial(_compile_data_path, self.hw_json, self.H, *shapes))

    def __call__(self, part: list) -> None:
        self.pending.extend(part)
        if self.data is None and (self.compiled is None or self.compiled.done()):
            self._start()
        if self.data is not None:
            self._dispatch()

    def _start(self) -> None:
        if self.compiled is not None:
            compile_ahead.wait(self.compiled)
        self.data = data_runner(self.hw_json, self.H)[0](self.hbm, self.fpm)

    def _dispatch(self) -> None:
        chunk = data_runner(self.hw_json, self.H)[1]
        for g in self.pending:
            self.data = chunk(self.data, *g)
        self.pending.clear()

    def finish(self) -> Any:
        if self.data is None:
            self._start()
        self._dispatch()
        return self.data


def _compile_data_path(hw_json: str, H: int, hbm: jax.ShapeDtypeStruct, fpm: jax.ShapeDtypeStruct) -> None:
    """``data_runner``'s functions compiled for a run on these images with GROUP_CHUNK chunks (``_Feed``)."""
    initial, chunk = data_runner(hw_json, H)
    initial.lower(hbm, fpm).compile()
    i32 = jnp.int32
    chunk.lower(jax.eval_shape(initial, hbm, fpm), jax.ShapeDtypeStruct((GROUP_CHUNK,), i32),
                jax.ShapeDtypeStruct((GROUP_CHUNK, GROUP_WIDTH, N_FIELDS), i32),
                jax.ShapeDtypeStruct((GROUP_CHUNK, GROUP_WIDTH), i32), jax.ShapeDtypeStruct((), i32)).compile()


def _bucket_rows(n: int) -> int:
    """The rows a merged call holds for ``n``: at least MERGE_MIN_ROWS, rounded up to a quarter octave (1, 1.25,
    1.5 or 1.75 times a power of two: a few compiles per config, at most a quarter of the state unused)."""
    if n <= MERGE_MIN_ROWS:
        return MERGE_MIN_ROWS
    step = 1 << max((n - 1).bit_length() - 3, 0)
    return -(-n // step) * step


def run_many(hw_json: str, programs: list[np.ndarray], hbm: np.ndarray, fpm: np.ndarray, limit,
             max_steps, whole: bool = True) -> list[M.State | None]:
    """The final State of each program on the same input sets, as :func:`run` gives it, bit for bit, from
    one data-path call per ``MERGE_PROGRAMS`` programs (fewer where their rows pass ``MERGE_ROWS``): each
    program's operations are levelled on their own and moved into their own compact rows
    (:func:`compact_rows`), so the programs' levels run together (the call's depth is the deepest program's,
    not the sum) on a memory that holds only what they touch. None: a program :func:`run` leaves to the
    oracle. Nothing is cached: each program is assumed new (batch scoring of distinct kernels).
    ``whole=False``: only what a run's results read (``accelerator.Final``) is filled in, and HBM only up to
    the rows the data path holds (past the limit nothing can have changed); VSRAM and MSRAM come back empty,
    which spares copying memories no result reads."""
    hw = _config(hw_json)
    hbm = np.asarray(hbm, np.float32)
    N, H = hbm.shape
    V = hw.VLEN
    # no operation reaches past the HBM limit (the pre-pass faults first), so the data path holds only the HBM
    # rows below it (a power of two: few compiles), and the rest comes back as it went in
    Hs = min(H, 1 << max(int(limit) - 1, V - 1).bit_length())
    hbm_d, fpm_d = on_device(hbm[:, :Hs]), on_device(fpm)
    d = dims_of(hw, Hs)
    P = MERGE_PROGRAMS
    sizes = np.array([0, 0, 0, *d[3:], 0], np.int64)  # per-program offsets of the other spaces (FP, acc, MV)
    out: list[M.State | None] = [None] * len(programs)
    todo = iter(range(len(programs)))
    ahead: list[tuple[int, Trace, Levelled]] = []  # pre-passed and levelled, not yet run
    while True:
        for i in todo:
            tr = prepass(np.ascontiguousarray(programs[i], np.int32), hw, int(limit), int(max_steps), whole)
            if not tr.exotic:
                ahead.append((i, tr._replace(ops=[]), levelled(tr.ops, hw, d)))
            if len(ahead) == P:
                break
        if not ahead:
            break
        c = compact_rows([lv for _, _, lv in ahead], hw, d)
        rows = np.cumsum(c.bounds[:, 1] - c.bounds[:, 0] + c.bounds[:, 3] - c.bounds[:, 2])
        if rows[-1] > MERGE_ROWS and len(ahead) > 1:  # too many rows for one call: the first programs that fit
            take = max(1, int(np.searchsorted(rows, MERGE_ROWS, "right")))
            c = compact_rows([lv for _, _, lv in ahead[:take]], hw, d)
        else:
            take = len(ahead)
        part, ahead = ahead[:take], ahead[take:]
        src = np.full(_bucket_rows(len(c.src)), d.hbm, np.int32)  # past the programs' rows: zero rows
        src[:len(c.src)] = c.src
        kinds = np.concatenate([lv.kinds for _, _, lv in part])
        fields = c.fields + np.repeat(np.arange(len(part)), [len(lv.kinds) for _, _, lv in part])[:, None] * \
            sizes[_SPACE[kinds]]
        fields[:, PROG] = np.repeat(np.arange(len(part), dtype=np.int32), [len(lv.kinds) for _, _, lv in part])
        seqs = np.concatenate([lv.seqs for _, _, lv in part])
        order = np.concatenate([lv.seqs.astype(np.int64) + (p << 32) for p, (_, _, lv) in enumerate(part)])
        levels = np.concatenate([lv.levels for _, _, lv in part])
        g_kind, g_fields, g_seq, n_groups = groups.pack(kinds, order, levels, fields, seqs, WIDTH, N_KINDS,
                                                        GROUP_WIDTH, chunk_size)
        ch = chunk_size(n_groups)
        chunks = jax.device_put([(g_kind[c:c + ch], g_fields[c:c + ch], g_seq[c:c + ch],
                                  np.int32(min(ch, n_groups - c))) for c in range(0, max(n_groups, 1), ch)])
        initial, chunk = data_runner(hw_json, Hs, P, len(src))
        data = initial(hbm_d, fpm_d, src)
        for g in chunks:
            data = chunk(data, *g)
        h_off = d.vs + d.ms + 1
        data = jax.device_get(data)  # (on the CPU: no copy)
        mem = np.asarray(data.mem)[:, d.hbm:]  # the private rows
        first = np.asarray(data.nan_seq).reshape(N, -1)  # per input set and program
        below = -(-int(limit) // V) * V  # whole=False: the HBM rows up to the limit (every region a result reads)
        for p, (i, tr, lv) in enumerate(part):
            a, b, g, e = (int(x) for x in c.bounds[p])
            image = hbm.copy() if whole else hbm[:, :below].copy()
            image.reshape(N, -1, V)[:, c.local[g:e] - h_off] = mem[:, g:e]
            if whole:
                sram = np.zeros((N, d.vs + d.ms, V), np.float32)
                sram[:, c.local[a:b]] = mem[:, a:b]
                out[i] = _state(tr, data, first[:, p], p, d, lv.seqs, lv.pcs, sram[:, :d.vs], sram[:, d.vs:],
                                image, mem[:, len(src) + p * d.mv + tr.mv_slot])
            else:
                out[i] = _state(tr, data, first[:, p], p, d, lv.seqs, lv.pcs, _EMPTY, _EMPTY, image, _EMPTY,
                                whole)
    return out


SIM_ENV = "KCGYM_SIM"  # KCGYM_SIM=oracle: every program on the interpreter; =trace: none (tests, benchmarks)
# Programs of at most this many dynamic instructions (``dynamic_count``) run on the interpreter: there the
# trace path's fixed cost per distinct program (pre-pass, schedule, sending the groups, two jitted calls)
# exceeds what it saves. A simulator tuning constant, not a budget: both paths give the same results.
# From ``python benchmarks/bench_speed.py --crossover`` (benchmarks/results/speed_crossover.jsonl, its
# "choice" row: the threshold that minimises the summed CPU time of distinct kernels over its rows).
ORACLE_MAX_INSTRUCTIONS = 194
# Programs per data-path call of run_many (one compile per config, HBM bucket and private-row bucket). From
# ``python benchmarks/bench_scoring.py --merge`` (scoring_merge.jsonl): with compact memories (compact_rows) the
# cost per kernel falls up to 16 programs a call on the C1 and C2 kernels and is flat to 64 (matmul C3: from 8
# to 32); a chunk of 32 halves the calls of 16 for the batch scorer's larger batches.
MERGE_PROGRAMS = 32
# ... and at most this many private rows (compact_rows) in one call: the merged state stays small
MERGE_ROWS = 16384
MERGE_MIN_ROWS = 256  # the smallest private-row bucket (rows round up to a quarter octave: few compiles)
# In a batch (run_batch), programs of at most this many dynamic instructions are merged; longer ones run
# alone, where their own levels fill the groups. A tuning constant: every path gives the same results.
# From ``python benchmarks/bench_scoring.py --merge`` (scoring_merge.jsonl): with compact memories merging
# saves per kernel on matmul C3 too (2.4K instructions), so the threshold sits above it (larger kernels are
# not measured merged: they run alone).
MERGE_MAX_INSTRUCTIONS = 4096


def sim_mode() -> str:
    """``oracle``, ``trace`` or ``auto`` (the default: by program size, see ``ORACLE_MAX_INSTRUCTIONS``)."""
    mode = os.environ.get(SIM_ENV, "").strip().lower()
    return mode if mode in ("oracle", "trace") else "auto"


def use_oracle() -> bool:
    return sim_mode() == "oracle"


@functools.lru_cache(maxsize=1)
def _ctrl_ids() -> tuple[int, int, int, int]:
    isa = make_isa(NPUConfig())
    return (isa.class_ids["CTRL"], isa.sub_ids["C_LOOP_START"], isa.sub_ids["C_LOOP_END"], isa.sub_ids["C_HALT"])


def dynamic_count(words: np.ndarray, stop: int) -> int:
    """The instructions a program executes, read off its hardware loops (a body runs C_LOOP_START's
    count times, nested) up to its first C_HALT; counting ends once past ``stop``. Exact while loop
    counters are left alone in their bodies (as the ISA asks), an estimate otherwise; a program without
    a halt runs into the step budget (``stop + 1``). Cost: one pass over the control instructions."""
    words = np.asarray(words)
    ctrl, start, end, halt = _ctrl_ids()
    subs = words[:, 2]
    at = np.flatnonzero((words[:, 1] == ctrl) & ((subs == start) | (subs == end) | (subs == halt)))
    total, mult, prev, counts = 0, 1, 0, []
    for pc, sub, imm in zip(at.tolist(), subs[at].tolist(), words[at, 4].tolist(), strict=True):
        total += (pc - prev + 1) * mult  # the straight run before it, and itself
        if sub == halt or total > stop:
            return total
        if sub == start:
            counts.append(max(imm, 1))
            mult *= counts[-1]
        elif counts:
            mult //= counts.pop()
        prev = pc + 1
    return stop + 1


@functools.lru_cache(maxsize=64)
def batched_runner(hw_json: str, profile: bool = False):
    """``(machine, runner)``: ``runner(words, hbm, fpm, hbm_limit, max_steps)`` returns the final State
    batched over input sets, the same as :func:`oracle_runner`'s bit for bit. The trace-ahead path
    (``trace.py``) unless profiling, ``KCGYM_SIM=oracle``, or a program of at most
    ``ORACLE_MAX_INSTRUCTIONS`` instructions (the interpreter is faster there; it runs with that many
    steps at most, and a program that has not halted by then -- its loop count was an estimate -- goes
    on to the trace path)."""
    machine, oracle = M.oracle_runner(hw_json, profile)
    if profile:
        return machine, oracle

    def runner(words, hbm, fpm, hbm_limit, max_steps):
        hbm, fpm = on_device(hbm), on_device(fpm)
        mode = sim_mode()
        if mode == "oracle":
            return oracle(words, hbm, fpm, hbm_limit, max_steps)
        if mode == "auto" and dynamic_count(words, ORACLE_MAX_INSTRUCTIONS) <= ORACLE_MAX_INSTRUCTIONS:
            steps = min(int(max_steps), ORACLE_MAX_INSTRUCTIONS)
            st = oracle(words, hbm, fpm, hbm_limit, np.int32(steps))
            if steps == int(max_steps) or np.asarray(st.ctl)[0, M.HALTED]:
                return st
        st = run(hw_json, words, hbm, fpm, hbm_limit, max_steps)
        return oracle(words, hbm, fpm, hbm_limit, max_steps) if st is None else st

    return machine, runner


def run_batch(hw_json: str, programs: list[np.ndarray], hbm: np.ndarray, fpm: np.ndarray, limit,
              max_steps, whole: bool = True) -> list[M.State]:
    """The final State of each program on the same input sets, bit for bit what :func:`batched_runner`'s
    runner gives it alone: programs of at most ``MERGE_MAX_INSTRUCTIONS`` instructions through
    :func:`run_many` (unless ``KCGYM_SIM=oracle``; ``whole`` as there), the rest (and what it leaves to the
    oracle) one by one."""
    runner = batched_runner(hw_json)[1]
    out: list = [None] * len(programs)
    small = [] if sim_mode() == "oracle" or len(programs) < 2 else [
        i for i, w in enumerate(programs) if dynamic_count(w, MERGE_MAX_INSTRUCTIONS) <= MERGE_MAX_INSTRUCTIONS]
    if len(small) > 1:
        merged = run_many(hw_json, [programs[i] for i in small], hbm, fpm, limit, max_steps, whole)
        for i, st in zip(small, merged, strict=True):
            out[i] = st
    for i, w in enumerate(programs):
        if out[i] is None:
            out[i] = jax.device_get(runner(w, on_device(hbm), on_device(fpm), limit, max_steps))
    return out
