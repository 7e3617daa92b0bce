"""Trace-ahead simulation of the RVV core: a Python pre-pass for control and timing, JAX for the data.

The timing model of ``machine.py`` never reads data values: it depends only on the instruction stream,
``vl``/``vtype``, register numbers and addresses. Scalar code *may* branch on data, though, so the
pre-pass (:func:`prepass`) runs the program once in plain Python -- the scalar side, the scoreboard,
faults, counts and busy cycles, in the same order as :meth:`~kcgym.sims.rvv.machine.Machine.step` --
with *taint tracking*: scalar loads of data (external memory, or DTCM bytes that a tainted or vector
store wrote: the DTCM's other bytes are shadowed with their known values, so a saved return address or a
stub's ``.rodata`` argument is not data) and vector-to-scalar moves (``vmv.x.s``, ``vcpop.m``,
``vfirst.m``) produce tainted values, and arithmetic on a tainted value is tainted. If a branch, a jump
target, an address, a stride or ``vsetvl``'s AVL/vtype would read a tainted value, the pre-pass stops
there (:class:`_Need`; its state, :class:`_Run`, is resumable and forkable) and :func:`_explore` *resolves*
it: the data path runs up to that instruction for every input set, the registers are read back, and the
pre-pass goes on once per distinct outcome (a branch's direction, else the values), the input sets split
into groups where they disagree; a tainted register whose value agrees across a group is concrete from then
on. If a vector memory access is masked (its bytes depend on ``v0``), or past the resolution budget
(``kcgym.limits.RESOLVE_*``: each resolution is a data-path round trip), the pre-pass gives up and the
interpreter runs: correct by construction (so do strided and indexed stores: the data path writes memory in
128-byte windows). The common instructions run on fast
paths decoded once per program (:func:`_fast_word`; :data:`PREPASS_FAST`), the rest on the general path.
Indexed loads are *speculated*: the pre-pass assumes every element lands, aligned,
in the memory (DTCM or external) that the base address is in -- which fixes their timing -- and the
data path checks that per input set; a failed check sends the run to the interpreter too.

What is left for JAX (:class:`DataPath`) is the recorded stream of data operations -- vector
instructions with ``vl``/``vtype``/addresses/scalar operands resolved, scalar loads and stores, and
tainted scalar arithmetic -- replayed by a loop over an *unbatched* operation index, so one
``lax.switch`` branch runs per operation (it returns the windows it writes; the loop applies them, so
XLA updates memory in place instead of copying it per operation), ``vmap``-ped over input sets, in
fixed-size chunks (one compile for any length). The branches call the interpreter's own per-class handlers
(vector arithmetic and reductions each have a branch, a compare's mask logic under a ``lax.cond``; slides,
mask logicals and moves share one), so the datapath is the oracle's code; their outputs are packed into few
arrays and applied to the whole batch at shared positions, because XLA's CPU runtime pays per buffer and per
fused kernel, not per byte. ``tests/sims/rvv/test_trace_differential.py`` checks the whole final state bit
for bit.
"""

from __future__ import annotations

import functools
import hashlib
import os
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from kcgym.limits import CYCLE_LIMIT, RESOLVE_FREE, RESOLVE_MAX, RESOLVE_MIN_STEPS
from kcgym.sims.jax_cache import enable_persistent_cache
from kcgym.sims.rvv import isa as I
from kcgym.sims.rvv import machine as M
from kcgym.sims.rvv import rolled
from kcgym.sims.rvv.config import DTCM_BASE, EXT_BASE, VLENB, RVVConfig
from kcgym.sims.trace_cache import TraceCache
from kcgym.sims.xla_options import OLDER_FUSION_EMITTERS, older_fusion_emitters

TRACE_CACHE_SIZE = 32  # pre-passed programs kept per process (program + hw + ext size + budget, :func:`_halted`)
TRACE_CACHE_BYTES = 256 << 20  # and at most this much of their operation arrays
UNROLL = 1  # operations per loop step: 2 halved the loop's overhead with XLA's newer fusion emitters, but with
# the older ones (DATA_PATH_XLA_OPTIONS) one runs faster (matmul C3 0.99 -> 0.75 us per operation) and compiles
# in half the time
ROLL_BODY, ROLL_FAILS, ROLL_SHORT, ROLL_LONG_TAKES = (rolled.ROLL_MAX_BODY, rolled.ROLL_MAX_FAILS,
                                                     rolled.ROLL_SHORT_BODY, rolled.ROLL_LONG_TAKES)
OP_CHUNK = 4096  # data operations per call of the jitted data path: one shape, one compile for any length
assert OP_CHUNK % UNROLL == 0

# KCGYM_SIM=oracle: every program on the interpreter; otherwise the trace path wherever the pre-pass keeps the
# program. Unlike the NPU there is no size threshold: the dynamic count is known only after the pre-pass, and
# from there the data path beat the interpreter on every compiler kernel measured, distinct ones included.
SIM_ENV = "KCGYM_SIM"

# data-operation kinds (one lax.switch branch each)
K_ALU, K_LD, K_ST, K_VLU, K_VSU, K_VMEM, K_VARITH, K_VMVXS, K_VRED, K_VPERM, K_VMASK, K_VMOVE = range(12)
K_VFORM = 12  # K_VFORM + i: vector arithmetic of VARITH_FORMS[i] (:func:`vec_kind`)
VEC_KIND = {"VARITH": K_VARITH, "VRED": K_VRED, "VPERM": K_VPERM, "VMASK": K_VMASK, "VMOVE": K_VMOVE}


def vec_kind(cls: int, sub: int, wf: int, vtype: int) -> int:
    """A vector instruction's data-operation kind at ``vtype``: ``vmv.x.s`` (every reduction's read-back) has its
    own small branch; a compare (vector arithmetic writing mask bits: no compiler or expert kernel has one) goes
    with the rare classes to the shared branch, so the arithmetic branch carries no mask logic; vector arithmetic
    of a :data:`VARITH_FORMS` form (width form, SEW, operation) takes that form's branch (``K_VFORM + i``)."""
    if cls == C_VARITH:
        if wf == I.W_MASK:
            return K_VMASK
        return _FORM_KIND.get((wf, (vtype >> 3) & 7, sub), K_VARITH) if vtype >= 0 else K_VARITH
    return K_VMVXS if cls == C_VMOVE and sub == 0 else VEC_KIND[I.CLASSES[cls]]


# the operations (``isa.OPS``) a scalar ALU operation (K_ALU), a vector arithmetic one (K_VARITH) and a compare
# (K_VMASK: the shared branch) can have, from the instruction table: their branches switch over these alone
SCALAR_OPS = tuple(n for n in I.OPS if n in {I.OPS[r.sub] for r in I.INSTRUCTIONS
                                             if r.sub is not None and r.cls in ("ALU", "MULDIV")})
VARITH_OPS = tuple(n for n in I.OPS if n in {I.OPS[r.sub] for r in I.INSTRUCTIONS
                                             if r.sub is not None and r.cls == "VARITH" and r.w != I.W_MASK})
COMPARE_OPS = tuple(n for n in I.OPS if n in {I.OPS[r.sub] for r in I.INSTRUCTIONS  # (the shared branch's VARITH)
                                              if r.sub is not None and r.cls == "VARITH" and r.w == I.W_MASK})
# Vector arithmetic of one width form at one SEW, both constant in its branch (:meth:`DataPath.b_varith`), so XLA
# folds the element widths. :func:`vec_kind` gives an operation the kind ``K_VFORM + i`` of ``VARITH_FORMS[i]``
# = (width form, SEW, operations) where it is one of these; the rest keep K_VARITH's branch. A form's operations
# are its width form's from the instruction table less ``FORM_SLOW``; W_SAME's only those whose handler reads just
# the signed operands (:func:`_signed_only`): every operand any operation of a branch reads is a buffer the branch
# fills on every operation, and vmacc.vx's branch ran 1.6 us per operation with the shifts' and unsigned
# operations' operands, 0.9 without (matmul C1's vmacc.vx operations in one chunk, 3 input sets). Each form is a
# compile of its own (cold start): these two are vsext.vf4 and vmacc.vx at e32, most of the compiler kernels'
# vector arithmetic (every matmul-like kernel's inner loop); twelve more forms (e8/e16, narrowing, widening, the
# shifts) cost 3 s more CPU to compile for a few percent of the operations. The e32 shifts' form and the two
# narrowing ones alone took softmax C3 from 1.35 to 1.09 us per operation warm, but its first simulate (cache
# cold, the full variant of :func:`data_runner`) from 3.4 to 4.4 s CPU: left out.
FORM_SLOW = frozenset(("div", "divu", "rem", "remu", "mulh", "mulhu", "mulhsu"))


def _signed_only(name: str) -> bool:
    """Whether the elementwise handler of ``name`` reads only the signed operands and the old destination."""
    x = np.zeros(1, np.int32)
    try:
        M._ELEMENTWISE[name](M._Operands(x, None, x, None, x, np.int32(32), np.int32(32)))  # type: ignore[arg-type]
    except TypeError:  # (an unsigned operand: None)
        return False
    return True


def _form_ops(wf: int, signed: bool | None = None) -> tuple[str, ...]:
    legal = {I.OPS[r.sub] for r in I.INSTRUCTIONS if r.sub is not None and r.cls == "VARITH" and r.w == wf}
    return tuple(n for n in VARITH_OPS if n in legal and n not in FORM_SLOW
                 and (signed is None or _signed_only(n) == signed))


VARITH_FORMS = ((I.W_SAME, 32, _form_ops(I.W_SAME, signed=True)), (I.W_EXT4, 32, _form_ops(I.W_EXT4)))
KIND_NAMES = ("ALU", "LD", "ST", "VLU", "VSU", "VMEM", "VARITH", "VMVXS", "VRED", "VPERM", "VMASK", "VMOVE") + tuple(
    f"VARITH w{wf} e{sew}" for wf, sew, _ in VARITH_FORMS)  # each kind's name (benchmarks' tables)
_FORM_KIND = {(wf, I.SEW_CODE[sew], I.OP[n]): K_VFORM + i for i, (wf, sew, names) in enumerate(VARITH_FORMS)
              for n in names}  # (width form, SEW code, operation) -> kind (:func:`vec_kind`)
_SCALAR_IDS, _VARITH_IDS, _COMPARE_IDS = ([I.OP[n] for n in ops] for ops in (SCALAR_OPS, VARITH_OPS, COMPARE_OPS))
# fields of one data operation: the word's fields, then what the pre-pass resolved
(R_KIND, R_OP, R_CLS, R_SUB, R_RD, R_RS1, R_RS2, R_IMM, R_VM, R_SRC, R_W, R_SGN, R_PC, R_X1, R_X2, R_T1, R_T2,
 R_VTYPE, R_VL, R_MIDX, R_NB, R_SPEC) = range(22)
N_REC = 22

_M32 = 0xFFFFFFFF
_MIN, _MAX = -(1 << 31), (1 << 31) - 1
C = I.CLASS_ID
(C_ALU, C_MULDIV, C_LOAD, C_STORE, C_BRANCH, C_JUMP, C_CSR, C_VSET, C_VLOAD, C_VSTORE, C_VARITH, C_VRED, C_VPERM,
 C_VMASK, C_VMOVE, C_HALT) = (C[n] for n in I.CLASSES)
VECTOR = frozenset(C[n] for n in I.VECTOR_CLASSES)
OPN = I.OP
MAC_OPS = frozenset(OPN[n] for n in ("macc", "nmsac", "madd", "nmsub"))


class GiveUp(Exception):
    """Control, an address or vl would depend on data: the interpreter must run this program."""


def _w(x: int) -> int:
    """int32 wrap-around."""
    x &= _M32
    return x - (1 << 32) if x & 0x80000000 else x


