"""The RV32IM + Zve32x core in JAX: state, one branch-free step, and the batched runner.

Scalar code may load data and branch on it, so under ``vmap`` the PC is batched and every
class's datapath runs on every step. The step is therefore written as *one* datapath with
cheap fixed-size lanes (128 bytes = the largest register group, LMUL=8) instead of a switch:
the scalar ALU, one 128-byte memory port shared by scalar and vector accesses, one
128-byte vector-register write port, and the timing scoreboard. Halted machines keep
stepping with every write disabled, so no whole-state select is ever needed.

Timing (documented in the guide): in-order scalar issue; vector instructions go through a
FIFO of ``vector_queue_depth`` to an in-order vector unit whose occupancy is the number of
128-bit chunks an instruction touches; DTCM is single-cycle; external memory is one channel
with ``ext_latency`` and ``ext_bytes_per_cycle``; register ready times make dependent
instructions wait, so keeping loads in flight and staging data in DTCM pay.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from kcgym.limits import CYCLE_LIMIT
from kcgym.sims.jax_cache import enable_persistent_cache
from kcgym.sims.rvv import isa as I
from kcgym.sims.rvv.config import DTCM_BASE, EXT_BASE, VLENB, RVVConfig

LANES = 128  # bytes of the largest register group (8 x VLEN/8)
VRF_BYTES = 32 * VLENB
FAULT_NAMES = ("NONE", "OOB", "MISALIGNED", "ILLEGAL_VTYPE", "ILLEGAL_GROUP", "BAD_JUMP", "STEP_BUDGET",
               "CYCLE_LIMIT")
F_OOB, F_MISALIGNED, F_ILLEGAL_VTYPE, F_ILLEGAL_GROUP, F_BAD_JUMP, F_STEP_BUDGET, F_CYCLE_LIMIT = range(1, 8)

# ctl indices (one packed int32 vector: a loop carry with many scalar leaves is slow on XLA:CPU)
(PC, STEPS, HALTED, FAULT, FAULT_PC, FAULT_DETAIL, VL, VTYPE, T_SCALAR, V_FREE, V_MEM_DONE, EXT_FREE, QI,
 T_END) = range(14)
N_CTL = 14
VILL = -(1 << 31)
# profiling (``Machine(hw, profile=True)``): per-instruction columns of State.prof. The scalar front end's
# time per instruction (T_SCALAR after - before) splits as the scoreboard computed it, so the rows sum to
# the last T_SCALAR; the vector unit's own time shows through the queue-full and sync columns
PROFILE_STALLS = ("scalar register latency", "vector queue full", "vector stores draining (scalar memory op)",
                  "divider busy", "branch/jump penalty", "vector unit busy (vmv.x.s/vcpop/vfirst sync)",
                  "vector operands not ready (sync)", "vector execution and latency (sync)")
P_EXEC, P_ISSUE = 0, 1
N_PROF = 2 + len(PROFILE_STALLS)


class State(NamedTuple):
    ctl: jax.Array  # int32[N_CTL]
    x: jax.Array  # int32[32]
    vrf: jax.Array  # uint8[VRF_BYTES + LANES] (the pad keeps group slices in bounds)
    mem: jax.Array  # uint8[dtcm + ext bucket + 1] (the last byte absorbs disabled stores)
    x_ready: jax.Array  # int32[32]
    v_ready: jax.Array  # int32[32]
    vq: jax.Array  # int32[queue depth]: start times of the last vector instructions
    counts: jax.Array  # int32[classes]
    busy: jax.Array  # int32[units]
    prof: jax.Array  # int32[n_pc, N_PROF] when profiling (executions, issue, stalls), else int32[1, N_PROF]


def _u(x: jax.Array) -> jax.Array:
    return lax.bitcast_convert_type(x, jnp.uint32)


def _s(x: jax.Array) -> jax.Array:
    return lax.bitcast_convert_type(x, jnp.int32)


def mulhu32(a: jax.Array, b: jax.Array) -> jax.Array:
    """High 32 bits of the unsigned 64-bit product, from 16-bit limbs (JAX runs without int64)."""
    a, b = _u(a), _u(b)
    al, ah, bl, bh = a & 0xFFFF, a >> 16, b & 0xFFFF, b >> 16
    ll, lh, hl, hh = al * bl, al * bh, ah * bl, ah * bh
    mid = (ll >> 16) + (lh & 0xFFFF) + (hl & 0xFFFF)
    return _s(hh + (lh >> 16) + (hl >> 16) + (mid >> 16))


def elementwise(op: jax.Array, a_s: jax.Array, a_u: jax.Array, b_s: jax.Array, b_u: jax.Array, c: jax.Array,
                w: jax.Array, wsrc: jax.Array, names: tuple[str, ...] = I.OPS) -> jax.Array:
    """Every integer operation of :data:`isa.OPS` on int32 lanes; returns the one ``op`` selects.

    ``names``: the operations ``op`` can be (a caller that knows fewer compiles fewer branches; an ``op`` not
    among them computes the first).

    ``a_*``/``b_*`` are the operands sign- and zero-extended from their width, ``c`` the old
    destination (multiply-add), ``w`` the result width (8/16/32: saturation, high halves)
    and ``wsrc`` the source width of narrowing shifts. Results are raw bits: the caller keeps
    the low ``w`` bits. The operands' derived forms are traced inside each branch, and only the ones it
    reads (:class:`_Operands`): computed outside, each would be one more buffer per instruction for every
    branch; computed in every branch, they were most of the time it takes to trace a simulator.
    """
    shape = jnp.broadcast_shapes(a_s.shape, b_s.shape, jnp.shape(c))

    def branch(name: str):
        return lambda: jnp.broadcast_to(_ELEMENTWISE[name](_Operands(a_s, a_u, b_s, b_u, c, w, wsrc)), shape).astype(
            jnp.int32)

    if names == I.OPS:
        index = jnp.clip(op, 0, len(I.OPS) - 1)
    else:
        lookup = [0] * len(I.OPS)
        for i, name in enumerate(names):
            lookup[I.OP[name]] = i
        index = jnp.asarray(lookup, jnp.int32)[jnp.clip(op, 0, len(I.OPS) - 1)]
    return lax.switch(index, [branch(name) for name in names])


class _Operands:
    """:func:`elementwise`'s operands and the forms derived from them, each traced where a branch first reads it."""

    def __init__(self, a_s: jax.Array, a_u: jax.Array, b_s: jax.Array, b_u: jax.Array, c: jax.Array, w: jax.Array,
                 wsrc: jax.Array):
        self.a_s, self.a_u, self.b_s, self.b_u, self.c, self.w, self.wsrc = a_s, a_u, b_s, b_u, c, w, wsrc

    @functools.cached_property
    def au(self) -> jax.Array:
        return _u(self.a_u)

    @functools.cached_property
    def bu(self) -> jax.Array:
        return _u(self.b_u)

    @functools.cached_property
    def shift(self) -> jax.Array:
        return self.b_u & (self.w - 1)

    @functools.cached_property
    def nshift(self) -> jax.Array:
        return self.b_u & (self.wsrc - 1)

    @functools.cached_property
    def lo(self) -> jax.Array:
        return -(jnp.int32(1) << (self.w - 1))

    @functools.cached_property
    def hi(self) -> jax.Array:
        return (jnp.int32(1) << (self.w - 1)) - 1

    @functools.cached_property
    def is32(self) -> jax.Array:
        return self.w == 32

    def umax(self) -> jax.Array:
        return _s(jnp.where(self.is32, jnp.uint32(0xFFFFFFFF), (jnp.uint32(1) << _u(self.w)) - 1))

    def mulh(self) -> jax.Array:  # exact in 32 bits below SEW=32; 16-bit limbs at 32
        a_s, b_s = self.a_s, self.b_s
        hu = mulhu32(self.a_u, self.b_u)
        return jnp.where(self.is32, hu - jnp.where(a_s < 0, b_s, 0) - jnp.where(b_s < 0, a_s, 0), (a_s * b_s) >> self.w)

    def mulhu(self) -> jax.Array:
        return jnp.where(self.is32, mulhu32(self.a_u, self.b_u), _s((self.au * self.bu) >> _u(self.w)))

    def mulhsu(self) -> jax.Array:
        return jnp.where(self.is32, mulhu32(self.a_u, self.b_u) - jnp.where(self.a_s < 0, self.b_u, 0),
                         (self.a_s * self.b_u) >> self.w)

    def div(self) -> jax.Array:  # RISC-V: x/0 = -1, MIN/-1 = MIN
        a_s, b_s = self.a_s, self.b_s
        zero, ovf = b_s == 0, (a_s == self.lo) & (b_s == -1)
        return jnp.where(zero, -1, jnp.where(ovf, a_s, lax.div(a_s, jnp.where(zero | ovf, 1, b_s))))

    def rem(self) -> jax.Array:  # x%0 = x, MIN%-1 = 0
        a_s, b_s = self.a_s, self.b_s
        zero, ovf = b_s == 0, (a_s == self.lo) & (b_s == -1)
        return jnp.where(zero, a_s, jnp.where(ovf, 0, lax.rem(a_s, jnp.where(zero | ovf, 1, b_s))))

    def divu(self) -> jax.Array:
        return jnp.where(self.b_u == 0, -1, _s(self.au // jnp.where(self.b_u == 0, jnp.uint32(1), self.bu)))

    def remu(self) -> jax.Array:
        return jnp.where(self.b_u == 0, self.a_u, _s(self.au % jnp.where(self.b_u == 0, jnp.uint32(1), self.bu)))

    def sadd(self) -> jax.Array:  # saturating at width w (w = 32 detects overflow from the signs)
        a_s, b_s = self.a_s, self.b_s
        ssum = a_s + b_s
        sat = jnp.where(a_s < 0, self.lo, self.hi)
        return jnp.where(self.is32, jnp.where(((a_s ^ ssum) & (b_s ^ ssum)) < 0, sat, ssum),
                         jnp.clip(ssum, self.lo, self.hi))

    def ssub(self) -> jax.Array:
        a_s, b_s = self.a_s, self.b_s
        sdif = a_s - b_s
        sat = jnp.where(a_s < 0, self.lo, self.hi)
        return jnp.where(self.is32, jnp.where(((a_s ^ b_s) & (a_s ^ sdif)) < 0, sat, sdif),
                         jnp.clip(sdif, self.lo, self.hi))

    def saddu(self) -> jax.Array:
        usum = self.au + self.bu
        return jnp.where(self.is32, jnp.where(usum < self.au, -1, _s(usum)), jnp.minimum(self.a_u + self.b_u,
                                                                                        self.umax()))

    def rshift_round(self, sh: jax.Array, signed: bool) -> jax.Array:
        """Shift right with rounding mode rnu (vxrm = 0): add back the last bit shifted out."""
        shm1 = jnp.maximum(sh - 1, 0)
        if signed:
            return (self.a_s >> sh) + jnp.where(sh > 0, (self.a_s >> shm1) & 1, 0)
        au = self.au
        return _s((au >> _u(sh)) + jnp.where(sh > 0, (au >> _u(shm1)) & 1, 0))

    def nclipu(self) -> jax.Array:
        raw = _u(self.rshift_round(self.nshift, False))
        return jnp.where(raw > _u(self.umax()), self.umax(), _s(raw))


def _i32(x: jax.Array) -> jax.Array:
    return x.astype(jnp.int32)


# :func:`elementwise`'s operations by name, on :class:`_Operands`
_ELEMENTWISE = {
    "add": lambda o: o.a_s + o.b_s, "sub": lambda o: o.a_s - o.b_s, "rsub": lambda o: o.b_s - o.a_s,
    "and": lambda o: o.a_s & o.b_s, "or": lambda o: o.a_s | o.b_s, "xor": lambda o: o.a_s ^ o.b_s,
    "sll": lambda o: o.a_s << o.shift, "srl": lambda o: _s(o.au >> _u(o.shift)), "sra": lambda o: o.a_s >> o.shift,
    "slt": lambda o: _i32(o.a_s < o.b_s), "sltu": lambda o: _i32(o.au < o.bu),
    "min": lambda o: jnp.minimum(o.a_s, o.b_s), "minu": lambda o: _s(jnp.minimum(o.au, o.bu)),
    "max": lambda o: jnp.maximum(o.a_s, o.b_s), "maxu": lambda o: _s(jnp.maximum(o.au, o.bu)),
    "mul": lambda o: o.a_s * o.b_s, "mulh": _Operands.mulh, "mulhu": _Operands.mulhu, "mulhsu": _Operands.mulhsu,
    "div": _Operands.div, "divu": _Operands.divu, "rem": _Operands.rem, "remu": _Operands.remu,
    "macc": lambda o: o.c + o.a_s * o.b_s, "nmsac": lambda o: o.c - o.a_s * o.b_s,
    "madd": lambda o: o.b_s * o.c + o.a_s, "nmsub": lambda o: o.a_s - o.b_s * o.c,
    "sadd": _Operands.sadd, "saddu": _Operands.saddu, "ssub": _Operands.ssub,
    "ssubu": lambda o: jnp.where(o.au < o.bu, 0, _s(o.au - o.bu)), "ssra": lambda o: o.rshift_round(o.shift, True),
    "ssrl": lambda o: o.rshift_round(o.shift, False),
    "nclip": lambda o: jnp.clip(o.rshift_round(o.nshift, True), o.lo, o.hi), "nclipu": _Operands.nclipu,
    "merge": lambda o: o.b_s, "mv": lambda o: o.b_s, "seq": lambda o: _i32(o.a_s == o.b_s),
    "sne": lambda o: _i32(o.a_s != o.b_s), "sle": lambda o: _i32(o.a_s <= o.b_s), "sleu": lambda o: _i32(o.au <= o.bu),
    "sgt": lambda o: _i32(o.a_s > o.b_s), "sgtu": lambda o: _i32(o.au > o.bu), "ext": lambda o: o.a_s,
    "id": lambda o: jnp.zeros_like(o.a_s), "lui": lambda o: o.b_s, "auipc": lambda o: o.a_s + o.b_s,
    "nsrl": lambda o: _s(o.au >> _u(o.nshift)), "nsra": lambda o: o.a_s >> o.nshift,
}
assert tuple(_ELEMENTWISE) == I.OPS


def lanes_from_bytes(g: jax.Array, w: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Bytes of a register group -> (sign-extended, zero-extended) int32 lanes at width ``w``."""
    b = g.astype(jnp.uint32)
    v8 = b
    v16 = jnp.pad(b[0::2] | (b[1::2] << 8), (0, LANES // 2))
    v32 = jnp.pad(b[0::4] | (b[1::4] << 8) | (b[2::4] << 16) | (b[3::4] << 24), (0, 3 * LANES // 4))
    u = jnp.where(w == 8, v8, jnp.where(w == 16, v16, v32))
    sh = 32 - w
    s = (_s(u) << sh) >> sh
    return s, _s(u)


def bytes_from_lanes(r: jax.Array, w: jax.Array) -> jax.Array:
    """int32 lanes -> little-endian bytes of their low ``w`` bits (128 bytes)."""
    j = jnp.arange(LANES)
    lg = jnp.where(w == 8, 0, jnp.where(w == 16, 1, 2))
    e = j >> lg
    sh = 8 * (j & ((1 << lg) - 1))
    return ((_u(r[e]) >> _u(sh)) & 0xFF).astype(jnp.uint8)


def byte_active(active_elem: jax.Array, w: jax.Array) -> jax.Array:
    lg = jnp.where(w == 8, 0, jnp.where(w == 16, 1, 2))
    return active_elem[jnp.arange(LANES) >> lg]


def bits_of(reg_bytes: jax.Array) -> jax.Array:
    """The 128 mask bits of one vector register (16 bytes)."""
    i = jnp.arange(LANES)
    return ((reg_bytes[i >> 3] >> (i & 7).astype(jnp.uint8)) & 1).astype(bool)


def bytes_of_bits(bits: jax.Array) -> jax.Array:
    b = bits.reshape(VLENB, 8).astype(jnp.uint8)
    return jnp.sum(b << jnp.arange(8, dtype=jnp.uint8), axis=1).astype(jnp.uint8)


class Ins(NamedTuple):
    """The word at the PC, decoded: what every handler reads."""

    pc: jax.Array
    run: jax.Array  # not halted and within the step budget
    op: jax.Array  # opcode (the cost tables' index)
    cls: jax.Array
    sub: jax.Array
    rd: jax.Array
    rs1: jax.Array
    rs2: jax.Array
    imm: jax.Array
    vm: jax.Array
    src: jax.Array
    wf: jax.Array
    sgn: jax.Array
    xs1: jax.Array  # x[rs1]
    xs2: jax.Array  # x[rs2]


class Is:
    """One boolean per class of :data:`isa.CLASSES` (``is_.VARITH``), and ``any_of(*names)``."""

    ALU: jax.Array
    MULDIV: jax.Array
    LOAD: jax.Array
    STORE: jax.Array
    BRANCH: jax.Array
    JUMP: jax.Array
    CSR: jax.Array
    VSET: jax.Array
    VLOAD: jax.Array
    VSTORE: jax.Array
    VARITH: jax.Array
    VRED: jax.Array
    VPERM: jax.Array
    VMASK: jax.Array
    VMOVE: jax.Array
    HALT: jax.Array

    def __init__(self, cls: jax.Array):
        for name, i in I.CLASS_ID.items():
            setattr(self, name, cls == i)
        self.vector = functools.reduce(jnp.logical_or, [getattr(self, n) for n in I.VECTOR_CLASSES])
        self.vmem = self.VLOAD | self.VSTORE
        self.scalar_mem = self.LOAD | self.STORE

    def any_of(self, *names: str) -> jax.Array:
        return functools.reduce(jnp.logical_or, [getattr(self, n) for n in names])


class VType(NamedTuple):
    vtype: jax.Array
    vill: jax.Array
    sew: jax.Array
    lmul: jax.Array
    vlmax: jax.Array
    vl: jax.Array


class VShape(NamedTuple):
    """Element widths and register-group sizes (EMUL) of a vector instruction, and the group legality."""

    widen: jax.Array
    wd: jax.Array  # destination width
    wa: jax.Array  # vs2 width
    dw: jax.Array  # memory data width
    indexed: jax.Array
    emul_d: jax.Array
    emul_2: jax.Array
    emul_1: jax.Array
    uses_vs2: jax.Array
    group_bad: jax.Array
    group_detail: jax.Array


class VOperands(NamedTuple):
    g_vd: jax.Array  # LANES bytes of the register group at vd (vs3 of stores)
    g_vs2: jax.Array
    g_vs1: jax.Array
    mask_bits: jax.Array  # v0's bits
    body: jax.Array  # element i < vl
    active: jax.Array  # body and not masked off
    is_cmp: jax.Array  # a compare: writes mask bits
    mask_write: jax.Array  # writes a mask register (compares, mask logicals)


class MemPort(NamedTuple):
    """The one 128-byte memory port after a scalar or vector access."""

    mem: jax.Array
    loaded: jax.Array
    load_val: jax.Array
    m_act: jax.Array
    in_ext: jax.Array
    k_of: jax.Array
    elem_size: jax.Array
    oob: jax.Array  # any byte out of bounds
    misaligned: jax.Array  # any element misaligned
    bad_addr: jax.Array


class Control(NamedTuple):
    taken: jax.Array
    next_pc: jax.Array
    bad_jump: jax.Array
    jalr_addr: jax.Array
    jump_idx: jax.Array


class Timing(NamedTuple):
    """The scoreboard after one instruction (the State fields it updates, plus the profile's terms)."""

    ctl: dict[int, jax.Array]
    x_ready: jax.Array
    v_ready: jax.Array
    vq: jax.Array
    busy: jax.Array
    issue_reg: jax.Array
    issue: jax.Array
    scalar_mem_start: jax.Array
    vstart: jax.Array
    v_occ: jax.Array
    v_lat: jax.Array
    syncs: jax.Array
    is_div: jax.Array


def _varith(ins: Ins, vt: VType, vs: VShape, vo: VOperands, a_s: jax.Array, a_u: jax.Array, bv_s: jax.Array,
            bv_u: jax.Array, b_w: jax.Array, is_arith: jax.Array,
            names: tuple[str, ...] = I.OPS) -> tuple[jax.Array, jax.Array]:
    """VARITH: elementwise result lanes (compares: 0/1) and the elements they write (``names``: as
    :func:`elementwise`'s)."""
    lane = jnp.arange(LANES)
    scalar_b = jnp.where(ins.src == I.SRC_X, ins.xs1, ins.imm)
    sh = 32 - b_w
    bx_s = (scalar_b << sh) >> sh
    bx_u = _s(_u(scalar_b) & jnp.where(b_w == 32, jnp.uint32(0xFFFFFFFF), (jnp.uint32(1) << _u(b_w)) - 1))
    from_v = ins.src == I.SRC_V
    b_s = jnp.where(from_v, bv_s, bx_s)
    b_u = jnp.where(from_v, bv_u, bx_u)
    c_s, _ = lanes_from_bytes(vo.g_vd, vs.wd)
    wf, sgn = ins.wf, ins.sgn
    ext_like = is_arith & (vs.widen | (wf == I.W_EXT2) | (wf == I.W_EXT4))
    a_ext = jnp.where((sgn & 1) == 1, a_s, a_u)
    b_ext = jnp.where((sgn & 2) == 2, b_s, b_u)
    wide_w = (wf == I.W_WIDEN_W) & is_arith
    A_s = jnp.where(ext_like & ~wide_w, a_ext, a_s)
    A_u = jnp.where(ext_like & ~wide_w, a_ext, a_u)
    B_s = jnp.where(ext_like, b_ext, b_s)
    B_u = jnp.where(ext_like, b_ext, b_u)
    vop = jnp.where(is_arith, ins.sub, 0)
    r = elementwise(vop, A_s, A_u, B_s, B_u, c_s, vs.wd, vs.wa, names)
    r = jnp.where(vop == I.OP["id"], lane, r)
    # merge selects by v0 on every body element; compares write mask bits
    is_merge = is_arith & (wf == I.W_MERGE)
    r = jnp.where(is_merge & ~vo.mask_bits, a_s, r)
    return r, jnp.where(is_merge, vo.body, vo.active)


def _vred(ins: Ins, vo: VOperands, a_s: jax.Array, a_u: jax.Array, bv_s: jax.Array, bv_u: jax.Array) -> jax.Array:
    """VRED: element 0 of the result (vs1[0] combined with every active vs2[i]). One ``lax.switch`` branch per
    reduction: only the selected one runs."""
    active = vo.active
    red_a = jnp.where((ins.wf == I.W_WIDEN) & ((ins.sgn & 1) == 0), a_u, a_s)
    init_s, init_u = bv_s[0], _u(bv_u[0])
    big, small = jnp.int32(2**31 - 1), jnp.int32(-(2**31))
    return lax.switch(jnp.clip(ins.sub, 0, len(I.RED_OPS) - 1), [
        lambda: init_s + jnp.sum(jnp.where(active, red_a, 0)),
        lambda: jnp.maximum(init_s, jnp.max(jnp.where(active, a_s, small))),
        lambda: _s(jnp.maximum(init_u, jnp.max(jnp.where(active, _u(a_u), jnp.uint32(0))))),
        lambda: jnp.minimum(init_s, jnp.min(jnp.where(active, a_s, big))),
        lambda: _s(jnp.minimum(init_u, jnp.min(jnp.where(active, _u(a_u), jnp.uint32(0xFFFFFFFF))))),
        lambda: init_s & lax.reduce(jnp.where(active, a_s, -1), jnp.int32(-1), lax.bitwise_and, (0,)),
        lambda: init_s | lax.reduce(jnp.where(active, a_s, 0), jnp.int32(0), lax.bitwise_or, (0,)),
        lambda: init_s ^ lax.reduce(jnp.where(active, a_s, 0), jnp.int32(0), lax.bitwise_xor, (0,)),
    ])


def _vperm(ins: Ins, vt: VType, vo: VOperands, a_s: jax.Array, bv_u: jax.Array) -> tuple[jax.Array, jax.Array]:
    """VPERM: slides and gathers; the result lanes and the elements they write."""
    lane = jnp.arange(LANES)
    src, sub = ins.src, ins.sub
    off = _u(jnp.where(src == I.SRC_V, 0, jnp.where(src == I.SRC_X, ins.xs1, ins.imm)))
    ul = _u(lane)
    gidx = jnp.where(src == I.SRC_V, bv_u, _s(off))
    perm_src = jnp.select(
        [sub == 0, sub == 1, sub == 2, sub == 3],
        [lane - _s(jnp.minimum(off, 256)), _s(jnp.minimum(ul + jnp.minimum(off, 256), 512)), lane - 1, lane + 1],
        jnp.clip(gidx, 0, LANES - 1) + jnp.where((_u(gidx) >= _u(vt.vlmax)), 1 << 20, 0))
    perm_ok = (perm_src >= 0) & (perm_src < vt.vlmax)
    perm_val = jnp.where(perm_ok, a_s[jnp.clip(perm_src, 0, LANES - 1)], 0)
    perm_val = jnp.where((sub == 2) & (lane == 0) | (sub == 3) & (lane == vt.vl - 1), ins.xs1, perm_val)
    return perm_val, vo.active & jnp.where(sub == 0, ul >= off, True)


def _vmask(ins: Ins, vo: VOperands, r: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """VMASK and compares: the new mask register bytes, vcpop and vfirst."""
    m2, m1 = bits_of(vo.g_vs2[:VLENB]), bits_of(vo.g_vs1[:VLENB])
    mres = jnp.stack([m2 & m1, m2 | m1, m2 ^ m1, ~(m2 & m1), m2 & ~m1, ~(m2 | m1), ~(m2 ^ m1)])[
        jnp.clip(ins.sub, 0, 6)]
    sel = m2 & vo.active
    cpop = jnp.sum(sel.astype(jnp.int32))
    first = jnp.where(jnp.any(sel), jnp.argmax(sel).astype(jnp.int32), -1)
    old_mask_bits = bits_of(vo.g_vd[:VLENB])
    mask_new = jnp.where(vo.is_cmp, r != 0, mres)
    mask_on = jnp.where(vo.is_cmp, vo.active, vo.body)
    return bytes_of_bits(jnp.where(mask_on, mask_new, old_mask_bits)), cpop, first


def past_cycle_limit(t_end: jax.Array, ins: Ins) -> tuple[Ins, jax.Array]:
    """The clock's limit, checked before anything else: an instruction (HALT too) that would run when the clock
    (``t_end``: when everything before it completes) has passed CYCLE_LIMIT does not run, and faults CYCLE_LIMIT.
    Returns ``ins`` with ``run`` off for it, and whether it faults (the CPU shares this rule)."""
    late = ins.run & (t_end > CYCLE_LIMIT)
    return ins._replace(run=ins.run & ~late), late


class Machine:
    """One compiled interpreter per hardware config; memory sizes come from the array shapes.

    ``step`` decodes the word at the PC and runs every handler on it (branch-free: the PC may be
    data-dependent); each handler computes one instruction class's results, and ``step`` selects and
    commits what the decoded class writes. Costs come from the instruction table (:func:`isa.cost_table`).
    """

    def __init__(self, hw: RVVConfig, profile: bool = False):
        self.hw = hw
        self.profile = profile  # static: the plain interpreter carries no per-instruction counters
        self.n_classes = len(I.CLASSES)
        self.occ = jnp.array(I.cost_table("occupancy", hw), jnp.int32)
        self.lat = jnp.array(I.cost_table("latency", hw), jnp.int32)

    def init_state(self, mem: jax.Array, prog_len: jax.Array, n_pc: int = 1) -> State:
        hw = self.hw
        x = jnp.zeros(32, jnp.int32).at[1].set(4 * prog_len).at[2].set(DTCM_BASE + hw.dtcm_bytes)
        ctl = jnp.zeros(N_CTL, jnp.int32).at[VTYPE].set(VILL)
        return State(ctl=ctl, x=x, vrf=jnp.zeros(VRF_BYTES + LANES, jnp.uint8), mem=mem,
                     x_ready=jnp.zeros(32, jnp.int32), v_ready=jnp.zeros(32, jnp.int32),
                     vq=jnp.zeros(hw.vector_queue_depth, jnp.int32), counts=jnp.zeros(self.n_classes, jnp.int32),
                     busy=jnp.zeros(len(I.UNITS), jnp.int32),
                     prof=jnp.zeros((n_pc if self.profile else 1, N_PROF), jnp.int32))

    # ---- decode ---------------------------------------------------------------------------
    @staticmethod
    def decode(st: State, prog: jax.Array, max_steps: jax.Array) -> Ins:
        ctl = st.ctl
        pc = ctl[PC]
        w = prog[pc]
        return Ins(pc=pc, run=(ctl[HALTED] == 0) & (ctl[STEPS] < max_steps), op=w[I.F_OP], cls=w[I.F_CLS],
                   sub=w[I.F_SUB], rd=w[I.F_RD], rs1=w[I.F_RS1], rs2=w[I.F_RS2], imm=w[I.F_IMM], vm=w[I.F_VM],
                   src=w[I.F_SRC], wf=w[I.F_W], sgn=w[I.F_SGN], xs1=st.x[w[I.F_RS1]], xs2=st.x[w[I.F_RS2]])

    @staticmethod
    def vtype_state(ctl: jax.Array) -> VType:
        vtype = ctl[VTYPE]
        sew = 8 << ((vtype >> 3) & 7)
        lmul = 1 << (vtype & 3)
        return VType(vtype=vtype, vill=vtype < 0, sew=sew, lmul=lmul, vlmax=lmul * (VLENB * 8) // sew, vl=ctl[VL])

    # ---- scalar handlers ------------------------------------------------------------------
    @staticmethod
    def scalar_alu(ins: Ins, is_: Is, vt: VType) -> tuple[jax.Array, jax.Array]:
        """ALU and MULDIV (lui, auipc included): rd's value; and CSR: the CSR read."""
        op = jnp.where(is_.ALU | is_.MULDIV, ins.sub, 0)
        is_u = (op == I.OP["lui"]) | (op == I.OP["auipc"])
        a = jnp.where(op == I.OP["auipc"], 4 * ins.pc, jnp.where(op == I.OP["lui"], 0, ins.xs1))
        b = jnp.where(ins.src == I.SRC_I, jnp.where(is_u, ins.imm << 12, ins.imm), ins.xs2)
        i32 = jnp.int32(32)
        alu = elementwise(op, a, a, b, b, jnp.int32(0), i32, i32)
        csr = jnp.select([ins.imm == 0, ins.imm == 1], [vt.vl, vt.vtype], VLENB)
        return alu, csr

    @staticmethod
    def vset(ins: Ins, vt: VType) -> tuple[jax.Array, jax.Array]:
        """VSET: the new (vtype, vl); a reserved vtype sets vill and vl = 0."""
        new_vtype_raw = jnp.where(ins.sub == 2, ins.xs2, ins.imm)
        bad = ((new_vtype_raw >> 8) != 0) | (((new_vtype_raw >> 3) & 7) > 2) | ((new_vtype_raw & 7) > 3)
        new_vtype = jnp.where(bad, VILL, new_vtype_raw)
        n_sew = 8 << ((new_vtype >> 3) & 7)
        n_vlmax = (1 << (new_vtype & 3)) * (VLENB * 8) // n_sew
        avl = jnp.where(ins.sub == 1, ins.rs1, jnp.where(ins.rs1 != 0, ins.xs1, jnp.where(ins.rd != 0, -1, vt.vl)))
        return new_vtype, jnp.where(bad, 0, _s(jnp.minimum(_u(avl), _u(n_vlmax))))

    @staticmethod
    def control(ins: Ins, is_: Is, prog_len: jax.Array) -> Control:
        """BRANCH and JUMP: taken, the next PC and a jump outside the program."""
        sub, xs1, xs2 = ins.sub, ins.xs1, ins.xs2
        taken = jnp.stack([xs1 == xs2, xs1 != xs2, xs1 < xs2, xs1 >= xs2, _u(xs1) < _u(xs2),
                           _u(xs1) >= _u(xs2)])[jnp.clip(sub, 0, 5)] & is_.BRANCH
        jalr_addr = (xs1 + ins.imm) & ~1
        jump_idx = jnp.where(sub == 0, ins.imm, jalr_addr >> 2)
        bad_jump = is_.JUMP & ((sub == 1) & ((jalr_addr & 3) != 0) | (jump_idx < 0) | (jump_idx > prog_len))
        next_pc = jnp.where(taken, ins.imm, jnp.where(is_.JUMP, jump_idx, ins.pc + 1))
        return Control(taken, next_pc, bad_jump, jalr_addr, jump_idx)

    # ---- vector handlers ------------------------------------------------------------------
    @staticmethod
    def vshape(ins: Ins, is_: Is, vt: VType) -> VShape:
        sew, lmul, wf, src, sub, rd, rs1, rs2 = vt.sew, vt.lmul, ins.wf, ins.src, ins.sub, ins.rd, ins.rs1, ins.rs2
        is_arith = is_.VARITH
        widen = (wf == I.W_WIDEN) | (wf == I.W_WIDEN_W)
        wd = jnp.where((is_arith | is_.VRED) & widen, 2 * sew, sew)
        wa = jnp.where(is_arith & ((wf == I.W_WIDEN_W) | (wf == I.W_NARROW)), 2 * sew,
                       jnp.where(is_arith & (wf == I.W_EXT2), sew // 2,
                                 jnp.where(is_arith & (wf == I.W_EXT4), sew // 4, sew)))
        wa = jnp.maximum(wa, 8)
        # memory: data width and index width
        indexed = src == I.MODE_INDEXED
        dw = jnp.where(indexed, sew, wf)
        # register-group sizes (EMUL, in registers) for the legality check
        emul_d = jnp.where(is_.vmem, jnp.maximum(1, dw * lmul // sew),
                           jnp.where(is_arith & (wf == I.W_MASK) | is_.VMASK | is_.VMOVE | is_.VRED, 1,
                                     jnp.where(is_arith & widen, 2 * lmul, lmul)))
        emul_2 = jnp.where(is_.vmem, jnp.where(indexed, jnp.maximum(1, wf * lmul // sew), 1),
                           jnp.where(is_.VMASK | is_.VMOVE, 1, jnp.maximum(1, wa * lmul // sew)))
        emul_1 = jnp.where(is_arith & (src == I.SRC_V) | is_.VPERM & (src == I.SRC_V), lmul, 1)
        uses_vs2 = is_arith & (wf != I.W_MERGE) & ~((sub == I.OP["mv"]) | (sub == I.OP["id"])) | is_.VRED \
            | is_.VPERM | is_.VMASK | is_.VMOVE & (sub == 0) | is_.vmem & indexed | is_arith & (wf == I.W_MERGE)
        bad_d = ((rd & (emul_d - 1)) != 0) | (emul_d > 8)
        bad_2 = uses_vs2 & (((rs2 & (emul_2 - 1)) != 0) | (emul_2 > 8))
        bad_1 = (rs1 & (emul_1 - 1)) != 0
        group_detail = jnp.select([bad_d, bad_2], [rd * 256 + emul_d, rs2 * 256 + emul_2], rs1 * 256 + emul_1)
        return VShape(widen, wd, wa, dw, indexed, emul_d, emul_2, emul_1, uses_vs2, bad_d | bad_2 | bad_1,
                      group_detail)

    @staticmethod
    def voperands(st: State, ins: Ins, is_: Is, vt: VType) -> VOperands:
        def group(r: jax.Array) -> jax.Array:
            return lax.dynamic_slice(st.vrf, (r * VLENB,), (LANES,))

        lane = jnp.arange(LANES)
        mask_bits = bits_of(st.vrf[:VLENB])
        body = lane < vt.vl
        is_cmp = is_.VARITH & (ins.wf == I.W_MASK)
        return VOperands(g_vd=group(ins.rd), g_vs2=group(ins.rs2), g_vs1=group(ins.rs1), mask_bits=mask_bits,
                         body=body, active=body & ((ins.vm == 1) | mask_bits), is_cmp=is_cmp,
                         mask_write=is_cmp | is_.VMASK & (ins.sub < 7))

    @staticmethod
    def vector(ins: Ins, is_: Is, vt: VType, vs: VShape, vo: VOperands,
               names: tuple[str, ...] = I.OPS) -> tuple[jax.Array, jax.Array, jax.Array]:
        """VARITH, VRED, VPERM, VMASK, VMOVE: (result bytes, byte enables, scalar result), under one branch
        (``names``: the operations a VARITH instruction here can have, as :func:`elementwise`'s)."""
        lane = jnp.arange(LANES)

        def compute() -> tuple[jax.Array, jax.Array, jax.Array]:
            a_s, a_u = lanes_from_bytes(vo.g_vs2, vs.wa)
            b_w = jnp.where(is_.VRED, vs.wd, vt.sew)
            bv_s, bv_u = lanes_from_bytes(vo.g_vs1, b_w)
            r, arith_active = _varith(ins, vt, vs, vo, a_s, a_u, bv_s, bv_u, b_w, is_.VARITH, names)
            red = _vred(ins, vo, a_s, a_u, bv_s, bv_u)
            perm_val, perm_active = _vperm(ins, vt, vo, a_s, bv_u)
            mask_bytes, cpop, first = _vmask(ins, vo, r)
            first_elem = (lane == 0) & (vt.vl > 0)
            elem_val = jnp.select([is_.VRED, is_.VPERM, is_.VMOVE], [jnp.full(LANES, red), perm_val,
                                                                     jnp.full(LANES, ins.xs1)], r)
            elem_active = jnp.select([is_.VRED, is_.VPERM, is_.VMOVE], [first_elem, perm_active, first_elem],
                                     arith_active)
            elem_bytes = bytes_from_lanes(elem_val, vs.wd)
            elem_on = byte_active(elem_active, vs.wd)
            x_vec = jnp.select([is_.VMOVE, is_.VMASK & (ins.sub == 7)], [a_s[0], cpop], first)
            v_bytes = jnp.where(vo.mask_write, jnp.pad(mask_bytes, (0, LANES - VLENB)), elem_bytes)
            v_on = jnp.where(vo.mask_write, lane < VLENB, elem_on)
            return v_bytes, v_on, x_vec

        return lax.cond(is_.VARITH | is_.VRED | is_.VPERM | is_.VMASK | is_.VMOVE, compute,
                        lambda: (jnp.zeros(LANES, jnp.uint8), jnp.zeros(LANES, bool), jnp.int32(0)))

    # ---- memory ---------------------------------------------------------------------------
    def memory(self, st: State, ins: Ins, is_: Is, vt: VType, vs: VShape, vo: VOperands,
               ext_size: jax.Array) -> MemPort:
        """LOAD, STORE, VLOAD, VSTORE through the one 128-byte port: addresses, bounds, alignment, data."""
        hw, src, sub, dw = self.hw, ins.src, ins.sub, vs.dw
        lane = jnp.arange(LANES)
        dwb_lg = jnp.where(dw == 8, 0, jnp.where(dw == 16, 1, 2))
        e_of = lane >> dwb_lg
        k_of = lane & ((1 << dwb_lg) - 1)

        def vector_addresses() -> tuple[jax.Array, jax.Array]:
            _, idx_u = lanes_from_bytes(vo.g_vs2, jnp.where(vs.indexed, ins.wf, 8))
            elem_off = jnp.select([src == I.MODE_UNIT, src == I.MODE_STRIDED],
                                  [e_of << dwb_lg, e_of * ins.xs2], idx_u[jnp.clip(e_of, 0, LANES - 1)])
            return ins.xs1 + elem_off + k_of, vo.active[jnp.clip(e_of, 0, LANES - 1)] & (e_of < vt.vl)

        vaddr, v_act = lax.cond(is_.vmem, vector_addresses, lambda: (lane, jnp.zeros(LANES, bool)))
        s_size = jnp.where(is_.LOAD, jnp.array([1, 2, 4, 1, 2])[jnp.clip(sub, 0, 4)],
                           jnp.array([1, 2, 4])[jnp.clip(sub, 0, 2)])
        saddr0 = ins.xs1 + ins.imm
        scalar_mem = is_.scalar_mem
        addr = jnp.where(scalar_mem, saddr0 + lane, vaddr)
        m_act = jnp.where(scalar_mem, lane < s_size, v_act & is_.vmem) & ins.run
        ua = _u(addr)
        in_dtcm = (ua >= DTCM_BASE) & (ua < DTCM_BASE + hw.dtcm_bytes)
        in_ext = (ua >= EXT_BASE) & (ua < _u(EXT_BASE + ext_size))
        dump = st.mem.shape[0] - 1
        midx = jnp.where(in_dtcm, _s(ua - DTCM_BASE), jnp.where(in_ext, _s(ua - EXT_BASE) + hw.dtcm_bytes, dump))
        oob = m_act & ~(in_dtcm | in_ext)
        elem_addr = jnp.where(scalar_mem, saddr0, vaddr - k_of)
        elem_size = jnp.where(scalar_mem, s_size, 1 << dwb_lg)
        misaligned = m_act & ((elem_addr & (elem_size - 1)) != 0)
        loaded = st.mem[jnp.where(m_act & ~oob, midx, dump)]
        store_data = jnp.where(scalar_mem, bytes_from_lanes(jnp.full(LANES, ins.xs2), jnp.int32(32)), vo.g_vd)
        does_store = (is_.STORE | is_.VSTORE) & ~(jnp.any(oob) | jnp.any(misaligned))
        st_idx = jnp.where(m_act & does_store, midx, dump)
        mem = st.mem.at[st_idx].set(jnp.where(m_act & does_store, store_data, st.mem[dump]))
        lw_ = loaded[:4].astype(jnp.uint32)
        word = _s(lw_[0] | (lw_[1] << 8) | (lw_[2] << 16) | (lw_[3] << 24))
        load_val = jnp.select([sub == 0, sub == 1, sub == 3, sub == 4],
                              [(word << 24) >> 24, (word << 16) >> 16, word & 0xFF, word & 0xFFFF], word)
        bad_addr = jnp.where(jnp.any(oob), addr[jnp.argmax(oob)], addr[jnp.argmax(misaligned)])
        return MemPort(mem, loaded, load_val, m_act, in_ext, k_of, elem_size, jnp.any(oob), jnp.any(misaligned),
                       bad_addr)

    # ---- timing ---------------------------------------------------------------------------
    def timing(self, st: State, ins: Ins, is_: Is, vt: VType, vs: VShape, mp: MemPort, cf: Control,
               on: jax.Array, x_on: jax.Array, writes_v: jax.Array) -> Timing:
        """The busy-until scoreboard (the guide's rules RVV-T*): issue, unit occupancy, result readiness."""
        hw, ctl, src, sub, rd, vl = self.hw, st.ctl, ins.src, ins.sub, ins.rd, vt.vl
        vec = is_.vector
        occ, lat = self.occ[ins.op], self.lat[ins.op]
        t = ctl[T_SCALAR]
        xr = st.x_ready
        reads_x1 = is_.any_of("ALU", "MULDIV", "LOAD", "STORE", "BRANCH", "JUMP", "VSET", "VLOAD", "VSTORE") | \
            ((is_.VARITH | is_.VPERM) & (src == I.SRC_X)) | is_.VMOVE & (sub == 1)
        reads_x2 = is_.any_of("MULDIV", "STORE", "BRANCH") | is_.ALU & (src == I.SRC_V) | is_.VSET & (sub == 2) | \
            is_.vmem & (src == I.MODE_STRIDED)
        issue = jnp.maximum(t, jnp.maximum(jnp.where(reads_x1, xr[ins.rs1], 0), jnp.where(reads_x2, xr[ins.rs2], 0)))
        issue_reg = issue
        vq, qi = st.vq, ctl[QI]
        issue = jnp.where(vec, jnp.maximum(issue, vq[qi]), issue)
        # external memory use
        ext_bytes = jnp.sum((mp.m_act & mp.in_ext).astype(jnp.int32))
        uses_ext = ext_bytes > 0
        ext_elems = jnp.sum((mp.m_act & mp.in_ext & (mp.k_of == 0)).astype(jnp.int32))
        bw = hw.ext_bytes_per_cycle
        transfer = jnp.where(is_.vmem & (src != I.MODE_UNIT), ext_elems * ((mp.elem_size + bw - 1) // bw),
                             (ext_bytes + bw - 1) // bw)
        # scalar classes: the issue slot is busy `occ` cycles, the result ready `lat` after issue
        is_div = is_.MULDIV & (sub >= I.OP["div"])
        scalar_mem_start = jnp.maximum(issue, ctl[V_MEM_DONE])
        ext_start_s = jnp.maximum(scalar_mem_start, ctl[EXT_FREE])
        ld_ready = jnp.where(uses_ext, ext_start_s + transfer + hw.ext_latency, scalar_mem_start + lat)
        mispredict = jnp.where(is_.BRANCH, cf.taken != (ins.imm <= ins.pc), False)
        s_next = jnp.select([is_.scalar_mem, is_.BRANCH],
                            [scalar_mem_start + occ, issue + occ + jnp.where(mispredict, hw.branch_penalty, 0)],
                            issue + occ)
        s_ready = jnp.where(is_.LOAD, ld_ready, issue + lat)
        # vector unit: `occ` cycles per 128-bit chunk, the result `lat` after the last
        vr = st.v_ready
        regs = jnp.arange(32)

        def group_ready(base: jax.Array, n: jax.Array | int, on_: jax.Array) -> jax.Array:
            m = (regs >= base) & (regs < base + n) & on_
            return jnp.max(jnp.where(m, vr, 0))

        reads_vd = is_.VSTORE | is_.VARITH & ((sub == I.OP["macc"]) | (sub == I.OP["nmsac"]) | (sub == I.OP["madd"])
                                              | (sub == I.OP["nmsub"]))
        reads_vs1 = (src == I.SRC_V) & (is_.VARITH | is_.VPERM | is_.VRED) | is_.VMASK
        v_dep = jnp.maximum(jnp.maximum(group_ready(ins.rs2, vs.emul_2, vs.uses_vs2),
                                        group_ready(ins.rs1, vs.emul_1, reads_vs1)),
                            jnp.maximum(group_ready(rd, vs.emul_d, reads_vd),
                                        group_ready(jnp.int32(0), 1, ins.vm == 0)))
        vstart = jnp.maximum(jnp.maximum(issue + 1, ctl[V_FREE]), v_dep)
        bits_max = jnp.maximum(vs.wd, vs.wa) * jnp.maximum(vl, 1)
        chunks = jnp.maximum(1, (bits_max + VLENB * 8 - 1) // (VLENB * 8))
        mem_chunks = jnp.maximum(1, (jnp.maximum(vl, 1) * vs.dw + VLENB * 8 - 1) // (VLENB * 8))
        log_vl = jnp.int32(jnp.ceil(jnp.log2(jnp.maximum(vl, 1).astype(jnp.float32))))
        ext_start_v = jnp.maximum(vstart, ctl[EXT_FREE])
        v_occ = jnp.select(
            [is_.vmem & uses_ext, is_.vmem & (src != I.MODE_UNIT), is_.vmem, is_.VRED],
            [ext_start_v + transfer - vstart, jnp.maximum(vl, 1), mem_chunks, chunks + log_vl], chunks * occ)
        v_lat = jnp.select([is_.VLOAD & uses_ext, vec], [hw.ext_latency + 1, lat], 1)
        v_done = vstart + v_occ + v_lat
        syncs = is_.VMOVE & (sub == 0) | is_.VMASK & (sub >= 7)
        s_next = jnp.where(vec, jnp.where(syncs, v_done, issue + 1), s_next)
        s_ready = jnp.where(vec, v_done, s_ready)
        dest_mask = (regs >= rd) & (regs < rd + vs.emul_d) & on & vec & writes_v
        t_new = jnp.where(on, s_next, t)
        t_end = jnp.where(on, jnp.maximum(jnp.maximum(ctl[T_END], t_new),
                                          jnp.maximum(jnp.where(vec | is_.LOAD, v_done, 0),
                                                      jnp.where(is_.LOAD, s_ready, 0))), ctl[T_END])
        t_end = jnp.where(on & is_.VSTORE & uses_ext, jnp.maximum(t_end, v_done + hw.ext_latency), t_end)
        t_end = jnp.where(on & is_.STORE & uses_ext, jnp.maximum(t_end, ext_start_s + transfer + hw.ext_latency),
                          t_end)
        busy = st.busy + jnp.where(on, jnp.stack([
            jnp.where(vec, 1, s_next - issue),
            jnp.where(vec, v_occ, 0),
            jnp.where(uses_ext, transfer, 0)]), 0)
        new = {
            T_SCALAR: t_new, T_END: t_end,
            V_FREE: jnp.where(on & vec, vstart + v_occ, ctl[V_FREE]),
            V_MEM_DONE: jnp.where(on & is_.VSTORE, jnp.maximum(ctl[V_MEM_DONE], v_done), ctl[V_MEM_DONE]),
            EXT_FREE: jnp.where(on & uses_ext, jnp.where(vec, ext_start_v, ext_start_s) + transfer, ctl[EXT_FREE]),
            QI: jnp.where(on & vec, (qi + 1) % hw.vector_queue_depth, qi),
        }
        return Timing(ctl=new, x_ready=xr.at[rd].set(jnp.where(x_on, s_ready, xr[rd])),
                      v_ready=jnp.where(dest_mask, v_done, vr), vq=vq.at[qi].set(jnp.where(on & vec, vstart, vq[qi])),
                      busy=busy, issue_reg=issue_reg, issue=issue, scalar_mem_start=scalar_mem_start, vstart=vstart,
                      v_occ=v_occ, v_lat=v_lat, syncs=syncs, is_div=is_div)

    # ---- one step -------------------------------------------------------------------------
    def step(self, st: State, prog: jax.Array, prog_len: jax.Array, ext_size: jax.Array,
             max_steps: jax.Array) -> State:
        ins, late = past_cycle_limit(st.ctl[T_END], self.decode(st, prog, max_steps))
        is_ = Is(ins.cls)
        ctl, run, sub, rd = st.ctl, ins.run, ins.sub, ins.rd
        vt = self.vtype_state(ctl)
        alu, csr = self.scalar_alu(ins, is_, vt)
        new_vtype, new_vl = self.vset(ins, vt)
        vs = self.vshape(ins, is_, vt)
        vo = self.voperands(st, ins, is_, vt)
        vc_bytes, vc_on, x_vec = self.vector(ins, is_, vt, vs, vo)
        mp = self.memory(st, ins, is_, vt, vs, vo, ext_size)
        cf = self.control(ins, is_, prog_len)

        # ---- faults -----------------------------------------------------------------------
        vec = is_.vector
        v_ill = vec & vt.vill
        g_ill = vec & ~vt.vill & vs.group_bad
        fault = jnp.select([v_ill, g_ill, mp.oob, mp.misaligned, cf.bad_jump],
                           [F_ILLEGAL_VTYPE, F_ILLEGAL_GROUP, F_OOB, F_MISALIGNED, F_BAD_JUMP], 0)
        fault = jnp.where(run & ~is_.HALT, fault, 0)
        ok = run & (fault == 0)
        detail = jnp.select([v_ill, g_ill, mp.oob | mp.misaligned, cf.bad_jump],
                            [0, vs.group_detail, mp.bad_addr, jnp.where(sub == 1, cf.jalr_addr, cf.jump_idx * 4)], 0)

        # ---- register writes ----------------------------------------------------------------
        x_val = jnp.select([is_.ALU | is_.MULDIV, is_.LOAD, is_.JUMP, is_.CSR, is_.VSET, is_.VMOVE | is_.VMASK],
                           [alu, mp.load_val, 4 * ins.pc + 4, csr, new_vl, x_vec], 0)
        writes_x = is_.any_of("ALU", "MULDIV", "LOAD", "JUMP", "CSR", "VSET") | is_.VMOVE & (sub == 0) | \
            is_.VMASK & (sub >= 7)
        x_on = ok & writes_x & (rd != 0)
        x = st.x.at[rd].set(jnp.where(x_on, x_val, st.x[rd]))
        v_bytes = jnp.where(is_.VLOAD, mp.loaded, vc_bytes)
        v_on = jnp.where(is_.VLOAD, mp.m_act, vc_on)
        writes_v = is_.VARITH | is_.VRED | is_.VPERM | is_.VLOAD | is_.VMASK & (sub < 7) | is_.VMOVE & (sub == 1)
        v_on = v_on & ok & writes_v
        vrf = lax.dynamic_update_slice(st.vrf, jnp.where(v_on, v_bytes, vo.g_vd), (rd * VLENB,))

        # ---- timing and commit --------------------------------------------------------------
        on = ok & ~is_.HALT
        tm = self.timing(st, ins, is_, vt, vs, mp, cf, on, x_on, writes_v)
        counts = st.counts.at[ins.cls].add(jnp.where(on, 1, 0))
        halt_now = run & is_.HALT
        fault, detail = jnp.where(late, F_CYCLE_LIMIT, fault), jnp.where(late, ctl[T_END], detail)
        faulted = (run & (fault != 0)) | late
        is_vset = on & is_.VSET
        new_ctl = ctl
        for index, value in {
            PC: jnp.where(ok & ~is_.HALT, cf.next_pc, ins.pc),
            STEPS: ctl[STEPS] + jnp.where(on, 1, 0),
            HALTED: jnp.where(halt_now | faulted, 1, ctl[HALTED]),
            FAULT: jnp.where(faulted, fault, ctl[FAULT]),
            FAULT_PC: jnp.where(faulted, ins.pc, ctl[FAULT_PC]),
            FAULT_DETAIL: jnp.where(faulted, detail, ctl[FAULT_DETAIL]),
            VL: jnp.where(is_vset, new_vl, vt.vl),
            VTYPE: jnp.where(is_vset, new_vtype, vt.vtype),
            **tm.ctl,
        }.items():
            new_ctl = new_ctl.at[index].set(value)
        prof = self.profile_row(st, ins, is_, tm, on) if self.profile else st.prof
        return State(ctl=new_ctl, x=x, vrf=vrf, mem=mp.mem, x_ready=tm.x_ready, v_ready=tm.v_ready, vq=tm.vq,
                     counts=counts, busy=tm.busy, prof=prof)

    def profile_row(self, st: State, ins: Ins, is_: Is, tm: Timing, on: jax.Array) -> jax.Array:
        """T_SCALAR's advance, split in the order the scoreboard builds it (see :data:`PROFILE_STALLS`)."""
        ctl, vec = st.ctl, is_.vector
        t, t_new, issue = ctl[T_SCALAR], tm.ctl[T_SCALAR], tm.issue
        sync = vec & tm.syncs
        v_unit = jnp.where(sync, jnp.maximum(ctl[V_FREE] - (issue + 1), 0), 0)
        v_oper = jnp.where(sync, tm.vstart - jnp.maximum(issue + 1, ctl[V_FREE]), 0)
        v_exec = jnp.where(sync, tm.v_occ + tm.v_lat, 0)
        drain = jnp.where(is_.scalar_mem & ~vec, tm.scalar_mem_start - issue, 0)
        div = jnp.where(tm.is_div & ~vec, self.occ[ins.op] - 1, 0)
        penalty = jnp.where(vec, 0, t_new - issue - 1 - drain - div)
        row = jnp.stack([jnp.int32(1), jnp.int32(1), tm.issue_reg - t, issue - tm.issue_reg, drain, div, penalty,
                         v_unit, v_oper, v_exec])
        return st.prof.at[ins.pc].add(jnp.where(on, row, 0))


@functools.lru_cache(maxsize=8)
def runner(hw_json: str, profile: bool = False):
    """``(words, mem[M], prog_len, ext_size, max_steps) -> State`` for one input set, jitted once per config.

    Input sets run one after another, not under ``vmap``: the PC is data-dependent, and unbatched
    the ``lax.cond`` around the vector datapath is a real branch, so scalar steps stay cheap.
    """
    enable_persistent_cache()
    hw = RVVConfig.model_validate_json(hw_json)
    machine = Machine(hw, profile)

    def run(words: jax.Array, mem: jax.Array, prog_len: jax.Array, ext_size: jax.Array,
            max_steps: jax.Array) -> State:
        def cond(s: State) -> jax.Array:
            return (s.ctl[HALTED] == 0) & (s.ctl[STEPS] < max_steps)

        return lax.while_loop(cond, lambda s: machine.step(s, words, prog_len, ext_size, max_steps),
                              machine.init_state(mem, prog_len, words.shape[0]))

    return machine, jax.jit(run, donate_argnums=(1,))

