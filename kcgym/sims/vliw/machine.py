"""The VLIW tile in JAX: machine state, the one-bundle step and the batched runner.

One jitted interpreter runs any program, one bundle per ``lax.while_loop`` step. Each of the
seven slots (LD, LD, ST, VEC, SCL, MOV, CTL) has a fixed handler that computes its class's
operations on 32-lane vectors and selects the encoded one (the vector slot computes only the
encoded one, in a ``lax.switch`` on the sub-op). All handlers read the state *before* the
bundle; their writes are committed together at its end (a bundle that faults commits
nothing). Control state — PC, scalar and pointer registers, loop stack, timing — never
depends on tensor data, so under ``vmap`` over input sets it stays unbatched; only vector
registers, accumulators and memories are batched.

Timing, computed in the same step: a bundle issues at ``max(previous issue + 1, every
source register's ready time, the DMA readiness of the memory lines it touches)`` plus one
cycle per pair of memory operations hitting the same bank; a taken branch adds
``branch_penalty``. Each destination becomes ready ``latency`` cycles after issue. DMAs run
on two engines (in, out) with busy-until times and per-line ready / last-read times, so
double buffering pays.

Speed (``benchmarks/bench_vliw_interp.py``): 5-8e4 bundles/s per input set on two busy shared
cores (1.1e5 on a quieter moment), bit-identical to and 2.7-3.8x faster than the previous
interpreter at batch 1, 4.7-8.2x at batch 3. A step costs roughly one small XLA kernel per fused operation, so it is
kept to few: DM is updated in place (loads are prefetched after the previous bundle's store;
a read of the old DM that the store does not depend on made XLA copy all of DM every step),
register files, ready times and control words are written by selects, not scatters,
each bundle's register indices and latencies are decoded once per run, and only DMA bundles
check DMA geometry.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from kcgym.isa.spec import Reg
from kcgym.limits import CYCLE_LIMIT
from kcgym.sims import interpreter
from kcgym.sims.interpreter import bf16, bucket  # noqa: F401  (bucket: tests and benchmarks use M.bucket)
from kcgym.sims.vliw.config import LANES, LINE_BYTES, VECTOR_BYTES, VLIWConfig
from kcgym.sims.vliw.isa import CLASSES, make_isa

FAULT_NAMES = ("NONE", "OOB_DM", "MISALIGNED", "OOB_EXT", "BAD_LANE", "LOOP_DEPTH", "STEP_BUDGET", "CYCLE_LIMIT")
F_OOB_DM, F_MISALIGNED, F_OOB_EXT, F_BAD_LANE, F_LOOP_DEPTH, F_STEP_BUDGET, F_CYCLE_LIMIT = range(1, 8)

# indices into State.ctl
PC, STEPS, HALTED, FAULT, FAULT_PC, FAULT_DETAIL, T_ISSUE, T_END, DEPTH, FAULT_SLOT = range(10)
N_CTL = 10
# loop stack columns
L_START, L_END, L_COUNT = range(3)
SLOT_NAMES = ("LD", "LD", "ST", "VEC", "SCL", "MOV", "CTL")
BUSY_KEYS = ("LOAD_A", "LOAD_B", "STORE", "VECTOR", "SCALAR", "MOVE", "CONTROL", "DMA_IN", "DMA_OUT")
S_LD0, S_LD1, S_ST, S_VEC, S_SCL, S_MOV, S_CTL = range(7)
FILE_BASE = {"r": 0, "p": 16, "x": 24, "c": 36}
N_READY = 44
CLS = {c: i for i, c in enumerate(CLASSES)}
# profiling (``Machine(hw, profile=True)``): per-bundle columns of State.prof; the stall causes split
# each bundle's wait exactly as the scoreboard computed it, so the columns of all bundles sum to T_ISSUE
PROFILE_STALLS = ("register/result latency", "DMA (line filling or being read)", "bank conflict",
                  "taken branch")
P_EXEC, P_ISSUE = 0, 1
N_PROF = 2 + len(PROFILE_STALLS)


class State(NamedTuple):
    ctl: jax.Array  # int32[N_CTL]
    r: jax.Array  # int32[16]
    p: jax.Array  # int32[8]
    ready: jax.Array  # int32[44]: ready time of r0-15, p0-7, x0-11, c0-7
    loops: jax.Array  # int32[loop_depth, 3]
    line_ready: jax.Array  # int32[dm_lines]: when a DMAI into the line completes
    line_read: jax.Array  # int32[dm_lines]: when a DMAO has finished reading the line
    dma_free: jax.Array  # int32[2]: in, out engine free times
    busy: jax.Array  # int32[len(BUSY_KEYS)]
    counts: jax.Array  # int32[classes]
    x: jax.Array  # f32[12, 32]      (batched)
    c: jax.Array  # f32[8, 32]       (batched)
    nan_pc: jax.Array  # int32        (batched)
    dm: jax.Array  # f32[dm_elements] (batched; + LANES spare elements while running)
    ext: jax.Array  # f32[H]          (batched)
    prof: jax.Array  # int32[n_pc, N_PROF] when profiling (executions, issue, stalls), else int32[1, N_PROF]


def _write_rows(arr: jax.Array, writes) -> jax.Array:
    """``arr[idx] = value`` for each ``(idx, value, on)`` in order, as one select per write.

    XLA fuses the chain into one kernel per array; a scatter per write costs a kernel each."""
    rows = jnp.arange(arr.shape[0]).reshape((-1,) + (1,) * (arr.ndim - 1))
    for idx, value, on in writes:
        arr = jnp.where((rows == idx) & on, value, arr)
    return arr


class Machine:
    """The interpreter for one hardware config."""

    def __init__(self, hw: VLIWConfig, profile: bool = False):
        self.hw = hw
        self.profile = profile  # static: the plain interpreter carries no per-bundle counters
        self.isa = isa = make_isa(hw)
        self.F = isa.n_fields
        self.S = len(isa.slot_units)
        self.lat = np.array(isa.table("latency", hw), np.int32)
        n_ops = len(isa.instructions)
        J = self.F - 3
        self.read_base = np.full((n_ops, J), -1, np.int32)
        self.write_base = np.full((n_ops, J), -1, np.int32)
        self.write_latency = np.zeros((n_ops, J), np.int32)  # a post-incremented pointer is ready next cycle
        for o, spec in enumerate(isa.instructions):
            for j, od in enumerate(spec.operands):
                if isinstance(od.kind, Reg):
                    base = FILE_BASE[od.kind.file]
                    if not od.name.endswith("d"):
                        self.read_base[o, j] = base
                    if od.kind.write:
                        self.write_base[o, j] = base
                        self.write_latency[o, j] = 1 if od.kind.file == "p" else self.lat[o]
        self.sub = isa.sub_ids
        nop = isa.opcodes["NOP"]
        halt = isa.opcodes["HALT"]
        row = np.zeros((self.S, self.F), np.int32)
        row[:, :3] = [nop, CLS["NOP"], self.sub["NOP"]]
        row[S_CTL, :3] = [halt, CLS["CTL"], self.sub["HALT"]]
        self.halt_row = row.reshape(-1)
        self.dma_elems = hw.dma_max_bytes // 2

    # ---- state -----------------------------------------------------------------------
    def init_state(self, ext: jax.Array, n_pc: int = 1) -> State:
        hw = self.hw
        i32 = jnp.int32
        return State(
            ctl=jnp.zeros(N_CTL, i32),
            r=jnp.zeros(16, i32),
            p=jnp.zeros(8, i32),
            ready=jnp.zeros(N_READY, i32),
            loops=jnp.zeros((hw.loop_depth, 3), i32),
            line_ready=jnp.zeros(hw.dm_lines, i32),
            line_read=jnp.zeros(hw.dm_lines, i32),
            dma_free=jnp.zeros(2, i32),
            busy=jnp.zeros(len(BUSY_KEYS), i32),
            counts=jnp.zeros(len(CLASSES), i32),
            x=jnp.zeros((12, LANES), jnp.float32),
            c=jnp.zeros((8, LANES), jnp.float32),
            nan_pc=jnp.int32(-1),
            dm=jnp.zeros(hw.dm_elements + LANES, jnp.float32),  # + a line that disabled stores write
            ext=ext,
            prof=jnp.zeros((n_pc if self.profile else 1, N_PROF), i32),
        )

    def _pick(self, results: dict, sub: jax.Array) -> jax.Array:
        """The result of sub-op ``sub`` (clipped to the class's range) among all of a slot's ``results``.

        ``results`` maps each mnemonic to its value, or to a function computing it. Values are
        picked by a chain of selects, which XLA fuses with their arithmetic (stacking them and
        indexing cost one kernel per result); with any function among them, by a ``lax.switch``
        that computes only the selected result (the vector slot's converts, reductions and
        transcendentals are each a kernel of their own otherwise)."""
        order = sorted(results, key=lambda m: self.sub[m])
        k = jnp.clip(sub, 0, len(order) - 1)
        if any(callable(v) for v in results.values()):
            return lax.switch(k, [results[m] if callable(results[m]) else lambda v=results[m]: v for m in order])
        val = results[order[0]]
        for i, m in enumerate(order[1:], 1):
            val = jnp.where(k == i, results[m], val)
        return val

    # ---- slot semantics: (pre-bundle state, slot fields) -> results, never state --------------
    def _load(self, st: State, ins: jax.Array, val: jax.Array):
        """An LD-slot op; ``val`` is what it reads, prefetched by ``_prefetch`` from the DM before the bundle."""
        hw = self.hw
        active = ins[1] == CLS["LD"]
        bcast = ins[2] == self.sub["VLDB"]
        addr = st.p[ins[4] & 7]
        size = jnp.where(bcast, 2, VECTOR_BYTES)
        inb = (addr >= 0) & (addr + size <= hw.dm_bytes)
        aligned = addr % size == 0
        checks = [(~active | inb, F_OOB_DM, addr), (~active | aligned, F_MISALIGNED, addr)]
        return active, addr, val, checks

    def _load_value(self, dm: jax.Array, p: jax.Array, ins: jax.Array) -> jax.Array:
        """The 32 lanes LD-slot op ``ins`` reads from ``dm`` with pointer registers ``p`` (clipped into DM)."""
        hw = self.hw
        addr = p[ins[4] & 7]
        e = jnp.clip(addr // 2, 0, hw.dm_elements - LANES)
        vec = lax.dynamic_slice(dm, (e,), (LANES,))
        one = dm[jnp.clip(addr // 2, 0, hw.dm_elements - 1)]
        return jnp.where(ins[2] == self.sub["VLDB"], jnp.broadcast_to(one, (LANES,)), vec)

    def _prefetch(self, st: State, words: jax.Array) -> jax.Array:
        """What the next bundle's two LD slots read: ``f32[2, LANES]``.

        Reading DM at the end of the previous step (after its store), not inside the step that
        also stores, lets XLA update DM in place: a read of the old DM that the in-place store does
        not depend on makes XLA copy the whole DM every step (most of the step's time at batch 3).
        """
        row = words[st.ctl[PC], : self.S * self.F].reshape(self.S, self.F)
        return jnp.stack([self._load_value(st.dm, st.p, row[s]) for s in (S_LD0, S_LD1)])

    def _store(self, st: State, ins: jax.Array):
        hw = self.hw
        active = ins[1] == CLS["ST"]
        addr = st.p[ins[4] & 7]
        inb = (addr >= 0) & (addr + VECTOR_BYTES <= hw.dm_bytes)
        aligned = addr % VECTOR_BYTES == 0
        checks = [(~active | inb, F_OOB_DM, addr), (~active | aligned, F_MISALIGNED, addr)]
        return active, addr, st.x[jnp.clip(ins[3], 0, 11)], checks

    def _vector(self, st: State, ins: jax.Array):
        active = ins[1] == CLS["VEC"]
        sub, f0, f1, f2, f3 = ins[2], ins[3], ins[4], ins[5], ins[6]
        a, b = st.x[jnp.clip(f1, 0, 11)], st.x[jnp.clip(f2, 0, 11)]
        ca, cd = st.c[f1 & 7], st.c[f0 & 7]
        lane = st.r[f3 & 15]
        bl = b[jnp.clip(lane, 0, LANES - 1)]
        full = lambda v: jnp.broadcast_to(v, (LANES,))  # noqa: E731

        def mmul() -> jax.Array:
            """VMMUL: (4x8 block of a) @ (8x4 block of b), products summed in fp32, into half f3 of cd's tile."""
            prod = jnp.sum(a.reshape(4, 8, 1) * b.reshape(1, 8, 4), axis=1)  # [4, 4]
            half = jnp.arange(LANES) % 8 // 4 == (f3 & 1)
            return jnp.where(half, cd + jnp.tile(prod, (1, 2)).reshape(LANES), cd)

        results = {
            "VADD": lambda: bf16(a + b), "VSUB": lambda: bf16(a - b), "VMUL": lambda: bf16(a * b),
            "VMAX": lambda: jnp.maximum(a, b), "VMIN": lambda: jnp.minimum(a, b), "VRMAX": lambda: full(jnp.max(a)),
            "VRADD": lambda: full(bf16(jnp.sum(ca))), "VEXP2": lambda: bf16(jnp.exp2(a)),
            "VINV": lambda: bf16(1.0 / a), "VRSQRT": lambda: bf16(lax.rsqrt(a)),
            "VEXP2C": lambda: bf16(jnp.exp2(ca)), "VINVC": lambda: bf16(1.0 / ca),
            "VMPY": lambda: a * b, "VMAC": lambda: cd + a * b, "VMPYL": lambda: a * bl, "VMACL": lambda: cd + a * bl,
            "VMMUL": mmul,
        }
        val = self._pick(results, sub)
        to_c = sub >= self.sub["VMPY"]
        uses_lane = (sub == self.sub["VMPYL"]) | (sub == self.sub["VMACL"])
        checks = [(~active | ~uses_lane | ((lane >= 0) & (lane < LANES)), F_BAD_LANE, lane)]
        return active & ~to_c, active & to_c, f0, val, checks

    def _scalar(self, st: State, ins: jax.Array):
        active = ins[1] == CLS["SCL"]
        sub, f0, f1, f2 = ins[2], ins[3], ins[4], ins[5]
        ra, rb, pa = st.r[f1 & 15], st.r[f2 & 15], st.p[f1 & 7]
        results = {
            "MOVI": f1, "ADD": ra + rb, "ADDI": ra + f2, "SUB": ra - rb, "MUL": ra * rb,
            "SHLI": jnp.left_shift(ra, f2 & 31), "SHRI": jnp.right_shift(ra, f2 & 31), "ANDI": ra & f2,
            "PMOVI": f1, "PMOV": ra, "PADD": pa + rb, "PADDI": pa + f2, "MOVP": pa,
        }
        val = self._pick({m: jnp.asarray(v, jnp.int32) for m, v in results.items()}, sub)
        to_p = (sub >= self.sub["PMOVI"]) & (sub <= self.sub["PADDI"])
        return active & ~to_p, active & to_p, f0, val

    def _move(self, st: State, ins: jax.Array):
        active = ins[1] == CLS["MOV"]
        sub, f0, f1, f2 = ins[2], ins[3], ins[4], ins[5]
        xa, xt, ca = st.x[jnp.clip(f1, 0, 11)], st.x[jnp.clip(f0, 0, 11)], st.c[f1 & 7]
        lane = st.r[f2 & 15]
        lanes = jnp.arange(LANES)
        full = lambda v: jnp.broadcast_to(v, (LANES,))  # noqa: E731
        results = {
            "VCONV": bf16(ca), "VUPS": xa, "VMOV": xa, "VBCST": full(bf16(lax.bitcast_convert_type(f1, jnp.float32))),
            "VBCSTL": full(xa[jnp.clip(lane, 0, LANES - 1)]), "VINS": jnp.where(lanes == lane, xa, xt),
            "CZERO": jnp.zeros(LANES, jnp.float32),
        }
        val = self._pick(results, sub)
        to_c = (sub == self.sub["VUPS"]) | (sub == self.sub["CZERO"])
        uses_lane = (sub == self.sub["VBCSTL"]) | (sub == self.sub["VINS"])
        checks = [(~active | ~uses_lane | ((lane >= 0) & (lane < LANES)), F_BAD_LANE, lane)]
        return active & ~to_c, active & to_c, f0, val, checks

    def _dma_geometry(self, st: State, ins: jax.Array, ext_limit: jax.Array):
        hw = self.hw
        active = ins[1] == CLS["DMA"]
        pm, re, rs = st.p[ins[3] & 7], st.r[ins[4] & 15], st.r[ins[5] & 15]
        rows, rowbytes = ins[6], ins[7]
        total = rows * rowbytes
        last = re + (rows - 1) * rs
        lo, hi = jnp.minimum(re, last), jnp.maximum(re, last) + rowbytes
        checks = [
            (~active | ((pm >= 0) & (pm + total <= hw.dm_bytes)), F_OOB_DM, pm),
            (~active | (pm % LINE_BYTES == 0), F_MISALIGNED, pm),
            (~active | ((re % 2 == 0) & (rs % 2 == 0)), F_MISALIGNED, jnp.where(re % 2 == 0, rs, re)),
            (~active | ((lo >= 0) & (hi <= 2 * ext_limit)), F_OOB_EXT, jnp.where(lo < 0, lo, hi)),
        ]
        return active, pm, re, rs, rows, rowbytes, total, checks

    def _dma(self, st: State, ins: jax.Array, t: jax.Array, geometry, on: jax.Array) -> State:
        """Data movement and engine timing of one DMA (only DMA bundles run this, see ``run_one``)."""
        hw = self.hw
        _, pm, re, rs, rows, rowbytes, total, _ = geometry
        sub = ins[2]
        is_out = (sub == self.sub["DMAO"]) | (sub == self.sub["DMAOT"])
        tiled = (sub == self.sub["DMAIT"]) | (sub == self.sub["DMAOT"])
        e = jnp.arange(self.dma_elems, dtype=jnp.int32)
        # DM element e of strip j = e // per_strip holds row i, element b of that strip (one strip when not tiled)
        width = jnp.maximum(jnp.where(tiled, ins[8], rowbytes) // 2, 1)  # elements per strip row
        per_strip = jnp.maximum(rows * width, 1)
        live = e < total // 2
        within = e % per_strip
        ext_idx = re // 2 + (within // width) * (rs // 2) + (e // per_strip) * width + within % width
        dm_idx = pm // 2 + e
        H, D = st.ext.shape[0], st.dm.shape[0]
        dm = st.dm.at[jnp.where(live & on & ~is_out, dm_idx, D)].set(st.ext[jnp.clip(ext_idx, 0, H - 1)],
                                                                     mode="drop")
        ext = st.ext.at[jnp.where(live & on & is_out, ext_idx, H)].set(dm[jnp.clip(dm_idx, 0, D - 1)], mode="drop")
        line = jnp.arange(hw.dm_lines, dtype=jnp.int32)
        touched = on & (line >= pm // LINE_BYTES) & (line < (pm + total + LINE_BYTES - 1) // LINE_BYTES)
        pending_write = jnp.max(jnp.where(touched, st.line_ready, 0))
        pending_read = jnp.max(jnp.where(touched, st.line_read, 0))
        engine = is_out.astype(jnp.int32)
        dep = jnp.where(is_out, pending_write, jnp.maximum(pending_write, pending_read))
        start = jnp.maximum(jnp.maximum(t, st.dma_free[engine]), dep)
        occ = (total + hw.dma_bytes_per_cycle - 1) // hw.dma_bytes_per_cycle
        done = start + hw.dma_latency + occ
        line_ready = jnp.where(touched & ~is_out, done, st.line_ready)
        line_read = jnp.where(touched & is_out, jnp.maximum(st.line_read, done), st.line_read)
        busy = st.busy.at[BUSY_KEYS.index("DMA_IN") + engine].add(jnp.where(on, occ, 0))
        ctl = st.ctl.at[T_END].max(jnp.where(on, done, 0))
        dma_free = jnp.where(on, st.dma_free.at[engine].set(start + occ), st.dma_free)
        return st._replace(dm=dm, ext=ext, line_ready=line_ready, line_read=line_read, dma_free=dma_free, busy=busy,
                           ctl=ctl)

    # ---- one bundle ------------------------------------------------------------------------
    def decode(self, words: jax.Array) -> jax.Array:
        """``words`` with each bundle's static timing facts appended, computed once per run, not per step.

        Columns after the ``S * F`` words: the ready-table index of every register operand read
        (``0``, r0's always-zero entry, where none), of every register written (``N_READY``, matching
        nothing, where none), each write's latency, and the cycles from issue to the bundle's last
        result (at least 1)."""
        S, F = self.S, self.F
        rows = words.reshape(-1, S, F)
        ops, fields = rows[:, :, 0], rows[:, :, 3:]
        rbase, wbase = jnp.asarray(self.read_base)[ops], jnp.asarray(self.write_base)[ops]
        ridx = jnp.where(rbase >= 0, jnp.clip(rbase + fields, 0, N_READY - 1), 0)
        widx = jnp.where(wbase >= 0, wbase + fields, N_READY)
        wlat = jnp.asarray(self.write_latency)[ops]
        end = jnp.maximum(jnp.max(jnp.where(wbase >= 0, wlat, 0), axis=(1, 2)), 1)
        n = words.shape[0]
        return jnp.concatenate([words, ridx.reshape(n, -1), widx.reshape(n, -1), wlat.reshape(n, -1), end[:, None]],
                               axis=1)

    def step(self, st: State, loaded: jax.Array, words: jax.Array, ext_limit: jax.Array, dma: bool = False,
             live: jax.Array | bool = True) -> tuple[State, jax.Array]:
        """One bundle; returns the new state and the next bundle's prefetched loads (see ``_prefetch``).

        ``loaded``: this bundle's prefetched loads; ``dma``: this step may execute a DMA (static);
        ``live``: commit anything at all."""
        hw, S, F = self.hw, self.S, self.F
        pc = st.ctl[PC]
        word = words[pc]
        row = word[: S * F].reshape(S, F)
        SJ = S * (F - 3)
        ridx, widx, wlat = (word[S * F + k * SJ : S * F + (k + 1) * SJ] for k in range(3))
        ld = [self._load(st, row[s], loaded[s]) for s in (S_LD0, S_LD1)]
        st_active, st_addr, st_val, st_checks = self._store(st, row[S_ST])
        vx_on, vc_on, v_dst, v_val, v_checks = self._vector(st, row[S_VEC])
        sr_on, sp_on, s_dst, s_val = self._scalar(st, row[S_SCL])
        mx_on, mc_on, m_dst, m_val, m_checks = self._move(st, row[S_MOV])
        ctl_ins = row[S_CTL]
        geometry = self._dma_geometry(st, ctl_ins, ext_limit) if dma else None  # plain steps hold no DMA

        # ---- control: branches and loops -------------------------------------------------
        is_ctl = ctl_ins[1] == CLS["CTL"]
        csub, c0, c1 = ctl_ins[2], ctl_ins[3], ctl_ins[4]
        sub = self.sub
        is_loop = is_ctl & ((csub == sub["LOOP"]) | (csub == sub["LOOPI"]))
        count = jnp.where(csub == sub["LOOP"], st.r[c0 & 15], c0)
        rv = st.r[c0 & 15]
        taken = is_ctl & ((csub == sub["J"]) | ((csub == sub["BEQZ"]) & (rv == 0)) |
                          ((csub == sub["BNEZ"]) & (rv != 0)) | (is_loop & (count <= 0)))
        target = jnp.where(csub == sub["J"], c0, jnp.where(is_loop, c1, c1))
        push = is_loop & (count > 0)
        depth = st.ctl[DEPTH]
        # first, the clock's limit: a bundle that would issue once the clock (every earlier bundle's issue and
        # completion) has passed CYCLE_LIMIT faults (-1: the whole bundle's line)
        clock = jnp.maximum(st.ctl[T_ISSUE], st.ctl[T_END])
        checks = [(-1, clock <= CYCLE_LIMIT, F_CYCLE_LIMIT, clock)] + \
            [(S_LD0, *c) for c in ld[0][3]] + [(S_LD1, *c) for c in ld[1][3]] + \
            [(S_ST, *c) for c in st_checks] + [(S_VEC, *c) for c in v_checks] + [(S_MOV, *c) for c in m_checks] + \
            [(S_CTL, *c) for c in (geometry[7] if dma else [])] + \
            [(S_CTL, ~push | (depth < hw.loop_depth), F_LOOP_DEPTH, depth)]
        ok = jnp.bool_(True)
        code, detail, fslot = jnp.int32(0), jnp.int32(0), jnp.int32(0)
        for slot_id, cond, c, d in checks:
            first = ok & ~cond
            code, detail = jnp.where(first, c, code), jnp.where(first, d, detail)
            fslot = jnp.where(first, slot_id, fslot)
            ok = ok & cond
        live = jnp.asarray(live, bool)  # (a Python True would turn ~live into the integer -2)
        ok = ok | ~live  # a step that is not live records no fault (and commits nothing, below)

        # ---- timing ----------------------------------------------------------------------------
        dep = jnp.max(st.ready[ridx])
        dep_reg = dep
        L = hw.dm_lines
        ld_lines = [jnp.clip(x[1] // LINE_BYTES, 0, L - 1) for x in ld]
        st_line = jnp.clip(st_addr // LINE_BYTES, 0, L - 1)
        dep = jnp.maximum(dep, jnp.where(ld[0][0], st.line_ready[ld_lines[0]], 0))
        dep = jnp.maximum(dep, jnp.where(ld[1][0], st.line_ready[ld_lines[1]], 0))
        dep = jnp.maximum(dep, jnp.where(st_active, jnp.maximum(st.line_ready[st_line], st.line_read[st_line]), 0))
        banks = [x[1] // hw.bank_bytes for x in ld] + [st_addr // hw.bank_bytes]
        mem_on = [ld[0][0], ld[1][0], st_active]
        conflicts = jnp.int32(0)
        for i in range(3):
            for k in range(i + 1, 3):
                conflicts += (mem_on[i] & mem_on[k] & (banks[i] == banks[k])).astype(jnp.int32)
        t = jnp.maximum(st.ctl[T_ISSUE], dep) + conflicts
        commit = ok & live
        wready = t + wlat
        ready = _write_rows(st.ready, [(widx[i], wready[i], commit) for i in range(SJ)] + [(0, 0, True)])

        # ---- commit ------------------------------------------------------------------------------
        x_writes, p_writes = [], []
        for s in range(2):
            active, addr, val, _ = ld[s]
            x_writes.append((jnp.clip(row[s, 3], 0, 11), val, active & commit))
            p_writes.append((row[s, 4] & 7, addr + row[s, 5], active & commit))
        p_writes.append((row[S_ST, 4] & 7, st_addr + row[S_ST, 5], st_active & commit))
        x_writes += [(jnp.clip(v_dst, 0, 11), v_val, vx_on & commit), (jnp.clip(m_dst, 0, 11), m_val, mx_on & commit)]
        x = _write_rows(st.x, x_writes)
        on = st_active & commit  # a disabled store writes the spare line past the DM
        e = jnp.where(on, jnp.clip(st_addr // 2, 0, hw.dm_elements - LANES), hw.dm_elements)
        dm = lax.dynamic_update_slice(st.dm, st_val, (e,))
        c = _write_rows(st.c, [(v_dst & 7, v_val, vc_on & commit), (m_dst & 7, m_val, mc_on & commit)])
        r = _write_rows(st.r, [(s_dst & 15, s_val, sr_on & commit), (0, 0, True)])
        p = _write_rows(st.p, p_writes + [(s_dst & 7, s_val, sp_on & commit)])
        bad = ((vx_on | vc_on) & ~jnp.all(jnp.isfinite(v_val))) | ((mx_on | mc_on) & ~jnp.all(jnp.isfinite(m_val)))
        nan_pc = jnp.where(commit & bad & (st.nan_pc < 0), pc, st.nan_pc)

        # loop stack and next pc
        loop_row = jnp.arange(hw.loop_depth)[:, None]
        slot = jnp.clip(depth, 0, hw.loop_depth - 1)
        do_push = push & commit
        loops = jnp.where(do_push & (loop_row == slot), jnp.stack([pc + 1, c1, count]), st.loops)
        depth = depth + do_push.astype(jnp.int32)
        top = jnp.clip(depth - 1, 0, hw.loop_depth - 1)
        top_row = loops[top]
        falls = pc + 1
        at_end = commit & ~taken & (depth > 0) & (falls == top_row[L_END])
        again = at_end & (top_row[L_COUNT] > 1)
        loops = jnp.where(again & (loop_row == top) & (jnp.arange(3) == L_COUNT), loops - 1, loops)
        depth = jnp.where(at_end & ~again, depth - 1, depth)
        next_pc = jnp.where(taken, target, jnp.where(again, top_row[L_START], falls))
        halt = is_ctl & (csub == sub["HALT"])

        end = t + word[S * F + 3 * SJ]
        ctl = _write_rows(st.ctl, [
            (PC, jnp.where(commit, next_pc, pc), True),
            (STEPS, st.ctl[STEPS] + live.astype(jnp.int32), True),
            (DEPTH, depth, commit),
            (HALTED, 1, (halt & commit) | ~ok),
            (FAULT, code, ~ok), (FAULT_PC, pc, ~ok), (FAULT_DETAIL, detail, ~ok), (FAULT_SLOT, fslot, ~ok),
            (T_ISSUE, t + 1 + jnp.where(taken, hw.branch_penalty, 0), commit),
            (T_END, jnp.maximum(st.ctl[T_END], end), commit),
        ])
        cls = row[:, 1]
        slot_used = ((cls != CLS["NOP"]) & commit).astype(jnp.int32)
        busy = st.busy + jnp.concatenate([slot_used, jnp.zeros(len(BUSY_KEYS) - S, jnp.int32)])
        counts = st.counts + jnp.sum((cls == jnp.arange(len(CLASSES))[:, None]) * slot_used, axis=1)
        prof = st.prof
        if self.profile:  # the wait split by cause, in the order the scoreboard applies them
            base = st.ctl[T_ISSUE]
            reg = jnp.maximum(dep_reg - base, 0)
            mem = jnp.maximum(dep - jnp.maximum(base, dep_reg), 0)
            penalty = jnp.where(taken, hw.branch_penalty, 0)
            row_add = jnp.stack([jnp.int32(1), jnp.int32(1), reg, mem, conflicts, penalty]).astype(jnp.int32)
            # one row, updated in place
            prof = lax.dynamic_update_slice(prof, (prof[pc] + jnp.where(commit, row_add, 0))[None], (pc, 0))
        st = st._replace(ctl=ctl, r=r, p=p, ready=ready, loops=loops, busy=busy, counts=counts, x=x, c=c,
                         nan_pc=nan_pc, dm=dm, prof=prof)
        if dma:
            st = self._dma(st, ctl_ins, t, geometry, geometry[0] & commit)
        return st, self._prefetch(st, words)

    def run_one(self, words: jax.Array, ext: jax.Array, ext_limit: jax.Array, max_steps: jax.Array) -> State:
        """Run to HALT, a fault or ``max_steps`` bundles (``words``: the program, as assembled).

        An inner loop runs bundles without DMA; the outer loop executes each DMA bundle. Keeping
        the (large) DMA copies out of the inner loop, without a ``cond`` around them, keeps the
        memories in place and the common step cheap.
        """
        dma_slot = S_CTL * self.F + 1
        words = self.decode(words)

        def running(carry) -> jax.Array:
            st = carry[0]
            return (st.ctl[HALTED] == 0) & (st.ctl[STEPS] < max_steps)

        def plain(carry) -> jax.Array:
            return running(carry) & (words[carry[0].ctl[PC], dma_slot] != CLS["DMA"])

        def plain_step(carry):
            return self.step(*carry, words, ext_limit)

        def outer(carry):
            carry = lax.while_loop(plain, plain_step, carry)
            return self.step(*carry, words, ext_limit, dma=True, live=running(carry))

        st = self.init_state(ext, words.shape[0])
        st, _ = lax.while_loop(running, outer, (st, self._prefetch(st, words)))
        return st._replace(dm=st.dm[: self.hw.dm_elements])


@functools.lru_cache(maxsize=64)
def batched_runner(hw_json: str, profile: bool = False):
    """The jitted ``vmap``-over-input-sets runner for one hardware config (shapes bucket the cache).

    ``profile``: a separate interpreter that also fills ``State.prof`` (same cycles and outputs)."""
    machine = Machine(VLIWConfig.model_validate_json(hw_json), profile)
    return interpreter.batched_runner(machine, (None, 0, None, None))
