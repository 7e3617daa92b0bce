"""The CPU in JAX: the RVV core's scalar datapath with a BOOM-like out-of-order timing model.

Functional execution is the RVV core's (one implementation): :mod:`kcgym.sims.rvv.machine` decodes the
word, computes ALU/MUL/DIV results and branch outcomes; this module adds a 4-byte scalar memory port
(the RVV step's 128-byte vector lanes are skipped), machine mode (:mod:`kcgym.sims.cpu.system`: CSRs,
PMP, traps) and the timing.

Timing is dataflow-analytic and deterministic (the guide's rules CPU-T*): instructions are processed in
program order, and for each one the step computes when it is fetched, dispatched, issued, completed and
committed from the times of earlier instructions, kept in fixed-size rings (fetch/dispatch, ROB, issue
queues, commit), an issue-slot calendar per functional-unit class, a branch predictor, a return-address
stack and LRU caches. Only the correct path is executed; a mispredicted branch delays the fetch of the
next instruction until it resolves plus the penalty. Array sizes come from the config, so one compile
serves every program and ``vmap`` batches input sets.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from kcgym.sims.cpu import system as S
from kcgym.sims.cpu.assembler import (
    CSR_CYCLE,
    CSR_INSTRET,
    FIRST_STORED,
    STORED_CSRS,
    SUB_CSRRCI,
    SUB_CSRRS,
    SUB_CSRRSI,
    SUB_CSRRW,
    SUB_CSRRWI,
    SUB_MRET,
)
from kcgym.sims.cpu.config import CALENDAR_CYCLES, RAM_BASE, TENSOR_BASE, CPUConfig
from kcgym.sims.jax_cache import enable_persistent_cache
from kcgym.sims.rvv import isa as I
from kcgym.sims.rvv import machine as R
from kcgym.sims.rvv.machine import FAULT, FAULT_DETAIL, FAULT_PC, HALTED, PC, STEPS
from kcgym.sims.xla_options import older_fusion_emitters

FAULT_NAMES = ("NONE", "OOB", "MISALIGNED", "BAD_JUMP", "STEP_BUDGET", "CYCLE_LIMIT")
F_OOB, F_MISALIGNED, F_BAD_JUMP, F_STEP_BUDGET, F_CYCLE_LIMIT = range(1, 6)
UNITS = ("ALU", "MULDIV", "MEM", "BRANCH")  # functional-unit classes, each with its issue queue
U_ALU, U_MULDIV, U_MEM, U_BRANCH = range(4)
# what the state's ``stats`` vector counts
STATS = ("branches", "mispredicts", "icache_accesses", "icache_misses", "dcache_accesses", "dcache_misses",
         "forwarded_loads", "traps")
(S_BRANCH, S_MISPREDICT, S_IACCESS, S_IMISS, S_DACCESS, S_DMISS, S_FORWARD, S_TRAP) = range(len(STATS))

# profiling (``Machine(hw, profile=True)``): per PC, the commit stream's time C(i) - C(i-1) split by the stage
# instruction i was in while the stream waited for it (the intervals [C(i-1), F), [F, D), [D, I), [I, X), [X, C)
# clipped to [C(i-1), C(i)] partition that gap), so the rows sum to the cycle count; the "issue" column holds the
# last piece, [X, C): the commit slots themselves (in-order, commit_width per cycle)
PROFILE_STALLS = ("fetch (I-cache miss, misprediction redirect, fetch buffer)",
                  "dispatch (front-end depth, ROB or issue queue full)", "waiting for operands or a free unit",
                  "load latency (D-cache hits and misses)", "multiply/divide latency", "ALU/branch/store latency")
N_PROF = 2 + len(PROFILE_STALLS)

# ctl indices 0..5 are the RVV core's (PC, STEPS, HALTED, FAULT, FAULT_PC, FAULT_DETAIL): its decode reads them
(FETCH_CYCLE, FETCH_SLOTS, FETCH_LINE, PREV_TAKEN, REDIRECT, LAST_DISPATCH, LAST_COMMIT, DIV_FREE, GHR, RAS_TOP,
 SQ_PTR, T_END, PRIV) = range(6, 19)
N_CTL = 19
NEVER = -1  # ring entries before the first instruction: every "+ 1" bound they give is 0


class State(NamedTuple):
    ctl: jax.Array  # int32[N_CTL]
    x: jax.Array  # int32[32]
    mem: jax.Array  # uint8[ram + tensor bucket + 1] (the last byte absorbs disabled stores)
    ready: jax.Array  # int32[32]: cycle each register's newest value is available
    dispatch: jax.Array  # int32[max(decode_width, fetch_buffer)]: dispatch cycles of the last instructions
    rob: jax.Array  # int32[rob_entries]: commit cycles of the last rob_entries instructions
    commit: jax.Array  # int32[commit_width]: commit cycles of the last commit_width instructions
    iq: jax.Array  # int32[4, max queue]: issue cycles of each class's last queue-size instructions
    iq_ptr: jax.Array  # int32[4]
    cal_tag: jax.Array  # int32[4, CALENDAR_CYCLES]: the cycle each calendar slot counts
    cal_cnt: jax.Array  # int32[4, CALENDAR_CYCLES]: instructions of the class issued in that cycle
    sq_lo: jax.Array  # int32[store_queue]: byte address of the last stores (ring; NEVER-filled = none)
    sq_hi: jax.Array  # int32[store_queue]: one past their last byte
    sq_issue: jax.Array  # int32[store_queue]: their issue cycles
    bp: jax.Array  # int32[predictor_entries]: 2-bit counters
    btb: jax.Array  # int32[predictor_entries]: last target (instruction index) of each jalr
    ras: jax.Array  # int32[ras_entries]
    itag: jax.Array  # int32[isets, iways]: line numbers (-1 invalid)
    iuse: jax.Array  # int32[isets, iways]: last use (LRU)
    dtag: jax.Array  # int32[dsets, dways]
    duse: jax.Array  # int32[dsets, dways]
    dfill: jax.Array  # int32[dsets, dways]: cycle the line's data arrives
    counts: jax.Array  # int32[classes]
    busy: jax.Array  # int32[4]: issue cycles per unit class (a divide counts its whole latency)
    stats: jax.Array  # int32[len(STATS)]
    csr: jax.Array  # int32[len(STORED_CSRS)]: the machine-mode CSRs (kcgym.sims.cpu.system)
    prof: jax.Array  # int32[n_pc, N_PROF] when profiling (executions, commit, stalls), else int32[1, N_PROF]


class Times(NamedTuple):
    """One instruction's pipeline times (what the guide's rules compute)."""

    fetch: jax.Array
    dispatch: jax.Array
    issue: jax.Array
    complete: jax.Array
    commit: jax.Array


def _log2(n: int) -> int:
    return n.bit_length() - 1


def _ring_get(ring: jax.Array, i: jax.Array, k: int) -> jax.Array:
    """The entry written ``k`` instructions before instruction ``i`` (ring of size >= k), NEVER before it."""
    return jnp.where(i >= k, ring[(i - k) % ring.shape[0]], NEVER)


def _index(address: jax.Array) -> jax.Array:
    """A code byte address -> its instruction index (unsigned: a huge address is out of the program)."""
    return R._s(R._u(address) >> 2)


def _link(r: jax.Array) -> jax.Array:
    """ra and t0 are the link registers (the RISC-V return-address-stack hints)."""
    return (r == 1) | (r == 5)


class Cache(NamedTuple):
    hit: jax.Array
    set_: jax.Array
    way: jax.Array  # the hit way, or the LRU victim on a miss


def _lookup(tags: jax.Array, use: jax.Array, line: jax.Array) -> Cache:
    sets = tags.shape[0]
    s = line & (sets - 1)
    row = tags[s]
    match = row == line
    hit = jnp.any(match)
    victim = jnp.argmin(use[s])  # invalid ways have use -1; ties: the lowest way
    return Cache(hit, s, jnp.where(hit, jnp.argmax(match), victim).astype(jnp.int32))


class Machine:
    """One compiled interpreter per CPU config: ``step`` runs one instruction and times it."""

    def __init__(self, hw: CPUConfig, profile: bool = False):
        self.hw = hw
        self.profile = profile  # static: the plain interpreter carries no per-PC counters
        self.units = jnp.array([hw.alu_units, hw.muldiv_units, hw.mem_units, hw.branch_units], jnp.int32)
        self.queues = jnp.array([hw.alu_queue, hw.muldiv_queue, hw.mem_queue, hw.branch_queue], jnp.int32)
        self.line_shift = _log2(hw.line_bytes)

    def init_state(self, mem: jax.Array, prog_len: jax.Array, n_pc: int = 1) -> State:
        hw = self.hw
        x = jnp.zeros(32, jnp.int32).at[1].set(4 * prog_len).at[2].set(RAM_BASE + hw.ram_bytes)
        ctl = jnp.zeros(N_CTL, jnp.int32).at[FETCH_LINE].set(-1).at[PRIV].set(S.PRIV_M)
        qmax = max(hw.alu_queue, hw.muldiv_queue, hw.mem_queue, hw.branch_queue)

        def full(shape: Any, value: int) -> jax.Array:
            return jnp.full(shape, value, jnp.int32)

        iset, dset = hw.sets("icache"), hw.sets("dcache")
        return State(
            ctl=ctl, x=x, mem=mem, ready=full(32, 0), dispatch=full(max(hw.decode_width, hw.fetch_buffer), NEVER),
            rob=full(hw.rob_entries, NEVER), commit=full(hw.commit_width, NEVER), iq=full((4, qmax), NEVER),
            iq_ptr=full(4, 0), cal_tag=full((4, CALENDAR_CYCLES), NEVER), cal_cnt=full((4, CALENDAR_CYCLES), 0),
            sq_lo=full(hw.store_queue, 0), sq_hi=full(hw.store_queue, 0), sq_issue=full(hw.store_queue, NEVER),
            bp=full(hw.predictor_entries, 1), btb=full(hw.predictor_entries, -1), ras=full(hw.ras_entries, -1),
            itag=full((iset, hw.icache_ways), -1), iuse=full((iset, hw.icache_ways), -1),
            dtag=full((dset, hw.dcache_ways), -1), duse=full((dset, hw.dcache_ways), -1),
            dfill=full((dset, hw.dcache_ways), 0), counts=full(len(I.CLASSES), 0), busy=full(4, 0),
            stats=full(len(STATS), 0), csr=full(len(STORED_CSRS), 0),
            prof=full((n_pc if self.profile else 1, N_PROF), 0))

    # ---- memory: one 4-byte port ------------------------------------------------------------
    def memory(self, st: State, ins: R.Ins, is_: R.Is, ext_size: jax.Array, enable: jax.Array
               ) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array, jax.Array, jax.Array]:
        """LOAD and STORE: (new memory, loaded value, address, size, out of bounds, misaligned); a store writes
        only where ``enable`` (the PMP allows it)."""
        hw, sub = self.hw, ins.sub
        lane = jnp.arange(4)
        size = jnp.where(is_.LOAD, jnp.array([1, 2, 4, 1, 2])[jnp.clip(sub, 0, 4)],
                         jnp.array([1, 2, 4])[jnp.clip(sub, 0, 2)])
        addr = ins.xs1 + ins.imm
        act = (lane < size) & is_.scalar_mem & ins.run
        ua = R._u(addr + lane)
        in_ram = (ua >= RAM_BASE) & (ua < RAM_BASE + hw.ram_bytes)
        in_ten = (ua >= TENSOR_BASE) & (ua < R._u(TENSOR_BASE + ext_size))
        dump = st.mem.shape[0] - 1
        midx = jnp.where(in_ram, R._s(ua - RAM_BASE), jnp.where(in_ten, R._s(ua - TENSOR_BASE) + hw.ram_bytes, dump))
        oob = jnp.any(act & ~(in_ram | in_ten))
        misaligned = is_.scalar_mem & ins.run & ((addr & (size - 1)) != 0)
        raw = st.mem[jnp.where(act & ~oob, midx, dump)].astype(jnp.uint32)
        word = R._s(raw[0] | (raw[1] << 8) | (raw[2] << 16) | (raw[3] << 24))
        load_val = jnp.select([sub == 0, sub == 1, sub == 3, sub == 4],
                              [(word << 24) >> 24, (word << 16) >> 16, word & 0xFF, word & 0xFFFF], word)
        store = act & is_.STORE & ~oob & ~misaligned & enable
        data = ((R._u(ins.xs2) >> R._u(8 * lane)) & 0xFF).astype(jnp.uint8)
        idx = jnp.where(store, midx, dump)
        mem = st.mem.at[idx].set(jnp.where(store, data, st.mem[dump]))
        return mem, load_val, addr, size, oob, misaligned

    # ---- timing -----------------------------------------------------------------------------
    def timing(self, st: State, ins: R.Ins, is_: R.Is, taken: jax.Array, next_pc: jax.Array, addr: jax.Array,
               size: jax.Array, on: jax.Array, x_on: jax.Array, trap: jax.Array, mret: jax.Array
               ) -> tuple[dict[str, Any], Times]:
        """The rules CPU-T1..T10 for one instruction: its times and the updated timing state (a ``trap`` or an
        ``mret`` redirects the fetch like a misprediction)."""
        flush = on & (trap | mret)
        hw, ctl, i = self.hw, st.ctl, st.ctl[STEPS]
        n = jnp.where(on, 1, 0)
        # -- fetch (T1, T2) ---------------------------------------------------------------------
        iline = (4 * ins.pc) >> self.line_shift
        new_line = iline != ctl[FETCH_LINE]
        same_group = (ctl[FETCH_SLOTS] < hw.fetch_width) & (ctl[PREV_TAKEN] == 0)
        cand = jnp.where(same_group, ctl[FETCH_CYCLE], ctl[FETCH_CYCLE] + 1)
        f0 = jnp.maximum(jnp.maximum(cand, ctl[REDIRECT]), _ring_get(st.dispatch, i, hw.fetch_buffer))
        ic = _lookup(st.itag, st.iuse, iline)
        imiss = new_line & ~ic.hit
        fetch = f0 + jnp.where(imiss, hw.mem_latency, 0)
        new_group = ~same_group | (fetch != ctl[FETCH_CYCLE])
        icache_on = on & new_line
        itag = st.itag.at[ic.set_, ic.way].set(jnp.where(icache_on, iline, st.itag[ic.set_, ic.way]))
        iuse = st.iuse.at[ic.set_, ic.way].set(jnp.where(icache_on, i, st.iuse[ic.set_, ic.way]))
        # -- dispatch (T3) ----------------------------------------------------------------------
        unit = jnp.select([is_.MULDIV, is_.scalar_mem, is_.BRANCH | is_.JUMP], [U_MULDIV, U_MEM, U_BRANCH], U_ALU)
        q = self.queues[unit]
        qcol = jnp.arange(st.iq.shape[1])
        queue_free = jnp.min(jnp.where(qcol < q, st.iq[unit], jnp.iinfo(jnp.int32).max))
        dispatch = jnp.max(jnp.stack([
            fetch + hw.frontend_depth, ctl[LAST_DISPATCH], _ring_get(st.dispatch, i, hw.decode_width) + 1,
            _ring_get(st.rob, i, hw.rob_entries) + 1, queue_free + 1]))
        # -- issue (T4, T5) ---------------------------------------------------------------------
        reads1 = is_.any_of("ALU", "MULDIV", "LOAD", "STORE", "BRANCH", "JUMP")
        reads2 = is_.any_of("MULDIV", "STORE", "BRANCH") | is_.ALU & (ins.src == I.SRC_V)
        ready = jnp.maximum(dispatch + 1, jnp.maximum(jnp.where(reads1, st.ready[ins.rs1], 0),
                                                       jnp.where(reads2, st.ready[ins.rs2], 0)))
        is_div = is_.MULDIV & (ins.sub >= I.OP["div"])
        ready = jnp.where(is_div, jnp.maximum(ready, ctl[DIV_FREE]), ready)
        ready = jnp.where(is_.CSR, jnp.maximum(ready, ctl[LAST_COMMIT] + 1), ready)  # serialising
        k = jnp.arange(CALENDAR_CYCLES)
        cyc = ready + k
        slot = cyc % CALENDAR_CYCLES
        used = jnp.where(st.cal_tag[unit, slot] == cyc, st.cal_cnt[unit, slot], 0)
        free = used < self.units[unit]
        first = jnp.argmax(free)
        issue = jnp.where(jnp.any(free), ready + first, ready + CALENDAR_CYCLES)
        islot = issue % CALENDAR_CYCLES
        in_use = jnp.where(st.cal_tag[unit, islot] == issue, st.cal_cnt[unit, islot], 0)
        cal_tag = st.cal_tag.at[unit, islot].set(jnp.where(on, issue, st.cal_tag[unit, islot]))
        cal_cnt = st.cal_cnt.at[unit, islot].set(jnp.where(on, in_use + 1, st.cal_cnt[unit, islot]))
        # -- execute: the D-cache and store forwarding (T6) --------------------------------------
        dline = addr >> self.line_shift
        dc = _lookup(st.dtag, st.duse, dline)
        mem_on = on & is_.scalar_mem
        fill_old = st.dfill[dc.set_, dc.way]
        fill = jnp.where(dc.hit, fill_old, issue + hw.dcache_latency + hw.mem_latency)
        cache_ready = jnp.maximum(issue + hw.dcache_latency, fill)
        overlap = (st.sq_lo < addr + size) & (addr < st.sq_hi) & (st.sq_issue != NEVER)
        fwd_from = jnp.max(jnp.where(overlap, st.sq_issue, NEVER))
        load_ready = jnp.maximum(cache_ready, jnp.where(fwd_from != NEVER, fwd_from + hw.dcache_latency, 0))
        dtag = st.dtag.at[dc.set_, dc.way].set(jnp.where(mem_on, dline, st.dtag[dc.set_, dc.way]))
        duse = st.duse.at[dc.set_, dc.way].set(jnp.where(mem_on, i, st.duse[dc.set_, dc.way]))
        dfill = st.dfill.at[dc.set_, dc.way].set(jnp.where(mem_on, fill, fill_old))
        sq_on = on & is_.STORE
        sqi = ctl[SQ_PTR]
        sq_lo = st.sq_lo.at[sqi].set(jnp.where(sq_on, addr, st.sq_lo[sqi]))
        sq_hi = st.sq_hi.at[sqi].set(jnp.where(sq_on, addr + size, st.sq_hi[sqi]))
        sq_issue = st.sq_issue.at[sqi].set(jnp.where(sq_on, issue, st.sq_issue[sqi]))
        latency = jnp.select([is_.LOAD, is_div, is_.MULDIV, is_.ALU | is_.CSR], [load_ready - issue, hw.div_latency,
                                                                                 hw.mul_latency, hw.alu_latency], 1)
        complete = issue + latency
        # -- commit (T7) --------------------------------------------------------------------------
        commit = jnp.maximum(jnp.maximum(complete, ctl[LAST_COMMIT]), _ring_get(st.commit, i, hw.commit_width) + 1)
        # -- branch prediction (T8) ---------------------------------------------------------------
        emask = hw.predictor_entries - 1
        hmask = (1 << hw.history_bits) - 1
        bidx = (ins.pc ^ (ctl[GHR] & hmask if hw.predictor == 1 else 0)) & emask
        counter = st.bp[bidx]
        br_mis = is_.BRANCH & ((counter >= 2) != taken)
        new_counter = jnp.clip(counter + jnp.where(taken, 1, -1), 0, 3)
        bp = st.bp.at[bidx].set(jnp.where(on & is_.BRANCH, new_counter, counter))
        ghr = jnp.where(on & is_.BRANCH, ((ctl[GHR] << 1) | taken.astype(jnp.int32)) & 0xFFFF, ctl[GHR])
        jalr = is_.JUMP & (ins.sub == 1)
        is_ret = jalr & (ins.rd == 0) & _link(ins.rs1)
        is_call = is_.JUMP & _link(ins.rd)
        top = ctl[RAS_TOP]
        ras_pred = jnp.where(top > 0, st.ras[(top - 1) % hw.ras_entries], -1)
        jidx = ins.pc & emask
        jalr_pred = jnp.where(is_ret, ras_pred, st.btb[jidx])
        j_mis = jalr & (jalr_pred != next_pc)
        btb = st.btb.at[jidx].set(jnp.where(on & jalr & ~is_ret, next_pc, st.btb[jidx]))
        top_after_pop = jnp.where(is_ret, jnp.maximum(top - 1, 0), top)
        push_at = top_after_pop % hw.ras_entries
        ras = st.ras.at[push_at].set(jnp.where(on & is_call, ins.pc + 1, st.ras[push_at]))
        new_top = jnp.minimum(top_after_pop + jnp.where(is_call, 1, 0), hw.ras_entries)
        mispredict = on & (br_mis | j_mis)
        counted = {S_BRANCH: on & (is_.BRANCH | jalr), S_MISPREDICT: mispredict, S_IACCESS: icache_on,
                   S_IMISS: icache_on & imiss, S_DACCESS: mem_on, S_DMISS: mem_on & ~dc.hit,
                   S_FORWARD: mem_on & is_.LOAD & (fwd_from != NEVER), S_TRAP: on & trap}
        stats = st.stats + jnp.stack([counted[k] for k in range(len(STATS))]).astype(jnp.int32)
        redirect = jnp.where(mispredict | flush, complete + hw.mispredict_penalty, ctl[REDIRECT])
        ends_group = taken | is_.JUMP | flush
        # -- the state ---------------------------------------------------------------------------
        unit_busy = jnp.where(is_div, hw.div_latency, 1)
        new_ctl = {
            FETCH_CYCLE: fetch, FETCH_SLOTS: jnp.where(new_group, 1, ctl[FETCH_SLOTS] + 1),
            FETCH_LINE: iline, PREV_TAKEN: ends_group.astype(jnp.int32), REDIRECT: redirect,
            LAST_DISPATCH: dispatch, LAST_COMMIT: commit,
            DIV_FREE: jnp.where(is_div, issue + hw.div_latency, ctl[DIV_FREE]), GHR: ghr, RAS_TOP: new_top,
            SQ_PTR: jnp.where(is_.STORE, (sqi + 1) % hw.store_queue, sqi),
            T_END: commit + 1,
        }
        ctl_upd = {c: jnp.where(on, v, ctl[c]) for c, v in new_ctl.items()}
        upd = dict(
            ctl=ctl_upd, ready=st.ready.at[ins.rd].set(jnp.where(x_on, complete, st.ready[ins.rd])),
            dispatch=st.dispatch.at[i % st.dispatch.shape[0]].set(
                jnp.where(on, dispatch, st.dispatch[i % st.dispatch.shape[0]])),
            rob=st.rob.at[i % hw.rob_entries].set(jnp.where(on, commit, st.rob[i % hw.rob_entries])),
            commit=st.commit.at[i % hw.commit_width].set(jnp.where(on, commit, st.commit[i % hw.commit_width])),
            iq=st.iq.at[unit, st.iq_ptr[unit]].set(jnp.where(on, issue, st.iq[unit, st.iq_ptr[unit]])),
            iq_ptr=st.iq_ptr.at[unit].set(jnp.where(on, (st.iq_ptr[unit] + 1) % q, st.iq_ptr[unit])),
            cal_tag=cal_tag, cal_cnt=cal_cnt, sq_lo=sq_lo, sq_hi=sq_hi, sq_issue=sq_issue, bp=bp, btb=btb, ras=ras,
            itag=itag, iuse=iuse, dtag=dtag, duse=duse, dfill=dfill,
            busy=st.busy.at[unit].add(n * unit_busy), stats=stats)
        return upd, Times(fetch, dispatch, issue, complete, commit)

    # ---- one step -----------------------------------------------------------------------------
    def step(self, st: State, prog: jax.Array, prog_len: jax.Array, ext_size: jax.Array,
             max_steps: jax.Array) -> State:
        return self.step_times(st, prog, prog_len, ext_size, max_steps)[0]

    def step_times(self, st: State, prog: jax.Array, prog_len: jax.Array, ext_size: jax.Array,
                   max_steps: jax.Array) -> tuple[State, Times, jax.Array]:
        """One instruction: the new state, its pipeline times and whether it ran (not halted, no fault)."""
        ins = R.Machine.decode(st, prog, max_steps)  # type: ignore[arg-type]  # reads only ctl[PC/STEPS/HALTED], x
        ins, late = R.past_cycle_limit(st.ctl[T_END], ins)
        is_ = R.Is(ins.cls)
        no_vector = R.VType(*(jnp.int32(0),) * 6)  # the scalar ALU's CSR read (vl, vtype) is unused here
        alu, _ = R.Machine.scalar_alu(ins, is_, no_vector)
        cf = R.Machine.control(ins, is_, prog_len)
        run, ctl, csr = ins.run, st.ctl, st.csr
        sy = self.system(st, ins, is_)
        mem, load_val, addr, size, oob, misaligned = self.memory(st, ins, is_, ext_size, sy["mem_ok"])
        mem_denied = sy["fetch_ok"] & is_.scalar_mem & ~oob & ~misaligned & ~sy["mem_ok"]
        trap = run & ~is_.HALT & (~sy["fetch_ok"] | sy["illegal"] | mem_denied)
        is_mret = run & is_.CSR & (ins.sub == SUB_MRET) & ~trap
        target = jnp.where(trap, sy["trap_target"], sy["mret_target"])
        bad_target = (trap | is_mret) & ((target < 0) | (target > prog_len))
        fault = jnp.select([oob, misaligned, cf.bad_jump], [F_OOB, F_MISALIGNED, F_BAD_JUMP], 0)
        fault = jnp.where(trap | ~sy["fetch_ok"], 0, fault)
        fault = jnp.where(bad_target, F_BAD_JUMP, fault)
        fault = jnp.where(run & ~is_.HALT, fault, 0)
        detail = jnp.where(bad_target, 4 * target, jnp.where(cf.bad_jump, jnp.where(ins.sub == 1, cf.jalr_addr,
                                                                                      cf.jump_idx * 4), addr))
        ok = run & (fault == 0)
        on = ok & ~is_.HALT
        executes = on & ~trap
        writes_x = is_.any_of("ALU", "MULDIV", "LOAD", "JUMP", "CSR")
        x_on = executes & writes_x & (ins.rd != 0)
        timed_as = R.Is(jnp.where(trap, I.CLASS_ID["CSR"], ins.cls))  # a trap: a serialising flush, no unit
        upd, times = self.timing(st, ins, timed_as, cf.taken & ~trap, cf.next_pc, addr, size, on, x_on, trap,
                                 is_mret)
        old_csr = jnp.select([ins.imm == CSR_CYCLE, ins.imm == CSR_INSTRET, ins.imm >= FIRST_STORED],
                             [times.issue, ctl[STEPS], sy["stored_value"]], 0)
        x_val = jnp.select([is_.ALU | is_.MULDIV, is_.LOAD, is_.JUMP, is_.CSR],
                           [alu, load_val, 4 * ins.pc + 4, old_csr], 0)
        x = st.x.at[ins.rd].set(jnp.where(x_on, x_val, st.x[ins.rd]))
        cause = jnp.select([~sy["fetch_ok"], sy["illegal"], is_.LOAD], [S.CAUSE_FETCH, S.CAUSE_ILLEGAL, S.CAUSE_LOAD],
                           S.CAUSE_STORE)
        tval = jnp.select([~sy["fetch_ok"], sy["illegal"]], [4 * ins.pc, 0], addr)
        changes = (sy["csr_write"] & executes) | (trap | is_mret) & on
        new_csr, new_priv = lax.cond(  # a real branch: most instructions leave the CSRs alone
            changes, lambda: S.commit(csr, ctl[PRIV], sy["csr_write"] & executes, sy["stored_index"],
                                      sy["new_value"], trap & on, is_mret & on, 4 * ins.pc, cause, tval),
            lambda: (csr, ctl[PRIV]))
        cf_next = jnp.where(trap | is_mret, target, cf.next_pc)
        fault, detail = jnp.where(late, F_CYCLE_LIMIT, fault), jnp.where(late, ctl[T_END], detail)
        faulted = (run & (fault != 0)) | late
        values = {
            PC: jnp.where(on, cf_next, ins.pc), PRIV: jnp.where(on, new_priv, ctl[PRIV]),
            STEPS: ctl[STEPS] + jnp.where(on, 1, 0),
            HALTED: jnp.where((run & is_.HALT) | faulted, 1, ctl[HALTED]),
            FAULT: jnp.where(faulted, fault, ctl[FAULT]),
            FAULT_PC: jnp.where(faulted, ins.pc, ctl[FAULT_PC]),
            FAULT_DETAIL: jnp.where(faulted, detail, ctl[FAULT_DETAIL]),
            **upd.pop("ctl"),
        }
        new_ctl = jnp.stack([values.get(k, ctl[k]) for k in range(N_CTL)])  # one vector: every entry is new
        prof = self.profile_row(st, ins, is_, times, on) if self.profile else st.prof
        new = st._replace(ctl=new_ctl, x=x, mem=mem, counts=st.counts.at[ins.cls].add(jnp.where(on, 1, 0)), prof=prof,
                          csr=new_csr, **upd)
        return new, times, on

    @staticmethod
    def system(st: State, ins: R.Ins, is_: R.Is) -> dict[str, jax.Array]:
        """Machine mode (kcgym.sims.cpu.system): the PMP checks of the fetch and the data access, CSR
        instructions' reads, writes and legality, and where a trap or mret would go."""
        csr, priv, sub = st.csr, st.ctl[PRIV], ins.sub
        mstatus = csr[S.MSTATUS]
        fetch_ok = S.pmp_allows(csr, 4 * ins.pc, priv, jnp.int32(S.PERM_X))
        data_priv = jnp.where((priv == S.PRIV_M) & ((mstatus & S.MPRV) != 0), (mstatus >> S.MPP_SHIFT) & 3, priv)
        perm = jnp.where(is_.LOAD, S.PERM_R, S.PERM_W)
        mem_ok = S.pmp_allows(csr, ins.xs1 + ins.imm, data_priv, perm) & fetch_ok
        stored = ins.imm >= FIRST_STORED
        sidx = jnp.clip(ins.imm - FIRST_STORED, 0, csr.shape[0] - 1)
        old = csr[sidx]
        imm_form = (sub == SUB_CSRRWI) | (sub == SUB_CSRRSI) | (sub == SUB_CSRRCI)
        src = jnp.where(imm_form, ins.rs1, ins.xs1)
        set_form = (sub == SUB_CSRRS) | (sub == SUB_CSRRSI)
        write = is_.CSR & ((sub == SUB_CSRRW) | (sub == SUB_CSRRWI) | (sub > SUB_CSRRW) & (sub < SUB_MRET)
                           & (ins.rs1 != 0))
        new_value = jnp.where((sub == SUB_CSRRW) | (sub == SUB_CSRRWI), src, jnp.where(set_form, old | src, old & ~src))
        illegal = fetch_ok & is_.CSR & ((priv != S.PRIV_M) & (stored | (sub == SUB_MRET)) | write & ~stored)
        return {"fetch_ok": fetch_ok, "mem_ok": mem_ok, "illegal": illegal, "csr_write": write & stored,
                "stored_index": sidx, "stored_value": old, "new_value": new_value,
                "trap_target": _index(csr[S.MTVEC] & ~3), "mret_target": _index(csr[S.MEPC])}

    def profile_row(self, st: State, ins: R.Ins, is_: R.Is, t: Times, on: jax.Array) -> jax.Array:
        """The commit gap of this instruction split by stage (see :data:`PROFILE_STALLS`), added at its PC."""
        prev = jnp.where(st.ctl[STEPS] > 0, st.ctl[LAST_COMMIT], -1)

        def piece(lo: jax.Array, hi: jax.Array) -> jax.Array:
            return jnp.maximum(0, jnp.minimum(hi, t.commit) - jnp.maximum(lo, prev))

        execute = piece(t.issue, t.complete)
        is_muldiv = is_.MULDIV
        row = jnp.stack([jnp.int32(1), piece(t.complete, t.commit), piece(prev, t.fetch), piece(t.fetch, t.dispatch),
                         piece(t.dispatch, t.issue), jnp.where(is_.LOAD, execute, 0), jnp.where(is_muldiv, execute, 0),
                         jnp.where(is_.LOAD | is_muldiv, 0, execute)])
        return st.prof.at[ins.pc].add(jnp.where(on, row, 0))

    def run_one(self, words: jax.Array, mem: jax.Array, prog_len: jax.Array, ext_size: jax.Array,
                max_steps: jax.Array) -> State:
        def cond(s: State) -> jax.Array:
            return (s.ctl[HALTED] == 0) & (s.ctl[STEPS] < max_steps)

        return lax.while_loop(cond, lambda s: self.step(s, words, prog_len, ext_size, max_steps),
                              self.init_state(mem, prog_len, words.shape[0]))


    def trace(self, words: jax.Array, mem: jax.Array, prog_len: jax.Array, ext_size: jax.Array,
              n: int) -> jax.Array:
        """``int32[n, 7]``: pc, F, D, I, X, C and ran (0/1) of the first ``n`` steps: a pipeline trace."""
        def body(s: State, _: Any) -> tuple[State, jax.Array]:
            pc = s.ctl[PC]
            s, t, on = self.step_times(s, words, prog_len, ext_size, jnp.int32(n))
            return s, jnp.stack([pc, *t, on.astype(jnp.int32)])

        return lax.scan(body, self.init_state(mem, prog_len), None, length=n)[1]


