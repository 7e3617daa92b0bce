"""Rolled hardware loops for the VLIW trace path: a steady loop is pre-passed once, not once per iteration.

At a loop's back-edge the pre-pass (``trace.prepass``) compares the control and timing state with the one
at the previous back-edge. Where the loop is *steady* the remaining iterations are not stepped in Python:

- **control**: every rolled iteration runs the template's bundles. A body without branches or register-count
  LOOPs (inner LOOPIs are fine) runs the same bundles in every iteration; otherwise :func:`follow` walks the
  path the template took -- inner LOOPIs, LOOPs whose count register does not move, branches -- and each
  conditional branch on a moving register becomes a predicate checked per iteration (the roll stops before
  the first iteration that would go the other way; a taken branch's penalty is part of the period). A
  symbolic walk of one iteration with every scalar and pointer register as ``value + coefficient * m``
  (int32 ring arithmetic, exact for add, sub, shift left and multiplication by a constant; anything else
  only on registers that do not change) proves each register changes by the same delta every iteration
  (:func:`walk`), and gives the branches' operands;
- **timing**: the scoreboard, DMA engines, end time and every DM line's DMA times, relative to the
  iteration's start cycle (values already in the past count as zero), are the same at both back-edges;
  a DMA's DM side does not move; DM lines a moving load or store stream touches are neither written by
  the body's DMAs nor pending; bank conflicts are checked per iteration. Then iteration ``m`` is
  iteration 0 shifted by ``m`` periods, and cycles, counts and the final state follow exactly;
- **faults and the step budget**: every address-dependent check is evaluated for each remaining iteration
  (:func:`first_bad`); the roll stops before the first iteration that would fault, leave the budget or
  need a check this module does not prove, and the pre-pass steps the rest as before (same bundle, same
  fault);
- **data**: an iteration may read values written earlier in the same iteration or before the loop, and one
  kind of value of the iteration before: a DM line a DMA in (a prefetch, reading EXT only) writes later in
  the template (``Op.prev_r``); all checked per iteration for DM lines. DMA outs write EXT elements no other
  rolled DMA touches. The rolled iterations are then independent but for the prefetches, which run first:
  one iteration's data operations become a *template* with rows and addresses affine in the iteration number
  (``Rolled``), and the data path runs each template operation for 32 iterations at once (``trace.unrolled``),
  so neither the pre-pass nor the stored trace grows with the trip count; or, for a trace whose segments are
  long enough to pay for it, the operations of every iteration levelled with the rest (``expand``);
- **periods**: a loop whose state repeats only every second back-edge (a double buffer's swap) rolls as
  iterations of two passes (``PERIOD_MAX``), with the checks above over the two passes as one iteration.

Where any of this cannot be shown the loop is simply stepped (never guessed); the interpreter stays the
oracle (``tests/sims/vliw/test_trace_rolled.py``).

A body rolled again from another start reuses its walk (:class:`Walks`: the start registers whose values
decide anything are pinned, the others only flow into fields and are re-based; ``Forms``), and what ``build``
derives from the walk's operations alone (``Walked.memo``); ``tests/sims/vliw/test_trace_rolled_walks.py``. A
path-dependent body followed again reuses its path (:class:`Follows`: pinned registers agree, every branch goes
the same way); ``tests/sims/vliw/test_trace_rolled_follows.py``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from kcgym.sims.vliw import machine as M
from kcgym.sims.vliw.config import LANES, LINE_BYTES, VECTOR_BYTES, VLIWConfig
from kcgym.sims.vliw.isa import make_isa

ROLL_ROWS = 1 << 18  # rows of the row buffer the rolled iterations' values take (a segment fits in them; the data
# path's buffer holds only the rows a trace uses, ``trace.compact``): batch_matmul C5's expert rolls 2 slabs of 16
# blocks at a time, 8,736 rows, 29 of them in one segment per batch
ROLL_WIDTH = 32  # iterations one rolled group runs at once, one a lane (a DMA out: trace.DMAO_WIDTH); the cost
# of a group grows with its lanes (128 measured 2.5x slower than 32 at C3), so wider groups gain little
ROLL_MIN = 4  # fewer remaining iterations than this are stepped (rolling has a fixed cost; a segment of few
# iterations runs expanded, ``EXPAND_BELOW``: rolled, batch_matmul C3's expert's 6 of two slabs a batch took its
# warm simulate from 0.66 to 3.6 s)
ROLL_TRIES = 4  # back-edges of one loop instance compared before the pre-pass gives up on it
DYNAMIC_TRIES = 2 * ROLL_TRIES  # back-edges a loop whose path depends on registers (``follow``) is tried at
# without rolling before the pre-pass stops trying it (two instances; a try of each period counts): following a
# long body costs about what stepping it does, and a loop that did not roll in two instances rarely does in the
# next (speed only: a loop not tried is stepped)
WALK_MAX = 16384  # bundles of one iteration the symbolic walk follows (longer bodies are stepped): 2 x 2,278 for
# batch_matmul C5's expert, 2 x ~4,300 for C4's (past 8,192: its slab loop was stepped, first simulate 10.4 s cold)
PERIOD_MAX = 2  # back-edges one rolled iteration may span: a body whose state repeats every second back-edge
# (a double buffer: the buffers swap each iteration) rolls as iterations of two passes
EXT_CHECK_MAX = 1 << 22  # EXT elements the DMA-out disjointness check may enumerate
EVENT_CHUNK = 1 << 20  # accesses x iterations ``iterations_ok`` checks in one array (memory)
DM_MEMO_MAX = 1 << 22  # moving accesses x iterations of a walk's DM checks kept for its re-based copies (memory)
EXPAND_MIN_LANES = 6_000_000  # a trace whose rolled segments hold at least this many operations x iterations ...
EXPAND_MAX_OPS = 12_000_000  # ... and, expanded (``expand``), with its stepped operations at most this many runs
# them levelled (the stepped trace's bound, ``trace.TRACE_MAX_OPS``: no more memory than stepping). Levelled, the
# data path runs fewer groups (64 lanes of any operations and iterations of a level, not one operation's
# iterations: batch_matmul C5's expert, 8.4M, 317k -> 132k groups, 9 -> 4 s warm), but it compiles the levelled
# chunk functions besides the rolled trace's one and packs the lanes on the host: decoder_llama C5's 4.5M lanes
# lost 1.6 s of its first simulate to gain 0.6 s warm (146k -> 99k groups; same process, JAX's cache warm)
EXPAND_BELOW = ROLL_WIDTH // 2  # a segment of fewer iterations is expanded whatever the trace's lanes (its rolled
# groups would run less than half full; levelled, its operations share groups, and in a mixed trace they run in the
# same jitted function: no compile more)
N_FIELDS = 8
F_AFF, F_LANE, F_LINE = range(3)  # a rolled field: c0 + c1*m, its value mod LANES, or the DM line's row there
F_LOCAL, F_ROW = -1, -2  # (template only) a row of this iteration (c0: its op), a row from before the loop
# (F_LINE occurs in fields 0 and 1 only, F_LANE in field 2: the data path decodes just those)

_SUB = make_isa(VLIWConfig()).sub_ids
_CLS = M.CLS
_I32 = 1 << 32


def _w(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - _I32 if x & 0x80000000 else x


class Rolled(NamedTuple):
    """One rolled segment: each group is one template operation over up to its kind's width of iterations."""

    kind: np.ndarray  # int32[G]
    c0: np.ndarray  # int32[G, N_FIELDS]
    c1: np.ndarray  # int32[G, N_FIELDS]
    mode: np.ndarray  # int32[G, N_FIELDS]
    seq0: np.ndarray  # int32[G]: the step of the operation in iteration m is seq0 + m * seq_step
    m0: np.ndarray  # int32[G]: first iteration of the group (the template's is 0)
    cnt: np.ndarray  # int32[G]: iterations in the group (lanes in use)
    n: int
    table: np.ndarray  # int32[dm_lines]: DM line -> row before the loop (F_LINE fields)
    seq_step: int  # steps per iteration
    seq_lo: int  # first and last step of the rolled iterations
    seq_hi: int
    pcs: np.ndarray  # int32[seq_step]: bundle of each step of an iteration
    level: np.ndarray | None = None  # int32[G]: the group's operation's level within an iteration (``expand``)

    def pc_of(self, seq: int) -> int:
        return int(self.pcs[(seq - self.seq_lo) % self.seq_step])


class Structure(NamedTuple):
    """A loop body as one iteration runs it (``None`` where it is not a candidate)."""

    pcs: tuple  # bundle of each step of an iteration, in order
    ready_w: tuple  # scoreboard entries the body writes
    engines: tuple  # DMA engines (0 in, 1 out) the body uses
    rows: int  # rows one iteration's values take (the rolled region holds ``ROLL_ROWS // rows`` iterations)


DYNAMIC = Structure((), (), (), 1)  # (``structure``) a body whose path depends on its registers: ``follow`` it