def _divs(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


_SCALAR_FNS = {OPN[name]: fn for name, fn in {
    "add": lambda a, b: _w(a + b), "auipc": lambda a, b: _w(a + b), "sub": lambda a, b: _w(a - b),
    "and": lambda a, b: _w(a & b), "or": lambda a, b: _w(a | b), "xor": lambda a, b: _w(a ^ b),
    "sll": lambda a, b: _w(a << (b & 31)), "srl": lambda a, b: _w((a & _M32) >> (b & 31)),
    "sra": lambda a, b: a >> (b & 31), "slt": lambda a, b: int(a < b),
    "sltu": lambda a, b: int((a & _M32) < (b & _M32)),
    "mul": lambda a, b: _w(a * b), "mulh": lambda a, b: _w((a * b) >> 32),
    "mulhu": lambda a, b: _w(((a & _M32) * (b & _M32)) >> 32), "mulhsu": lambda a, b: _w((a * (b & _M32)) >> 32),
    "div": lambda a, b: -1 if b == 0 else a if (a == _MIN and b == -1) else _w(_divs(a, b)),
    "rem": lambda a, b: a if b == 0 else 0 if (a == _MIN and b == -1) else _w(a - b * _divs(a, b)),
    "divu": lambda a, b: -1 if (b & _M32) == 0 else _w((a & _M32) // (b & _M32)),
    "remu": lambda a, b: a if (b & _M32) == 0 else _w((a & _M32) % (b & _M32)),
    "lui": lambda a, b: b,
}.items()}


def scalar_op(op: int, a: int, b: int) -> int:
    """The scalar ALU/MULDIV result of ``machine.elementwise`` at width 32 (RISC-V semantics)."""
    fn = _SCALAR_FNS.get(op)
    if fn is None:  # not a scalar instruction's operation: leave it to the interpreter
        raise GiveUp(f"scalar op {I.OPS[op]}")
    return fn(a, b)


class Trace(NamedTuple):
    """The pre-pass's final control-side state (as the interpreter's State fields) and the data operations."""

    ctl: np.ndarray
    x: np.ndarray
    tainted: np.ndarray  # bool[32]: x registers whose final value the data path computes
    x_ready: np.ndarray
    v_ready: np.ndarray
    vq: np.ndarray
    counts: np.ndarray
    busy: np.ndarray
    ops: np.ndarray  # int32[n, N_REC]
    speculates: bool  # an indexed access was speculated: the data path's check decides


@functools.lru_cache(maxsize=16)
def _costs(hw_json: str) -> tuple[list[int], list[int]]:
    hw = RVVConfig.model_validate_json(hw_json)
    return [int(v) for v in I.cost_table("occupancy", hw)], [int(v) for v in I.cost_table("latency", hw)]


class _Access(NamedTuple):
    """One memory access as the interpreter's port sees it: active bytes, where they land, what faults."""

    n_ext_bytes: int
    n_ext_elems: int
    elem_size: int
    oob: bool
    misaligned: bool
    bad_addr: int
    midx: int  # memory index of the first byte (contiguous accesses)


def _region(ua: int, hw: RVVConfig, ext_size: int) -> int:
    """0: DTCM, 1: external memory, -1: unmapped (``ua`` an unsigned address)."""
    if DTCM_BASE <= ua < DTCM_BASE + hw.dtcm_bytes:
        return 0
    if EXT_BASE <= ua < EXT_BASE + ext_size:
        return 1
    return -1


def _contiguous(base: int, nb: int, size: int, hw: RVVConfig, ext_size: int) -> _Access | None:
    """``nb`` active bytes from ``base`` (elements of ``size`` bytes) when they all land in one memory; else None."""
    ua = base & _M32
    if nb == 0:
        return _Access(0, 0, size, False, False, 0, 0)
    r = _region(ua, hw, ext_size)
    if r < 0 or ua + nb - 1 > _M32 or _region(ua + nb - 1, hw, ext_size) != r:
        return None
    mis = (base & (size - 1)) != 0
    midx = ua - DTCM_BASE if r == 0 else ua - EXT_BASE + hw.dtcm_bytes
    return _Access(nb if r == 1 else 0, (nb // size) if r == 1 else 0, size, False, mis, base if mis else 0, midx)


def _lanes(addr: np.ndarray, act: np.ndarray, elem_addr: np.ndarray, size: int, hw: RVVConfig,
           ext_size: int, k_zero: np.ndarray) -> _Access:
    """The port's per-byte view (``addr``: int64 per lane, wrapped to 32 bits), as ``Machine.memory`` computes it."""
    ua = addr & _M32
    in_dtcm = (ua >= DTCM_BASE) & (ua < DTCM_BASE + hw.dtcm_bytes)
    in_ext = (ua >= EXT_BASE) & (ua < EXT_BASE + ext_size)
    oob = act & ~(in_dtcm | in_ext)
    mis = act & ((elem_addr & (size - 1)) != 0)
    sa = np.where(ua >= 1 << 31, ua - (1 << 32), ua)
    bad = int(sa[np.argmax(oob)]) if oob.any() else int(sa[np.argmax(mis)])
    return _Access(int(np.sum(act & in_ext)), int(np.sum(act & in_ext & k_zero)), size, bool(oob.any()),
                   bool(mis.any()), bad, 0)


_LANE = np.arange(M.LANES, dtype=np.int64)
NO_ACCESS = _Access(0, 0, 1, False, False, 0, 0)  # an instruction that does not touch memory


class _Need(Exception):
    """The pre-pass stopped before an instruction whose control reads tainted registers: the data path's
    values of ``regs`` (per input set) decide. ``branch``: a conditional branch (``sub`` its condition), whose
    outcome is forced; else the registers' values themselves (an address, a jump target, vl) are needed."""

    def __init__(self, branch: bool, pc: int, regs: tuple[int, ...], sub: int = 0, rs1: int = 0, rs2: int = 0):
        super().__init__(pc)
        self.branch, self.pc, self.regs, self.sub, self.rs1, self.rs2 = branch, pc, regs, sub, rs1, rs2


def branch_taken(sub: int, a: int, b: int) -> bool:
    """A conditional branch's outcome (``sub``: beq, bne, blt, bge, bltu, bgeu) on int32 operands."""
    s = min(max(sub, 0), 5)
    ua, ub = a & _M32, b & _M32
    return (a == b, a != b, a < b, a >= b, ua < ub, ua >= ub)[s]


def _vshape(cls: int, sub: int, rd: int, rs1: int, rs2: int, src: int, wf: int, sew: int,
            lmul: int) -> tuple[int, int, int, int, int, int, bool, bool, int]:
    """A vector instruction's element widths and group sizes, as ``Machine.vshape`` computes them:
    (wd, wa, dw, emul_d, emul_2, emul_1, uses_vs2, group_bad, group_detail)."""
    indexed = src == I.MODE_INDEXED
    is_vmem = cls in (C_VLOAD, C_VSTORE)
    widen = wf == I.W_WIDEN or wf == I.W_WIDEN_W
    is_arith = cls == C_VARITH
    wd = 2 * sew if (is_arith or cls == C_VRED) and widen else sew
    if is_arith and wf in (I.W_WIDEN_W, I.W_NARROW):
        wa = 2 * sew
    elif is_arith and wf == I.W_EXT2:
        wa = sew // 2
    elif is_arith and wf == I.W_EXT4:
        wa = sew // 4
    else:
        wa = sew
    wa = max(wa, 8)
    dw = sew if indexed else wf
    if is_vmem:
        emul_d = max(1, dw * lmul // sew)
        emul_2 = max(1, wf * lmul // sew) if indexed else 1
    else:
        emul_d = 1 if (is_arith and wf == I.W_MASK) or cls in (C_VMASK, C_VMOVE, C_VRED) else (
            2 * lmul if is_arith and widen else lmul)
        emul_2 = 1 if cls in (C_VMASK, C_VMOVE) else max(1, wa * lmul // sew)
    emul_1 = lmul if (is_arith or cls == C_VPERM) and src == I.SRC_V else 1
    uses_vs2 = (is_arith and wf != I.W_MERGE and sub not in (OPN["mv"], OPN["id"])) or cls in (
        C_VRED, C_VPERM, C_VMASK) or (cls == C_VMOVE and sub == 0) or (is_vmem and indexed) or (
        is_arith and wf == I.W_MERGE)
    bad_d = (rd & (emul_d - 1)) != 0 or emul_d > 8
    bad_2 = uses_vs2 and ((rs2 & (emul_2 - 1)) != 0 or emul_2 > 8)
    bad_1 = (rs1 & (emul_1 - 1)) != 0
    group_bad = bad_d or bad_2 or bad_1
    group_detail = rd * 256 + emul_d if bad_d else rs2 * 256 + emul_2 if bad_2 else rs1 * 256 + emul_1
    return wd, wa, dw, emul_d, emul_2, emul_1, uses_vs2, group_bad, group_detail


class _Program(NamedTuple):
    """What every pre-pass of one program shares: its words as lists, the config's constants."""

    prog: list
    prog_len: int
    hw: RVVConfig
    occ: list[int]
    lat: list[int]
    ext_size: int
    max_steps: int
    fast: list  # per pc: the decoded form of a fast-path instruction (:func:`_fast_word`), or None
    vcache: dict  # (pc, vtype, vl) -> a vector instruction's shape and timing constants (:func:`_vector_static`)
    walks: dict  # (head, back edge) -> the registers its first walk pinned; (state, their values) -> a Walk;
    # ((head, back edge), "moving") -> the registers the last walk's path wrote
    context: tuple = ()  # (hw_json, ext_size, prog_len): what a walk depends on besides its words and state


# Walks shared across programs (an RL batch's kernels differ in one instruction; their loops walk alike): at most
# SHARED_WALK_ENTRIES entries (a full dict starts again; a matmul walk is a few KB), (context, loop) -> the
# registers pinned, (context, state, their values) -> (the words the walk read, the Walk). A walk is a function
# of its context, state and the words at the pcs it read, so a program with those words may take it.
SHARED_WALK_ENTRIES = 256
SHARED_WALK_MAX_SPAN = 256  # and only walks whose pcs span at most this many words (matmul's: 20; a kept span
# is its words' lists, ~1 KB per 10 words, so the dict stays within ~10 MB whatever the programs)
_SHARED_WALKS: dict = {}


def _share(key: tuple, value) -> None:
    if len(_SHARED_WALKS) >= SHARED_WALK_ENTRIES:
        _SHARED_WALKS.clear()
    _SHARED_WALKS[key] = value


def _shared_walk(p: _Program, key: tuple):
    """The shared walk of ``key`` where this program has the words it read, else False."""
    hit = _SHARED_WALKS.get((p.context, key))
    if hit is None:
        return False
    words, w = hit
    lo, hi = w.pcs
    return w if 0 <= lo <= hi <= p.prog_len and p.prog[lo: hi + 1] == words else False


PREPASS_FAST = True  # False: every instruction through the general path (the fast paths' equivalence test)
PREPASS_ROLL = True  # False: no loop is rolled (:mod:`rolled`; the rolling test's reference)
PREPASS_SHARE_WALKS = True  # False: every program walks its own loops (the shared walks' equivalence test)
# the fast paths: untainted scalar ALU, branch and vsetvl; vector ALU; scalar loads and stores, unit-stride vector
# ones (unmasked) whose address is not data and whose bytes lie in one memory
F_ALU, F_BRANCH, F_VSET, F_VEC, F_LOAD, F_STORE, F_VMEM, F_ADDI, F_CONST = range(1, 10)  # (F_ADDI: addi and
# li/mv; F_CONST: lui and auipc, whose value is known per pc: the commonest scalar instructions, without a call)
VEC_ALU = frozenset((C_VARITH, C_VRED, C_VPERM, C_VMASK, C_VMOVE))


def _fast_word(pc: int, word: list[int], occ_t: list[int], lat_t: list[int], hw: RVVConfig) -> tuple | None:
    """What the fast path of one static instruction needs, decoded once per program."""
    op, cls, sub, rd, rs1, rs2, imm, vm, src, wf, sgn = word
    rs1c, rs2c = min(max(rs1, 0), 31), min(max(rs2, 0), 31)
    occ, lat = occ_t[op], lat_t[op]
    if cls in (C_ALU, C_MULDIV):
        fn = _SCALAR_FNS.get(sub)
        if fn is None:
            return None
        is_u = sub in (OPN["lui"], OPN["auipc"])
        a_mode = 1 if sub == OPN["auipc"] else 2 if sub == OPN["lui"] else 0  # a: xs1, 4 * pc, 0
        b_imm = (_w(imm << 12) if is_u else imm) if src == I.SRC_I else None  # None: b is xs2
        reads_x2 = cls == C_MULDIV or (cls == C_ALU and src == I.SRC_V)
        if a_mode and b_imm is not None:  # lui, auipc: the value is the pc's
            return (F_CONST, cls, rd, rs1c, fn(4 * pc if a_mode == 1 else 0, b_imm), occ, lat)
        if sub == OPN["add"] and cls == C_ALU and b_imm is not None:
            return (F_ADDI, cls, rd, rs1c, b_imm, occ, lat)
        return (F_ALU, cls, fn, rd, rs1c, rs2c, occ, lat, reads_x2, a_mode, b_imm)
    if cls == C_BRANCH:
        bp = hw.branch_penalty
        return (F_BRANCH, cls, min(max(sub, 0), 5), imm, rs1c, rs2c, occ, 0 if imm <= pc else bp,
                bp if imm <= pc else 0, imm <= pc)
    if cls == C_VSET:
        nvt = n_vlmax = 0
        if sub != 2:
            bad = (imm >> 8) != 0 or ((imm >> 3) & 7) > 2 or (imm & 7) > 3
            nvt = M.VILL if bad else imm
            n_vlmax = -1 if bad else (1 << (nvt & 3)) * (VLENB * 8) // (8 << ((nvt >> 3) & 7))
        return (F_VSET, cls, sub, rd, rs1, rs1c, rs2c, occ, lat, nvt, n_vlmax)
    if cls in VEC_ALU:
        return (F_VEC,)
    if cls in (C_LOAD, C_STORE):
        size = ((1, 2, 4, 1, 2) if cls == C_LOAD else (1, 2, 4))[min(max(sub, 0), 4 if cls == C_LOAD else 2)]
        rec = [K_LD if cls == C_LOAD else K_ST, op, cls, sub, rd, rs1, rs2, imm, vm, src, wf, sgn, pc]
        return (F_LOAD if cls == C_LOAD else F_STORE, cls, sub, rd, rs1c, rs2c, imm, occ, lat, size, vm, rec)
    if cls in (C_VLOAD, C_VSTORE) and src == I.MODE_UNIT and vm != 0:
        return (F_VMEM, rs1c, rs2c)
    return None


def _vector_static(word: list[int], pc: int, vtype: int, vl: int, occ: int, lat: int) -> tuple | None:
    """A non-memory vector instruction's constants at one vtype and vl (None: it faults; the general path)."""
    op, cls, sub, rd, rs1, rs2, imm, vm, src, wf, sgn = word
    if vtype < 0:
        return None
    sew, lmul = 8 << ((vtype >> 3) & 7), 1 << (vtype & 3)
    wd, wa, dw, emul_d, emul_2, emul_1, uses_vs2, group_bad, _ = _vshape(cls, sub, rd, rs1, rs2, src, wf, sew, lmul)
    if group_bad or max(rd, rs1, rs2) > 31 or min(rd, rs1, rs2) < 0:
        return None
    rs1c, rs2c = min(max(rs1, 0), 31), min(max(rs2, 0), 31)
    reads_x1 = (cls in (C_VARITH, C_VPERM) and src == I.SRC_X) or (cls == C_VMOVE and sub == 1)
    reads_vd = cls == C_VARITH and sub in MAC_OPS
    reads_vs1 = (src == I.SRC_V and cls in (C_VARITH, C_VPERM, C_VRED)) or cls == C_VMASK
    vl1 = max(vl, 1)
    chunks = max(1, (max(wd, wa) * vl1 + VLENB * 8 - 1) // (VLENB * 8))
    v_occ = chunks + (vl1 - 1).bit_length() if cls == C_VRED else chunks * occ
    syncs = (cls == C_VMOVE and sub == 0) or (cls == C_VMASK and sub >= 7)
    writes_x = syncs
    writes_v = cls in (C_VARITH, C_VRED, C_VPERM) or (cls == C_VMASK and sub < 7) or (cls == C_VMOVE and sub == 1)
    rec = [vec_kind(cls, sub, wf, vtype), op, cls, sub, rd, rs1, rs2, imm, vm, src, wf, sgn, pc] if (
        writes_v or rd != 0) else None
    deps = [r for lo, n, on in ((rs2, emul_2, uses_vs2), (rs1, emul_1, reads_vs1), (rd, emul_d, reads_vd))
            if on for r in range(lo, min(lo + n, 32))] + ([0] if vm == 0 else [])  # the registers it waits for
    return (cls, rd, rs1c, rs2c, reads_x1, tuple(deps), v_occ, lat, syncs, writes_x and rd != 0,
            range(rd, min(rd + emul_d, 32)) if writes_v else range(0), rec)


def _vmem_static(word: list[int], pc: int, vtype: int, vl: int, lat: int) -> tuple | None:
    """A unit-stride vector load's or store's constants at one vtype and vl (None: it faults)."""
    op, cls, sub, rd, rs1, rs2, imm, vm, src, wf, sgn = word
    if vtype < 0 or not 0 <= rd <= 31:
        return None
    sew, lmul = 8 << ((vtype >> 3) & 7), 1 << (vtype & 3)
    wd, wa, dw, emul_d, emul_2, emul_1, uses_vs2, group_bad, _ = _vshape(cls, sub, rd, rs1, rs2, src, wf, sew, lmul)
    if group_bad:
        return None
    size = 1 << (0 if dw == 8 else 1 if dw == 16 else 2)
    nb = min(max(vl, 0) * size, M.LANES)
    store = cls == C_VSTORE
    rec = [K_VSU if store else K_VLU, op, cls, sub, rd, rs1, rs2, imm, vm, src, wf, sgn, pc]
    return (cls, store, rd, min(max(rs1, 0), 31), size, nb, emul_d, max(1, (max(vl, 1) * dw + VLENB * 8 - 1) //
            (VLENB * 8)), lat, range(0) if store else range(rd, min(rd + emul_d, 32)), rec)


def _program(words: np.ndarray, prog_len: int, hw: RVVConfig, hw_json: str, ext_size: int,
             max_steps: int) -> _Program:
    occ_t, lat_t = _costs(hw_json)
    w = np.asarray(words)[: prog_len + 1]  # the program and the halt after it (never past it)
    cls, sub, wf = w[:, I.F_CLS], w[:, I.F_SUB], w[:, I.F_W]
    odd = (np.isin(cls, (C_ALU, C_MULDIV)) & ~np.isin(sub, _SCALAR_IDS)) | (cls == C_VARITH) & np.where(
        wf == I.W_MASK, ~np.isin(sub, _COMPARE_IDS), ~np.isin(sub, _VARITH_IDS))
    if odd.any():  # a word the assembler never makes: the data path's branches do not have its operation
        raise GiveUp("operation outside the instruction table", int(np.argmax(odd)))
    prog = w.tolist()
    fast = [_fast_word(pc, w, occ_t, lat_t, hw) if PREPASS_FAST else None for pc, w in enumerate(prog)]
    return _Program(prog, prog_len, hw, occ_t, lat_t, int(ext_size), int(max_steps), fast, {}, {},
                    (hw_json, int(ext_size), prog_len))


_SCALARS = ("pc", "steps", "halted", "fault", "fault_pc", "fault_detail", "vl", "vtype", "t_scalar", "v_free",
            "v_mem_done", "ext_free", "qi", "t_end")
_LISTS = ("x", "xt", "xr", "vr", "vq", "counts", "busy")


def ops_array(flat: list[int]) -> np.ndarray:
    """The pre-pass's flat operation list as int32[n, N_REC] (``fromiter``: ten times ``np.array``'s speed)."""
    return np.fromiter(flat, np.int32, len(flat)).reshape(-1, N_REC)


class _Run:
    """The pre-pass state of one group of input sets: resumable at an instruction that needs data
    (:meth:`advance` returns a :class:`_Need`) and forkable (:meth:`fork`) when the group's input sets disagree.
    ``ops``: the data operations recorded since the owner last took them."""

    def __init__(self, p: _Program, dtcm: bytes | None):
        hw = p.hw
        self.x = [0] * 32
        self.x[1], self.x[2] = 4 * p.prog_len, DTCM_BASE + hw.dtcm_bytes
        self.xt = [False] * 32
        self.xr = [0] * 32
        self.vr = [0] * 32
        self.vq = [0] * hw.vector_queue_depth
        self.counts = [0] * len(I.CLASSES)
        self.busy = [0, 0, 0]
        self.pc = self.steps = self.halted = self.fault = self.fault_pc = self.fault_detail = 0
        self.vl, self.vtype = 0, M.VILL
        self.t_scalar = self.v_free = self.v_mem_done = self.ext_free = self.qi = self.t_end = 0
        self.ops: list[int] = []  # flat: N_REC fields per operation
        self.blocks: list[np.ndarray] = []  # the operations before ``ops``, as arrays (rolled loops' in bulk)
        self.roll_head: tuple[int, int] | None = None  # (loop head, back edge): :meth:`_advance` stopped to roll
        self.last: dict[int, tuple[int, int]] = {}  # per backward branch: the steps when last taken, takes in a row
        self.quiet: set[int] = set()  # backward branches not to roll again before they fall through
        self.fails: dict[int, int] = {}  # per backward branch: the proofs that failed
        self.walked = 0  # instructions walked by rolled.walk (bounded by ROLL_WALK_SHARE)
        self.speculates = False
        self.force: bool | None = None  # the outcome of the tainted branch at ``pc`` (set by the resolver)
        n_dtcm = hw.dtcm_bytes
        self.shadow = bytearray(n_dtcm)  # DTCM byte values, where ``known``
        self.known = bytearray(n_dtcm)
        if dtcm is not None:
            self.shadow[:] = dtcm[:n_dtcm].ljust(n_dtcm, b"\0")
            self.known[:] = b"\1" * n_dtcm

    def fork(self) -> _Run:
        """A copy that continues on its own (its ``ops`` start empty)."""
        new = object.__new__(_Run)
        for name in _SCALARS + ("speculates", "force"):
            setattr(new, name, getattr(self, name))
        for name in _LISTS:
            setattr(new, name, list(getattr(self, name)))
        new.shadow, new.known, new.ops, new.blocks = bytearray(self.shadow), bytearray(self.known), [], []
        new.roll_head, new.last, new.quiet, new.fails, new.walked = None, {}, set(), dict(self.fails), self.walked
        return new

    def take_ops(self) -> np.ndarray:
        """The data operations recorded since the last call, as int32[n, N_REC] (and forget them)."""
        parts = self.blocks + [ops_array(self.ops)]
        self.ops, self.blocks = [], []
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def concrete(self, r: int, value: int) -> None:
        """Register ``r`` holds ``value`` in every input set of this group: no longer data."""
        self.x[r], self.xt[r] = value, False

    def trace(self) -> Trace:
        ctl = np.zeros(M.N_CTL, np.int64)
        for i, name in zip((M.PC, M.STEPS, M.HALTED, M.FAULT, M.FAULT_PC, M.FAULT_DETAIL, M.VL, M.VTYPE, M.T_SCALAR,
                            M.V_FREE, M.V_MEM_DONE, M.EXT_FREE, M.QI, M.T_END), _SCALARS, strict=True):
            ctl[i] = getattr(self, name)
        i32 = np.int32
        return Trace(ctl=ctl.astype(i32), x=np.array(self.x, i32), tainted=np.array(self.xt, bool),
                     x_ready=np.array(self.xr, i32), v_ready=np.array(self.vr, i32), vq=np.array(self.vq, i32),
                     counts=np.array(self.counts, i32), busy=np.array(self.busy, i32),
                     ops=np.concatenate(self.blocks + [ops_array(self.ops)]), speculates=self.speculates)

    def advance(self, p: _Program) -> _Need | None:
        """Run the control side exactly as the interpreter's loop does, until the program halts, faults or
        exhausts the step budget (None), or an instruction's control would read data (its :class:`_Need`;
        the state is as before that instruction). Raises :class:`GiveUp` where data cannot be resolved.
        Loops whose next iterations are provably the current one's, moved, are skipped (:meth:`roll`)."""
        while True:
            need = self._advance(p, p.max_steps, PREPASS_ROLL)
            head, self.roll_head = self.roll_head, None
            if need is not None or head is None:
                return need
            need = self.roll(p, head)
            if need is not None:
                return need

    def _snap(self) -> rolled.Snap:
        return rolled.Snap(self.steps, self.t_scalar, (self.v_free, self.v_mem_done, self.ext_free), self.t_end,
                           self.qi, list(self.x), list(self.xt), list(self.xr), list(self.vr), list(self.vq),
                           list(self.counts), list(self.busy), len(self.ops))

    def roll(self, p: _Program, at: tuple[int, int]) -> _Need | None:
        """At the head of a loop (``at``: the head and the backward branch just taken): prove how many iterations
        repeat this one (:func:`rolled.walk`, :func:`rolled.horizon`), run them for real until the timing state
        is steady (:func:`rolled.steady`), then jump over the rest (:func:`rolled.extrapolate`). Where any of
        that fails, the per-instruction path goes on from wherever this stopped (what it ran is exact)."""
        head, back = at
        vcache, prog = p.vcache, p.prog

        def static(make, pc: int, vtype: int, vl: int):
            key = (pc, vtype, vl)
            vs = vcache.get(key, False)
            if vs is False:
                w = prog[pc]
                vs = vcache[key] = make(w, pc, vtype, vl, p.occ[w[0]], p.lat[w[0]]) if make is _vector_static else \
                    make(w, pc, vtype, vl, p.lat[w[0]])
            return vs

        walks, x = p.walks, self.x
        fixed = walks.get(at)  # the registers whose values the first walk took as constants: the cache key's values
        if fixed is None and (fixed := _SHARED_WALKS.get((p.context, at))) is not None:
            walks[at] = fixed  # (any choice of key registers is exact: a walk is kept only if it pinned no other)
        state = (head, back, self.vl, self.vtype, tuple(self.xt))
        w: rolled.Walk | None | bool = False if fixed is None else walks.get((state, tuple([x[r] for r in fixed])),
                                                                             False)
        if w is False and fixed is not None and PREPASS_SHARE_WALKS:
            w = _shared_walk(p, (state, tuple([x[r] for r in fixed])))
            if w is not False:
                walks[(state, tuple([x[r] for r in fixed]))] = w
        if w is False:  # (a cached walk's path outcomes and addresses at this entry: horizon checks them)
            if self.walked > self.steps // rolled.ROLL_WALK_SHARE + rolled.ROLL_MAX_BODY:
                return None  # walks that keep failing cost more than they save
            guess = walks.get((at, "moving"))
            w, read, walked = rolled.walk(prog, p.prog_len, head, back, x, self.xt, self.vl, self.vtype,
                                          p.hw.dtcm_bytes, p.ext_size, _SCALAR_FNS,
                                          functools.partial(static, _vector_static),
                                          functools.partial(static, _vmem_static), guess)
            self.walked += walked
            if w is not None:  # the next walk of this loop starts from its variables (one pass, not two)
                walks[(at, "moving")] = w.moving
            if fixed is None:
                fixed = walks[at] = tuple(sorted(read))
            if read <= set(fixed):  # its constants all come from the key's registers (else it is not kept)
                walks[(state, tuple([x[r] for r in fixed]))] = w
                if w is not None and PREPASS_SHARE_WALKS and 0 <= w.pcs[0] <= w.pcs[1] < w.pcs[0] + \
                        SHARED_WALK_MAX_SPAN:
                    lo, hi = w.pcs
                    _share((p.context, at), fixed)
                    _share((p.context, (state, tuple([x[r] for r in fixed]))), ([list(r) for r in prog[lo: hi + 1]], w))
        if not isinstance(w, rolled.Walk):
            self.fails[back] = self.fails.get(back, 0) + 1
            return None
        n = rolled.horizon(w, self.x, self.xt, (p.max_steps - self.steps) // w.length + 1)
        self.fails[back] = self.fails.get(back, 0) + 1  # (until it rolls: a loop that never does is left alone)
        if n < rolled.ROLL_MIN_ITERATIONS or (n - 3) * w.length < rolled.ROLL_MIN_SAVED:
            return None
        snaps = [self._snap()]
        while len(snaps) - 1 < rolled.ROLL_TRIES + 2 and n - len(snaps) >= 1:
            need = self._advance(p, self.steps + w.length, False)
            if need is not None or self.halted or self.pc != head or self.steps != snaps[-1].steps + w.length:
                return need  # (a budget or the cycle limit: the caller's loop sees it)
            snaps.append(self._snap())
            if len(snaps) < 3:
                continue
            a, b, c = snaps[-3:]
            nvec = rolled.vector_count(b, c)
            dt = rolled.steady(b, c, nvec)
            if not dt:
                continue
            m = min(n - (len(snaps) - 1), (p.max_steps - c.steps) // w.length, (CYCLE_LIMIT - c.t_end) // dt)
            if m <= 0:
                return None
            ext = rolled.extrapolate(a, b, c, self.ops, m, dt, nvec, N_REC)
            if ext is None:
                return None
            (self.steps, self.t_scalar, (self.v_free, self.v_mem_done, self.ext_free), self.t_end, self.qi), lists, \
                block = ext
            self.x, self.xr, self.vr, self.vq, self.counts, self.busy = lists
            self.fails[back] = 0
            if len(block):
                self.blocks += [ops_array(self.ops), block]
                self.ops = []
            return None
        return None

    def _advance(self, p: _Program, limit: int, hook: bool) -> _Need | None:
        """:meth:`advance` per instruction, pausing after ``limit`` steps; ``hook``: also where a loop's backward
        branch is taken twice within :data:`rolled.ROLL_MAX_BODY` steps (``roll_head``: its target)."""
        prog, prog_len, hw, occ_t, lat_t, ext_size, max_steps, fast, vcache = p[:9]
        max_steps = min(max_steps, limit)
        last, quiet = self.last, self.quiet
        depth, bw, ext_lat = hw.vector_queue_depth, hw.ext_bytes_per_cycle, hw.ext_latency
        x, xt, xr, vr, vq, counts, busy = self.x, self.xt, self.xr, self.vr, self.vq, self.counts, self.busy
        pc, steps, halted, fault, fault_pc, fault_detail = (self.pc, self.steps, self.halted, self.fault,
                                                            self.fault_pc, self.fault_detail)
        vl, vtype, t_scalar, v_free, v_mem_done = self.vl, self.vtype, self.t_scalar, self.v_free, self.v_mem_done
        ext_free, qi, t_end = self.ext_free, self.qi, self.t_end
        ops, speculates, force, shadow, known = self.ops, self.speculates, self.force, self.shadow, self.known
        n_dtcm = hw.dtcm_bytes
        dtcm_end, ext_end = DTCM_BASE + n_dtcm, EXT_BASE + ext_size
        need = None

        def gready(base: int, n: int) -> int:
            return max(vr[base:base + n], default=0)

        try:
            while not halted and steps < max_steps:
                if t_end > CYCLE_LIMIT:  # the interpreter's first check (machine.past_cycle_limit)
                    halted, fault, fault_pc, fault_detail = 1, M.F_CYCLE_LIMIT, pc, t_end
                    break
                # ---- the fast paths: what the general path below does for these cases, decoded once ----------
                fi = fast[pc]
                if fi is not None:
                    k = fi[0]
                    if k == F_ADDI:
                        _, cls, rd, rs1c, imm, occ, lat = fi
                        if not xt[rs1c]:
                            issue = xr[rs1c]
                            if t_scalar > issue:
                                issue = t_scalar
                            t_scalar = issue + occ
                            if t_scalar > t_end:
                                t_end = t_scalar
                            busy[0] += occ
                            if rd != 0:
                                val = x[rs1c] + imm
                                if not _MIN <= val <= _MAX:
                                    val = _w(val)
                                xr[rd], x[rd], xt[rd] = issue + lat, val, False
                            counts[cls] += 1
                            steps += 1
                            pc += 1
                            continue
                    elif k == F_VSET:
                        _, cls, sub, rd, rs1, rs1c, rs2c, occ, lat, nvt, n_vlmax = fi
                        if not ((sub != 1 and rs1 != 0 and xt[rs1c]) or (sub == 2 and xt[rs2c])):
                            if sub == 2:
                                raw = x[rs2c]
                                bad = (raw >> 8) != 0 or ((raw >> 3) & 7) > 2 or (raw & 7) > 3
                                nvt = M.VILL if bad else raw
                                n_vlmax = -1 if bad else (1 << (nvt & 3)) * (VLENB * 8) // (8 << ((nvt >> 3) & 7))
                            avl = (rs1 if sub == 1 else x[rs1c] if rs1 != 0 else (-1 if rd != 0 else vl)) & _M32
                            new_vl = 0 if n_vlmax < 0 else avl if avl < n_vlmax else n_vlmax  # (< 2**31: no wrap)
                            issue = t_scalar if t_scalar > xr[rs1c] else xr[rs1c]
                            if sub == 2 and xr[rs2c] > issue:
                                issue = xr[rs2c]
                            t_scalar = issue + occ
                            if t_scalar > t_end:
                                t_end = t_scalar
                            busy[0] += occ
                            if rd != 0:
                                xr[rd], x[rd], xt[rd] = issue + lat, new_vl, False
                            counts[cls] += 1
                            steps += 1
                            vl, vtype = new_vl, nvt
                            pc += 1
                            continue
                    elif k == F_VEC:
                        key = (pc, vtype, vl)
                        vs = vcache.get(key, False)
                        if vs is False:
                            w = prog[pc]
                            vs = vcache[key] = _vector_static(w, pc, vtype, vl, occ_t[w[0]], lat_t[w[0]])
                        if vs is not None:
                            cls, rd, rs1c, rs2c, reads_x1, deps, v_occ, v_lat, syncs, x_on, dest, rec = vs
                            issue = t_scalar
                            if reads_x1 and xr[rs1c] > issue:
                                issue = xr[rs1c]
                            if vq[qi] > issue:
                                issue = vq[qi]
                            vstart = issue + 1 if issue + 1 > v_free else v_free
                            for r in deps:
                                if vr[r] > vstart:
                                    vstart = vr[r]
                            v_done = vstart + v_occ + v_lat
                            if rec is not None:
                                ops += rec
                                ops += (x[rs1c], x[rs2c], int(xt[rs1c]), int(xt[rs2c]), vtype, vl, 0, 0, 0)
                            for r in dest:
                                vr[r] = v_done
                            t_scalar = v_done if syncs else issue + 1
                            if v_done > t_end:  # (v_done >= t_scalar)
                                t_end = v_done
                            busy[0] += 1
                            busy[1] += v_occ
                            v_free = vstart + v_occ
                            vq[qi] = vstart
                            qi += 1
                            if qi == depth:
                                qi = 0
                            if x_on:
                                xr[rd], x[rd], xt[rd] = v_done, 0, True
                            counts[cls] += 1
                            steps += 1
                            pc += 1
                            continue
                    elif k == F_BRANCH:
                        _, cls, sub, imm, rs1c, rs2c, occ, pen_taken, pen_not, back = fi
                        if not (xt[rs1c] or xt[rs2c]):
                            a, b = x[rs1c], x[rs2c]
                            if sub == 1:  # (branch_taken, inline: bne and blt close most loops)
                                taken = a != b
                            elif sub == 2:
                                taken = a < b
                            elif sub == 0:
                                taken = a == b
                            elif sub == 3:
                                taken = a >= b
                            elif sub == 4:
                                taken = (a & _M32) < (b & _M32)
                            else:
                                taken = (a & _M32) >= (b & _M32)
                            issue = xr[rs1c]
                            if t_scalar > issue:
                                issue = t_scalar
                            if xr[rs2c] > issue:
                                issue = xr[rs2c]
                            s_next = issue + occ + (pen_taken if taken else pen_not)
                            t_scalar = s_next
                            if s_next > t_end:
                                t_end = s_next
                            busy[0] += s_next - issue
                            counts[cls] += 1
                            steps += 1
                            if back and hook:  # a loop closes: roll it where it repeats (not before it has run twice)
                                if not taken:
                                    if self.fails.get(pc, 0) < ROLL_FAILS:
                                        quiet.discard(pc)
                                elif pc not in quiet:
                                    s0, takes = last.get(pc, (-ROLL_BODY, 0))
                                    body = steps - s0
                                    takes = takes + 1 if body <= ROLL_BODY else 1
                                    last[pc] = (steps, takes)
                                    if takes >= (2 if body <= ROLL_SHORT else ROLL_LONG_TAKES) and force is None:
                                        quiet.add(pc)
                                        self.roll_head = (imm, pc)
                                        pc = imm
                                        break
                            pc = imm if taken else pc + 1
                            continue
                    elif k in (F_LOAD, F_STORE):
                        _, cls, sub, rd, rs1c, rs2c, imm, occ, lat, size, vm, rec = fi
                        midx = -1  # (as _contiguous: the bytes in one memory, aligned; else the general path)
                        if not xt[rs1c]:
                            base = _w(x[rs1c] + imm)
                            ua = base & _M32
                            if ua >= DTCM_BASE and ua + size <= dtcm_end:
                                midx, ext_bytes = ua - DTCM_BASE, 0
                            elif ua >= EXT_BASE and ua + size <= ext_end:
                                midx, ext_bytes = ua - EXT_BASE + n_dtcm, size
                            if base & (size - 1):
                                midx = -1
                        if midx >= 0:
                            issue = t_scalar if t_scalar > xr[rs1c] else xr[rs1c]
                            if k == F_STORE:
                                if xr[rs2c] > issue:
                                    issue = xr[rs2c]
                                xs2, t2 = x[rs2c], xt[rs2c]
                                if midx < n_dtcm:
                                    if t2:
                                        known[midx:midx + size] = bytes(size)
                                    else:
                                        shadow[midx:midx + size] = (xs2 & _M32).to_bytes(4, "little")[:size]
                                        known[midx:midx + size] = b"\1" * size
                                ops += rec
                                ops += (x[rs1c], xs2, 0, int(t2), vtype, vl, midx, size, 0)
                            elif midx + size <= n_dtcm and all(known[midx:midx + size]):
                                x_val, x_taint = _w(int.from_bytes(shadow[midx:midx + size], "little",
                                                                   signed=sub in (0, 1))), False
                            else:
                                x_val, x_taint = 0, True
                                if rd != 0:
                                    ops += rec
                                    ops += (x[rs1c], x[rs2c], 0, 0, vtype, vl, midx, size, 0)
                            transfer = (ext_bytes + bw - 1) // bw
                            scalar_mem_start = issue if issue > v_mem_done else v_mem_done
                            ext_start_s = scalar_mem_start if scalar_mem_start > ext_free else ext_free
                            s_next = scalar_mem_start + occ
                            t_scalar = s_next
                            if s_next > t_end:
                                t_end = s_next
                            if k == F_LOAD:
                                s_ready = ext_start_s + transfer + ext_lat if ext_bytes else scalar_mem_start + lat
                                v_done = issue + 1 if issue + 1 > v_free else v_free  # (RVV-T10, as below)
                                if vm == 0 and vr[0] > v_done:
                                    v_done = vr[0]
                                v_done += occ * (((8 << ((vtype >> 3) & 7)) * (vl if vl > 1 else 1) + VLENB * 8 - 1)
                                                 // (VLENB * 8)) + 1  # (at least one chunk: sew * vl >= 8)
                                if v_done > t_end:
                                    t_end = v_done
                                if s_ready > t_end:
                                    t_end = s_ready
                                if rd != 0:
                                    xr[rd], x[rd], xt[rd] = s_ready, x_val, x_taint
                            elif ext_bytes:
                                t_end = max(t_end, ext_start_s + transfer + ext_lat)
                            busy[0] += s_next - issue
                            if ext_bytes:
                                busy[2] += transfer
                                ext_free = ext_start_s + transfer
                            counts[cls] += 1
                            steps += 1
                            pc += 1
                            continue
                    elif k == F_ALU:
                        _, cls, fn, rd, rs1c, rs2c, occ, lat, reads_x2, a_mode, b_imm = fi
                        if not ((a_mode == 0 and xt[rs1c]) or (b_imm is None and xt[rs2c])):
                            val = fn(x[rs1c] if a_mode == 0 else 4 * pc if a_mode == 1 else 0,
                                     x[rs2c] if b_imm is None else b_imm)
                            issue = t_scalar if t_scalar > xr[rs1c] else xr[rs1c]
                            if reads_x2 and xr[rs2c] > issue:
                                issue = xr[rs2c]
                            t_scalar = issue + occ
                            if t_scalar > t_end:
                                t_end = t_scalar
                            busy[0] += occ
                            if rd != 0:
                                xr[rd], x[rd], xt[rd] = issue + lat, val, False
                            counts[cls] += 1
                            steps += 1
                            pc += 1
                            continue
                    elif k == F_VMEM and not xt[fi[1]]:
                        key = (pc, vtype, vl)
                        vs = vcache.get(key, False)
                        if vs is False:
                            w = prog[pc]
                            vs = vcache[key] = _vmem_static(w, pc, vtype, vl, lat_t[w[0]])
                        if vs is not None:
                            cls, store, rd, rs1c, size, nb, emul_d, chunks, lat, dest, rec = vs
                            xs1 = x[rs1c]
                            ua = xs1 & _M32
                            midx = ext_bytes = 0
                            if nb:  # (as _contiguous; vl = 0 touches nothing)
                                if ua >= DTCM_BASE and ua + nb <= dtcm_end:
                                    midx = ua - DTCM_BASE
                                elif ua >= EXT_BASE and ua + nb <= ext_end:
                                    midx, ext_bytes = ua - EXT_BASE + n_dtcm, nb
                                else:
                                    midx = -1
                                if xs1 & (size - 1):
                                    midx = -1
                            if midx >= 0:
                                if store and ext_bytes == 0 and midx < n_dtcm:  # vector data: not known
                                    known[midx:midx + nb] = bytes(len(known[midx:midx + nb]))
                                ops += rec
                                ops += (xs1, x[fi[2]], 0, 0, vtype, vl, midx, nb, 0)
                                issue = t_scalar if t_scalar > xr[rs1c] else xr[rs1c]
                                if vq[qi] > issue:
                                    issue = vq[qi]
                                transfer = (ext_bytes + bw - 1) // bw
                                vstart = issue + 1 if issue + 1 > v_free else v_free
                                if store:
                                    vstart = max(vstart, *vr[rd:rd + emul_d])
                                if ext_bytes:
                                    v_occ = max(vstart, ext_free) + transfer - vstart
                                    v_done = vstart + v_occ + (lat if store else ext_lat + 1)
                                else:
                                    v_occ = chunks
                                    v_done = vstart + v_occ + lat
                                for r in dest:
                                    vr[r] = v_done
                                t_scalar = issue + 1
                                t_end = max(t_end, t_scalar, v_done)
                                if store and ext_bytes:
                                    t_end = max(t_end, v_done + ext_lat)
                                busy[0] += 1
                                busy[1] += v_occ
                                v_free = vstart + v_occ
                                vq[qi] = vstart
                                qi = (qi + 1) % depth
                                if store and v_done > v_mem_done:
                                    v_mem_done = v_done
                                if ext_bytes:
                                    busy[2] += transfer
                                    ext_free = max(vstart, ext_free) + transfer
                                counts[cls] += 1
                                steps += 1
                                pc += 1
                                continue
                    elif k == F_CONST:
                        _, cls, rd, rs1c, val, occ, lat = fi
                        issue = xr[rs1c]
                        if t_scalar > issue:
                            issue = t_scalar
                        t_scalar = issue + occ
                        if t_scalar > t_end:
                            t_end = t_scalar
                        busy[0] += occ
                        if rd != 0:
                            xr[rd], x[rd], xt[rd] = issue + lat, val, False
                        counts[cls] += 1
                        steps += 1
                        pc += 1
                        continue
                # ---- the general path ---------------------------------------------------------------------
                op, cls, sub, rd, rs1, rs2, imm, vm, src, wf, sgn = prog[pc]
                rs1c, rs2c = min(max(rs1, 0), 31), min(max(rs2, 0), 31)
                xs1, xs2 = x[rs1c], x[rs2c]
                t1, t2 = xt[rs1c], xt[rs2c]
                vec = cls in VECTOR
                vill = vtype < 0
                sew = 8 << ((vtype >> 3) & 7)
                lmul = 1 << (vtype & 3)
                is_vmem = cls in (C_VLOAD, C_VSTORE)
                is_smem = cls in (C_LOAD, C_STORE)
                # ---- vshape ------------------------------------------------------------------------------
                indexed = src == I.MODE_INDEXED
                is_arith = cls == C_VARITH
                wd, wa, dw, emul_d, emul_2, emul_1, uses_vs2, group_bad, group_detail = _vshape(
                    cls, sub, rd, rs1, rs2, src, wf, sew, lmul) if vec else (sew, sew, wf, 1, 1, 1, False, False, 0)
                # ---- memory ------------------------------------------------------------------------------
                acc = NO_ACCESS
                dwb_lg = 0 if dw == 8 else 1 if dw == 16 else 2
                if is_smem:
                    if t1:
                        raise _Need(False, pc, (rs1c,))
                    s_size = ((1, 2, 4, 1, 2) if cls == C_LOAD else (1, 2, 4))[
                        min(max(sub, 0), 4 if cls == C_LOAD else 2)]
                    base = _w(xs1 + imm)
                    c = _contiguous(base, s_size, s_size, hw, ext_size)
                    if c is not None:
                        acc = c
                    else:
                        addr = base + _LANE
                        acc = _lanes(addr, s_size > _LANE, np.full(M.LANES, base), s_size, hw, ext_size,
                                     (_LANE & ((1 << dwb_lg) - 1)) == 0)
                elif is_vmem:
                    if t1 or (src == I.MODE_STRIDED and t2):
                        strided = src == I.MODE_STRIDED
                        raise _Need(False, pc, tuple(r for r, t in ((rs1c, t1), (rs2c, strided and t2)) if t))
                    if vm == 0:
                        raise GiveUp("masked vector memory access", pc)
                    if cls == C_VSTORE and src != I.MODE_UNIT:
                        # scattered writes: the data path writes windows only
                        raise GiveUp("strided or indexed store", pc)
                    size = 1 << dwb_lg
                    nb = min(max(vl, 0) * size, M.LANES)  # the active bytes: lanes j with j // size < vl
                    # indexed: speculate every active element aligned in the base's memory (checked in JAX)
                    if src == I.MODE_INDEXED:
                        r = _region(xs1 & _M32, hw, ext_size)
                        if r < 0:
                            raise GiveUp("indexed access from an unmapped base", pc)
                        speculates = True
                        acc = _Access(nb if r == 1 else 0, (nb // size) if r == 1 else 0, size, False, False, 0, r)
                    else:
                        c = _contiguous(xs1, nb, size, hw, ext_size) if src == I.MODE_UNIT else None
                        if c is not None:
                            acc = c
                        else:  # strided, or a unit access that leaves its memory: byte by byte, as the port sees it
                            e_of, k_of = _LANE >> dwb_lg, _LANE & (size - 1)
                            addr = xs1 + (e_of * xs2 if src == I.MODE_STRIDED else e_of * size) + k_of
                            acc = _lanes(addr, e_of < vl, addr - k_of, size, hw, ext_size, k_of == 0)
                            if cls == C_VSTORE:  # where it wrote in the DTCM is not tracked: forget every value
                                known[:] = bytes(n_dtcm)
                    if cls == C_VSTORE and acc.n_ext_bytes == 0 and acc.midx < n_dtcm:  # vector data: not known
                        known[acc.midx:acc.midx + nb] = bytes(len(known[acc.midx:acc.midx + nb]))
                # ---- control ------------------------------------------------------------------------------
                taken, bad_jump, jalr_addr, jump_idx = False, False, 0, 0
                if cls == C_BRANCH:
                    if not (t1 or t2):
                        taken = branch_taken(sub, xs1, xs2)
                    elif force is None:
                        raise _Need(True, pc, tuple(r for r, t in ((rs1c, t1), (rs2c, t2)) if t), sub, rs1c, rs2c)
                    else:  # resolved: every input set of this group takes the same way
                        taken, force = force, None
                    next_pc = imm if taken else pc + 1
                elif cls == C_JUMP:
                    if sub == 1 and t1:
                        raise _Need(False, pc, (rs1c,))
                    jalr_addr = _w(xs1 + imm) & ~1
                    jump_idx = imm if sub == 0 else jalr_addr >> 2
                    bad_jump = (sub == 1 and (jalr_addr & 3) != 0) or jump_idx < 0 or jump_idx > prog_len
                    next_pc = jump_idx
                else:
                    next_pc = pc + 1
                # ---- faults ------------------------------------------------------------------------------
                v_ill = vec and vill
                g_ill = vec and not vill and group_bad
                oob, mis = acc.oob, acc.misaligned
                f = 0
                if cls != C_HALT:
                    f = (M.F_ILLEGAL_VTYPE if v_ill else M.F_ILLEGAL_GROUP if g_ill else M.F_OOB if oob else
                         M.F_MISALIGNED if mis else M.F_BAD_JUMP if bad_jump else 0)
                if cls == C_HALT:
                    halted = 1
                    break
                if f:
                    halted, fault, fault_pc = 1, f, pc
                    fault_detail = (0 if v_ill else group_detail if g_ill else acc.bad_addr if (oob or mis) else
                                    (jalr_addr if sub == 1 else _w(jump_idx * 4)))
                    break
                # ---- values and the data operations --------------------------------------------------------
                x_val, x_taint = 0, False
                writes_x = cls in (C_ALU, C_MULDIV, C_LOAD, C_JUMP, C_CSR, C_VSET) or (cls == C_VMOVE and sub == 0) or (
                    cls == C_VMASK and sub >= 7)
                writes_v = cls in (C_VARITH, C_VRED, C_VPERM, C_VLOAD) or (cls == C_VMASK and sub < 7) or (
                    cls == C_VMOVE and sub == 1)
                rec = None
                if cls in (C_ALU, C_MULDIV):
                    is_u = sub in (OPN["lui"], OPN["auipc"])
                    a = 4 * pc if sub == OPN["auipc"] else 0 if sub == OPN["lui"] else xs1
                    ta = t1 and not is_u
                    if src == I.SRC_I:
                        b, tb = (_w(imm << 12) if is_u else imm), False
                    else:
                        b, tb = xs2, t2
                    if ta or tb:
                        x_taint = True
                        if rd != 0:
                            rec = [K_ALU, op, cls, sub, rd, rs1, rs2, imm, vm, src, wf, sgn, pc, a, b, int(ta), int(tb)]
                    else:
                        x_val = scalar_op(sub, a, b)
                elif cls == C_LOAD and acc.midx + s_size <= n_dtcm and all(known[acc.midx:acc.midx + s_size]):
                    x_val = _w(int.from_bytes(shadow[acc.midx:acc.midx + s_size], "little", signed=sub in (0, 1)))
                elif cls == C_LOAD:
                    x_taint = True
                    if rd != 0:
                        rec = [K_LD, op, cls, sub, rd, rs1, rs2, imm, vm, src, wf, sgn, pc, xs1, xs2, 0, 0, vtype, vl,
                               acc.midx, s_size, 0]
                elif cls == C_STORE:
                    if acc.midx < n_dtcm:
                        end = acc.midx + s_size
                        if t2:
                            known[acc.midx:end] = bytes(s_size)
                        else:
                            shadow[acc.midx:end] = (xs2 & _M32).to_bytes(4, "little")[:s_size]
                            known[acc.midx:end] = b"\1" * s_size
                    rec = [K_ST, op, cls, sub, rd, rs1, rs2, imm, vm, src, wf, sgn, pc, xs1, xs2, 0, int(t2), vtype, vl,
                           acc.midx, s_size, 0]
                elif cls == C_JUMP:
                    x_val = 4 * pc + 4
                elif cls == C_CSR:
                    x_val = vl if imm == 0 else vtype if imm == 1 else VLENB
                elif cls == C_VSET:
                    if (sub != 1 and rs1 != 0 and t1) or (sub == 2 and t2):
                        raise _Need(False, pc, tuple(r for r, t in ((rs1c, sub != 1 and rs1 != 0 and t1),
                                                                   (rs2c, sub == 2 and t2)) if t))
                    raw = xs2 if sub == 2 else imm
                    bad = (raw >> 8) != 0 or ((raw >> 3) & 7) > 2 or (raw & 7) > 3
                    nvt = M.VILL if bad else raw
                    n_vlmax = (1 << (nvt & 3)) * (VLENB * 8) // (8 << ((nvt >> 3) & 7))
                    avl = rs1 if sub == 1 else xs1 if rs1 != 0 else (-1 if rd != 0 else vl)
                    new_vl = 0 if bad else _w(min(avl & _M32, n_vlmax & _M32))
                    x_val = new_vl
                elif is_vmem:
                    unit = src == I.MODE_UNIT
                    kind = (K_VLU if cls == C_VLOAD else K_VSU) if unit else K_VMEM
                    rec = [kind, op, cls, sub, rd, rs1, rs2, imm, vm, src, wf, sgn, pc, xs1, xs2, 0, 0, vtype, vl,
                           acc.midx, nb, acc.midx if indexed else 0]
                elif vec:
                    if writes_x:
                        x_taint = True
                    if writes_v or rd != 0:
                        rec = [vec_kind(cls, sub, wf, vtype), op, cls, sub, rd, rs1, rs2, imm, vm, src, wf, sgn, pc,
                               xs1, xs2, int(t1), int(t2), vtype, vl, 0, 0, 0]
                if rec is not None:
                    ops += rec
                    ops += (0,) * (N_REC - len(rec))
                x_on = writes_x and rd != 0
                # ---- timing (Machine.timing) ---------------------------------------------------------------
                occ, lat = occ_t[op], lat_t[op]
                t = t_scalar
                reads_x1 = cls in (C_ALU, C_MULDIV, C_LOAD, C_STORE, C_BRANCH, C_JUMP, C_VSET, C_VLOAD, C_VSTORE) or (
                    cls in (C_VARITH, C_VPERM) and src == I.SRC_X) or (cls == C_VMOVE and sub == 1)
                reads_x2 = cls in (C_MULDIV, C_STORE, C_BRANCH) or (cls == C_ALU and src == I.SRC_V) or (
                    cls == C_VSET and sub == 2) or (is_vmem and src == I.MODE_STRIDED)
                issue = max(t, xr[rs1c] if reads_x1 else 0, xr[rs2c] if reads_x2 else 0)
                if vec:
                    issue = max(issue, vq[qi])
                ext_bytes = acc.n_ext_bytes
                uses_ext = ext_bytes > 0
                if is_vmem and src != I.MODE_UNIT:
                    transfer = acc.n_ext_elems * ((acc.elem_size + bw - 1) // bw)
                else:
                    transfer = (ext_bytes + bw - 1) // bw
                scalar_mem_start = max(issue, v_mem_done)
                ext_start_s = max(scalar_mem_start, ext_free)
                if is_smem:
                    s_next = scalar_mem_start + occ
                elif cls == C_BRANCH:
                    s_next = issue + occ + (hw.branch_penalty if taken != (imm <= pc) else 0)
                else:
                    s_next = issue + occ
                if cls == C_LOAD:
                    s_ready = ext_start_s + transfer + ext_lat if uses_ext else scalar_mem_start + lat
                else:
                    s_ready = issue + lat
                v_done = 0
                if cls == C_LOAD:  # the interpreter's t_end also takes a scalar load's vector-unit time (RVV-T10)
                    v_done = max(issue + 1, v_free, vr[0] if vm == 0 else 0) + occ * max(
                        1, (sew * max(vl, 1) + VLENB * 8 - 1) // (VLENB * 8)) + 1
                elif vec:
                    reads_vd = cls == C_VSTORE or (is_arith and sub in MAC_OPS)
                    reads_vs1 = (src == I.SRC_V and cls in (C_VARITH, C_VPERM, C_VRED)) or cls == C_VMASK
                    v_dep = max(gready(rs2, emul_2) if uses_vs2 else 0, gready(rs1, emul_1) if reads_vs1 else 0,
                                gready(rd, emul_d) if reads_vd else 0, vr[0] if vm == 0 else 0)
                    vstart = max(issue + 1, v_free, v_dep)
                    vl1 = max(vl, 1)
                    if is_vmem and uses_ext:
                        v_occ = max(vstart, ext_free) + transfer - vstart
                    elif is_vmem and src != I.MODE_UNIT:
                        v_occ = vl1
                    elif is_vmem:
                        v_occ = max(1, (vl1 * dw + VLENB * 8 - 1) // (VLENB * 8))
                    else:
                        chunks = max(1, (max(wd, wa) * vl1 + VLENB * 8 - 1) // (VLENB * 8))
                        v_occ = chunks + (vl1 - 1).bit_length() if cls == C_VRED else chunks * occ
                    v_lat = ext_lat + 1 if cls == C_VLOAD and uses_ext else lat
                    v_done = vstart + v_occ + v_lat
                    syncs = (cls == C_VMOVE and sub == 0) or (cls == C_VMASK and sub >= 7)
                    s_next = v_done if syncs else issue + 1
                    s_ready = v_done
                    if writes_v:
                        for r in range(rd, min(rd + emul_d, 32)):
                            vr[r] = v_done
                t_scalar = s_next
                t_end = max(t_end, s_next, v_done if (vec or cls == C_LOAD) else 0, s_ready if cls == C_LOAD else 0)
                if cls == C_VSTORE and uses_ext:
                    t_end = max(t_end, v_done + ext_lat)
                if cls == C_STORE and uses_ext:
                    t_end = max(t_end, ext_start_s + transfer + ext_lat)
                busy[0] += 1 if vec else s_next - issue
                if vec:
                    busy[1] += v_occ
                    v_free = vstart + v_occ
                    vq[qi] = vstart
                    qi = (qi + 1) % depth
                    if cls == C_VSTORE:
                        v_mem_done = max(v_mem_done, v_done)
                if uses_ext:
                    busy[2] += transfer
                    ext_free = (max(vstart, ext_free) if vec else ext_start_s) + transfer
                if x_on:
                    xr[rd] = s_ready
                    x[rd], xt[rd] = x_val, x_taint
                # ---- commit ----------------------------------------------------------------------------------
                counts[cls] += 1
                steps += 1
                if cls == C_VSET:
                    vl, vtype = new_vl, nvt
                pc = next_pc
        except _Need as e:
            need = e
        (self.pc, self.steps, self.halted, self.fault, self.fault_pc, self.fault_detail, self.vl, self.vtype,
         self.t_scalar, self.v_free, self.v_mem_done, self.ext_free, self.qi, self.t_end) = (
            pc, steps, halted, fault, fault_pc, fault_detail, vl, vtype, t_scalar, v_free, v_mem_done, ext_free, qi,
            t_end)
        self.speculates, self.force = speculates, force
        return need


def prepass(words: np.ndarray, prog_len: int, hw: RVVConfig, hw_json: str, ext_size: int, max_steps: int,
            dtcm: bytes | None = None) -> Trace:
    """The pre-pass of a program whose control never reads data (one :class:`_Run` to the end).

    ``dtcm``: the DTCM's initial image (the program's ``.data`` and zeros; the same for every input set). Its
    bytes are shadowed -- known values until a tainted or vector store overwrites them -- so a scalar load of
    a known word (a saved return address, an argument a stub put in ``.rodata``, a spilled loop bound) is
    not data; ``None``: every scalar load is tainted.
    Raises :class:`GiveUp` where control, an address or ``vl`` would depend on data."""
    p = _program(words, prog_len, hw, hw_json, ext_size, max_steps)
    r = _Run(p, dtcm)
    need = r.advance(p)
    if need is not None:
        raise GiveUp("control on data", need.pc)
    return r.trace()


X_BAD = 32  # the data path's x slot past the registers: nonzero once a speculated indexed access missed its
# memory or was misaligned (a slot, not an array of its own: one less buffer written per operation)


class Data(NamedTuple):
    """What the data path carries: the scalar registers it computes (and the check, ``X_BAD``), the vector
    registers, memory."""

    x: jax.Array  # int32[33] (only tainted registers are meaningful)
    vrf: jax.Array
    mem: jax.Array  # the interpreter's memory plus a LANES-byte pad: a 128-byte window never clamps


class Writes(NamedTuple):
    """What one operation writes: a 128-byte window of memory and of the vector registers, one x register.

    Branches return this and the loop applies it outside the ``lax.switch``: a branch that returned the
    whole memory would make XLA copy it on every operation. An operation that writes nothing writes zeros
    into the pads (and x0, never read: it is never tainted)."""

    m_at: jax.Array
    m_val: jax.Array
    v_at: jax.Array
    v_val: jax.Array
    x_at: jax.Array
    x_val: jax.Array


class DataPath:
    """The replay of data operations: each kind calls the interpreter's handlers."""

    def __init__(self, hw: RVVConfig, mem_size: int):
        self.hw = hw
        self.machine = M.Machine(hw)
        self.m_pad = mem_size  # the pad after the interpreter's memory
        self.lane = jnp.arange(M.LANES)

    def none(self) -> Writes:
        zeros = jnp.zeros(M.LANES, jnp.uint8)
        return Writes(m_at=jnp.int32(self.m_pad), m_val=zeros, v_at=jnp.int32(M.VRF_BYTES), v_val=zeros,
                      x_at=jnp.int32(0), x_val=jnp.int32(0))

    def _ins(self, d: Data, f: jax.Array, cls: int | jax.Array) -> tuple[M.Ins, M.Is, M.VType, M.State]:
        xs1 = jnp.where(f[R_T1] == 1, d.x[f[R_RS1]], f[R_X1])
        xs2 = jnp.where(f[R_T2] == 1, d.x[f[R_RS2]], f[R_X2])
        cls = jnp.int32(cls) if isinstance(cls, int) else cls
        ins = M.Ins(pc=f[R_PC], run=jnp.bool_(True), op=f[R_OP], cls=cls, sub=f[R_SUB], rd=f[R_RD],
                    rs1=f[R_RS1], rs2=f[R_RS2], imm=f[R_IMM], vm=f[R_VM], src=f[R_SRC], wf=f[R_W], sgn=f[R_SGN],
                    xs1=xs1, xs2=xs2)
        at = jnp.arange(M.N_CTL)  # (one select, not a scatter)
        ctl = jnp.where(at == M.VTYPE, f[R_VTYPE], jnp.where(at == M.VL, f[R_VL], 0))
        z = jnp.zeros(1, jnp.int32)
        st = M.State(ctl=ctl, x=d.x, vrf=d.vrf, mem=d.mem, x_ready=z, v_ready=z, vq=z, counts=z, busy=z,
                     prof=jnp.zeros((1, M.N_PROF), jnp.int32))
        return ins, M.Is(cls), M.Machine.vtype_state(ctl), st

    def _window(self, buf: jax.Array, at: jax.Array) -> jax.Array:
        return lax.dynamic_slice(buf, (at,), (M.LANES,))

    def b_alu(self, d: Data, f: jax.Array) -> Writes:
        a = jnp.where(f[R_T1] == 1, d.x[f[R_RS1]], f[R_X1])
        b = jnp.where(f[R_T2] == 1, d.x[f[R_RS2]], f[R_X2])
        i32 = jnp.int32(32)
        return self.none()._replace(x_at=f[R_RD], x_val=M.elementwise(f[R_SUB], a, a, b, b, jnp.int32(0), i32, i32,
                                                                      SCALAR_OPS))

    def b_ld(self, d: Data, f: jax.Array) -> Writes:
        lw_ = lax.dynamic_slice(d.mem, (f[R_MIDX],), (4,)).astype(jnp.uint32)
        word = lax.bitcast_convert_type(lw_[0] | (lw_[1] << 8) | (lw_[2] << 16) | (lw_[3] << 24), jnp.int32)
        sub = f[R_SUB]
        val = jnp.select([sub == 0, sub == 1, sub == 3, sub == 4],
                         [(word << 24) >> 24, (word << 16) >> 16, word & 0xFF, word & 0xFFFF], word)
        return self.none()._replace(x_at=f[R_RD], x_val=val)

    def _store(self, d: Data, data: jax.Array, f: jax.Array) -> Writes:
        new = jnp.where(self.lane < f[R_NB], data, self._window(d.mem, f[R_MIDX]))
        return self.none()._replace(m_at=f[R_MIDX], m_val=new)

    def b_st(self, d: Data, f: jax.Array) -> Writes:
        xs2 = jnp.where(f[R_T2] == 1, d.x[f[R_RS2]], f[R_X2])
        return self._store(d, M.bytes_from_lanes(jnp.full(M.LANES, xs2), jnp.int32(32)), f)

    def b_vlu(self, d: Data, f: jax.Array) -> Writes:
        at = f[R_RD] * VLENB
        new = jnp.where(self.lane < f[R_NB], self._window(d.mem, f[R_MIDX]), self._window(d.vrf, at))
        return self.none()._replace(v_at=at, v_val=new)

    def b_vsu(self, d: Data, f: jax.Array) -> Writes:
        return self._store(d, self._window(d.vrf, f[R_RD] * VLENB), f)

    def b_vmem(self, d: Data, f: jax.Array, ext_size: jax.Array) -> Writes:
        """Strided and indexed loads: the interpreter's port, plus the speculation check."""
        ins, is_, vt, st = self._ins(d, f, C_VLOAD)
        vs = self.machine.vshape(ins, is_, vt)
        vo = self.machine.voperands(st, ins, is_, vt)
        mp = self.machine.memory(st, ins, is_, vt, vs, vo, ext_size)
        miss = jnp.any(mp.m_act & (mp.in_ext != (f[R_SPEC] == 1))) & vs.indexed
        bad = mp.oob | mp.misaligned | miss
        return self.none()._replace(v_at=ins.rd * VLENB, v_val=jnp.where(mp.m_act, mp.loaded, vo.g_vd),
                                    x_at=jnp.int32(X_BAD), x_val=d.x[X_BAD] | bad.astype(jnp.int32))

    def b_vmvxs(self, d: Data, f: jax.Array) -> Writes:
        """``vmv.x.s``: element 0 of vs2, sign-extended from SEW, as ``Machine.vector`` reads it (VMOVE's
        scalar result) -- without the other classes' datapaths."""
        ins, is_, vt, st = self._ins(d, f, C_VMOVE)
        vs = self.machine.vshape(ins, is_, vt)
        vo = self.machine.voperands(st, ins, is_, vt)
        a_s, _ = M.lanes_from_bytes(vo.g_vs2, vs.wa)
        return self.none()._replace(x_at=ins.rd, x_val=a_s[0])

    def _voperands(self, d: Data, f: jax.Array, cls: int) -> tuple[M.Ins, M.Is, M.VType, M.VShape, M.VOperands]:
        ins, is_, vt, st = self._ins(d, f, cls)
        return ins, is_, vt, self.machine.vshape(ins, is_, vt), self.machine.voperands(st, ins, is_, vt)

    def b_varith(self, d: Data, f: jax.Array, form: tuple[int, int, tuple[str, ...]] | None = None) -> Writes:
        """VARITH but compares (:func:`vec_kind`), as ``Machine.vector`` computes it for that class: its
        elementwise handler, written back at the destination width -- none of the other classes' datapaths
        and no mask logic on every arithmetic operation. ``form``: (width form, SEW, operations) of
        :data:`VARITH_FORMS`, the first two constants here (the operation has them, :func:`vec_kind`), so XLA
        folds every width select of the handlers: several times fewer and smaller kernels per operation."""
        ins, is_, vt, st = self._ins(d, f, C_VARITH)
        names = VARITH_OPS
        if form is not None:
            ins, vt, names = ins._replace(wf=jnp.int32(form[0])), vt._replace(sew=jnp.int32(form[1])), form[2]
        vs = self.machine.vshape(ins, is_, vt)
        vo = self.machine.voperands(st, ins, is_, vt)
        a_s, a_u = M.lanes_from_bytes(vo.g_vs2, vs.wa)
        bv_s, bv_u = M.lanes_from_bytes(vo.g_vs1, vt.sew)
        r, active = M._varith(ins, vt, vs, vo, a_s, a_u, bv_s, bv_u, vt.sew, is_.VARITH, names)
        v_on = M.byte_active(active, vs.wd)
        return self.none()._replace(v_at=ins.rd * VLENB, v_val=jnp.where(v_on, M.bytes_from_lanes(r, vs.wd), vo.g_vd))

    def b_vred(self, d: Data, f: jax.Array) -> Writes:
        """VRED, as ``Machine.vector`` computes it for that class: the reduction handler, written to element 0."""
        ins, is_, vt, vs, vo = self._voperands(d, f, C_VRED)
        a_s, a_u = M.lanes_from_bytes(vo.g_vs2, vs.wa)
        bv_s, bv_u = M.lanes_from_bytes(vo.g_vs1, vs.wd)
        red = M._vred(ins, vo, a_s, a_u, bv_s, bv_u)
        v_on = M.byte_active((self.lane == 0) & (vt.vl > 0), vs.wd)
        return self.none()._replace(v_at=ins.rd * VLENB, v_val=jnp.where(
            v_on, M.bytes_from_lanes(jnp.full(M.LANES, red), vs.wd), vo.g_vd))

    def _vector(self, c: int | None):
        """A vector instruction's branch: of class ``c`` (constant), or of any (None: the class is read from
        the operation; the rarer classes share one branch, which keeps the compile short). Its vector
        arithmetic is compares only (:func:`vec_kind`), so it switches over :data:`COMPARE_OPS`."""
        def branch(d: Data, f: jax.Array) -> Writes:
            cls = f[R_CLS] if c is None else c
            ins, is_, vt, st = self._ins(d, f, cls)
            vs = self.machine.vshape(ins, is_, vt)
            vo = self.machine.voperands(st, ins, is_, vt)
            v_bytes, v_on, x_vec = self.machine.vector(ins, is_, vt, vs, vo, COMPARE_OPS)
            sub = ins.sub
            writes_v = (cls == C_VARITH) | (cls == C_VRED) | (cls == C_VPERM) | (cls == C_VMASK) & (sub < 7) | (
                cls == C_VMOVE) & (sub == 1)
            writes_x = (cls == C_VMOVE) & (sub == 0) | (cls == C_VMASK) & (sub >= 7)
            return self.none()._replace(v_at=ins.rd * VLENB, v_val=jnp.where(v_on & writes_v, v_bytes, vo.g_vd),
                                        x_at=jnp.where(writes_x, ins.rd, 0), x_val=x_vec)

        return branch

    @staticmethod
    def _packed(branch, d: Data, f: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
        """A branch's Writes as three arrays: the windows (memory, then vector registers), the write positions
        (memory, vector registers, x: the same in every input set), and the x value. Each output of the
        ``lax.switch`` costs the loop a buffer copy per operation (a constant one too), so the fewer the
        better."""
        w = branch(d, f)
        return jnp.concatenate([w.m_val, w.v_val]), jnp.stack([w.m_at, w.v_at, w.x_at]), w.x_val

    @staticmethod
    def apply(d: Data, windows: jax.Array, at: jax.Array, x_val: jax.Array) -> Data:
        """One operation's packed Writes on every input set (a leading batch axis): plain in-place updates at
        positions shared by the batch (a ``vmap``-ped update would be a scatter, with its index checks)."""
        n = M.LANES
        return Data(x=lax.dynamic_update_slice(d.x, x_val[:, None], (0, at[2])),
                    vrf=lax.dynamic_update_slice(d.vrf, windows[:, n:], (0, at[1])),
                    mem=lax.dynamic_update_slice(d.mem, windows[:, :n], (0, at[0])))

    @staticmethod
    def initial(mems: np.ndarray) -> Data:
        """The data path's state before the first operation, for a batch of memory images (built in numpy: a
        jitted constructor would cost a compile of its own in a fresh process)."""
        n = len(mems)
        x, vrf, mem = jax.device_put((np.zeros((n, X_BAD + 1), np.int32),
                                      np.zeros((n, M.VRF_BYTES + M.LANES), np.uint8),
                                      np.concatenate([mems, np.zeros((n, M.LANES), np.uint8)], axis=1)))
        return Data(x=x, vrf=vrf, mem=mem)

    def run_chunk(self, d: Data, ops: jax.Array, n: jax.Array, ext_size: jax.Array, vmem: bool = True,
                  rare: bool = True) -> Data:
        """The first ``n`` operations of a chunk, in order, on a batch of input sets (the branches ``vmap``-ped,
        the writes applied to the batch, :meth:`apply`). ``vmem``/``rare``: whether the
        strided/indexed load branch and the rarer vector classes' branch are compiled (False: the program has
        none of them, and those branches, most of the compile, are left out)."""
        def nothing(d: Data, f: jax.Array) -> Writes:
            return self.none()

        branches = [self.b_alu, self.b_ld, self.b_st, self.b_vlu, self.b_vsu,
                    (lambda d, f: self.b_vmem(d, f, ext_size)) if vmem else nothing, self.b_varith,
                    self.b_vmvxs if rare else nothing, self.b_vred if rare else nothing,
                    self._vector(None) if rare else nothing]
        branches += [functools.partial(self.b_varith, form=form) for form in VARITH_FORMS]

        # each branch vmap-ped on its own, the switch outside (its index is the operation's kind, the same in every
        # input set): a switch under vmap is traced twice more by its batching rule
        packed = [jax.vmap(functools.partial(self._packed, b), in_axes=(0, None), out_axes=(0, None, 0))
                  for b in branches]

        def body(i: jax.Array, d: Data) -> Data:
            for j in range(UNROLL):  # past ``n``: zero rows, K_ALU writing x0 (never read: x0 is never tainted)
                f = ops[i * UNROLL + j]
                kind = f[R_KIND]  # (VPERM, VMASK and VMOVE share a branch)
                at = jnp.where(kind >= K_VFORM, kind - (K_VFORM - K_VPERM - 1), jnp.minimum(kind, K_VPERM))
                d = self.apply(d, *lax.switch(at, packed, d, f))
            return d

        return lax.fori_loop(0, (n + UNROLL - 1) // UNROLL, body, d)


@functools.lru_cache(maxsize=16)
def data_runner(hw_json: str, mem_size: int, vmem: bool = True, rare: bool = True):
    """``(initial, chunk)``: the data path's initial state (of a batch of memory images) and its jitted,
    input-set-``vmap``-ped chunk, for one config and memory size, with or without the branches of strided/indexed
    loads (``vmem``) and of the rarer vector classes (``rare``)."""
    enable_persistent_cache()
    dp = DataPath(RVVConfig.model_validate_json(hw_json), mem_size)
    run = functools.partial(dp.run_chunk, vmem=vmem, rare=rare)
    return dp.initial, jax.jit(run, donate_argnums=(0,), compiler_options=older_fusion_emitters())


# XLA:CPU's options for the data path. The loop runs up to a dozen small fused kernels per operation, so what
# costs is each kernel's call, not its arithmetic; the older (non-MLIR) fusion emitters' kernels cost less per
# call here: softmax C3's vector arithmetic 2.0 -> 1.2 us per operation, the whole stream 1.3 -> 0.9
# (``benchmarks/bench_rvv.py --kinds softmax:3`` prints both). Integer semantics are XLA's either way (the
# differential tests compare every bit).
DATA_PATH_XLA_OPTIONS = OLDER_FUSION_EMITTERS  # (where this XLA knows them: ``older_fusion_emitters``)


RARE_CLASSES = frozenset((C_VRED, C_VPERM, C_VMASK, C_VMOVE))  # their branches are compiled only where they occur


def branches_needed(words: np.ndarray) -> tuple[bool, bool]:
    """(vmem, rare) of :func:`data_runner` for a program's words (its static instructions: a superset of what
    runs): both, or neither where it has no strided/indexed load and no instruction of the rarer vector classes
    (two variants at most, so a process that runs every kind of kernel compiles at most twice)."""
    cls, src, wf = words[:, 1], words[:, 8], words[:, 9]
    full = bool(np.any((cls == C_VLOAD) & (src != I.MODE_UNIT)) or np.any(np.isin(cls, list(RARE_CLASSES)))
                or np.any((cls == C_VARITH) & (wf == I.W_MASK)))  # (compares take the shared branch)
    return full, full


@functools.lru_cache(maxsize=16)
def _config(hw_json: str) -> RVVConfig:
    return RVVConfig.model_validate_json(hw_json)


class _Node:
    """A stretch of one group of input sets' data operations, then either the split of the group at a
    resolved instruction (``children``: each child's positions in this node's batch, padded to its size, and
    the child) or the end of the run (``trace``). ``rows``: the input sets at this node's batch positions
    0, 1, ... (the positions past them repeat one of them: one batch shape for every group)."""

    __slots__ = ("rows", "segments", "chunks", "children", "trace")

    def __init__(self, rows: np.ndarray):
        self.rows = rows
        self.segments: list[tuple[np.ndarray, list]] = []  # while exploring: (ops, the first one's chunks)
        self.chunks: list = []
        self.children: list[tuple[np.ndarray, _Node]] = []
        self.trace: Trace | None = None

    def nodes(self) -> list[_Node]:
        out, stack = [], [self]
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(child for _, child in node.children)
        return out


class RunInfo(NamedTuple):
    """How :func:`run_info` simulated: ``trace`` (the trace path) or ``interpreter``; the data-dependent
    instructions it resolved, the groups the input sets ended in, and whether the trace came from the cache."""

    path: str
    resolutions: int
    groups: int
    cached: bool


def _to_chunks(ops: np.ndarray) -> list:
    """Operations as device arrays of ``OP_CHUNK`` rows (zero-padded) and their real counts."""
    n, ch, chunks = len(ops), OP_CHUNK, []
    for c in range(0, max(n, 1), ch):
        part = np.zeros((ch, N_REC), np.int32)
        part[: min(ch, n - c)] = ops[c:c + ch]
        chunks.append((jax.device_put(part), np.int32(min(ch, n - c))))
    return chunks


BY_DATA = "by data"  # the cache entry of a program that resolved data: look its tree up by the input images too


def _entry_bytes(entry) -> int:
    root = entry[0]
    return sum(len(n.chunks) * OP_CHUNK * N_REC * 4 for n in root.nodes()) if isinstance(root, _Node) else 0


_TRACES = TraceCache(TRACE_CACHE_SIZE, TRACE_CACHE_BYTES, _entry_bytes)


def _gather(data: Data, positions: np.ndarray) -> Data:
    return jax.tree.map(lambda a: a[positions], data)


def _explore(p: _Program, dtcm: bytes | None, data: Data, n_rows: int, chunk,
             es) -> tuple[_Node | None, list, int]:
    """Pre-pass and data path together: run the pre-pass until an instruction needs data, run the data path
    up to it, read the registers it needs in every input set, and continue the pre-pass once per distinct
    outcome (a branch's direction; else the values), with each group's registers that agree made concrete.
    Returns the tree (None: :class:`GiveUp`, the interpreter must run), its leaves as (node, data) and the
    number of resolutions."""
    try:
        return _explore_tree(p, dtcm, data, n_rows, chunk, es)
    except GiveUp as e:
        return None, [], e.args[2] if len(e.args) > 2 else 0


def _explore_tree(p: _Program, dtcm: bytes | None, data: Data, n_rows: int, chunk, es) -> tuple[_Node, list, int]:
    root = _Node(np.arange(n_rows))
    leaves: list = []
    stack = [(_Run(p, dtcm), root, data)]
    resolutions = steps = 0  # (steps: pre-passed instructions, over every group)
    while stack:
        run, node, data = stack.pop()
        while True:
            before = run.steps
            try:
                need = run.advance(p)
            except GiveUp as e:
                raise GiveUp(e.args[0], e.args[1] if len(e.args) > 1 else -1, resolutions) from None
            steps += run.steps - before
            if run.ops or run.blocks:
                ops = run.take_ops()
                chunks = _to_chunks(ops)
                # a node's first segment keeps its device chunks (reused if it stays the only one); the others
                # only their operations (thousands of resolutions would otherwise hold a chunk each)
                node.segments.append((ops, chunks if not node.segments else []))
                for part, n in chunks:
                    data = chunk(data, part, n, es)
            if need is None:
                node.trace = run.trace()._replace(ops=np.zeros((0, N_REC), np.int32))
                leaves.append((node, node.rows, data))
                break
            resolutions += 1
            if resolutions > RESOLVE_MAX or (resolutions > RESOLVE_FREE and steps < resolutions * RESOLVE_MIN_STEPS):
                raise GiveUp("too many data-dependent instructions", need.pc, resolutions)
            k = len(node.rows)
            xs = np.asarray(data.x)[:k, :X_BAD]
            if need.branch:
                a = xs[:, need.rs1] if run.xt[need.rs1] else np.full(k, run.x[need.rs1])
                b = xs[:, need.rs2] if run.xt[need.rs2] else np.full(k, run.x[need.rs2])
                keys: list = [branch_taken(need.sub, int(u), int(v)) for u, v in zip(a, b, strict=True)]
            else:
                keys = [tuple(int(v) for v in row) for row in xs[:, list(need.regs)]]
            groups: dict = {}
            for i, key in enumerate(keys):
                groups.setdefault(key, []).append(i)

            def settle(r: _Run, pos: np.ndarray, key, need: _Need = need, xs: np.ndarray = xs) -> None:
                """Every tainted register whose value agrees across the group's input sets is concrete from
                here (not only the ones this instruction reads: a loop's other data-derived scalars too)."""
                rows = xs[pos]
                for reg in np.flatnonzero(np.all(rows == rows[0], axis=0)).tolist():
                    if r.xt[reg]:
                        r.concrete(reg, int(rows[0, reg]))
                if need.branch and any(r.xt[reg] for reg in need.regs):
                    r.force = key

            if len(groups) == 1:
                settle(run, np.arange(k), keys[0])
                continue
            for key, pos_list in groups.items():
                pos = np.array(pos_list)
                padded = np.concatenate([pos, np.full(n_rows - len(pos), pos[0])])
                child = _Node(node.rows[pos])
                child_run = run.fork()
                settle(child_run, pos, key)
                node.children.append((padded, child))
                stack.append((child_run, child, _gather(data, padded)))
            break
    for node in root.nodes():  # the cached form: a node's segments as one stream
        if len(node.segments) == 1:
            node.chunks = node.segments[0][1]
        elif node.segments:
            node.chunks = _to_chunks(np.concatenate([ops for ops, _ in node.segments]))
        node.segments = []
    return root, leaves, resolutions


def _replay(root: _Node, data: Data, chunk, es, n_rows: int) -> list:
    """A cached tree's data path: each node's operations, then its children on their input sets."""
    leaves, stack = [], [(root, data)]
    while stack:
        node, data = stack.pop()
        for part, n in node.chunks:
            data = chunk(data, part, n, es)
        if not node.children:  # a tree that never split serves any number of input sets
            leaves.append((node, np.arange(n_rows) if node is root else node.rows, data))
        for padded, child in node.children:
            stack.append((child, _gather(data, padded)))
    return leaves


HALTED_KEY = "halted"  # the cache key of a tree that serves any step budget (:func:`_halted`)


def _halted(root: _Node | None) -> bool:
    """Whether the tree is one run (no resolution, no split) that halted (a fault too) within its step budget:
    the interpreter runs an instruction (HALT too, which no step counts) only while ``steps < max_steps``, so
    under any budget above its final steps it runs the same instructions and halts the same -- the same final
    state (at a budget of exactly its steps HALT does not run: a run of its own). The Evaluator's baseline run
    of the compiler's kernel (one input set, a 50M budget) and a scoring of that kernel (every input set, the
    budget from the baseline's cycles) then share one pre-pass (distinct kernels still pre-pass once each)."""
    return root is not None and not root.children and root.trace is not None and bool(root.trace.ctl[M.HALTED])


def run_info(hw_json: str, words: np.ndarray, prog_len: int, mems: np.ndarray, ext_size: int,
             max_steps: int) -> tuple[M.State | None, RunInfo]:
    """The interpreter's final State (numpy, batched over the rows of ``mems``), or None where the
    interpreter must run (control on data that cannot be resolved, too many resolutions, or a speculated
    indexed access that missed), and how.

    The tree of a program whose control never read data is cached by program, its initial DTCM image,
    config, external size and step budget -- or without the budget where its run halted (:func:`_halted`);
    one that resolved data also by the whole memory images."""
    hw = _config(hw_json)
    dtcm_n = hw.dtcm_bytes
    first = mems[0, :dtcm_n]
    same = bool(np.all(mems[:, :dtcm_n] == first))  # the harness loads one DTCM image into every row
    dtcm = first.tobytes() if same else None
    words = np.ascontiguousarray(words, np.int32)
    any_budget = (HALTED_KEY, hashlib.sha1(words.tobytes()).hexdigest(), words.shape, prog_len, hw_json,
                  int(ext_size), None if dtcm is None else hashlib.sha1(dtcm).hexdigest())
    key = (*any_budget[1:], int(max_steps))
    hit = _TRACES.get(any_budget)
    if hit is None or hit[0].trace.ctl[M.STEPS] >= max_steps:
        hit = _TRACES.get(key)
    data_key = None
    if hit is not None and hit[0] is BY_DATA:  # this program resolved data before: its trees are per input images
        data_key = (key, hashlib.sha1(np.ascontiguousarray(mems).tobytes()).hexdigest(), mems.shape)
        hit = _TRACES.get(data_key)
    N = mems.shape[0]
    if hit is not None and hit[0] is None:
        return None, RunInfo("interpreter", hit[1], 0, True)
    initial, chunk = data_runner(hw_json, mems.shape[1], *branches_needed(words[: prog_len + 1]))
    data = initial(np.asarray(mems, np.uint8))
    es = np.int32(ext_size)
    if hit is not None:
        root, resolutions = hit
        leaves = _replay(root, data, chunk, es, N)
    else:
        try:
            p = _program(words, prog_len, hw, hw_json, ext_size, max_steps)
        except GiveUp:  # a word the data path has no branch for
            found, leaves, resolutions = None, [], 0
        else:
            found, leaves, resolutions = _explore(p, dtcm, data, N, chunk, es)
        if resolutions == 0:
            _TRACES.put(any_budget if _halted(found) else key, (found, resolutions))  # a give-up too (None)
        else:
            if data_key is None:
                data_key = (key, hashlib.sha1(np.ascontiguousarray(mems).tobytes()).hexdigest(), mems.shape)
            _TRACES.put(key, (BY_DATA, resolutions))
            _TRACES.put(data_key, (found, resolutions))
        if found is None:
            return None, RunInfo("interpreter", resolutions, 0, False)
    state = _assemble(leaves, N, mems.shape[1])
    return state, RunInfo("trace" if state is not None else "interpreter", resolutions, len(leaves), hit is not None)


def _assemble(leaves: list, N: int, mem_size: int) -> M.State | None:
    """The per-input-set final States of the leaves (each group's control state, its rows' data)."""
    out: dict[str, np.ndarray] = {}
    for node, rows, data in leaves:
        tr, k = node.trace, len(rows)
        d = jax.device_get(data)
        if tr.speculates and np.any(np.asarray(d.x)[:k, X_BAD]):
            return None
        x = np.where(tr.tainted, np.asarray(d.x)[:k, :X_BAD], tr.x).astype(np.int32)
        for name, value in (("ctl", tr.ctl), ("x", x), ("vrf", np.asarray(d.vrf)[:k]),
                            ("mem", np.asarray(d.mem)[:k, :mem_size]), ("x_ready", tr.x_ready),
                            ("v_ready", tr.v_ready), ("vq", tr.vq), ("counts", tr.counts), ("busy", tr.busy)):
            shape = value.shape[1:] if name in ("x", "vrf", "mem") else value.shape
            if name not in out:
                out[name] = np.zeros((N, *shape), value.dtype)
            out[name][rows] = value
    out["prof"] = np.zeros((N, 1, M.N_PROF), np.int32)
    return M.State._make([out[f] for f in M.State._fields])  # as numpy, field by field


def run(hw_json: str, words: np.ndarray, prog_len: int, mems: np.ndarray, ext_size: int,
        max_steps: int) -> M.State | None:
    """:func:`run_info`'s State."""
    return run_info(hw_json, words, prog_len, mems, ext_size, max_steps)[0]


def sim_mode() -> str:
    """``oracle``, ``trace`` or ``auto`` (the default)."""
    mode = os.environ.get(SIM_ENV, "").strip().lower()
    return mode if mode in ("oracle", "trace") else "auto"
