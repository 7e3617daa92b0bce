"""Loop rolling for the RVV pre-pass: prove that a loop's next iterations repeat the current one, then skip them.

The pre-pass (``trace.py``) visits every dynamic instruction; an inner loop of a compiler kernel (matmul's
``vle8 / lb / vmacc / addi / bnez``) repeats one path dozens of times with addresses that move by a constant
stride. At a taken backward branch, :func:`scout` walks one iteration of the loop *symbolically*: every scalar
register value is an affine form (mod 2**32) of the registers the body writes, so the value in iteration ``j`` is
``wrap(v0 + j * dv)``; a non-affine result (``mul`` of two moving values, a load from the DTCM, whose bytes may be
known values) or anything outside the fast paths' instruction forms ends the walk with no proof. Each branch's
outcome, each address's memory and alignment and each ``vsetvl``'s vl must then stay as in iteration 0 over
``j < n``: linear inequalities in ``j``, solved exactly (:func:`horizon`). Taint and ``vl``/``vtype`` must be the
same after the iteration as before.

The timing state is not affine by construction -- it is a max-plus system -- but it is *shift-invariant*: every
time value only meets ``max`` against a value at or after the scalar issue time, so once two consecutive loop-head
states agree relative to their ``t_scalar`` (:func:`steady`: a time at or before it no longer matters; the vector
queue compared from its head), every later iteration is the last one shifted by the same number of cycles.
``trace._Run.roll`` runs iterations for real until that holds, then advances the state by ``m`` iterations at once
(:func:`extrapolate`) and emits their data operations in bulk with numpy (each field affine in ``j``, exactly).
The state and the operations are those the per-instruction path would produce, bit for bit
(``tests/sims/rvv/test_trace_rolled.py`` compares the whole Trace with rolling on and off).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from kcgym.sims.rvv import isa as I
from kcgym.sims.rvv import machine as M
from kcgym.sims.rvv.config import DTCM_BASE, EXT_BASE, VLENB

ROLL_MAX_BODY = 4096  # instructions in one loop iteration the walk follows (longer bodies are not rolled)
ROLL_WALK_SHARE = 8  # walks (uncached) take at most one instruction per this many run, plus one body
ROLL_SHORT_BODY = 256  # a longer body (an outer loop) is walked only after ROLL_LONG_TAKES iterations in a row: its
ROLL_LONG_TAKES = 4  # walk costs a few iterations, so a loop of a few iterations should not pay it
ROLL_MIN_ITERATIONS = 6  # iterations left (from the loop head) below which rolling does not pay
ROLL_MIN_SAVED = 256  # nor where it would skip fewer instructions than this (a roll costs ~100 us)
ROLL_TRIES = 6  # real iterations run waiting for the timing state to become steady, per loop entry
ROLL_MAX_FAILS = 4  # failed proofs at one back edge before it is no longer tried

_M32 = 0xFFFFFFFF
_TWO32 = 1 << 32
_MIN, _MAX = -(1 << 31), (1 << 31) - 1
C = I.CLASS_ID
C_ALU, C_MULDIV, C_LOAD, C_STORE, C_BRANCH, C_JUMP, C_CSR, C_VSET, C_VLOAD, C_VSTORE = (
    C[n] for n in ("ALU", "MULDIV", "LOAD", "STORE", "BRANCH", "JUMP", "CSR", "VSET", "VLOAD", "VSTORE"))
VEC_ALU = frozenset(C[n] for n in ("VARITH", "VRED", "VPERM", "VMASK", "VMOVE"))
VECTOR = frozenset(C[n] for n in I.VECTOR_CLASSES)
WRITES_X = frozenset((C_ALU, C_MULDIV, C_LOAD, C_JUMP, C_CSR, C_VSET)) | VEC_ALU
OPN = I.OP
K = -1  # a form's constant term: forms are dicts {register: coefficient, K: constant}, all mod 2**32


def _signed(v: int) -> int:
    v &= _M32
    return v - _TWO32 if v & 0x80000000 else v


def _const(v: int) -> dict:
    return {K: v & _M32}


def _combine(f: dict, g: dict, k: int) -> dict:
    """``f + k * g``."""
    out = dict(f)
    for r, c in g.items():
        v = (out.get(r, 0) + k * c) & _M32
        if v or r == K:
            out[r] = v
        else:
            del out[r]
    return out


def _mono(r) -> tuple:
    return () if r == K else r if isinstance(r, tuple) else (r,)


def _product(f: dict, g: dict) -> dict:
    """``f * g`` for two forms of registers that do not move: its terms are monomials (tuples of registers), which
    the loop never changes either (only their value at the head counts)."""
    out: dict = {K: 0}
    for r1, c1 in f.items():
        for r2, c2 in g.items():
            m = tuple(sorted(_mono(r1) + _mono(r2)))
            key = K if not m else m[0] if len(m) == 1 else m
            out[key] = (out.get(key, 0) + c1 * c2) & _M32
    return {r: c for r, c in out.items() if c or r == K}


def _term(r, x: list) -> int:
    """A form term's register value (1 for the constant; a monomial's product)."""
    if r == K:
        return 1
    if isinstance(r, tuple):
        v = 1
        for i in r:
            v *= x[i]
        return v
    return x[r]


def _scale(f: dict, k: int) -> dict:
    out = {r: (c * k) & _M32 for r, c in f.items()}
    return {r: c for r, c in out.items() if c or r == K}


class Walk(NamedTuple):
    """One iteration's symbolic walk: its length, the registers' output forms, and the values its control and
    addresses depend on (a form each, checked over ``j`` by :func:`horizon`)."""

    length: int
    out: list  # per register: its form after the iteration
    moving: frozenset  # the registers the body may write (the forms' variables)
    checks: list  # (kind, form(s), constants) per branch / address / vsetvl
    pcs: tuple[int, int] = (0, -1)  # the lowest and highest pc whose word the walk read: the program it fits


def walk(prog: list, prog_len: int, head: int, back: int, x: list, xt: list, vl: int, vtype: int, n_dtcm: int,
         ext_size: int, scalar_fns: dict, vec_static: Callable, vmem_static: Callable,
         guess: frozenset | None = None) -> tuple[Walk | None, set, int]:
    """Walk one iteration of the loop from ``head`` (closed by the backward branch at ``back``) from the pre-pass
    state (``x``, ``xt``, ``vl``, ``vtype``), following control by the current values, inner loops included.
    Returns the walk -- None where it exceeds :data:`ROLL_MAX_BODY` or meets an instruction it cannot prove affine
    or fault-free (those run on the per-instruction path) --, the registers whose values it took as constants (a
    multiplier, a shift, a vtype, a folded operation: its forms hold every other register as a symbol, so its
    constants come from these values and the taint, vl and vtype at the head alone: what a cached walk is keyed
    by) and the instructions walked. The registers the path writes are the forms' variables:
    ``guess`` (the last walk's of this loop), else none -- a pass of constants only, cheap, that finds the path's
    writes --, then the path's own, until they agree."""
    moving = frozenset() if guess is None else guess
    walked, lo, hi = 0, head, head
    for _ in range(4):  # (the path does not depend on the guess: a second pass has the first one's writes)
        w, written, read, length = _walk(prog, prog_len, head, x, xt, vl, vtype, n_dtcm, ext_size, scalar_fns,
                                         vec_static, vmem_static, moving)
        walked += length
        if w is not None:  # every pass's words count (a walk is a function of the words it read)
            lo, hi = min(lo, w.pcs[0]), max(hi, w.pcs[1])
        if written <= moving:
            return (w._replace(pcs=(lo, hi)) if w is not None else None), read, walked
        moving = moving | written
    return None, set(), walked


def _walk(prog: list, prog_len: int, head: int, x: list, xt: list, vl: int, vtype: int, n_dtcm: int, ext_size: int,
          scalar_fns: dict, vec_static: Callable, vmem_static: Callable,
          moving: frozenset) -> tuple[Walk | None, frozenset, set, int]:
    """:func:`walk` with the variables ``moving``: (walk, registers written, registers pinned, length). A walk whose
    path writes a register outside ``moving`` goes on (its path follows the values, not the forms) to find them
    all; :func:`walk` then discards it."""
    written: set = set()
    pinned: set = set()  # the registers whose values the walk used as constants (the others stay symbols)
    forms = [{r: 1, K: 0} if (r and not xt[r]) else _const(0) for r in range(32)]
    taint = list(xt)
    base = list(x)
    vl0, vtype0 = vl, vtype

    def value(f: dict) -> int:
        if len(f) == 1:
            return _signed(f[K])
        return _signed(sum(c * _term(r, base) for r, c in f.items()))

    def fixed(f: dict) -> bool:  # no moving register in it: the same value in every iteration
        return len(f) == 1 or all(r == K or isinstance(r, tuple) or r not in moving for r in f)

    def pin(f: dict) -> int:  # its value, as a constant of this walk (its registers join the cache key)
        pinned.update(i for r in f for i in _mono(r))
        return value(f)

    checks: list = []
    pc, length, pc_lo, pc_hi = head, 0, head, head
    dtcm_end, ext_end = DTCM_BASE + n_dtcm, EXT_BASE + ext_size
    while True:
        if length >= ROLL_MAX_BODY or not 0 <= pc <= prog_len:
            return None, frozenset(), set(), length
        op, cls, sub, rd, rs1, rs2, imm, vm, src, wf, sgn = prog[pc]
        rs1c = rs1 if 0 <= rs1 <= 31 else 0 if rs1 < 0 else 31
        rs2c = rs2 if 0 <= rs2 <= 31 else 0 if rs2 < 0 else 31
        next_pc = pc + 1
        out: dict | None = None  # the form written to rd (untainted); ``tainted``: rd becomes data
        tainted = False
        if cls in (C_ALU, C_MULDIV):
            fn = scalar_fns.get(sub)
            is_u = sub in (OPN["lui"], OPN["auipc"])
            if fn is None:
                return None, frozenset(), set(), length
            a = _const(4 * pc) if sub == OPN["auipc"] else _const(0) if sub == OPN["lui"] else forms[rs1c]
            b = _const((imm << 12) if is_u else imm) if src == I.SRC_I else forms[rs2c]
            if (not is_u and taint[rs1c]) or (src != I.SRC_I and taint[rs2c]):
                tainted = True  # arithmetic on data is data (the data path computes it; its operands are recorded)
            elif sub in (OPN["add"], OPN["auipc"]):
                out = _combine(a, b, 1)
            elif sub == OPN["sub"]:
                out = _combine(a, b, -1)
            elif sub == OPN["sll"] and fixed(b):
                out = _scale(a, 1 << (pin(b) & 31))
            elif sub == OPN["mul"] and fixed(a) and fixed(b):
                out = _product(a, b)
            elif sub == OPN["mul"] and (fixed(a) or fixed(b)):
                out = _scale(b, pin(a)) if fixed(a) else _scale(a, pin(b))
            elif fixed(a) and fixed(b):
                out = _const(fn(pin(a), pin(b)))
            else:
                return None, frozenset(), set(), length
        elif cls == C_BRANCH:
            if taint[rs1c] or taint[rs2c]:
                return None, frozenset(), set(), length
            s = min(max(sub, 0), 5)
            va, vb = value(forms[rs1c]), value(forms[rs2c])
            ua, ub = va & _M32, vb & _M32
            taken = (va == vb, va != vb, va < vb, va >= vb, ua < ub, ua >= ub)[s]
            checks.append(("branch", forms[rs1c], forms[rs2c], s, taken))
            next_pc = imm if taken else pc + 1
        elif cls == C_JUMP:
            if sub != 0 or not 0 <= imm <= prog_len:
                return None, frozenset(), set(), length
            out, next_pc = _const(4 * pc + 4), imm
        elif cls == C_CSR:
            out = _const(vl if imm == 0 else vtype if imm == 1 else VLENB)
        elif cls == C_VSET:
            if (sub != 1 and rs1 != 0 and taint[rs1c]) or (sub == 2 and (taint[rs2c] or not fixed(forms[rs2c]))):
                return None, frozenset(), set(), length
            raw = pin(forms[rs2c]) if sub == 2 else imm
            bad = (raw >> 8) != 0 or ((raw >> 3) & 7) > 2 or (raw & 7) > 3
            nvt = -1 if bad else raw
            n_vlmax = -1 if bad else (1 << (nvt & 3)) * (VLENB * 8) // (8 << ((nvt >> 3) & 7))
            avl = _const(rs1) if sub == 1 else forms[rs1c] if rs1 != 0 else _const(-1 if rd != 0 else vl)
            u_avl = value(avl) & _M32
            if n_vlmax < 0:
                new_vl = 0
            elif fixed(avl):
                u_avl = pin(avl) & _M32
                new_vl = u_avl if u_avl < n_vlmax else n_vlmax
            elif u_avl >= n_vlmax:  # a moving AVL: vl stays VLMAX while it is at least that
                checks.append(("uge", avl, n_vlmax))
                new_vl = n_vlmax
            else:
                return None, frozenset(), set(), length
            vl, vtype = new_vl, (M.VILL if bad else nvt)
            out = _const(new_vl)
        elif cls in VEC_ALU:
            vs = vec_static(pc, vtype, vl)
            if vs is None:
                return None, frozenset(), set(), length
            if vs[9]:  # x_on: vmv.x.s and friends write data into rd
                tainted = True
        elif cls in (C_VLOAD, C_VSTORE):
            if src != I.MODE_UNIT or vm == 0 or taint[rs1c]:
                return None, frozenset(), set(), length
            vs = vmem_static(pc, vtype, vl)
            if vs is None:
                return None, frozenset(), set(), length
            size, nb = vs[4], vs[5]
            if nb:
                ua = value(forms[rs1c]) & _M32
                if ua >= DTCM_BASE and ua + nb <= dtcm_end and cls == C_VLOAD:
                    lo, hi = DTCM_BASE, dtcm_end
                elif ua >= EXT_BASE and ua + nb <= ext_end:
                    lo, hi = EXT_BASE, ext_end
                else:
                    return None, frozenset(), set(), length  # a fault, or a vector store into the DTCM
                checks.append(("mem", forms[rs1c], lo, hi - nb, size))
        elif cls in (C_LOAD, C_STORE):
            if taint[rs1c]:
                return None, frozenset(), set(), length
            size = ((1, 2, 4, 1, 2) if cls == C_LOAD else (1, 2, 4))[min(max(sub, 0), 4 if cls == C_LOAD else 2)]
            addr = _combine(forms[rs1c], _const(imm), 1)
            ua = value(addr) & _M32
            if not (ua >= EXT_BASE and ua + size <= ext_end):
                return None, frozenset(), set(), length  # the DTCM: loads read known bytes, stores change them
            checks.append(("mem", addr, EXT_BASE, ext_end - size, size))
            if cls == C_LOAD:
                tainted = True
        else:
            return None, frozenset(), set(), length
        if rd != 0 and (out is not None or tainted) and cls not in (C_BRANCH, C_STORE, C_VSTORE):
            if tainted:
                forms[rd], taint[rd] = _const(0), True
            elif out is not None:
                forms[rd], taint[rd] = out, False
            written.add(rd)
        length += 1
        if pc < pc_lo:
            pc_lo = pc
        elif pc > pc_hi:
            pc_hi = pc
        pc = next_pc
        if pc == head:
            break
    if taint != list(xt) or vl != vl0 or vtype != vtype0:
        return None, frozenset(), set(), length  # not the state it started from: the next iteration differs
    return Walk(length, forms, moving, checks, (pc_lo, pc_hi)), frozenset(written), pinned, length


def _lin(f: dict, d: list) -> int:
    """The per-iteration step of a form's value (signed: the representative the no-wrap checks use; a monomial's
    registers do not move)."""
    return _signed(sum(c * d[r] for r, c in f.items() if r != K and not isinstance(r, tuple)))


def _at(f: dict, x: list) -> int:
    return _signed(sum(c * _term(r, x) for r, c in f.items()))


def _ge(n: int, g0: int, g1: int) -> int:
    """The largest ``n' <= n`` with ``g0 + j * g1 >= 0`` for every ``j < n'``."""
    if g0 < 0:
        return 0
    return n if g1 >= 0 else min(n, g0 // -g1 + 1)


def _ne(n: int, g0: int, g1: int) -> int:
    """The largest ``n' <= n`` with ``g0 + j * g1 != 0`` for every ``j < n'``."""
    if g0 == 0:
        return 0
    if g1 != 0 and (-g0) % g1 == 0 and (-g0) // g1 > 0:
        return min(n, (-g0) // g1)
    return n


def _signed_seq(n: int, f: dict, x: list, d: list) -> tuple[int, int, int]:
    """(n, v0, dv): the form's int32 values are exactly ``v0 + j * dv`` (no wrap-around) for ``j < n``."""
    v0, dv = _at(f, x), _lin(f, d)
    n = _ge(n, v0 - _MIN, dv)
    return _ge(n, _MAX - v0, -dv), v0, dv


def _unsigned_seq(n: int, f: dict, x: list, d: list) -> tuple[int, int, int]:
    """(n, u0, du): the form's values as unsigned 32-bit numbers are ``u0 + j * du`` for ``j < n`` (its sign
    stays that of iteration 0, so the unsigned view does not wrap either)."""
    n, v0, dv = _signed_seq(n, f, x, d)
    if v0 >= 0:
        return _ge(n, v0, dv), v0, dv
    return _ge(n, -1 - v0, -dv), v0 + _TWO32, dv


def horizon(w: Walk, x: list, xt: list, n_cap: int) -> int:
    """How many iterations from the loop head (the current one included, at most ``n_cap``) follow the walked
    path with every value affine: 0 where the body's output is not its input moved by a constant step."""
    d = [0] * 32
    for r in w.moving:
        if not xt[r]:
            d[r] = (_at(w.out[r], x) - x[r]) & _M32  # (a tainted register is 0 in the pre-pass and stays so)
    for r in w.moving:  # the body maps x + j * d to x + (j + 1) * d: its linear part must fix d
        if not xt[r] and (_lin(w.out[r], d) - d[r]) & _M32:
            return 0
    n = n_cap
    for chk in w.checks:
        kind = chk[0]
        if kind == "branch":
            _, fa, fb, s, taken = chk
            if s >= 4:
                n, a0, da = _unsigned_seq(n, fa, x, d)
                n, b0, db = _unsigned_seq(n, fb, x, d)
            else:
                n, a0, da = _signed_seq(n, fa, x, d)
                n, b0, db = _signed_seq(n, fb, x, d)
            g0, g1 = a0 - b0, da - db
            if s <= 1:  # beq, bne: equal in iteration 0 means a zero step, else never zero
                equal = (s == 0) == taken
                n = (0 if g0 else n if g1 == 0 else min(n, 1)) if equal else _ne(n, g0, g1)
            else:  # blt/bltu taken, bge/bgeu not: a < b; else a >= b
                less = taken == (s in (2, 4))
                n = _ge(n, -g0 - 1, -g1) if less else _ge(n, g0, g1)
        elif kind == "uge":
            _, f, bound = chk
            n, u0, du = _unsigned_seq(n, f, x, d)
            n = _ge(n, u0 - bound, du)
        else:  # "mem": the address stays in [lo, last] and aligned
            _, f, lo, last, size = chk
            n, u0, du = _unsigned_seq(n, f, x, d)
            n = _ge(_ge(n, u0 - lo, du), last - u0, -du)
            if u0 % size or (n > 1 and du % size):
                n = min(n, 1 if u0 % size == 0 else 0)
        if n <= 0:
            return 0
    return n


class Snap(NamedTuple):
    """The pre-pass state at a loop head (copies), and where its data operations stood."""

    steps: int
    t_scalar: int
    times: tuple  # v_free, v_mem_done, ext_free
    t_end: int
    qi: int
    x: list
    xt: list
    xr: list
    vr: list
    vq: list
    counts: list
    busy: list
    n_ops: int


def _rotated(s: Snap) -> list:
    return s.vq[s.qi:] + s.vq[:s.qi]


def steady(b: Snap, c: Snap, nvec: int) -> int:
    """``dt > 0`` where the iteration from ``c`` is the one from ``b`` shifted by ``dt`` cycles, and every time value
    either moves by ``dt`` per iteration or stays (so :func:`extrapolate` holds); 0 where not (yet)."""
    tb, tc = b.t_scalar, c.t_scalar
    dt = tc - tb
    if dt <= 0 or c.t_end - tc != b.t_end - tb or c.xt != b.xt:
        return 0
    vb_all, vc_all = [*b.times, *b.xr, *b.vr], [*c.times, *c.xr, *c.vr]
    # written each iteration (moves by dt) or never (stays); the queue from its head: every slot moves (or, with no
    # vector instruction, none)
    if [vc if vc == vb else vc - dt for vb, vc in zip(vb_all, vc_all, strict=True)] != vb_all or (
            [v - dt for v in _rotated(c)] if nvec else _rotated(c)) != _rotated(b):
        return 0
    # a time after t_scalar: the same relative to it (one at or before it no longer matters)
    if [v - tb if v > tb else None for v in vb_all + _rotated(b)] != [v - tc if v > tc else None
                                                                    for v in vc_all + _rotated(c)]:
        return 0
    return dt


def vector_count(b: Snap, c: Snap) -> int:
    """The vector instructions of the iteration from ``b`` to ``c`` (from the class counts)."""
    return sum(c.counts[k] - b.counts[k] for k in VECTOR)


def extrapolate(a: Snap, b: Snap, c: Snap, ops: list, m: int, dt: int, nvec: int, n_rec: int) -> tuple | None:
    """The state ``m`` iterations after ``c`` (as ``(scalars, lists, block)``: ``steps, t_scalar, times, t_end, qi``;
    ``x, xr, vr, vq, counts, busy``; the int32[m * ops per iteration, n_rec] data operations of those iterations),
    given the iterations from ``a`` to ``b`` and ``b`` to ``c``, the second :func:`steady` after the first; None
    where the two iterations' operations or scalar steps disagree (a proof that missed something: not rolled)."""
    n_ab, n_bc = b.n_ops - a.n_ops, c.n_ops - b.n_ops
    if n_ab != n_bc or c.steps - b.steps != b.steps - a.steps or [
            (xb - xa) & _M32 for xa, xb in zip(a.x, b.x, strict=True)] != [
            (xc - xb) & _M32 for xb, xc in zip(b.x, c.x, strict=True)]:
        return None
    mdt = m * dt  # (a time that moved moves on; one that stayed stays)
    times = tuple([vc + mdt if vc != vb else vc for vb, vc in zip(b.times, c.times, strict=True)])
    xr = [vc + mdt if vc != vb else vc for vb, vc in zip(b.xr, c.xr, strict=True)]
    vr = [vc + mdt if vc != vb else vc for vb, vc in zip(b.vr, c.vr, strict=True)]
    depth = len(c.vq)
    qi = (c.qi + m * nvec) % depth
    rot = [v + mdt for v in _rotated(c)] if nvec else _rotated(c)
    vq = rot[depth - qi:] + rot[:depth - qi] if qi else rot
    counts = [vc + m * (vc - vb) for vb, vc in zip(b.counts, c.counts, strict=True)]
    busy = [vc + m * (vc - vb) for vb, vc in zip(b.busy, c.busy, strict=True)]
    x = [_signed(xc + m * (xc - xb)) for xb, xc in zip(b.x, c.x, strict=True)]
    block = np.zeros((0, n_rec), np.int32)
    if n_bc:  # each field is affine in the iteration mod 2**32: int64 arithmetic, then int32's wrap-around
        o_ab, o_bc = np.array(ops[a.n_ops:c.n_ops], np.int64).reshape(2, -1)
        block = (o_bc + (o_bc - o_ab) * np.arange(1, m + 1, dtype=np.int64)[:, None]).astype(np.int32).reshape(
            -1, n_rec)
    scalars = (c.steps + m * (c.steps - b.steps), c.t_scalar + m * dt, times, c.t_end + m * dt, qi)
    return scalars, (x, xr, vr, vq, counts, busy), block