@functools.lru_cache(maxsize=8)
def tracer(hw_json: str, n: int) -> Any:
    """``jit(Machine.trace)`` for ``n`` steps on one config (tests and debugging)."""
    machine = Machine(CPUConfig.model_validate_json(hw_json))
    return jax.jit(lambda words, mem, prog_len, ext_size: machine.trace(words, mem, prog_len, ext_size, n),
                   compiler_options=older_fusion_emitters())


@functools.lru_cache(maxsize=8)
def runner(hw_json: str, batched: bool = False, profile: bool = False) -> tuple[Machine, Any]:
    """``(words, mem, prog_len, ext_size, max_steps) -> State``, jitted once per config.

    Unbatched (the default), input sets run one after another and ``lax.switch`` stays a real branch;
    ``batched=True`` vmaps over the memory images (``mem[B, M]``): the same results, state for state.
    Compiled with XLA's older fusion emitters (``xla_options``): half the compile, the first simulate's most.
    """
    enable_persistent_cache()
    machine = Machine(CPUConfig.model_validate_json(hw_json), profile)
    options = older_fusion_emitters()
    if batched:
        return machine, jax.jit(jax.vmap(machine.run_one, in_axes=(None, 0, None, None, None)),
                                compiler_options=options)
    return machine, jax.jit(machine.run_one, donate_argnums=(1,), compiler_options=options)
