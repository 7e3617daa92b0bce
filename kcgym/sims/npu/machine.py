"""The NPU in JAX: machine state, a one-step interpreter and the batched runner.

One jitted interpreter runs any program: ``lax.while_loop`` over steps, ``lax.switch`` over
the ten opcode classes. Semantics and the scoreboard timing model are computed in the same
handler, so they cannot disagree. Control state (PC, integer and address registers, loop
counters, timing) never depends on tensor data, so under ``vmap`` over input sets it stays
unbatched and the switch remains a real branch; only memories and FP registers are batched.

Timing: in-order issue, one instruction per cycle. Each op starts at
``max(issue, unit free, sources ready, destinations' last read and ready)``; it keeps its
unit busy for its occupancy and its result is ready after its latency. DMA is queued, so
the front end does not wait for it; readers of prefetched rows wait instead. Rows are
tracked with ready/last-read times (VSRAM and MSRAM rows), FP registers and the two
accumulators with ready times, so prefetch-ahead and double buffering pay.

This interpreter is the reference semantics. Simulation normally takes the trace-ahead path
(``trace.py``: the control side once per program in Python, then only the data path in JAX),
which ``trace.batched_runner`` selects and ``tests/sims/npu/test_trace_differential.py`` holds to
this interpreter bit for bit; profiling and ``KCGYM_SIM=oracle`` run here.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from kcgym.limits import CYCLE_LIMIT
from kcgym.sims import interpreter
from kcgym.sims.interpreter import bf16, bucket  # noqa: F401  (bucket: tests and benchmarks use M.bucket)
from kcgym.sims.npu.config import NPUConfig
from kcgym.sims.npu.isa import CLASSES, UNITS, make_isa

UNSET = -(1 << 30)  # a-registers and STRIDE start here: using one before setting it faults OOB_HBM
FAULT_NAMES = ("NONE", "OOB_VSRAM", "OOB_MSRAM", "OOB_HBM", "OOB_FPSRAM", "OOB_INTSRAM", "MISALIGNED",
               "STEP_BUDGET", "CYCLE_LIMIT")
F_OOB_VSRAM, F_OOB_MSRAM, F_OOB_HBM, F_OOB_FPSRAM, F_OOB_INTSRAM, F_MISALIGNED, F_STEP_BUDGET, F_CYCLE_LIMIT = \
    range(1, 9)

# indices into State.ctl (packed: a loop carry with many scalar leaves is slow on XLA:CPU)
PC, STEPS, HALTED, FAULT, FAULT_PC, FAULT_DETAIL, T_ISSUE, T_END, STRIDE, ACC_READY, MV_READY = range(11)
N_CTL = 11
# Instructions interpreted per while-loop iteration: the loop's own overhead per iteration is a large
# share of a step on XLA:CPU, and two steps per iteration simulate ~1.5x faster (measured on the
# composite tasks) for a slightly longer compile; later steps of an iteration are no-ops once halted.
STEPS_PER_ITERATION = 2
U_SCALAR, U_VECTOR, U_MATRIX, U_DMA = (UNITS.index(u) for u in ("SCALAR", "VECTOR", "MATRIX", "DMA"))
# the unit each class's handler schedules on (see the ``_schedule`` calls of the handlers)
CLASS_UNIT = (U_SCALAR, U_SCALAR, U_SCALAR, U_VECTOR, U_VECTOR, U_MATRIX, U_MATRIX, U_MATRIX, U_DMA, U_DMA)
# profiling (``Machine(hw, profile=True)``): per-instruction columns of State.prof. An instruction's
# front-end time is its start - issue + 1 (a DMA: 1); the wait splits, in this order, into its unit
# still busy, rows a DMA is filling (prefetch) or reading (H_STORE_V), and the rest of its operands
# (result latency of registers, rows, accumulators), so all rows sum to T_ISSUE. The DMA part is the
# handler's own start recomputed on shadow ready times that hold only what DMAs set.
PROFILE_STALLS = ("unit busy", "DMA (prefetch filling / store reading the rows)", "result latency")
P_EXEC, P_ISSUE = 0, 1
N_PROF = 2 + len(PROFILE_STALLS)


class State(NamedTuple):
    """Machine state. Memories (``vs ms hbm fpm``) are only ever updated outside the class switch:
    XLA copies a buffer that a conditional branch updates in place, which would cost a full
    memory copy per instruction."""

    ctl: jax.Array  # int32[N_CTL]
    gp: jax.Array  # int32[16]
    ar: jax.Array  # int32[8]
    unit_free: jax.Array  # int32[units]
    busy: jax.Array  # int32[units]
    counts: jax.Array  # int32[classes]
    fp_ready: jax.Array  # int32[8]
    vs_ready: jax.Array  # int32[vsram rows + pad]
    vs_read: jax.Array
    ms_ready: jax.Array  # int32[msram rows + pad]
    ms_read: jax.Array
    im: jax.Array  # int32[intsram]
    fp: jax.Array  # f32[8]                      (batched)
    acc: jax.Array  # f32[BLEN, BLEN]            (batched)
    mv: jax.Array  # f32[MLEN]                   (batched)
    nan_pc: jax.Array  # int32: first pc that produced a non-finite value, -1 if none (batched)
    vs: jax.Array  # f32[vsram rows + pad, VLEN] (batched)
    ms: jax.Array  # f32[msram rows + pad, MLEN] (batched)
    hbm: jax.Array  # f32[H]                     (batched)
    fpm: jax.Array  # f32[fpsram]                (batched once written from data)
    prof: jax.Array  # int32[n_pc, N_PROF] when profiling (executions, issue, stalls), else int32[1, N_PROF]
    vs_dma: jax.Array  # profiling: vs_ready where a DMA set it, else 0 (int32[1] otherwise)
    vsr_dma: jax.Array  # profiling: vs_read where a H_STORE_V set it, else 0
    ms_dma: jax.Array  # profiling: ms_ready where a H_PREFETCH_M set it, else 0


class Writes(NamedTuple):
    """The memory writes one instruction makes, applied after the switch (see State)."""

    vs_row: jax.Array  # int32: first VSRAM row of the block
    vs_data: jax.Array  # f32[K, VLEN]
    vs_mask: jax.Array  # bool[K, VLEN]
    ms_row: jax.Array  # int32
    ms_data: jax.Array  # f32[MLEN, MLEN]
    ms_on: jax.Array  # bool
    hbm_starts: jax.Array  # int32[R]
    hbm_data: jax.Array  # f32[R, VLEN]
    hbm_on: jax.Array  # bool[R]
    fpm_idx: jax.Array  # int32
    fpm_val: jax.Array  # f32
    fpm_on: jax.Array  # bool


def _rows_max(arr: jax.Array, start: jax.Array, count: jax.Array | int, k: int) -> jax.Array:
    seg = lax.dynamic_slice(arr, (start,), (k,))
    return jnp.max(jnp.where(jnp.arange(k) < count, seg, 0))


def _rows_set(arr: jax.Array, start: jax.Array, count: jax.Array | int, k: int, value: jax.Array,
              use_max: bool = False) -> jax.Array:
    seg = lax.dynamic_slice(arr, (start,), (k,))
    new = jnp.maximum(seg, value) if use_max else jnp.broadcast_to(value, seg.shape)
    return lax.dynamic_update_slice(arr, jnp.where(jnp.arange(k) < count, new, seg), (start,))


class Machine:
    """The interpreter for one hardware config; memories sized per call (HBM) or per config."""

    def __init__(self, hw: NPUConfig, profile: bool = False):
        self.hw = hw
        self.profile = profile  # static: the plain interpreter carries no per-instruction counters
        self.isa = make_isa(hw)
        self.occ = np.array(self.isa.table("occupancy", hw), np.int32)
        self.lat = np.array(self.isa.table("latency", hw), np.int32)
        self.kv = max(hw.BLEN, hw.v_prefetch_rows)  # most VSRAM rows one op touches
        self.vrows_pad = hw.vsram_rows + self.kv
        self.mrows_pad = hw.msram_rows + hw.MLEN
        self.halt_row = np.zeros(self.isa.n_fields, np.int32)
        op = self.isa.opcodes["C_HALT"]
        self.halt_row[:3] = [op, self.isa.class_ids["CTRL"], self.isa.sub_ids["C_HALT"]]
        self.nop_row = np.zeros(self.isa.n_fields, np.int32)
        self.nop_row[:3] = [self.isa.opcodes["C_NOP"], self.isa.class_ids["CTRL"], self.isa.sub_ids["C_NOP"]]

    # ---- state -----------------------------------------------------------------------
    def init_state(self, hbm: jax.Array, fpm: jax.Array, n_pc: int = 1) -> State:
        hw = self.hw
        i32 = jnp.int32
        nu, nc = len(UNITS), len(CLASSES)
        return State(
            ctl=jnp.zeros(N_CTL, i32).at[STRIDE].set(UNSET),
            gp=jnp.zeros(16, i32),
            ar=jnp.full(8, UNSET, i32),
            unit_free=jnp.zeros(nu, i32),
            busy=jnp.zeros(nu, i32),
            counts=jnp.zeros(nc, i32),
            fp_ready=jnp.zeros(8, i32),
            vs_ready=jnp.zeros(self.vrows_pad, i32),
            vs_read=jnp.zeros(self.vrows_pad, i32),
            ms_ready=jnp.zeros(self.mrows_pad, i32),
            ms_read=jnp.zeros(self.mrows_pad, i32),
            im=jnp.zeros(hw.intsram_size, i32),
            fp=jnp.zeros(8, jnp.float32),
            acc=jnp.zeros((hw.BLEN, hw.BLEN), jnp.float32),
            mv=jnp.zeros(hw.MLEN, jnp.float32),
            nan_pc=jnp.int32(-1),
            vs=jnp.zeros((self.vrows_pad, hw.VLEN), jnp.float32),
            ms=jnp.zeros((self.mrows_pad, hw.MLEN), jnp.float32),
            hbm=hbm,
            fpm=fpm,
            prof=jnp.zeros((n_pc if self.profile else 1, N_PROF), i32),
            vs_dma=jnp.zeros(self.vrows_pad if self.profile else 1, i32),
            vsr_dma=jnp.zeros(self.vrows_pad if self.profile else 1, i32),
            ms_dma=jnp.zeros(self.mrows_pad if self.profile else 1, i32),
        )

    def no_writes(self) -> Writes:
        hw = self.hw
        R, V, L, K = hw.v_prefetch_rows, hw.VLEN, hw.MLEN, self.kv
        f = jnp.bool_(False)
        return Writes(
            vs_row=jnp.int32(0), vs_data=jnp.zeros((K, V), jnp.float32), vs_mask=jnp.zeros((K, V), bool),
            ms_row=jnp.int32(0), ms_data=jnp.zeros((L, L), jnp.float32), ms_on=f,
            hbm_starts=jnp.zeros(R, jnp.int32), hbm_data=jnp.zeros((R, V), jnp.float32), hbm_on=jnp.zeros(R, bool),
            fpm_idx=jnp.int32(0), fpm_val=jnp.float32(0), fpm_on=f,
        )

    def _vs_rows_write(self, row: jax.Array, data: jax.Array, on: jax.Array) -> Writes:
        """A write of ``data`` (n <= K full rows) at VSRAM ``row``, gated by ``on`` per row."""
        K, V = self.kv, self.hw.VLEN
        n = data.shape[0]
        full = jnp.zeros((K, V), jnp.float32).at[:n].set(data)
        mask = jnp.zeros((K, V), bool).at[:n].set(jnp.broadcast_to(jnp.reshape(on, (-1, 1)), (n, V)))
        return self.no_writes()._replace(vs_row=row, vs_data=full, vs_mask=mask)

    @staticmethod
    def apply_writes(st: State, w: Writes) -> State:
        K, V = w.vs_data.shape
        old = lax.dynamic_slice(st.vs, (w.vs_row, 0), (K, V))
        vs = lax.dynamic_update_slice(st.vs, jnp.where(w.vs_mask, w.vs_data, old), (w.vs_row, 0))
        # tile loads and stores are rare: skip their (large) writes with a cond, which XLA keeps in place
        ms = lax.cond(w.ms_on, lambda m: lax.dynamic_update_slice(m, w.ms_data, (w.ms_row, 0)), lambda m: m, st.ms)

        def store(hbm: jax.Array) -> jax.Array:
            H = hbm.shape[0]
            for r in range(w.hbm_starts.shape[0]):  # in order: overlapping rows resolve deterministically
                s0 = jnp.clip(w.hbm_starts[r], 0, H - V)
                cur = lax.dynamic_slice(hbm, (s0,), (V,))
                hbm = lax.dynamic_update_slice(hbm, jnp.where(w.hbm_on[r], w.hbm_data[r], cur), (s0,))
            return hbm

        hbm = lax.cond(jnp.any(w.hbm_on), store, lambda h: h, st.hbm)
        cur_f = lax.dynamic_slice(st.fpm, (w.fpm_idx,), (1,))
        fpm = lax.dynamic_update_slice(st.fpm, jnp.where(w.fpm_on, w.fpm_val[None], cur_f), (w.fpm_idx,))
        return st._replace(vs=vs, ms=ms, hbm=hbm, fpm=fpm)

    # ---- common pieces ---------------------------------------------------------------------
    def _schedule(self, st: State, op: jax.Array, unit: int, dep: jax.Array, occ: jax.Array | None = None,
                  lat: jax.Array | None = None) -> tuple[State, jax.Array, jax.Array]:
        """Start time and ready time of this op; advances issue, unit and busy counters."""
        occ = jnp.asarray(self.occ)[op] if occ is None else occ
        lat = jnp.asarray(self.lat)[op] if lat is None else lat
        issue = st.ctl[T_ISSUE]
        start = jnp.maximum(jnp.maximum(issue, st.unit_free[unit]), dep)
        end, ready = start + occ, start + lat
        next_issue = issue + 1 if unit == U_DMA else start + 1
        ctl = st.ctl.at[T_ISSUE].set(next_issue).at[T_END].set(jnp.maximum(st.ctl[T_END], jnp.maximum(end, ready)))
        st = st._replace(ctl=ctl, unit_free=st.unit_free.at[unit].set(end), busy=st.busy.at[unit].add(occ))
        return st, start, ready

    @staticmethod
    def _fault(st: State, ok: jax.Array, code: jax.Array | int, detail: jax.Array, pc: jax.Array) -> State:
        first = (~ok) & (st.ctl[FAULT] == 0)
        c = st.ctl
        c = c.at[FAULT].set(jnp.where(first, code, c[FAULT]))
        c = c.at[FAULT_PC].set(jnp.where(first, pc, c[FAULT_PC]))
        c = c.at[FAULT_DETAIL].set(jnp.where(first, detail, c[FAULT_DETAIL]))
        c = c.at[HALTED].set(jnp.where(ok, c[HALTED], 1))
        return st._replace(ctl=c)

    @staticmethod
    def _past_cycle_limit(old: State, st: State, w: Writes, pc: jax.Array) -> tuple[State, Writes]:
        """The clock's limit, after the handler's own checks: an instruction whose scheduled completion (``T_END``
        after ``_schedule``) passes CYCLE_LIMIT faults and writes nothing (its time counts, as every fault's). One
        fused select per step, not a check in every handler."""
        ctl = st.ctl
        late = (ctl[T_END] > CYCLE_LIMIT) & (ctl[FAULT] == 0)
        rows = jnp.arange(ctl.shape[0])
        ctl = jnp.where(late, jnp.select([rows == FAULT, rows == FAULT_PC, rows == FAULT_DETAIL, rows == HALTED],
                                         [F_CYCLE_LIMIT, pc, ctl[T_END], 1], ctl), ctl)
        w = w._replace(vs_mask=w.vs_mask & ~late, ms_on=w.ms_on & ~late, hbm_on=w.hbm_on & ~late,
                       fpm_on=w.fpm_on & ~late)
        return st._replace(ctl=ctl, nan_pc=jnp.where(late, old.nan_pc, st.nan_pc)), w

    @staticmethod
    def _note_nonfinite(st: State, values: jax.Array, pc: jax.Array, active: jax.Array | bool = True) -> State:
        bad = active & ~jnp.all(jnp.isfinite(values)) & (st.nan_pc < 0)
        return st._replace(nan_pc=jnp.where(bad, pc, st.nan_pc))

    def _vs_addr(self, addr: jax.Array, rows: int | jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
        """(row, in-bounds, aligned) for a VSRAM access of ``rows`` full rows at ``addr``."""
        hw = self.hw
        inb = (addr >= 0) & (addr + rows * hw.VLEN <= hw.vsram_size)
        aligned = addr % hw.VLEN == 0
        row = jnp.clip(addr // hw.VLEN, 0, hw.vsram_rows)
        return row, inb, aligned

    def _check(self, st: State, pc: jax.Array, checks: list[tuple[jax.Array, int, jax.Array]]
               ) -> tuple[State, jax.Array]:
        ok = jnp.bool_(True)
        for cond, code, detail in checks:
            st = self._fault(st, (ok & cond) | ~ok, code, detail, pc)  # the first failing check wins
            ok = ok & cond
        return st, ok

    # ---- handlers (one per class): (state, instruction, pc) -> (state, writes) ------------
    def h_ctrl(self, st: State, ins: jax.Array, pc: jax.Array) -> tuple[State, Writes]:
        sub, f0, f1, f2 = ins[2], ins[3], ins[4], ins[5]
        gp = st.gp
        st, _, _ = self._schedule(st, ins[0], U_SCALAR, jnp.int32(0))
        ar = jnp.where(sub == 0, st.ar.at[f0].set(gp[f1] + gp[f2]), st.ar)
        dec = gp[f0] - 1
        gp = jnp.where(sub == 2, gp.at[f0].set(f1), jnp.where(sub == 3, gp.at[f0].set(dec), gp)).at[0].set(0)
        c = st.ctl
        c = c.at[STRIDE].set(jnp.where(sub == 1, gp[f0], c[STRIDE]))
        c = c.at[PC].set(jnp.where((sub == 3) & (dec != 0), f1, c[PC]))
        c = c.at[HALTED].set(jnp.where(sub == 5, 1, c[HALTED]))
        return st._replace(ar=ar, gp=gp, ctl=c), self.no_writes()

    def h_sint(self, st: State, ins: jax.Array, pc: jax.Array) -> tuple[State, Writes]:
        hw = self.hw
        sub, f0, f1, f2 = ins[2], ins[3], ins[4], ins[5]
        gp = st.gp
        a, b = gp[f1], gp[f2]
        st, _, _ = self._schedule(st, ins[0], U_SCALAR, jnp.int32(0))
        idx = a + f2
        mem = (sub == 5) | (sub == 6)
        inb = (idx >= 0) & (idx < hw.intsram_size)
        st, ok = self._check(st, pc, [(~mem | inb, F_OOB_INTSRAM, idx)])
        safe = jnp.clip(idx, 0, hw.intsram_size - 1)
        loaded = st.im[safe]
        res = jnp.stack([a + b, a + f2, a - b, a * b, f1 << 12, loaded, jnp.int32(0)])[sub]
        gp = jnp.where((sub != 6) & ok, gp.at[f0].set(res), gp).at[0].set(0)
        im = jnp.where((sub == 6) & ok, st.im.at[safe].set(gp[f0]), st.im)
        return st._replace(gp=gp, im=im), self.no_writes()

    def h_sfp(self, st: State, ins: jax.Array, pc: jax.Array) -> tuple[State, Writes]:
        hw = self.hw
        sub, f0, f1, f2 = ins[2], ins[3], ins[4], ins[5]
        fp, gp = st.fp, st.gp
        x, y = fp[f1 & 7], fp[f2 & 7]
        dep = jnp.where(sub <= 6, jnp.maximum(st.fp_ready[f1 & 7], jnp.where(sub <= 3, st.fp_ready[f2 & 7], 0)),
                        jnp.where(sub == 8, st.fp_ready[f0 & 7], 0))
        st, start, ready = self._schedule(st, ins[0], U_SCALAR, dep)
        idx = gp[f1] + f2
        mem = (sub == 7) | (sub == 8)
        inb = (idx >= 0) & (idx < hw.fpsram_size)
        st, ok = self._check(st, pc, [(~mem | inb, F_OOB_FPSRAM, idx)])
        safe = jnp.clip(idx, 0, hw.fpsram_size - 1)
        li = lax.bitcast_convert_type(f1, jnp.float32)
        res = jnp.stack([x + y, x - y, x * y, jnp.maximum(x, y), jnp.exp(x), 1.0 / x, jnp.sqrt(x),
                         st.fpm[safe], jnp.float32(0), li])[sub]
        writes = (sub != 8) & ok
        fp = jnp.where(writes, fp.at[f0].set(res), fp).at[0].set(0.0)
        fp_ready = jnp.where(writes, st.fp_ready.at[f0 & 7].set(ready), st.fp_ready)
        st = self._note_nonfinite(st, res, pc, writes)
        w = self.no_writes()._replace(fpm_idx=safe, fpm_val=fp[f0 & 7], fpm_on=(sub == 8) & ok)
        return st._replace(fp=fp, fp_ready=fp_ready), w

    def h_vec(self, st: State, ins: jax.Array, pc: jax.Array) -> tuple[State, Writes]:
        sub, f0, f1, f2 = ins[2], ins[3], ins[4], ins[5]
        gp = st.gp
        uses_b, uses_f = sub < 4, (sub >= 4) & (sub <= 8)
        ad, aa, ab = gp[f0], gp[f1], gp[f2]
        rd, okd, ald = self._vs_addr(ad, 1)
        ra, oka, ala = self._vs_addr(aa, 1)
        rb, okb, alb = self._vs_addr(ab, 1)
        okb, alb = okb | ~uses_b, alb | ~uses_b
        dep = jnp.maximum(st.vs_ready[ra], jnp.where(uses_b, st.vs_ready[rb], 0))
        dep = jnp.maximum(dep, jnp.where(uses_f, st.fp_ready[f2 & 7], 0))
        dep = jnp.maximum(dep, jnp.maximum(st.vs_ready[rd], st.vs_read[rd]))
        st, start, ready = self._schedule(st, ins[0], U_VECTOR, dep)
        st, ok = self._check(st, pc, [
            (okd, F_OOB_VSRAM, ad), (oka, F_OOB_VSRAM, aa), (okb, F_OOB_VSRAM, ab),
            (ald, F_MISALIGNED, ad), (ala, F_MISALIGNED, aa), (alb, F_MISALIGNED, ab)])
        a, b, s = st.vs[ra], st.vs[rb], st.fp[f2 & 7]
        res = jnp.stack([a + b, a - b, a * b, jnp.maximum(a, b), a + s, a - s, s - a, a * s, jnp.maximum(a, s),
                         jnp.exp(a), 1.0 / a])[jnp.clip(sub, 0, 10)]
        res = bf16(res)
        vs_ready = jnp.where(ok, st.vs_ready.at[rd].set(ready), st.vs_ready)
        vs_read = st.vs_read.at[ra].max(start + 1)
        vs_read = jnp.where(uses_b, vs_read.at[rb].max(start + 1), vs_read)
        st = self._note_nonfinite(st, res, pc, ok)
        return st._replace(vs_ready=vs_ready, vs_read=vs_read), self._vs_rows_write(rd, res[None], ok)

    def h_vred(self, st: State, ins: jax.Array, pc: jax.Array) -> tuple[State, Writes]:
        sub, f0, f1 = ins[2], ins[3], ins[4]
        aa = st.gp[f1]
        ra, oka, ala = self._vs_addr(aa, 1)
        dep = jnp.maximum(st.vs_ready[ra], st.fp_ready[f0])
        st, start, ready = self._schedule(st, ins[0], U_VECTOR, dep)
        st, ok = self._check(st, pc, [(oka, F_OOB_VSRAM, aa), (ala, F_MISALIGNED, aa)])
        row, cur = st.vs[ra], st.fp[f0]
        res = jnp.where(sub == 0, cur + jnp.sum(row), jnp.maximum(cur, jnp.max(row)))
        fp = jnp.where(ok, st.fp.at[f0].set(res), st.fp).at[0].set(0.0)
        st = self._note_nonfinite(st, res, pc, ok & (f0 != 0))
        return st._replace(fp=fp, fp_ready=st.fp_ready.at[f0].set(ready),
                           vs_read=st.vs_read.at[ra].max(start + 1)), self.no_writes()

    def h_mm(self, st: State, ins: jax.Array, pc: jax.Array) -> tuple[State, Writes]:
        hw = self.hw
        B, L = hw.BLEN, hw.MLEN
        sub, am, av = ins[2], st.gp[ins[3]], st.gp[ins[4]]
        rv, okv, alv = self._vs_addr(av, B)
        tmm = sub == 1
        mrow = jnp.clip(am // L, 0, hw.msram_rows)
        col = am % L
        nrows = jnp.where(tmm, B, L)
        okm = (am >= 0) & (mrow + nrows <= hw.msram_rows)
        alm = jnp.where(tmm, am % L == 0, am % B == 0)
        dep = jnp.maximum(_rows_max(st.vs_ready, rv, B, B), _rows_max(st.ms_ready, mrow, nrows, L))
        st, start, ready = self._schedule(st, ins[0], U_MATRIX, dep)
        st, ok = self._check(st, pc, [(okv, F_OOB_VSRAM, av), (okm, F_OOB_MSRAM, am), (alv, F_MISALIGNED, av),
                                      (alm, F_MISALIGNED, am)])
        V = lax.dynamic_slice(st.vs, (rv, 0), (B, L))
        m_cols = lax.dynamic_slice(st.ms, (mrow, jnp.where(tmm, 0, col)), (L, B))  # [L, B]
        m_rows = lax.dynamic_slice(st.ms, (mrow, 0), (B, L))  # [B, L]
        hi = lax.Precision.HIGHEST
        prod = jnp.where(tmm, jnp.matmul(V, m_rows.T, precision=hi), jnp.matmul(V, m_cols, precision=hi))
        acc = jnp.where(ok, st.acc + prod, st.acc)
        c = st.ctl.at[ACC_READY].set(ready)
        return st._replace(acc=acc, ctl=c, vs_read=_rows_set(st.vs_read, rv, B, B, start + hw.mm_occupancy, True),
                           ms_read=_rows_set(st.ms_read, mrow, nrows, L, start + hw.mm_occupancy, True)
                           ), self.no_writes()

    def h_mv(self, st: State, ins: jax.Array, pc: jax.Array) -> tuple[State, Writes]:
        hw = self.hw
        L = hw.MLEN
        sub, am, av = ins[2], st.gp[ins[3]], st.gp[ins[4]]
        rv, okv, alv = self._vs_addr(av, 1)
        mrow = jnp.clip(am // L, 0, hw.msram_rows)
        okm = (am >= 0) & (mrow + L <= hw.msram_rows)
        alm = am % L == 0
        dep = jnp.maximum(st.vs_ready[rv], _rows_max(st.ms_ready, mrow, L, L))
        st, start, ready = self._schedule(st, ins[0], U_MATRIX, dep)
        st, ok = self._check(st, pc, [(okv, F_OOB_VSRAM, av), (okm, F_OOB_MSRAM, am), (alv, F_MISALIGNED, av),
                                      (alm, F_MISALIGNED, am)])
        v = st.vs[rv]
        T = lax.dynamic_slice(st.ms, (mrow, 0), (L, L))
        hi = lax.Precision.HIGHEST
        prod = jnp.where(sub == 1, jnp.matmul(T, v, precision=hi), jnp.matmul(v, T, precision=hi))
        mv = jnp.where(ok, st.mv + prod, st.mv)
        occ = hw.mv_occupancy
        return st._replace(mv=mv, ctl=st.ctl.at[MV_READY].set(ready), vs_read=st.vs_read.at[rv].max(start + occ),
                           ms_read=_rows_set(st.ms_read, mrow, L, L, start + occ, True)), self.no_writes()

    def h_wo(self, st: State, ins: jax.Array, pc: jax.Array) -> tuple[State, Writes]:
        hw = self.hw
        B, V, K = hw.BLEN, hw.VLEN, self.kv
        sub, addr = ins[2], st.gp[ins[3]] + ins[4]
        mvwo = sub == 1
        row = jnp.clip(addr // V, 0, hw.vsram_rows)
        col = jnp.where(mvwo, 0, addr % V)
        nrows = jnp.where(mvwo, 1, B)
        inb = (addr >= 0) & (addr // V + nrows <= hw.vsram_rows)
        al = jnp.where(mvwo, addr % V == 0, addr % B == 0)
        dep = jnp.where(mvwo, st.ctl[MV_READY], st.ctl[ACC_READY])
        dep = jnp.maximum(dep, jnp.maximum(_rows_max(st.vs_ready, row, nrows, K), _rows_max(st.vs_read, row, nrows, K)))
        st, start, ready = self._schedule(st, ins[0], U_MATRIX, dep)
        st, ok = self._check(st, pc, [(inb, F_OOB_VSRAM, addr), (al, F_MISALIGNED, addr)])
        blk = bf16(st.acc)
        mrow = bf16(st.mv)
        # place the BLEN x BLEN block at columns col..col+B-1 of a K x V row block
        cols = jnp.arange(V)
        placed = jnp.take(blk, jnp.clip(cols - col, 0, B - 1), axis=1)  # [B, V]
        in_cols = (cols >= col) & (cols < col + B)
        data = jnp.zeros((K, V), jnp.float32).at[:B].set(placed)
        data = jnp.where(mvwo, data.at[0].set(mrow), data)
        mask = jnp.where(mvwo, jnp.arange(K)[:, None] == 0, (jnp.arange(K)[:, None] < B) & in_cols[None, :])
        w = self.no_writes()._replace(vs_row=row, vs_data=data, vs_mask=mask & ok)
        st = self._note_nonfinite(st, jnp.where(mvwo, jnp.max(mrow), jnp.max(blk)), pc, ok)
        return st._replace(
            acc=jnp.where(mvwo, st.acc, jnp.zeros_like(st.acc)),
            mv=jnp.where(mvwo, jnp.zeros_like(st.mv), st.mv),
            vs_ready=jnp.where(ok, _rows_set(st.vs_ready, row, nrows, K, ready), st.vs_ready),
        ), w

    def _hbm_rows(self, st: State, ins: jax.Array, rows: int, width: int, hbm_limit: jax.Array,
                  nrows: jax.Array | int | None = None):
        """Row start addresses of a DMA (the first ``nrows`` of ``rows`` are live) and its checks."""
        hw = self.hw
        base = st.ar[ins[5] & 7] + st.gp[ins[4]]
        stride = jnp.where(ins[6] == 1, st.ctl[STRIDE], width)
        starts = base + jnp.arange(rows, dtype=jnp.int32) * stride
        live = jnp.arange(rows) < (rows if nrows is None else nrows)
        lo = jnp.min(jnp.where(live, starts, starts[0]))
        hi = jnp.max(jnp.where(live, starts, starts[0]))
        inb = (lo >= 0) & (hi + width <= hbm_limit)
        mis = live & (starts % hw.VLEN != 0)
        al = ~jnp.any(mis)
        bad = jnp.where(inb, starts[jnp.argmax(mis)], jnp.where(lo < 0, lo, hi))
        return starts, inb, al, bad

    def h_dmav(self, st: State, ins: jax.Array, pc: jax.Array, hbm_limit: jax.Array) -> tuple[State, Writes]:
        hw = self.hw
        R, V, K = hw.v_prefetch_rows, hw.VLEN, self.kv
        sub, av, nrows = ins[2], st.gp[ins[3]], ins[7]
        store = sub == 1
        row_on = jnp.arange(R) < nrows
        inb_v = (av >= 0) & (av + nrows * V <= hw.vsram_size)
        rv = jnp.clip(av // V, 0, hw.vsram_rows)
        starts, okh, alh, bad = self._hbm_rows(st, ins, R, V, hbm_limit, nrows)
        dep = jnp.where(store, _rows_max(st.vs_ready, rv, nrows, K),
                        jnp.maximum(_rows_max(st.vs_ready, rv, nrows, K), _rows_max(st.vs_read, rv, nrows, K)))
        occ = (2 * nrows * V + hw.hbm_bytes_per_cycle - 1) // hw.hbm_bytes_per_cycle
        st, start, ready = self._schedule(st, ins[0], U_DMA, dep, occ=occ, lat=hw.hbm_latency + occ)
        st, ok = self._check(st, pc, [(inb_v, F_OOB_VSRAM, av), (av % V == 0, F_MISALIGNED, av),
                                      (okh, F_OOB_HBM, bad), (alh, F_MISALIGNED, bad)])
        H = st.hbm.shape[0]
        safe = jnp.clip(starts, 0, H - V)
        loaded = jnp.stack([lax.dynamic_slice(st.hbm, (safe[r],), (V,)) for r in range(R)])
        src = lax.dynamic_slice(st.vs, (rv, 0), (R, V))
        w = self._vs_rows_write(rv, loaded, ok & ~store & row_on)
        w = w._replace(hbm_starts=starts, hbm_data=src, hbm_on=ok & store & row_on)
        st = self._note_nonfinite(st, jnp.where(row_on[:, None], loaded, 0.0), pc, ok & ~store)
        return st._replace(
            vs_ready=jnp.where(ok & ~store, _rows_set(st.vs_ready, rv, nrows, K, ready), st.vs_ready),
            vs_read=jnp.where(store, _rows_set(st.vs_read, rv, nrows, K, start + occ, True), st.vs_read),
        ), w

    def h_dmam(self, st: State, ins: jax.Array, pc: jax.Array, hbm_limit: jax.Array) -> tuple[State, Writes]:
        hw = self.hw
        L = hw.MLEN
        am = st.gp[ins[3]]
        mrow = jnp.clip(am // L, 0, hw.msram_rows)
        okm = (am >= 0) & (mrow + L <= hw.msram_rows)
        alm = am % L == 0
        starts, okh, alh, bad = self._hbm_rows(st, ins, L, L, hbm_limit)
        dep = jnp.maximum(_rows_max(st.ms_ready, mrow, L, L), _rows_max(st.ms_read, mrow, L, L))
        st, start, ready = self._schedule(st, ins[0], U_DMA, dep)
        st, ok = self._check(st, pc, [(okm, F_OOB_MSRAM, am), (alm, F_MISALIGNED, am), (okh, F_OOB_HBM, bad),
                                      (alh, F_MISALIGNED, bad)])
        H = st.hbm.shape[0]
        idx = jnp.clip(starts[:, None] + jnp.arange(L, dtype=jnp.int32)[None, :], 0, H - 1)
        tile = st.hbm[idx]
        st = self._note_nonfinite(st, tile, pc, ok)
        w = self.no_writes()._replace(ms_row=mrow, ms_data=tile, ms_on=ok)
        return st._replace(ms_ready=jnp.where(ok, _rows_set(st.ms_ready, mrow, L, L, ready), st.ms_ready)), w

    # ---- profiling ------------------------------------------------------------------------
    def _attribute(self, old: State, new: State, ins: jax.Array, pc: jax.Array, handlers, on: jax.Array) -> State:
        """Add this instruction's executions, issue and stall cycles by cause to ``prof[pc]`` (profiling only)."""
        issue = old.ctl[T_ISSUE]
        stall = new.ctl[T_ISSUE] - issue - 1
        unit_free = old.unit_free[jnp.asarray(CLASS_UNIT)[ins[1]]]
        unit_wait = jnp.clip(unit_free - issue, 0, stall)
        # the same handler on ready times holding only what DMAs set: its start is what the DMAs alone imposed
        z = jnp.zeros_like
        shadow = old._replace(vs_ready=old.vs_dma, vs_read=old.vsr_dma, ms_ready=old.ms_dma, ms_read=z(old.ms_read),
                              fp_ready=z(old.fp_ready), unit_free=z(old.unit_free),
                              ctl=old.ctl.at[ACC_READY].set(0).at[MV_READY].set(0))
        dma_start = lax.switch(ins[1], handlers, shadow, ins, pc)[0].ctl[T_ISSUE] - 1
        dma_wait = jnp.clip(dma_start - jnp.maximum(issue, unit_free), 0, stall - unit_wait)
        row = jnp.stack([jnp.int32(1), jnp.int32(1), unit_wait, dma_wait, stall - unit_wait - dma_wait])
        is_dma = (ins[1] == CLASSES.index("DMAV")) | (ins[1] == CLASSES.index("DMAM"))
        on_dma = on & is_dma

        def track(shadow_arr: jax.Array, before: jax.Array, after: jax.Array) -> jax.Array:
            """Where this instruction moved a ready time: keep it if a DMA set it, else clear it."""
            changed = on & (after != before)
            return jnp.where(changed, jnp.where(on_dma, after, 0), shadow_arr)

        return new._replace(prof=new.prof.at[pc].add(jnp.where(on, row, 0)),
                            vs_dma=track(old.vs_dma, old.vs_ready, new.vs_ready),
                            vsr_dma=track(old.vsr_dma, old.vs_read, new.vs_read),
                            ms_dma=track(old.ms_dma, old.ms_ready, new.ms_ready))

    # ---- the loop ------------------------------------------------------------------------
    def run_one(self, words: jax.Array, hbm: jax.Array, fpm: jax.Array, hbm_limit: jax.Array,
                max_steps: jax.Array) -> State:
        handlers = [
            self.h_ctrl, self.h_sint, self.h_sfp, self.h_vec, self.h_vred, self.h_mm, self.h_mv, self.h_wo,
            functools.partial(self.h_dmav, hbm_limit=hbm_limit), functools.partial(self.h_dmam, hbm_limit=hbm_limit),
        ]
        assert len(handlers) == len(CLASSES)
        nop = jnp.asarray(self.nop_row)

        def running(st: State) -> jax.Array:
            return (st.ctl[HALTED] == 0) & (st.ctl[STEPS] < max_steps)

        def step(st: State, guarded: bool) -> State:
            pc = st.ctl[PC]
            ins = words[pc]
            if guarded:  # past a halt or the step budget: run a C_NOP and keep the control state
                active = running(st)
                ins = jnp.where(active, ins, nop)
                before = st
            old = st
            st = st._replace(ctl=st.ctl.at[PC].add(1).at[STEPS].add(1), counts=st.counts.at[ins[1]].add(1))
            st, writes = lax.switch(ins[1], handlers, st, ins, pc)
            st, writes = self._past_cycle_limit(old, st, writes, pc)
            st = self.apply_writes(st, writes)
            if self.profile:
                st = self._attribute(old, st, ins, pc, handlers, running(old) if guarded else jnp.bool_(True))
            if guarded:  # a C_NOP changes only these (and writes nothing)
                st = st._replace(**{f: jnp.where(active, getattr(st, f), getattr(before, f))
                                    for f in ("ctl", "gp", "ar", "unit_free", "busy", "counts")})
            return st

        def body(st: State) -> State:
            st = step(st, guarded=False)
            for _ in range(STEPS_PER_ITERATION - 1):
                st = step(st, guarded=True)
            return st

        return lax.while_loop(running, body, self.init_state(hbm, fpm, words.shape[0]))


@functools.lru_cache(maxsize=64)
def oracle_runner(hw_json: str, profile: bool = False):
    """The interpreter, jitted and ``vmap``-ped over input sets, for one hardware config (shapes bucket
    the cache). The reference semantics: the trace-ahead path (``trace.py``) is tested against it.

    ``profile``: a separate interpreter that also fills ``State.prof`` (same cycles and outputs)."""
    machine = Machine(NPUConfig.model_validate_json(hw_json), profile)
    return interpreter.batched_runner(machine, (None, 0, None, None, None))