def follow(dec: list, start: int, end: int, n_dec: int, r0: list | None = None, p0: list | None = None,
           dr: list | None = None, dp: list | None = None, passes: int = 1,
           fm: Forms | None = None) -> tuple[list[int], list[Event]] | Structure | None:
    """One iteration's control: the bundles it runs, in order, and a ``"br"`` event per conditional branch
    whose register moves (``Event.addr`` + ``delta`` * m: its value; ``extra``: (zero at the template,)).
    Inner LOOPIs (and LOOPs whose count register does not move) must nest inside the body, and a taken
    branch must land inside the innermost open loop's body. With no registers (``r0`` None) only a body
    without branches or register LOOPs is followed (:data:`DYNAMIC` otherwise); with the template's
    registers and their deltas (as ``walk``), the path is the template's, and each later iteration takes
    it while every ``"br"`` predicate holds (``iterations_ok``). ``passes``: the body run that many times in a
    row as one iteration (a period of ``passes`` back-edges; ``dr``/``dp`` are then the deltas over all of them).
    ``fm``: the registers' forms, kept alongside (``Follows``): a LOOP count's registers are pinned, and each
    branch's form, value and outcome kept (``Forms.tests``). None: not a candidate."""
    static = r0 is None
    c_ctl = _CLS["CTL"]
    s_loop, s_loopi, s_j, s_beqz, s_bnez, s_halt = (_SUB[m] for m in ("LOOP", "LOOPI", "J", "BEQZ", "BNEZ", "HALT"))
    r = p = []
    if not static:
        r = [(r0[i], _w(dr[i])) for i in range(16)]  # type: ignore[index]
        p = [(p0[i], _w(dp[i])) for i in range(8)]  # type: ignore[index]
    pcs: list[int] = []
    branches: list[Event] = []
    stack: list[list[int]] = []
    pc = start
    while True:
        if not start <= pc < end or pc >= n_dec or len(pcs) >= WALK_MAX:
            return None
        row = dec[pc][0]
        ctl = row[6]
        pcs.append(pc)
        nxt = pc + 1
        taken = False
        if ctl[1] == c_ctl:
            sub = ctl[2]
            if sub == s_halt:
                return None
            if static and sub != s_loopi:
                return DYNAMIC  # J, BEQZ, BNEZ, LOOP
            target = ctl[4]
            if sub in (s_beqz, s_bnez):
                v, c = r[ctl[3] & 15]
                zero = v == 0
                if fm is not None:
                    fm.tests.append((fm.r[ctl[3] & 15], v, zero, len(branches) if c else -1))
                if c:
                    branches.append(Event(len(pcs) - 1, "br", v, c, (zero,)))
                taken = zero if sub == s_beqz else not zero
            elif sub == s_j:
                taken, target = True, ctl[3]
            else:
                count = ctl[3]
                if sub == s_loop:
                    count, moves = r[ctl[3] & 15]
                    if fm is not None:
                        fm.pin(fm.r[ctl[3] & 15])
                    if moves:
                        return None  # a trip count that changes from iteration to iteration
                if count <= 0:
                    if static:
                        return None  # a skipped LOOPI is a taken branch: keep the static case simple
                    taken = True
                elif not pc + 1 < ctl[4] <= end or (stack and ctl[4] > stack[-1][1]):
                    return None
                else:
                    stack.append([pc + 1, ctl[4], count])
            if taken:
                lo, hi = (stack[-1][0], stack[-1][1]) if stack else (start, end)
                if not lo <= target < hi:
                    return None
                nxt = target
        if not static and not _advance(row, r, p, fm):
            return None
        if taken:
            pass
        elif stack and nxt == stack[-1][1]:  # one loop level per bundle, as Machine.step
            if stack[-1][2] > 1:
                stack[-1][2] -= 1
                nxt = stack[-1][0]
            else:
                stack.pop()
                if nxt == end:
                    return None  # an inner loop ending at this loop's end: the back-edge is not taken
        elif not stack and nxt == end:
            passes -= 1
            if not passes:
                break
            nxt = start  # (the loop's own back-edge, inside a period of several passes)
        pc = nxt
    return pcs, branches


class Follows:
    """The paths (``follow``) of one pre-pass's path-dependent loop bodies, each reused where the same body is
    followed again, with the same deltas, from a start that agrees on every pinned register (``Forms.pins``: a
    LOOP's count, a MUL operand...) and where every branch's register, moved by its form's change, is zero or
    not as it was: the same path, its branch events' values moved alike (swiglu C5's expert follows 4 bodies
    306 times; its counters differ at each, the outcomes do not). Speed only."""

    def __init__(self) -> None:
        self.memo: dict = {}  # (start, end, passes, dr, dp) -> pins -> pinned values -> [(start, tests, path)]
        self.hits = 0

    def follow(self, dec: list, start: int, end: int, n_dec: int, r0: list, p0: list, dr: list, dp: list,
               passes: int) -> tuple[list[int], list[Event]] | Structure | None:
        at = (*r0, *p0)
        by_pins = self.memo.setdefault((start, end, passes, tuple(dr), tuple(dp)), {})
        for pins, seen in by_pins.items():
            for at0, tests, got in seen.get(tuple(at[i] for i in pins), ()):
                hit = _moved(got, tests, [b - a for a, b in zip(at0, at, strict=True)])
                if hit is not None:
                    self.hits += 1
                    return hit
        fm = Forms()
        got = follow(dec, start, end, n_dec, r0, p0, dr, dp, passes, fm)
        pins = tuple(sorted(fm.pins))
        by_pins.setdefault(pins, {}).setdefault(tuple(at[i] for i in pins), []).append((at, fm.tests, got))
        return got


def _moved(got, tests: list, d: list):
    """``got`` (a path ``follow`` took, or its failure) from a start moved by ``d``, where each branch in
    ``tests`` has its outcome still; None where one does not."""
    events = None if got is None or isinstance(got, Structure) else list(got[1])
    for f, v, zero, ev in tests:
        if f:
            v = _w(v + sum(c * d[k] for k, c in f.items()))
            if (v == 0) != zero:
                return None
            if ev >= 0 and events is not None:
                events[ev] = events[ev]._replace(addr=v)
    return got if events is None else (got[0], events)


def structure(dec: list, start: int, end: int, n_dec: int) -> Structure | None:
    """The body's structure where its control is fixed (no branch, register LOOP or HALT; inner LOOPIs
    nested inside it), :data:`DYNAMIC` where it depends on registers, None where it is no candidate."""
    got = follow(dec, start, end, n_dec)
    if got is None or isinstance(got, Structure):
        return got
    return facts(dec, got[0])


def facts(dec: list, pcs: list) -> Structure | None:
    """The structure of an iteration that runs the bundles ``pcs``. None where it reads a vector or
    accumulator register before writing it and writes it later (a value carried from iteration to
    iteration)."""
    c_dma, c_ld, c_st, c_vec, c_mov = (_CLS[c] for c in ("DMA", "LD", "ST", "VEC", "MOV"))
    ready_w: set[int] = set()
    engines: set[int] = set()
    xw: set[int] = set()
    cw: set[int] = set()
    x_early: set[int] = set()  # read before any write of this iteration
    c_early: set[int] = set()
    rows = 0
    vec_reads_c = {_SUB["VRADD"], _SUB["VEXP2C"], _SUB["VINVC"]}
    vec_reads_cd = {_SUB["VMAC"], _SUB["VMACL"], _SUB["VMMUL"]}
    for pc in pcs:
        row, _, writes, _ = dec[pc]
        ld0, ld1, st_, vec, scl, mov, ctl = row
        ready_w.update(i for i, _ in writes)
        bx: list[int] = []
        bc: list[int] = []

        def rx(reg: int) -> None:
            if reg not in xw:
                x_early.add(reg)

        def rc(reg: int) -> None:
            if reg not in cw:
                c_early.add(reg)

        for ins in (ld0, ld1):
            if ins[1] == c_ld:
                bx.append(min(max(ins[3], 0), 11))
        if st_[1] == c_st:
            rx(min(max(st_[3], 0), 11))
        if vec[1] == c_vec:
            sub, f0, f1, f2 = vec[2], vec[3], vec[4], vec[5]
            if sub in vec_reads_c:
                rc(f1 & 7)
            else:
                rx(min(max(f1, 0), 11))
                rx(min(max(f2, 0), 11))
                if sub in vec_reads_cd:
                    rc(f0 & 7)
            (bc if sub >= _SUB["VMPY"] else bx).append((f0 & 7) if sub >= _SUB["VMPY"] else min(max(f0, 0), 11))
        if mov[1] == c_mov:
            sub, f0, f1 = mov[2], mov[3], mov[4]
            if sub == _SUB["VCONV"]:
                rc(f1 & 7)
            elif sub not in (_SUB["CZERO"], _SUB["VBCST"]):
                rx(min(max(f1, 0), 11))
            if sub == _SUB["VINS"]:
                rx(min(max(f0, 0), 11))
            to_c = sub in (_SUB["VUPS"], _SUB["CZERO"])
            (bc if to_c else bx).append((f0 & 7) if to_c else min(max(f0, 0), 11))
        xw.update(bx)
        cw.update(bc)
        rows += len(bx) + len(bc) + (st_[1] == c_st)
        if ctl[1] == c_dma:
            engines.add(int(ctl[2] in (_SUB["DMAO"], _SUB["DMAOT"])))
            if ctl[2] not in (_SUB["DMAO"], _SUB["DMAOT"]):
                rows += -(-max(ctl[6] * ctl[7], 0) // LINE_BYTES) + 1
    if x_early & xw or c_early & cw:
        return None
    return Structure(tuple(pcs), tuple(sorted(ready_w)), tuple(sorted(engines)), max(rows, 1))


def _advance(row: tuple, r: list, p: list, forms: Forms | None = None) -> bool:
    """The registers after one bundle, symbolically (``(value, coefficient)``; all slots read the
    pre-bundle state, the scalar slot's write wins). False where the scalar result is not affine.
    ``forms``: each register's value as a form in the start registers, kept alongside (``Forms``)."""
    ld0, ld1, st_, _, scl, _, _ = row
    c_ld, c_st, c_scl = _CLS["LD"], _CLS["ST"], _CLS["SCL"]
    val = None
    if scl[1] == c_scl:
        ssub, f0, f1, f2 = scl[2], scl[3], scl[4], scl[5]
        ssub = min(max(ssub, 0), 12)
        val = _scalar(ssub, f1, f2, r[f1 & 15], r[f2 & 15], p[f1 & 7])
        if val is None:
            return False
        if forms is not None:
            fval = forms.scalar(ssub, f1, f2)
    post = [(ins[4] & 7, ins[5]) for ins in (ld0, ld1) if ins[1] == c_ld]
    if st_[1] == c_st:
        post.append((st_[4] & 7, st_[5]))
    pre = [p[i] for i, _ in post]
    for (i, inc), (a, ad) in zip(post, pre, strict=True):
        p[i] = (_w(a + inc), ad)
    if forms is not None:  # (a post-increment adds a constant: the form stays)
        fp = forms.p
        pre_f = [fp[i] for i, _ in post]
        for (i, _), f in zip(post, pre_f, strict=True):
            fp[i] = f
    if val is not None:
        if _SUB["PMOVI"] <= ssub <= _SUB["PADDI"]:
            p[f0 & 7] = val
            if forms is not None:
                forms.p[f0 & 7] = fval
        else:
            r[f0 & 15] = val
            if forms is not None:
                forms.r[f0 & 15] = fval
    r[0] = (0, 0)
    if forms is not None:
        forms.r[0] = None
    return True


def _lin(*terms: tuple) -> dict | None:
    """The form ``sum(scale * form)`` (coefficients mod 2**32; None: a constant)."""
    out: dict = {}
    for scale, f in terms:
        if f:
            for k, v in f.items():
                out[k] = (out.get(k, 0) + scale * v) & 0xFFFFFFFF
    return {k: v for k, v in out.items() if v} or None


class Forms:
    """Each register's value during a walk as a *form* in the walk's start registers: ``{start register:
    coefficient}`` (inputs 0-15: r0-r15, 16-23: p0-p7; None: a constant), exact mod 2**32 for ADD, ADDI, SUB,
    SHLI, moves and post-increments. Where a start register's value decides anything (an address, a lane, a
    MUL, SHRI or ANDI operand), it is *pinned*: a cached walk (``Walks``) is reused only from a start that
    agrees on every pinned register, and re-based where values only flow into fields (``Walked.sinks``)."""

    def __init__(self) -> None:
        self.r: list = [{i: 1} for i in range(16)]
        self.p: list = [{16 + i: 1} for i in range(8)]
        self.pins: set = set()
        self.tests: list = []  # (``follow``) each branch's (form, value, taken-if-zero outcome, its event or -1)

    def pin(self, f: dict | None) -> None:
        if f:
            self.pins.update(f)

    def scalar(self, ssub: int, f1: int, f2: int) -> dict | None:
        """The form of the scalar slot's result (``_scalar``'s cases; the registers before the bundle)."""
        fa, fb, fpa = self.r[f1 & 15], self.r[f2 & 15], self.p[f1 & 7]
        if ssub in (0, 8):
            return None
        if ssub == 1:
            return _lin((1, fa), (1, fb))
        if ssub == 3:
            return _lin((1, fa), (-1, fb))
        if ssub == 4:  # (a product's value and coefficient depend on the operands' values)
            self.pin(fa)
            self.pin(fb)
            return None
        if ssub == 5:
            return _lin((1 << (f2 & 31), fa))
        if ssub in (6, 7):
            self.pin(fa)
            return None
        if ssub in (2, 9):
            return fa
        if ssub == 10:
            return _lin((1, fpa), (1, fb))
        return fpa


class Op(NamedTuple):
    """One template data operation (iteration 0 of the segment) with its per-iteration recipe."""

    kind: int
    step: int  # index of its bundle within the iteration
    c0: list
    c1: list
    mode: list
    deps: list  # template operation indices it must follow (values of this iteration)
    line_w: tuple | None  # (address, delta, n_lines) of the DM lines it writes
    line_r: tuple | None  # (address, delta) of the DM line it reads, or None
    local_r: int  # the template operation whose line it reads (-1: the line as before the loop)
    prev_r: int = -1  # where the line as before the loop is one the template writes later (a prefetch): the
    # template operation whose write of the iteration before this one reads, from the second iteration on


class Event(NamedTuple):
    """A memory access of one iteration, for the per-iteration checks."""

    step: int
    kind: str  # "ld", "ldb", "st", "dma", "br" (a branch: its register's value, ``follow``)
    addr: int
    delta: int
    extra: tuple  # dma: (is_out, tiled, re, re_delta, rs, n_r, rowbytes, tbytes)


def walk(dec: list, s: Structure, r0: list, p0: list, dr: list, dp: list, xs: list, cs: list,
         kinds: tuple, fm: Forms | None = None) -> tuple[list[Op], list[Event], Walked] | None:
    """The symbolic iteration from the template's registers ``r0``/``p0`` with per-iteration deltas ``dr``/
    ``dp``: template operations (fields as ``trace.prepass`` records them, rows as recipes: this
    iteration's, the loop's invariant registers' ``xs``/``cs``, or DM lines via ``Rolled.table``) and memory
    events; None where a lane register moves or a DMA's DM side or stride does. ``kinds``: trace's data-
    operation kinds (K_LD, K_VEC, K_MOV, K_DMAI, K_DMAO, K_MAC, K_MMUL). ``fm``: the registers' forms, whose
    pins say which start registers the result (None included) depends on beyond ``Walked.sinks``."""
    r = [(r0[i], _w(dr[i])) for i in range(16)]
    p = [(p0[i], _w(dp[i])) for i in range(8)]
    fm = Forms() if fm is None else fm
    fr, fp = fm.r, fm.p
    sinks: list = []  # (where, what) of every value a start register flows into (``Walked.sinks``)
    c_ld, c_st, c_vec, c_mov, c_dma = (_CLS[c] for c in ("LD", "ST", "VEC", "MOV", "DMA"))
    S_VLDB, S_VMPYL, S_VMACL, S_VMMUL = _SUB["VLDB"], _SUB["VMPYL"], _SUB["VMACL"], _SUB["VMMUL"]
    S_VMPY, S_VMAC = _SUB["VMPY"], _SUB["VMAC"]
    S_VCONV, S_VUPS, S_VBCST, S_VBCSTL, S_VINS, S_CZERO = (_SUB[m] for m in ("VCONV", "VUPS", "VBCST", "VBCSTL",
                                                                              "VINS", "CZERO"))
    S_DMAO, S_DMAIT, S_DMAOT = _SUB["DMAO"], _SUB["DMAIT"], _SUB["DMAOT"]
    vec_reads_c = {_SUB["VRADD"], _SUB["VEXP2C"], _SUB["VINVC"]}
    vec_reads_cd = {_SUB["VMAC"], _SUB["VMACL"], S_VMMUL}
    K_LD, K_VEC, K_MOV, K_DMAI, K_DMAO, K_MAC, K_MMUL = kinds

    ops: list[Op] = []
    events: list[Event] = []
    xl: dict[int, int] = {}  # register -> template op that wrote it this iteration
    cl: dict[int, int] = {}
    last_w: dict[int, int] = {}  # DM line -> the template op that wrote it last so far
    n_local = [0]
    local_of: dict[int, int] = {}  # op -> local row index

    def xrow(reg: int, dep: list):
        if reg in xl:
            dep.append(xl[reg])
            return ("L", xl[reg])
        return ("R", xs[reg], "x", reg)

    def crow(reg: int, dep: list):
        if reg in cl:
            dep.append(cl[reg])
            return ("L", cl[reg])
        return ("R", cs[reg], "c", reg)

    def line_read(addr: int, dep: list):
        """The row of the line at ``addr`` (iteration 0): the latest write of this iteration to it, else
        the line's row before the loop (checked per iteration by ``check_lines``)."""
        op_i = last_w.get(addr // LINE_BYTES, -1)
        if op_i >= 0:
            dep.append(op_i)
            return ("L", op_i), op_i
        return ("T", addr), -1

    def emit(kind: int, step: int, fields: list, deps: list, line_w=None, line_r=None, local_r=-1,
             writes: bool = True) -> int:
        i = len(ops)
        c0 = [0] * N_FIELDS
        c1 = [0] * N_FIELDS
        md = [F_AFF] * N_FIELDS
        for k, f in enumerate(fields):
            if type(f) is tuple:
                tag = f[0]
                if tag == "D":  # this op's own destination
                    c0[k], md[k] = i, F_LOCAL
                elif tag == "L":  # a row of this iteration: the template op that wrote it
                    c0[k], md[k] = f[1], F_LOCAL
                elif tag == "R":  # a row as before the loop (a register's: ``Walks`` re-bases it)
                    c0[k], md[k] = f[1], F_ROW
                    sinks.append((("op", i, k), (f[2], f[3])))
                elif tag == "A":  # affine value (value, delta)
                    c0[k], c1[k] = f[1], f[2]
                elif tag == "N":  # lane of a bf16 address
                    c0[k], c1[k], md[k] = f[1], f[2], F_LANE
                elif tag == "T":  # the DM line's row as before the loop
                    c0[k], c1[k], md[k] = f[1], f[2], F_LINE
            elif f:
                c0[k] = f if type(f) is int else int(f)
        ops.append(Op(kind, step, c0, c1, md, deps, line_w, line_r, local_r))
        if writes:
            local_of[i] = n_local[0]
            n_local[0] += 1
        return i

    for step, pc in enumerate(s.pcs):
        row = dec[pc][0]
        ld0, ld1, st_, vec, scl, mov, ctl = row
        if ctl[1] == c_dma:  # a DMA reads the registers as they are before this bundle's writes
            dma_regs = (p[ctl[3] & 7], r[ctl[4] & 15], r[ctl[5] & 15])
            dma_forms = (fp[ctl[3] & 7], fr[ctl[4] & 15], fr[ctl[5] & 15])
        xw: list = []
        cw: list = []
        lds = []
        for ins in (ld0, ld1):
            if ins[1] == c_ld:
                a, ad = p[ins[4] & 7]
                fm.pin(fp[ins[4] & 7])  # (addresses decide lines, lanes, banks)
                lds.append((ins, a, ad))
        sa = sd = 0
        if st_[1] == c_st:
            sa, sd = p[st_[4] & 7]
            fm.pin(fp[st_[4] & 7])
        # the data operations, in trace.prepass's order
        for ins, a, ad in lds:
            b = ins[2] == S_VLDB
            events.append(Event(step, "ldb" if b else "ld", a, ad, ()))
            dep: list = []
            row_in, lr_op = line_read(a, dep)
            if row_in[0] == "T":
                row_in = ("T", a, ad)
            lane = ("N", a // 2, ad // 2) if b else 0
            i = emit(K_LD, step, [("D", 0), row_in, lane, int(b)], dep, line_r=(a, ad), local_r=lr_op)
            xw.append((min(max(ins[3], 0), 11), i))
        if st_[1] == c_st:
            events.append(Event(step, "st", sa, sd, ()))
            dep = []
            src = xrow(min(max(st_[3], 0), 11), dep)
            i = emit(K_LD, step, [("D", 0), src, 0, 0], dep, line_w=(sa, sd, 1))
            last_w[sa // LINE_BYTES] = i
        if vec[1] == c_vec:
            vsub, f0, f1, f2, f3 = vec[2], vec[3], vec[4], vec[5], vec[6]
            dep = []
            if vsub in vec_reads_c:
                fa, fb, fca, fcd = 0, 0, crow(f1 & 7, dep), 0
            else:
                fa, fb = xrow(min(max(f1, 0), 11), dep), xrow(min(max(f2, 0), 11), dep)
                fca = 0
                fcd = crow(f0 & 7, dep) if vsub in vec_reads_cd else 0
            lane = 0
            if vsub in (S_VMPYL, S_VMACL):
                lv, ld_ = r[f3 & 15]
                fm.pin(fr[f3 & 15])
                if ld_:
                    return None
                lane = min(max(lv, 0), LANES - 1)
            to_c = vsub >= S_VMPY
            kind = K_MMUL if vsub == S_VMMUL else K_MAC if vsub in (S_VMAC, S_VMACL) else K_VEC
            i = emit(kind, step, [("D", 0), fa, fb, fca, fcd, lane, f3 & 1, vsub], dep)
            (cw if to_c else xw).append(((f0 & 7) if to_c else min(max(f0, 0), 11), i))
        if mov[1] == c_mov:
            msub, f0, f1, f2 = mov[2], mov[3], mov[4], mov[5]
            dep = []
            to_c = msub in (S_VUPS, S_CZERO)
            if msub == S_VCONV:
                fa = crow(f1 & 7, dep)
            elif msub in (S_CZERO, S_VBCST):
                fa = 0
            else:
                fa = xrow(min(max(f1, 0), 11), dep)
            ft = xrow(min(max(f0, 0), 11), dep) if msub == S_VINS else 0
            lane = 0
            if msub in (S_VBCSTL, S_VINS):
                lv, ld_ = r[f2 & 15]
                fm.pin(fr[f2 & 15])
                if ld_:
                    return None
                lane = lv
            i = emit(K_MOV, step, [("D", 0), fa, ft, lane, f1, msub], dep)
            (cw if to_c else xw).append(((f0 & 7) if to_c else min(max(f0, 0), 11), i))
        for reg, i in xw:
            xl[reg] = i
        for reg, i in cw:
            cl[reg] = i
        if not _advance(row, r, p, fm):  # registers, symbolically
            return None
        if ctl[1] == c_dma:
            (pm, pmd), (re, red), (rs, rsd) = dma_regs
            if pmd or rsd:
                return None  # a DMA whose DM side or stride moves: stepped
            fm.pin(dma_forms[0])
            dma_at = len(ops)
            is_out = ctl[2] in (S_DMAO, S_DMAOT)
            tiled = ctl[2] in (S_DMAIT, S_DMAOT)
            n_r, rowbytes = ctl[6], ctl[7]
            total = _w(n_r * rowbytes)
            events.append(Event(step, "dma", pm, 0, (is_out, tiled, re, red, rs, n_r, rowbytes, ctl[8])))
            width = max((ctl[8] if tiled else rowbytes) // 2, 1)
            per_strip = max(n_r * width, 1)
            tot_e = total // 2
            l0, l1 = pm // LINE_BYTES, (pm + total + LINE_BYTES - 1) // LINE_BYTES
            if is_out:
                for i_l in range(l1 - l0):
                    dep = []
                    src, lr_op = line_read((l0 + i_l) * LINE_BYTES, dep)
                    if src[0] == "T":
                        src = ("T", (l0 + i_l) * LINE_BYTES, 0)
                    emit(K_DMAO, step, [src, i_l * LANES, ("A", re, red), rs, width, per_strip, tot_e, 0], dep,
                         line_r=((l0 + i_l) * LINE_BYTES, 0), local_r=lr_op, writes=False)
            else:
                partial = tot_e % LANES != 0
                first = len(ops)
                for i_l in range(l1 - l0):
                    dep = []
                    old: tuple | int = 0
                    lr_op, line_r = -1, None
                    if partial and i_l == l1 - l0 - 1:
                        old_row, lr_op = line_read((l0 + i_l) * LINE_BYTES, dep)
                        old = ("T", (l0 + i_l) * LINE_BYTES, 0) if old_row[0] == "T" else old_row
                        line_r = ((l0 + i_l) * LINE_BYTES, 0)
                    emit(K_DMAI, step, [("D", 0), old, i_l * LANES, ("A", re, red), rs, width, per_strip, tot_e],
                         dep, line_w=((l0 + i_l) * LINE_BYTES, 0, 1), line_r=line_r, local_r=lr_op)
                for i_l in range(l1 - l0):
                    last_w[l0 + i_l] = first + i_l
            at = 2 if is_out else 3  # (the fields of EXT's start and row stride)
            for j, f in ((0, dma_forms[1]), (1, dma_forms[2])):
                if f:
                    sinks += [(("op", i, at + j), f) for i in range(dma_at, len(ops))]
                    sinks.append((("ev", len(events) - 1, 2 + 2 * j), f))
    # a line read as before the loop that a DMA in later in the template writes (a prefetch: double buffering):
    # from the second iteration on it holds that DMA's row of the iteration before (``Op.prev_r``; the DMA reads
    # only EXT, so ``build`` runs it, for every iteration, before its readers; ``iterations_ok`` checks the lines)
    for i, o in enumerate(ops):
        if o.local_r < 0 and o.line_r is not None and not o.line_r[1]:
            j = last_w.get(o.line_r[0] // LINE_BYTES, -1)
            if j > i and ops[j].kind == K_DMAI and not ops[j].deps and ops[j].line_r is None:
                ops[i] = o._replace(prev_r=j)
    sinks += [(("r", i), f) for i, f in enumerate(fr) if f] + [(("p", i), f) for i, f in enumerate(fp) if f]
    return ops, events, Walked(r, p, local_of, n_local[0], xl, cl, sinks)


class Walked(NamedTuple):
    r: list  # (value, coefficient) of each register after the iteration
    p: list
    local_of: dict  # template op -> its local row index
    n_local: int
    xl: dict  # vector register -> template op of its last write
    cl: dict
    sinks: list = []  # ((where, ...), form or ("x" / "c", register)): each value that a start register or a
    # row from before the loop flows into -- an operation's field ("op", op, field), a DMA event's EXT start or
    # stride ("ev", event, index in extra), a register after the iteration ("r" / "p", register)
    memo: dict | None = None  # (``build``) what depends on the operations only, shared by re-based copies


class Walks:
    """The walks (``walk``) of one pre-pass's loop bodies, each reused where the same body rolls again from a
    start that differs only in registers and rows whose values flow into fields (``Forms``, ``Walked.sinks``):
    the cached walk is re-based to the new start, the same result as walking it (decoder_llama C5 rolls 304
    times over 14 bodies, each from its own EXT addresses and rows). Speed only."""

    def __init__(self) -> None:
        self.memo: dict = {}  # (pcs, dr, dp) -> pins -> pinned start values -> (start, walk or None)
        self.hits = 0

    def walk(self, dec: list, s: Structure, r0: list, p0: list, dr: list, dp: list, xs: list, cs: list,
             kinds: tuple) -> tuple[list[Op], list[Event], Walked] | None:
        start = (*r0, *p0)
        by_pins = self.memo.setdefault((s.pcs, tuple(dr), tuple(dp)), {})
        for pins, seen in by_pins.items():
            hit = seen.get(tuple(start[i] for i in pins))
            if hit is not None:
                self.hits += 1
                return None if hit[1] is None else _rebased(hit[1], hit[0], start, xs, cs)
        fm = Forms()
        got = walk(dec, s, r0, p0, dr, dp, xs, cs, kinds, fm)
        if got is not None:
            got = (got[0], got[1], got[2]._replace(memo={}))
        pins = tuple(sorted(fm.pins))
        by_pins.setdefault(pins, {})[tuple(start[i] for i in pins)] = (start, got)
        return got


def _rebased(got: tuple, start0: tuple, start: tuple, xs: list, cs: list) -> tuple[list[Op], list[Event], Walked]:
    """The walk ``got`` made from ``start0`` (r0-r15, p0-p7), moved to ``start`` and the rows ``xs``/``cs``: each
    sink's value shifted by its form's change (mod 2**32), each row from before the loop the register's row now.
    The operations' fields are shifted as one array (``_rebase_plan``, kept in the walk's memo)."""
    ops, events, wk = got
    plan = None if wk.memo is None else wk.memo.get("rebase")
    if plan is None:
        plan = _rebase_plan(ops, wk)
        if wk.memo is not None:
            wk.memo["rebase"] = plan
    f_op, f_field, coefs, base, rest = plan
    d = [b - a for a, b in zip(start0, start, strict=True)]
    ops, events, r, p = list(ops), list(events), list(wk.r), list(wk.p)
    c0 = base
    changed: set = set()
    if len(f_op):
        shift = (coefs * (np.asarray(d, np.int64) & 0xFFFFFFFF).astype(np.uint64)).sum(axis=1) & np.uint64(0xFFFFFFFF)
        on = shift != 0
        if on.any():
            c0 = base.copy()
            total = np.zeros(base.shape, np.int64)
            np.add.at(total, (f_op[on], f_field[on]), shift[on].astype(np.int64))
            hit = np.zeros(base.shape, bool)
            hit[f_op[on], f_field[on]] = True
            c0[hit] = ((c0[hit] + total[hit] + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)  # (``_w``)
            changed.update(np.unique(f_op[on]).tolist())
    work: dict = {}  # operation -> its fields, where a sink of ``rest`` sets one
    extras: dict = {}
    for where, what in rest:  # (in the sinks' order)
        tag = where[0]
        if type(what) is tuple:  # a row from before the loop: the register's row at this start
            f = work.get(where[1])
            if f is None:
                f = work[where[1]] = c0[where[1]].tolist()
            f[where[2]] = (xs if what[0] == "x" else cs)[what[1]]
            continue
        shift_ = sum(c * d[k] for k, c in what.items()) & 0xFFFFFFFF
        if not shift_:
            continue
        if tag == "op":
            f = work.get(where[1])
            if f is None:
                f = work[where[1]] = c0[where[1]].tolist()
            f[where[2]] = _w(f[where[2]] + shift_)
        elif tag == "ev":
            ex = extras.get(where[1])
            if ex is None:
                ex = extras[where[1]] = list(events[where[1]].extra)
            ex[where[2]] = _w(ex[where[2]] + shift_)
        else:
            regs = r if tag == "r" else p
            regs[where[1]] = (_w(regs[where[1]][0] + shift_), regs[where[1]][1])
    at = sorted(changed | work.keys())
    for i, fields in zip(at, c0[at].tolist() if at else [], strict=True):
        o = ops[i]
        ops[i] = Op._make((o[0], o[1], work.get(i, fields), *o[3:]))
    for i, ex in extras.items():
        events[i] = events[i]._replace(extra=tuple(ex))
    return ops, events, wk._replace(r=r, p=p)


def _rebase_plan(ops: list[Op], wk: Walked) -> tuple:
    """The walk's operation-field sinks with forms as arrays (operation, field, coefficient of each start
    register mod 2**32), the operations' fields as the walk made them, and the other sinks (rows from before the
    loop, DMA events' EXT starts and strides, registers) as they are. A field that is both a row and a form's
    sink keeps the sinks' order: there every sink stays in ``rest``."""
    rows = {(w[1], w[2]) for w, what in wk.sinks if w[0] == "op" and type(what) is tuple}
    f_op, f_field, coefs, rest = [], [], [], []
    for where, what in wk.sinks:
        if where[0] == "op" and type(what) is not tuple and (where[1], where[2]) not in rows:
            f_op.append(where[1])
            f_field.append(where[2])
            row = [0] * 24
            for k, c in what.items():
                row[k] = c & 0xFFFFFFFF
            coefs.append(row)
        else:
            rest.append((where, what))
    base = np.asarray([o.c0 for o in ops], np.int64).reshape(-1, N_FIELDS)
    return (np.asarray(f_op, np.int64), np.asarray(f_field, np.int64), np.asarray(coefs, np.uint64).reshape(-1, 24),
            base, rest)


def _scalar(ssub: int, f1: int, f2: int, ra, rb, pa):
    """The scalar slot's result as (value, coefficient); None where it is not affine in the iteration."""
    def add(x, y):
        return (_w(x[0] + y[0]), _w(x[1] + y[1]))

    if ssub in (0, 8):
        return (_w(f1), 0)
    if ssub == 1:
        return add(ra, rb)
    if ssub == 2:
        return (_w(ra[0] + f2), ra[1])
    if ssub == 3:
        return (_w(ra[0] - rb[0]), _w(ra[1] - rb[1]))
    if ssub == 4:
        if ra[1] == 0:
            return (_w(ra[0] * rb[0]), _w(ra[0] * rb[1]))
        if rb[1] == 0:
            return (_w(ra[0] * rb[0]), _w(ra[1] * rb[0]))
        return None
    if ssub == 5:
        s = f2 & 31
        return (_w(ra[0] << s), _w(ra[1] << s))
    if ssub in (6, 7):
        if ra[1]:
            return None
        return (_w(ra[0] >> (f2 & 31)) if ssub == 6 else _w(ra[0] & f2), 0)
    if ssub == 9:
        return ra
    if ssub == 10:
        return add(pa, rb)
    if ssub == 11:
        return (_w(pa[0] + f2), pa[1])
    return pa


def iterations_ok(ops: list[Op], events: list[Event], k_max: int, hw: VLIWConfig, limit: int, H: int,
                  line_ready: np.ndarray, line_read: np.ndarray, t0: int, memo: dict | None = None) -> int:
    """How many iterations after the template (1..k_max) pass every check that depends on the iteration:
    branches that go the template's way (``"br"`` events), bounds, alignment, EXT bounds, bank conflicts,
    the DM lines each one's data reads (its own writes, or lines no rolled iteration -- the template
    included -- has written yet), and that a moving access never meets a DMA's line or a pending one
    (``line_ready`` / ``line_read`` and ``t0``: the template iteration's start). -1: not even the template
    qualifies. ``memo``: the walk's (``Walked.memo``), where the checks that read only its DM side are kept
    (``_dm_checks``), the same for every re-based copy of it."""
    if k_max <= 0:
        return 0
    m = np.arange(1, k_max + 1, dtype=np.int64)
    ok = np.ones(k_max, bool)
    lo32, hi32 = -(1 << 31), (1 << 31) - 1
    dma_lines = np.zeros(hw.dm_lines, bool)
    for e in events:
        if e.kind == "dma":
            is_out, tiled, re, red, rs, n_r, rowbytes, tb = e.extra
            total = n_r * rowbytes
            dma_lines[e.addr // LINE_BYTES:(e.addr + total + LINE_BYTES - 1) // LINE_BYTES] = True
    for e in events:
        if e.kind == "br":  # the branch goes the template's way (``follow``)
            ok &= (((e.addr + e.delta * m) & 0xFFFFFFFF) == 0) == e.extra[0]
            continue
        if e.kind == "dma":
            is_out, tiled, re, red, rs, n_r, rowbytes, tb = e.extra
            rem = re + red * m
            last = rem + (n_r - 1) * rs
            lo, hi = np.minimum(rem, last), np.maximum(rem, last) + rowbytes
            ok &= (rem % 2 == 0) & (lo >= 0) & (hi <= 2 * limit) & (rem >= lo32) & (rem <= hi32) & (last >= lo32) & (
                last <= hi32) & (hi <= hi32)
            if is_out:
                width = max((tb if tiled else rowbytes) // 2, 1)
                per_strip = max(n_r * width, 1)
                idx = _ext_elements(re, rs, width, per_strip, n_r * rowbytes // 2)
                if len(idx):
                    shift = (red // 2) * m
                    ok &= (idx.min() + shift >= 0) & (idx.max() + shift < H)
    dm = None if memo is None else memo.get(("dm checks", k_max))
    if dm is None:
        dm = _dm_checks(ops, [e for e in events if e.kind not in ("br", "dma")], k_max, hw)
        if memo is not None and sum(lc.size for lc, _, _ in dm[1]) <= DM_MEMO_MAX:
            memo[("dm checks", k_max)] = dm
    static_ok, moving = dm
    # a moving access's lines idle: no DMA's, none pending at the start (the state's part, per call)
    for lc, inside, st in moving:
        idle = inside & ~dma_lines[lc] & (line_ready[lc] <= t0)
        idle &= ~st[:, None] | (line_read[lc] <= t0)
        if not idle[:, 0].all():
            return -1
        ok &= np.all(idle[:, 1:], axis=0)
    ok &= static_ok
    bad = np.flatnonzero(~ok)
    return int(bad[0]) if len(bad) else k_max


def _dm_checks(ops: list[Op], mem: list[Event], k_max: int, hw: VLIWConfig) -> tuple[np.ndarray, list]:
    """The checks of ``iterations_ok`` that read only the walk's DM side -- its loads' and stores' addresses and
    deltas, its operations' DM lines -- which a re-based walk keeps (its sinks are EXT addresses, rows and
    registers): (per iteration 1..k_max whether bounds, alignment, bank conflicts and the data's lines pass,
    per slice of moving accesses (their clipped lines over iterations 0..k_max, whether they lie in DM, whether
    each is a store)) for the idle-line check against the pre-pass's state."""
    m = np.arange(1, k_max + 1, dtype=np.int64)
    m_all = np.arange(0, k_max + 1, dtype=np.int64)
    ok = np.ones(k_max, bool)
    dm, bank = hw.dm_bytes, hw.bank_bytes
    by_step: dict[int, list] = {}
    for e in mem:
        by_step.setdefault(e.step, []).append(e)
    # loads and stores: bounds and alignment; a moving one's lines, as arrays over accesses x iterations, a slice
    # of accesses at a time (memory)
    moving: list = []
    per = max(1, EVENT_CHUNK // (k_max + 1))
    for at in range(0, len(mem), per):
        part = mem[at:at + per]
        a = np.asarray([e.addr for e in part], np.int64)[:, None]
        d = np.asarray([e.delta for e in part], np.int64)[:, None]
        size = np.asarray([2 if e.kind == "ldb" else VECTOR_BYTES for e in part], np.int64)[:, None]
        addr = a + d * m[None, :]
        ok &= np.all((addr >= 0) & (addr + size <= dm) & (addr % size == 0), axis=0)
        mv = d[:, 0] != 0
        if mv.any():
            ln = (a[mv] + d[mv] * m_all[None, :]) // LINE_BYTES
            st = np.asarray([e.kind == "st" for e in part], bool)[mv]
            moving.append((np.clip(ln, 0, hw.dm_lines - 1), (ln >= 0) & (ln < hw.dm_lines), st))
    # bank conflicts: per bundle with two or more accesses, its count of same-bank pairs as the template's
    multi = [evs for evs in by_step.values() if len(evs) > 1]
    if multi:
        acc = [e for evs in multi for e in evs]
        b = (np.asarray([e.addr for e in acc], np.int64)[:, None]
             + np.asarray([e.delta for e in acc], np.int64)[:, None] * m_all[None, :]) // bank
        pairs, step_of, at = [], [], 0
        for g, evs in enumerate(multi):
            pairs += [(at + i, at + j) for i in range(len(evs)) for j in range(i + 1, len(evs))]
            step_of += [g] * (len(evs) * (len(evs) - 1) // 2)
            at += len(evs)
        pi, pj = np.asarray(pairs, np.int64).T
        c = np.zeros((len(multi), k_max + 1), np.int64)
        np.add.at(c, np.asarray(step_of, np.int64), (b[pi] == b[pj]).astype(np.int64))
        ok &= np.all(c[:, 1:] == c[:, :1], axis=0)
    # the data: a line this iteration wrote, or one no rolled iteration has written yet (its row is then
    # the one it has at the loop's back-edge, ``Rolled.table``)
    # (each as one array over operations x iterations: a body has thousands of operations, and a call per
    # operation was most of a long kernel's first simulate)
    n_ops, n_lines = len(ops), hw.dm_lines
    first = np.full(n_lines + 1, np.iinfo(np.int64).max, np.int64)  # first (iteration, op) writing a line
    writers = [i for i, o in enumerate(ops) if o.line_w is not None]
    w_at = np.asarray(writers, np.int64)
    w_rec = np.asarray([ops[i].line_w or (0, 0, 0) for i in writers], np.int64).reshape(-1, 3)
    w_a, w_d, w_n = w_rec[:, 0], w_rec[:, 1], w_rec[:, 2]
    if writers:
        ln_w = np.clip((w_a[:, None] + w_d[:, None] * m_all[None, :]) // LINE_BYTES, 0, n_lines - 1)
        order = m_all[None, :] * n_ops + w_at[:, None]
        for j in range(int(w_n.max())):
            more = w_n > j
            np.minimum.at(first, np.minimum(ln_w[more] + j, n_lines), order[more])
        lw_m = (w_a[:, None] + w_d[:, None] * m[None, :]) // LINE_BYTES  # their first line, iterations 1..k
    readers = [i for i, o in enumerate(ops) if o.line_r is not None]
    if readers:
        r_rec = np.asarray([ops[i].line_r or (0, 0) for i in readers], np.int64).reshape(-1, 2)
        ln_r = np.clip((r_rec[:, 0, None] + r_rec[:, 1, None] * m[None, :]) // LINE_BYTES, 0, n_lines - 1)
        prev = np.asarray([ops[i].prev_r >= 0 for i in readers], bool)
        before = np.asarray([ops[i].local_r < 0 for i in readers], bool) & ~prev
        if prev.any():  # a prefetched line: its last write before the read is the prefetch, one iteration back
            at = np.asarray(readers, np.int64)[prev]
            ok &= _last_writer_is_prev(ln_r[prev], at, np.asarray([ops[i].prev_r for i in at.tolist()], np.int64),
                                       ln_w, w_n, w_at, n_ops)
        if before.any():  # the line as before the loop: no rolled iteration wrote it before this read
            at = np.asarray(readers, np.int64)[before]
            ok &= np.all(first[ln_r[before]] > m[None, :] * n_ops + at[:, None], axis=0)
        local = np.flatnonzero(~before & ~prev)  # a line this iteration wrote, and no later writer before the read
        if any(ops[ops[readers[row]].local_r].line_w is None for row in local.tolist()):
            ok[:] = False  # (its line came from no write: never rolled)
        elif len(local):
            ok &= _last_writer_is_own(ln_r[local], np.asarray([readers[row] for row in local.tolist()], np.int64),
                                      np.asarray([ops[readers[row]].local_r for row in local.tolist()], np.int64),
                                      lw_m, w_n, w_at)
    return ok, moving


def _last_writer_is_own(ln: np.ndarray, at: np.ndarray, own: np.ndarray, lw_m: np.ndarray, w_n: np.ndarray,
                        w_at: np.ndarray) -> np.ndarray:
    """Per iteration (1..k): for every reader (``at``: its operation; ``ln``: its line per iteration), the last
    writer of that line before it in this iteration (a writer ``w`` at operation ``w_at[w]`` writes lines
    ``lw_m[w] .. + w_n[w] - 1``; an operation's own write comes after its read) is ``own``. One sort of every
    write and read per (iteration, line, operation), not a test per reader and writer."""
    k = ln.shape[1]
    parts = [(lw_m[w_n > j] + j, w_at[w_n > j]) for j in range(int(w_n.max()))]
    line = np.concatenate([p[0] for p in parts] + [ln])  # [entries, k]
    op = np.concatenate([p[1] for p in parts] + [at])
    is_w = np.concatenate([np.ones(len(p[1]), bool) for p in parts] + [np.zeros(len(at), bool)])
    want = np.concatenate([np.full(len(op) - len(at), -1, np.int64), own])
    e2, col2 = np.meshgrid(np.arange(len(op)), np.arange(k), indexing="ij")
    e, col, flat = e2.reshape(-1), col2.reshape(-1), line.reshape(-1)
    srt = np.lexsort((is_w[e], op[e], flat, col))  # by iteration, line, operation; a read before a write
    e, col, line = e[srt], col[srt], flat[srt]
    w_pos = np.maximum.accumulate(np.where(is_w[e], np.arange(len(e)), -1))  # the last write so far
    rd = np.flatnonzero(~is_w[e])
    prev = w_pos[rd]
    good = (prev >= 0) & (col[np.maximum(prev, 0)] == col[rd]) & (line[np.maximum(prev, 0)] == line[rd])
    good &= op[e[np.maximum(prev, 0)]] == want[e[rd]]
    ok = np.ones(k, bool)
    ok[col[rd[~good]]] = False
    return ok


def _last_writer_is_prev(ln: np.ndarray, at: np.ndarray, src: np.ndarray, ln_w: np.ndarray, w_n: np.ndarray,
                         w_at: np.ndarray, n_ops: int) -> np.ndarray:
    """Per iteration m (1..k): for every reader (``at``: its operation, ``ln``: its line per iteration), the last
    write of that line before the read, over iterations 0..m in program order, is operation ``src`` of
    iteration m - 1 (``ln_w``: each writer's first line per iteration 0..k). One sort of every write and read
    by line and (iteration, operation); a read sorts before a write at the same place (an operation's own
    write follows its read)."""
    k = ln.shape[1]
    m_all = np.arange(0, k + 1, dtype=np.int64)
    parts = [((ln_w[w_n > j] + j).reshape(-1), (m_all[None, :] * n_ops + w_at[w_n > j, None]).reshape(-1))
             for j in range(int(w_n.max()))]
    r_order = (m_all[None, 1:] * n_ops + at[:, None]).reshape(-1)
    want = ((m_all[None, 1:] - 1) * n_ops + src[:, None]).reshape(-1)
    line = np.concatenate([p[0] for p in parts] + [ln.reshape(-1)])
    order = np.concatenate([p[1] for p in parts] + [r_order])
    is_w = np.concatenate([np.ones(len(p[0]), bool) for p in parts] + [np.zeros(len(r_order), bool)])
    srt = np.lexsort((is_w, order, line))
    line, order, is_w = line[srt], order[srt], is_w[srt]
    w_pos = np.maximum.accumulate(np.where(is_w, np.arange(len(srt)), -1))
    rd = np.flatnonzero(~is_w)
    prev = np.maximum(w_pos[rd], 0)
    good = (w_pos[rd] >= 0) & (line[prev] == line[rd]) & (order[prev] == want[srt[rd] - (len(srt) - len(want))])
    ok = np.ones(k, bool)
    bad_m = (order[rd[~good]] // n_ops) - 1
    ok[bad_m] = False
    return ok


def _ext_elements(re: int, rs: int, width: int, per_strip: int, tot_e: int) -> np.ndarray:
    """EXT elements of a DMA (``Machine._dma``'s formula, int64)."""
    e = np.arange(tot_e, dtype=np.int64)
    within = e % per_strip
    return re // 2 + (within // width) * (rs // 2) + (e // per_strip) * width + within % width


def ext_disjoint(events: list[Event], k: int, memo: dict | None = None) -> bool:
    """DMA outs of the rolled iterations write EXT elements no other rolled DMA (in or out) touches (the template,
    iteration 0, included: it runs in the segment too, and the data path runs each operation for every iteration
    before the next operation). Two DMAs whose element ranges over the iterations do not overlap are not
    enumerated; whether one DMA out meets itself depends only on its geometry, kept in ``memo`` (the walk's)."""
    dmas = [e.extra for e in events if e.kind == "dma"]
    if not any(x[0] for x in dmas):
        return True
    if sum(max(x[5] * x[6] // 2, 0) for x in dmas) * k > EXT_CHECK_MAX:
        return False
    spans = []
    for _, tiled, re, red, rs, n_r, rowbytes, tb in dmas:
        width = max((tb if tiled else rowbytes) // 2, 1)
        lo, hi = _ext_span(re, rs, width, n_r, n_r * rowbytes // 2)
        move = (red // 2) * k
        spans.append((lo + min(move, 0), hi + max(move, 0)))

    def elements(x: tuple) -> np.ndarray:
        is_out, tiled, re, red, rs, n_r, rowbytes, tb = x
        width = max((tb if tiled else rowbytes) // 2, 1)
        idx = _ext_elements(re, rs, width, max(n_r * width, 1), n_r * rowbytes // 2)
        return (idx[None, :] + (red // 2) * np.arange(0, k + 1, dtype=np.int64)[:, None]).reshape(-1)

    for a, x in enumerate(dmas):
        if not x[0]:
            continue
        key = ("ext self", k, x[2] % 2, x[1], *x[3:])
        alone = None if memo is None else memo.get(key)
        if alone is None:
            w = elements(x)
            alone = len(np.unique(w)) == len(w)
            if memo is not None:
                memo[key] = alone
        if not alone:
            return False
        for b, y in enumerate(dmas):
            if b == a or (y[0] and b < a) or spans[b][1] < spans[a][0] or spans[a][1] < spans[b][0]:
                continue  # (a pair of outs once; ranges apart)
            if np.isin(elements(y), elements(x)).any():
                return False
    return True


def _ext_span(re: int, rs: int, width: int, n_r: int, tot_e: int) -> tuple[int, int]:
    """Bounds on the EXT elements of a DMA (``_ext_elements``: row ``within // width`` of ``n_r``, strip
    ``e // per_strip``, column ``within % width``) without enumerating them: every element lies in them."""
    strips = -(-max(tot_e, 0) // max(n_r * width, 1))
    rows = (max(n_r, 1) - 1) * (rs // 2)
    return re // 2 + min(0, rows), re // 2 + max(0, rows) + max(strips - 1, 0) * width + width - 1


def _remapped(v: np.ndarray, remap: dict) -> np.ndarray:
    """``v`` with each value that is a key of ``remap`` replaced by its value (a copy)."""
    keys = np.fromiter(remap, np.int64, len(remap))
    vals = np.fromiter(remap.values(), np.int64, len(remap))
    srt = np.argsort(keys)
    keys, vals = keys[srt], vals[srt]
    pos = np.minimum(np.searchsorted(keys, v), len(keys) - 1)
    return np.where(keys[pos] == v, vals[pos], v).astype(v.dtype)


def build(ops: list[Op], wk: Walked, k: int, roll_base: int, table: np.ndarray, seq0: int, seq_step: int,
          pcs: tuple, remap: dict, widths: tuple, chunk_size) -> tuple[Rolled, dict, dict, dict]:
    """The segment of iterations 0 (the template) .. k and its live-outs: (Rolled, x register -> row,
    c register -> row, DM line -> row) after the last iteration. What depends only on the walk's operations
    (their order, modes, coefficients, rows of this iteration; the DM lines' last writers for ``k``) is kept in
    ``wk.memo``, shared by the walk's re-based copies (``Walks``)."""
    n_local = wk.n_local
    memo = {} if wk.memo is None else wk.memo
    got = memo.get(("fields", roll_base))
    if got is None:
        lvl = [0] * len(ops)
        for i, o in enumerate(ops):  # (a prefetch, ``Op.prev_r``, has no dependencies: level 1, before its readers)
            lvl[i] = max(1 + max((lvl[d] for d in o.deps), default=0), 2 if o.prev_r >= 0 else 1)
        order = sorted(range(len(ops)), key=lambda i: (lvl[i], ops[i].kind, i))
        # each operation's fields, in group order: a row of this iteration becomes affine in the iteration (its
        # local row + n_local * m), a row from before the loop its row after the evictions (``remap``, below)
        f_c0 = np.asarray([ops[i].c0 for i in order], np.int64).reshape(-1, N_FIELDS)
        f_c1 = np.asarray([ops[i].c1 for i in order], np.int64).reshape(-1, N_FIELDS)
        f_md = np.asarray([ops[i].mode for i in order], np.int64).reshape(-1, N_FIELDS)
        local = f_md == F_LOCAL
        local_row = np.zeros(len(ops), np.int64)
        local_row[list(wk.local_of)] = list(wk.local_of.values())
        c0_local = roll_base + local_row[f_c0[local]]
        f_c1[local] = n_local
        before = f_md == F_ROW
        f_md[local | before] = F_AFF
        width = np.asarray([widths[ops[i].kind] for i in order], np.int64)
        # a prefetched line (``Op.prev_r``): the template reads it as before the loop (its F_LINE field), every
        # later iteration the prefetch's row of the iteration before, roll_base + local - n_local + n_local * m
        pv = np.asarray([ops[i].prev_r >= 0 for i in order], bool)
        p_col = pv[:, None] & (f_md == F_LINE)
        p_c0 = np.zeros_like(f_c0)
        for at in np.flatnonzero(pv).tolist():
            p_c0[at] = roll_base + local_row[ops[order[at]].prev_r] - n_local
        got = memo[("fields", roll_base)] = (order, local, c0_local, before, f_c1, f_md, width, np.asarray(
            [ops[i].kind for i in order], np.int32), np.asarray([ops[i].step for i in order], np.int32),
                                             pv, p_col, p_c0, np.asarray([lvl[i] for i in order], np.int32))
    order, local, c0_local, before, f_c1, f_md, width, kind_o, step_o, pv, p_col, p_c0, lvl_o = got
    f_c0 = np.asarray([ops[i].c0 for i in order], np.int64).reshape(-1, N_FIELDS)
    f_c0[local] = c0_local
    if remap and before.any():
        f_c0[before] = _remapped(f_c0[before], remap)
    # a group per operation and run of its kind's width of iterations (0 .. k); a prefetch's reader has the
    # template (iteration 0) in a group of its own, its other iterations in runs from iteration 1
    reps = np.where(pv, 1 + -(-k // width), -(-(k + 1) // width))
    n = int(reps.sum())
    total = max(1, -(-n // chunk_size(n))) * chunk_size(n)
    kind = np.full(total, -1, np.int32)
    a0 = np.zeros((total, N_FIELDS), np.int32)
    a1 = np.zeros((total, N_FIELDS), np.int32)
    md_ = np.zeros((total, N_FIELDS), np.int32)
    s0 = np.zeros(total, np.int32)
    mm = np.ones(total, np.int32)
    cnt = np.zeros(total, np.int32)
    lv = np.zeros(total, np.int32)
    if n:
        of = np.repeat(np.arange(len(order)), reps)
        t = np.arange(n) - np.repeat(np.cumsum(reps) - reps, reps)  # the group's run of its operation
        later = (pv[of] & (t > 0))[:, None] & p_col[of]  # (the fields of those later iterations)
        m0 = np.where(pv[of], np.where(t > 0, 1 + (t - 1) * width[of], 0), t * width[of])
        kind[:n] = kind_o[of]
        a0[:n] = np.where(later, p_c0[of], f_c0[of])
        a1[:n] = np.where(later, n_local, f_c1[of])
        md_[:n] = np.where(later, F_AFF, f_md[of])
        s0[:n] = (seq0 + step_o)[of]
        mm[:n] = m0
        cnt[:n] = np.where(pv[of] & (t == 0), 1, np.minimum(width[of], k + 1 - m0))
        lv[:n] = lvl_o[of]
    last = roll_base + k * n_local
    xs = {reg: last + wk.local_of[i] for reg, i in wk.xl.items()}
    cs = {reg: last + wk.local_of[i] for reg, i in wk.cl.items()}
    lines = memo.get(("lines", roll_base, k))
    if lines is None:
        lines = memo[("lines", roll_base, k)] = _last_writes(ops, wk, k, roll_base)
    tb = _remapped(np.asarray(table, np.int32), remap) if remap else np.asarray(table, np.int32)
    seg = Rolled(kind, a0, a1, md_, s0, mm, cnt, n, tb, seq_step, seq0, seq0 + seq_step * (k + 1) - 1,
                 np.asarray(pcs, np.int32), lv)
    return seg, xs, cs, dict(lines)


def iterations(seg: Rolled) -> int:
    """The iterations a segment runs, the template's included."""
    return int((seg.m0 + seg.cnt).max(initial=0))


def expand(seg: Rolled) -> np.ndarray:
    """The segment's data operations one per iteration, int32[n, 4 + N_FIELDS] as ``trace.prepass`` records
    stepped ones (kind, step, bundle, level, fields; the fields as ``trace.unrolled`` computes them, int32
    arithmetic), group by group. For the levelled data path (``trace.plan``): a segment of a few tens of
    iterations fills a rolled group (one operation, an iteration a lane) only as far as its iterations go,
    while a level of a whole segment fills 64-lane groups (batch_matmul C5's expert: 30 iterations).
    (``trace.schedule_rolled`` schedules them without this array.)"""
    assert seg.level is not None
    g = np.flatnonzero((seg.kind >= 0) & (seg.cnt > 0))
    cnt, m = lanes(seg, g)
    out = np.empty((len(m), 4 + N_FIELDS), np.int32)
    out[:, 4:] = lane_fields(seg, g, cnt, m)
    out[:, 0] = np.repeat(seg.kind[g], cnt)
    out[:, 1] = lane_steps(seg, g, cnt, m)
    out[:, 2] = seg.pcs[(out[:, 1].astype(np.int64) - seg.seq_lo) % seg.seq_step]
    out[:, 3] = np.repeat(seg.level[g], cnt)
    return out


def lanes(seg: Rolled, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The iterations of the groups ``g``, group by group: (each group's count, each lane's iteration, int32).
    (The lanes' values are ``np.repeat``s of the groups': several times faster than gathers by lane.)"""
    cnt = seg.cnt[g]
    m = np.repeat(seg.m0[g], cnt) + (np.arange(int(cnt.sum()), dtype=np.int32) -
                                     np.repeat(np.cumsum(cnt, dtype=np.int32) - cnt, cnt))
    return cnt, m


def lane_steps(seg: Rolled, g: np.ndarray, cnt: np.ndarray, m: np.ndarray) -> np.ndarray:
    """The step of each lane's operation (``lanes``; int32)."""
    return np.repeat(seg.seq0[g], cnt) + np.int32(seg.seq_step) * m


def lane_fields(seg: Rolled, g: np.ndarray, cnt: np.ndarray, m: np.ndarray) -> np.ndarray:
    """int32[lanes, N_FIELDS]: the fields of each lane's operation (``lanes``) as ``trace.unrolled`` computes them
    (int32 arithmetic: it wraps as the data path's does; DM lines' rows from the table, a VLDB's lane mod LANES)."""
    v = np.repeat(seg.c0[g], cnt, axis=0)
    for j in np.flatnonzero(np.any(seg.c1[g] != 0, axis=0)).tolist():
        v[:, j] += np.repeat(seg.c1[g, j], cnt) * m
    tb = np.asarray(seg.table, np.int32)
    md = seg.mode[g]
    for j in (0, 1):  # (only fields 0 and 1 hold DM lines' rows, only field 2 a VLDB's lane)
        on_g = md[:, j] == F_LINE
        if on_g.all():
            v[:, j] = tb[np.clip(v[:, j] // LINE_BYTES, 0, len(tb) - 1)]
        elif on_g.any():
            on = np.repeat(on_g, cnt)
            v[on, j] = tb[np.clip(v[on, j] // LINE_BYTES, 0, len(tb) - 1)]
    on_g = md[:, 2] == F_LANE
    if on_g.any():
        on = np.repeat(on_g, cnt)
        v[on, 2] %= LANES
    return v


def _last_writes(ops: list[Op], wk: Walked, k: int, roll_base: int) -> dict:
    """DM lines: the row of the last write to each (over iterations 0 .. k, then program order), as arrays over
    the writing operations x iterations."""
    n_local = wk.n_local
    m = np.arange(0, k + 1, dtype=np.int64)
    writers = [i for i, o in enumerate(ops) if o.line_w is not None]
    lines: dict = {}
    if writers:
        w_rec = np.asarray([ops[i].line_w for i in writers], np.int64).reshape(-1, 3)
        base = (w_rec[:, 0, None] + w_rec[:, 1, None] * m[None, :]) // LINE_BYTES
        key = m[None, :] * len(ops) + np.asarray(writers, np.int64)[:, None]
        row = roll_base + m[None, :] * n_local + np.asarray([wk.local_of[i] for i in writers], np.int64)[:, None]
        more = [w_rec[:, 2] > j for j in range(int(w_rec[:, 2].max()))]
        ln = np.concatenate([(base[sel] + j).reshape(-1) for j, sel in enumerate(more)])
        key = np.concatenate([key[sel].reshape(-1) for sel in more])
        row = np.concatenate([row[sel].reshape(-1) for sel in more])
        srt = np.lexsort((key, ln))
        ln, row = ln[srt], row[srt]
        end = np.append(ln[1:] != ln[:-1], True)
        lines = dict(zip(ln[end].tolist(), row[end].tolist(), strict=True))
    return lines

