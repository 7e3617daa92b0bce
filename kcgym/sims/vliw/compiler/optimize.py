"""The VLIW compiler's back end: what an ``-O2`` VLIW compiler does to the templates' one-operation-per-bundle code.

Three passes over the templates' assembly, nothing more (no software pipelining across iterations, no
reassociation of floating-point chains, no fusion across operators: those are the agent's job):

1. **Unrolling.** An innermost ``LOOPI`` whose count is known is unrolled: completely when small
   (:data:`FULL_UNROLL_OPS` operations in all), else by up to :data:`MAX_UNROLL` copies with the remainder
   after the loop; a loop over such small loops is tried as an innermost one, those unrolled completely. An
   unrolling is kept only if its body still fits the registers (below); no fit, no unroll.
2. **List scheduling and register allocation** of each basic block (the operations between loop boundaries).
   Every value that is not live into or out of the block (liveness over the whole loop tree) is renamed
   apart, so copies and independent chains do not wait on each other's registers; the experts' scheduler
   (:mod:`kcgym.sims.vliw.schedule`) packs the block over the machine's latencies and slots; then the values
   get registers by live interval. Where they need more than a file has, hoisting is bounded
   (:data:`WINDOWS`) until they fit, else the block keeps its own names. Memory dependences come from a
   symbolic walk of the pointer and scalar registers (constants, post-increments, induction variables of the
   enclosing loops, value ranges): accesses that may overlap keep their order, accesses known to share a DM
   bank do not share a bundle. DMAs are operations like the others, so each issues as soon as its registers
   and the memory it touches allow. A loop's ``LOOPI`` joins the last bundle before it.
3. **Size.** If the result does not fit the instruction memory, smaller unrollings (:data:`SIZES`) are tried
   and the fitting one that executes the fewest bundles is kept.

Empty bundles are dropped: the hardware interlocks on latencies (VLIW-T1), so a NOP bundle would cost
the cycle the stall costs anyway.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

from kcgym.isa.spec import Reg
from kcgym.sims.vliw.config import VECTOR_BYTES, VLIWConfig
from kcgym.sims.vliw.isa import C, P, R, X
from kcgym.sims.vliw.schedule import Access, Op, operands, parse, per_config_memo, schedule_ops

MAX_UNROLL = 8  # copies of an innermost loop body, at most
FULL_UNROLL_OPS = 48  # an innermost loop of at most this many operations in all (count x body) is unrolled completely
# (unroll factor, complete-unroll size) tried in turn when the program would not fit the instruction memory:
# the fitting one that executes the fewest bundles wins
SIZES = ((MAX_UNROLL, FULL_UNROLL_OPS), (4, FULL_UNROLL_OPS), (MAX_UNROLL, 24), (4, 24), (2, 24), (2, 12), (1, 0))
FILES = {f.prefix: f for f in (R, P, X, C)}
EXT = Access("EXT", "EXT", 0, 1, write=False)  # EXT is ordered as one location: a DMA out before a DMA in of it


class Unsupported(ValueError):
    """The assembly uses a construct the optimiser does not handle (a template bug, not a user error)."""


@dataclass
class Line:
    """One operation and its comment."""

    text: str
    comment: str = ""


@dataclass
class Note:
    """A comment on a line of its own."""

    text: str


@dataclass
class Loop:
    count: int | str  # LOOPI's immediate, or LOOP's count register
    comment: str
    body: list[Line | Note | Loop] = field(default_factory=list)
    # liveness answers, by (hw, question, registers live after): without them nested loops cost exponentially
    # many passes (each loop's fixed point re-walks every inner loop); a body is not changed once built
    live: dict = field(default_factory=dict, compare=False, repr=False)


Node = Line | Note | Loop


# ---- parsing the templates' assembly ----------------------------------------------------
def parse_program(source: str) -> tuple[list[str], list[Node]]:
    """The header comment lines and the loop tree of ``source`` (as the compiler's ``Asm`` writes it)."""
    header: list[str] = []
    root: list[Node] = []
    stack: list[tuple[str, list[Node]]] = [("", root)]
    for number, raw in enumerate(source.splitlines(), 1):
        code, _, comment = raw.partition("//")
        code, comment = code.strip(), comment.strip()
        if not code:
            if comment and not root and len(stack) == 1 and number <= 2:
                header.append(raw.strip())
            elif comment:
                stack[-1][1].append(Note(comment))
            continue
        if code.endswith(":"):
            if code[:-1] != stack[-1][0]:
                raise Unsupported(f"line {number}: label {code!r} is not the end of the loop it closes")
            stack.pop()
            continue
        mnemonic, _, rest = code.partition(" ")
        mnemonic = mnemonic.upper()
        if "||" in code or mnemonic in ("J", "BEQZ", "BNEZ", "HALT"):
            raise Unsupported(f"line {number}: {code!r} (bundles and branches are not optimised)")
        if mnemonic in ("LOOP", "LOOPI"):
            count, end = (a.strip() for a in rest.split(","))
            loop = Loop(int(count) if mnemonic == "LOOPI" else count, comment)
            stack[-1][1].append(loop)
            stack.append((end, loop.body))
            continue
        stack[-1][1].append(Line(code, comment))
    if len(stack) != 1:
        raise Unsupported(f"loop ending at {stack[-1][0]!r} is not closed")
    return header, root


# ---- registers --------------------------------------------------------------------------
def _registers(text: str, hw: VLIWConfig) -> tuple[tuple[int, str, bool, bool], ...]:
    """(operand index, register, read, written) of each register operand of one operation."""
    memo = per_config_memo(hw)
    key = ("registers", text)
    got = memo.get(key)
    if got is None:
        spec, args = operands(text, hw)
        got = memo[key] = tuple((i, arg, not od.name.endswith("d"), od.kind.write)
                                for i, (od, arg) in enumerate(zip(spec.operands, args, strict=True))
                                if isinstance(od.kind, Reg))
    return got


def _uses(text: str, hw: VLIWConfig) -> tuple[frozenset[str], frozenset[str]]:
    """(registers read, registers purely written) of one operation."""
    memo = per_config_memo(hw)
    key = ("uses", text)
    got = memo.get(key)
    if got is None:
        regs = _registers(text, hw)
        read = frozenset(r for _, r, rd, _ in regs if rd)
        got = memo[key] = (read, frozenset(r for _, r, rd, wr in regs if wr and r not in read))
    return got


def live_before(nodes: list[Node], after: set[str], hw: VLIWConfig) -> set[str]:
    """Registers whose values ``nodes`` may read before writing them, given those live after."""
    live = set(after)
    for n in reversed(nodes):
        if isinstance(n, Line):
            read, killed = _uses(n.text, hw)
            live = (live - killed) | read
        elif isinstance(n, Loop):
            live = live_before_loop(n, live, hw)
    return live


def live_at_body_end(loop: Loop, after: set[str], hw: VLIWConfig) -> set[str]:
    """Registers live after the last bundle of the body: for the next iteration or after the loop."""
    key = (id(hw), "end", frozenset(after))
    got = loop.live.get(key)
    if got is None:
        top: set[str] = set()
        while True:
            again = live_before(loop.body, after | top, hw)
            if again == top:
                break
            top = again
        got = loop.live[key] = frozenset(after | top)
    return set(got)


def live_before_loop(loop: Loop, after: set[str], hw: VLIWConfig) -> set[str]:
    key = (id(hw), "before", frozenset(after))
    got = loop.live.get(key)
    if got is None:
        top = live_before(loop.body, live_at_body_end(loop, after, hw), hw)
        if isinstance(loop.count, str):  # the count register is read, and the body may run zero times
            top = top | after | {loop.count}
        elif loop.count <= 0:
            top = set(after)
        got = loop.live[key] = frozenset(top)
    return set(got)


# ---- unrolling --------------------------------------------------------------------------
def expand(nodes: list[Node], full_ops: int) -> list[Node]:
    """Unroll completely, innermost first, every loop of known count whose body is (or becomes) straight-line
    and at most ``full_ops`` operations in all: an outer loop over a small one becomes innermost itself."""
    out: list[Node] = []
    for n in nodes:
        if not isinstance(n, Loop):
            out.append(n)
            continue
        body = expand(n.body, full_ops)
        lines = [b for b in body if isinstance(b, Line)]
        if isinstance(n.count, int) and n.count >= 1 and lines and len(lines) * n.count <= full_ops and not any(
                isinstance(b, Loop) for b in body):
            out += [b for b in body if isinstance(b, Note)]
            out.append(Note(f"{n.comment + ': ' if n.comment else ''}unrolled {n.count}x"))
            out += lines * n.count
        else:
            out.append(Loop(n.count, n.comment, body))
    return out


def unroll_choices(loop: Loop, max_unroll: int, full_ops: int) -> list[tuple[int, int]]:
    """(copies per iteration, iterations) to try for an innermost loop, best first; (count, 0): unroll fully."""
    body = [b for b in loop.body if isinstance(b, Line)]
    count = loop.count
    if not isinstance(count, int) or count < 2 or not body or any(isinstance(b, Loop) for b in loop.body):
        return []
    out = []
    if count * len(body) <= full_ops:
        out.append((count, 0))
    u = max_unroll
    while u >= 2:
        if count // u >= 2:
            out.append((u, count // u))
        u //= 2
    return out


# ---- pointer values: what each memory access touches -------------------------------------
Value = tuple[Hashable | None, int]  # (symbolic base, byte offset); base None: a known address
TRACKED = P.names() + R.names()[1:]  # the registers whose values the walk follows (r0 is always 0)
_fresh = itertools.count()


def _unknown() -> Value:
    return (("unknown", next(_fresh)), 0)


def _shift(v: Value, by: int) -> Value:
    return (v[0], v[1] + by)


def bounds(v: Value) -> tuple[int, int] | None:
    """The least and greatest address a pointer value takes (over the iterations of its loops), if known."""
    base, off = v
    if base is None:
        return off, off
    if isinstance(base, tuple) and base[0] == "range":
        return base[1] + off, base[2] + off
    if isinstance(base, tuple) and base[0] == "iv" and isinstance(base[4], int):
        inner = bounds((base[2], off))
        if inner is None:
            return None
        reach = (base[4] - 1) * base[3]
        return inner[0] + min(0, reach), inner[1] + max(0, reach)
    return None


def _dm(v: Value, width: int, write: bool, banked: bool) -> Access:
    b = bounds(v)
    return Access("DM", v[0], v[1], v[1] + width, write, banked, None if b is None else (b[0], b[1] + width))


def _int(text: str) -> int | None:
    try:
        return int(text, 0)
    except ValueError:
        return None


DM_WIDTH = {"VLD": VECTOR_BYTES, "VLDB": 2, "VST": VECTOR_BYTES}


def step(text: str, env: dict[str, Value], hw: VLIWConfig) -> tuple[Access, ...]:
    """The memory accesses of one operation at pointer values ``env``, then ``env`` updated past it."""
    spec, args = operands(text, hw)
    mn = spec.mnemonic
    acc: list[Access] = []
    if mn in DM_WIDTH:
        acc.append(_dm(env[args[1]], DM_WIDTH[mn], write=mn == "VST", banked=True))
    elif spec.cls == "DMA":
        rows, rowbytes = _int(args[3]), _int(args[4])
        into = mn.startswith("DMAI")
        where = env[args[0]] if rows is not None and rowbytes is not None else _unknown()
        acc += [_dm(where, (rows or 1) * (rowbytes or hw.dm_bytes), write=into, banked=False),
                Access("EXT", EXT.base, 0, 1, write=not into)]
    _values(mn, args, text, env, hw)
    return tuple(acc)


def _range(lo: int, hi: int) -> Value:
    """A value known only to lie in [lo, hi]."""
    return (("range", lo, hi, next(_fresh)), 0)


def _add(a: Value, b: Value, sign: int = 1) -> Value:
    if b[0] is None:
        return _shift(a, sign * b[1])
    if a[0] is None and sign == 1:
        return _shift(b, a[1])
    ba, bb = bounds(a), bounds(b)
    if ba is None or bb is None:
        return _unknown()
    return _range(ba[0] + bb[0], ba[1] + bb[1]) if sign == 1 else _range(ba[0] - bb[1], ba[1] - bb[0])


def _monotone(v: Value, f: Callable[[int], int]) -> Value:
    """f(v) for f non-decreasing on non-negative integers."""
    if v[0] is None:
        return (None, f(v[1]))
    b = bounds(v)
    return _range(f(b[0]), f(b[1])) if b is not None and b[0] >= 0 else _unknown()


def _values(mn: str, args: Sequence[str], text: str, env: dict[str, Value], hw: VLIWConfig) -> None:
    """Update the scalar and pointer values (``env``) past one operation: exact where the operation is affine,
    as a range where its inputs' ranges say enough, unknown otherwise."""
    imm = _int(args[-1]) if args else None
    new: Value | None = None
    if mn in DM_WIDTH:
        inc = _int(args[2])
        env[args[1]] = _shift(env[args[1]], inc) if inc is not None else _unknown()
        return
    if mn in ("PMOVI", "MOVI") and imm is not None:
        new = (None, imm)
    elif mn in ("PADDI", "ADDI") and imm is not None:
        new = _shift(env[args[1]], imm)
    elif mn in ("PMOV", "MOVP"):
        new = env[args[1]]
    elif mn in ("PADD", "ADD", "SUB"):
        new = _add(env[args[1]], env[args[2]], -1 if mn == "SUB" else 1)
    elif mn in ("SHLI", "SHRI") and imm is not None:
        new = _monotone(env[args[1]], (lambda x: x << imm) if mn == "SHLI" else (lambda x: x >> imm))
    elif mn == "ANDI" and imm is not None:
        v = env[args[1]]
        rng = bounds(v)
        new = (None, v[1] & imm) if v[0] is None else _range(0, min(imm, rng[1]) if rng and rng[0] >= 0 else imm)
    elif mn == "MUL":
        a, b = env[args[1]], env[args[2]]
        if a[0] is not None and b[0] is None:
            a, b = b, a
        if a[0] is None and a[1] >= 0:
            k = a[1]
            new = _monotone(b, lambda x: x * k)
    for _, r, _, wr in _registers(text, hw):
        if wr and r[0] in "pr" and r != "r0":
            env[r] = new if new is not None and r == args[0] else _unknown()


class Walker:
    """Pointer values through the loop tree: entry values of loop bodies as induction variables."""

    def __init__(self, hw: VLIWConfig):
        self.hw = hw
        self._strides: dict[int, tuple[Loop, dict[str, int | None]]] = {}

    def strides(self, loop: Loop) -> dict[str, int | None]:
        """Per pointer register, what one iteration adds to it (None: not a constant)."""
        if id(loop) not in self._strides:  # the loop is kept with its strides: its id names it while this lives
            env: dict[str, Value] = {p: (("start", id(loop), p), 0) for p in TRACKED}
            env["r0"] = (None, 0)
            self.effect(loop.body, env)
            self._strides[id(loop)] = (loop, {p: env[p][1] if env[p][0] == ("start", id(loop), p) else None
                                              for p in TRACKED})
        return self._strides[id(loop)][1]

    def entry(self, loop: Loop, env: dict[str, Value]) -> dict[str, Value]:
        """Pointer values at the top of any iteration, from those before the loop."""
        out = {"r0": env["r0"]}
        for p, s in self.strides(loop).items():
            if s == 0:
                out[p] = env[p]
            elif s is None:
                out[p] = _unknown()
            else:
                out[p] = (("iv", id(loop), env[p][0], s, loop.count), env[p][1])
        return out

    def exit(self, loop: Loop, env: dict[str, Value]) -> dict[str, Value]:
        """Pointer values after the loop."""
        out = {"r0": env["r0"]}
        for p, s in self.strides(loop).items():
            if s == 0:
                out[p] = env[p]
            elif s is None or not isinstance(loop.count, int):
                out[p] = _unknown()
            else:
                out[p] = _shift(env[p], s * loop.count)
        return out

    def effect(self, nodes: list[Node], env: dict[str, Value]) -> None:
        for n in nodes:
            if isinstance(n, Line):
                step(n.text, env, self.hw)
            elif isinstance(n, Loop):
                env.update(self.exit(n, env))


# ---- register renaming and allocation ------------------------------------------------------
INF = 1 << 30
# how far (operations, in program order) the scheduler may hoist, tried in turn until the values fit the registers
WINDOWS: tuple[int | None, ...] = (None, 32, 16, 8, 4)


@dataclass
class Web:
    """One value of a register in a block: a pure write and the accesses that follow until the next one."""

    reg: str
    first: int | None  # the operation that writes it (None: live into the block)
    ops: list[int] = field(default_factory=list)
    writers: list[int] = field(default_factory=list)
    pinned: bool = False  # keeps its register: live into or out of the block

    @property
    def name(self) -> str:
        return self.reg if self.pinned else f"{self.reg}~{id(self)}"


def webs(lines: list[Line], live_out: set[str], hw: VLIWConfig) -> tuple[list[Web], list[list[tuple[int, Web]]]]:
    """Every register value of the block, and per operation which operand belongs to which value."""
    current: dict[str, Web] = {}
    out: list[Web] = []
    per_op: list[list[tuple[int, Web]]] = []
    for k, line in enumerate(lines):
        regs = [r for r in _registers(line.text, hw) if r[1] != "r0"]
        read = {r for _, r, rd, _ in regs if rd}
        mine: list[tuple[int, Web]] = []
        for idx, r, rd, wr in regs:
            if rd or (wr and r in read):
                if r not in current:
                    current[r] = Web(r, None, pinned=True)
                    out.append(current[r])
                w = current[r]
                w.ops.append(k)
                if wr:
                    w.writers.append(k)
                mine.append((idx, w))
        for idx, r, _, wr in regs:
            if wr and r not in read:
                current[r] = w = Web(r, k, [k], [k])
                out.append(w)
                mine.append((idx, w))
        per_op.append(mine)
    for r, w in current.items():
        if r in live_out:
            w.pinned = True
    return out, per_op


def _rewrite(text: str, names: dict[int, str], hw: VLIWConfig) -> str:
    spec, args = operands(text, hw)
    return f"{text.split(' ', 1)[0]} " + ", ".join(names.get(i, a) for i, a in enumerate(args)) if args else text


def allocate(lines: list[Line], mem: list[tuple[Access, ...]], live_out: set[str],
             hw: VLIWConfig) -> tuple[list[list[int]], list[str]] | None:
    """List-schedule the block with every value not live in or out renamed apart, then give the values registers.

    The schedule hoists as far as dependences allow; where its values need more registers than a file has,
    the hoisting is bounded (:data:`WINDOWS`) until they fit. Returns (bundles of operation indices, operation
    texts), or None when nothing fits (the caller then schedules the block with its own register names).
    """
    all_webs, per_op = webs(lines, live_out, hw)
    texts = [_rewrite(line.text, {i: w.name for i, w in mine}, hw) for line, mine in zip(lines, per_op, strict=True)]
    ops = [parse(t, hw, m) for t, m in zip(texts, mem, strict=True)]
    for window in WINDOWS:
        bundles = schedule_ops(ops, hw, window=window)
        names = _assign(all_webs, bundles, live_out)
        if names is not None:
            final = [_rewrite(line.text, {i: names.get(id(w), w.reg) for i, w in mine}, hw)
                     for line, mine in zip(lines, per_op, strict=True)]
            return bundles, final
    return None


def _assign(all_webs: list[Web], bundles: list[list[int]], live_out: set[str]) -> dict[int, str] | None:
    """A register for every renamed value of the scheduled block (id(web) -> register), or None."""
    at = {k: t for t, b in enumerate(bundles) for k in b}
    span: dict[int, tuple[int, int, int]] = {}  # id(web) -> (first bundle, last bundle, last bundle that writes)
    last = {w.reg: w for w in all_webs}
    for w in all_webs:
        start = -1 if w.first is None else at[w.first]
        end = max((at[k] for k in w.ops), default=start)
        if w.pinned and w.reg in live_out and w is last[w.reg]:
            end = INF
        span[id(w)] = (start, end, max((at[k] for k in w.writers), default=-1))
    taken: dict[str, list[tuple[int, int, int]]] = {}
    mentioned = {w.reg for w in all_webs}
    for r in live_out - mentioned:
        taken[r] = [(-1, INF, -1)]
    for w in all_webs:
        if w.pinned:
            taken.setdefault(w.reg, []).append(span[id(w)])
    names: dict[int, str] = {}
    for w in sorted((w for w in all_webs if not w.pinned), key=lambda w: span[id(w)]):
        mine = span[id(w)]
        f = FILES[w.reg[0]]
        candidates = [w.reg] + [r for i, r in enumerate(f.names()) if i != f.zero and r != w.reg]
        reg = next((r for r in candidates if all(_apart(mine, o) for o in taken.get(r, []))), None)
        if reg is None:
            return None
        taken.setdefault(reg, []).append(mine)
        names[id(w)] = reg
    return names


def _apart(a: tuple[int, int, int], b: tuple[int, int, int]) -> bool:
    """May two values share a register? One must be written after the other's last access (in that bundle:
    reads see the state before it) and after its last write."""
    return (a[0] >= b[1] and a[0] > b[2] and a[0] > b[0]) or (b[0] >= a[1] and b[0] > a[2] and b[0] > a[0])


# ---- scheduling and emission -------------------------------------------------------------
def _bundle_text(ops: list[Line]) -> str:
    comments = list(dict.fromkeys(o.comment for o in ops if o.comment))
    text = " || ".join(o.text for o in ops)
    return text + (f"    // {'; '.join(comments)}" if comments else "")


class Emitter:
    """Unrolls, schedules and allocates the blocks of a loop tree and writes the bundles, one line each."""

    def __init__(self, hw: VLIWConfig, max_unroll: int, full_ops: int):
        self.hw, self.walker = hw, Walker(hw)
        self.max_unroll, self.full_ops = max_unroll, full_ops
        self.lines: list[str] = []
        self.bundles = 0  # in the program
        self.dynamic = 0  # executed (a LOOP of a register count taken as one trip): to choose between unrollings
        self.trips = 1  # iterations of the enclosing loops
        self.labels = 0
        self._last_ops: list[Op] = []
        self._unrolled: set[int] = set()
        self._keep: list[Loop] = []  # the unrolled loops, alive so that their ids (in _unrolled) stay theirs

    def _schedule(self, run: list[Line], env: dict[str, Value], live_out: set[str],
                  rename: bool = True) -> tuple[list[list[int]], list[str], list[Op]] | None:
        """Bundles (operation indices), final texts and ops of one block; steps ``env`` past it."""
        mem = [step(line.text, env, self.hw) for line in run]
        got = allocate(run, mem, live_out, self.hw) if rename else None
        if got is None:
            if rename:
                return None
            ops = [parse(line.text, self.hw, m) for line, m in zip(run, mem, strict=True)]
            return schedule_ops(ops, self.hw), [line.text for line in run], ops
        bundles, texts = got
        return bundles, texts, [parse(t, self.hw, m) for t, m in zip(texts, mem, strict=True)]

    def block(self, nodes: list[Node], env: dict[str, Value], depth: int, after: set[str]) -> None:
        nodes = list(nodes)
        run: list[Line] = []
        i = 0
        while i < len(nodes):
            n = nodes[i]
            if isinstance(n, Line):
                run.append(n)
            elif isinstance(n, Note):
                self.lines.append("    " * depth + f"// {n.text}")
            else:
                replaced = self._unroll(n, env, run, nodes[i + 1:], after)
                if replaced is not None:
                    nodes[i:i + 1] = replaced
                    continue
                last = self._run(run, env, depth, live_before(nodes[i:], after, self.hw))
                run = []
                self._loop(n, env, depth, last, live_before(nodes[i + 1:], after, self.hw))
            i += 1
        self._run(run, env, depth, after)

    def _unroll(self, loop: Loop, env: dict[str, Value], run: list[Line], rest: list[Node],
                after: set[str]) -> list[Node] | None:
        """The unrolled form of a loop whose unrolled body still fits the registers, or None.

        A loop over small loops is tried first with those unrolled completely (then it is innermost itself).
        """
        if id(loop) in self._unrolled:
            return None
        flat = None
        if any(isinstance(b, Loop) for b in loop.body):
            body = expand(loop.body, self.full_ops)
            if not any(isinstance(b, Loop) for b in body):
                flat = Loop(loop.count, loop.comment, body)
        for cand in ([flat] if flat else []) + [loop]:
            got = self._unroll_inner(cand, env, run, rest, after, plain=cand is flat)
            if got is not None:
                return got
        return None

    def _unroll_inner(self, loop: Loop, env: dict[str, Value], run: list[Line], rest: list[Node],
                      after: set[str], plain: bool) -> list[Node] | None:
        body = [b for b in loop.body if isinstance(b, Line)]
        notes: list[Node] = [b for b in loop.body if isinstance(b, Note)]
        choices = unroll_choices(loop, self.max_unroll, self.full_ops)
        if plain and isinstance(loop.count, int) and loop.count > 0:
            choices.append((1, loop.count))  # a loop whose inner loops alone were unrolled
        for copies, iterations in choices:
            tail = body * (loop.count % copies if iterations else 0)  # type: ignore[operator]
            if not iterations:  # completely: the copies join the block around the loop
                if self._schedule(run + body * copies, dict(env), live_before(rest, after, self.hw)) is not None:
                    return notes + [Note(f"{loop.comment + ': ' if loop.comment else ''}unrolled {copies}x")] + \
                        body * copies  # type: ignore[return-value]
                continue
            comment = f"{loop.comment + ', ' if loop.comment else ''}unrolled {copies}x" if copies > 1 else loop.comment
            new = Loop(iterations, comment, notes + body * copies)  # type: ignore[operator]
            outer = dict(env)
            for line in run:
                step(line.text, outer, self.hw)
            body_after = live_at_body_end(new, live_before(tail + rest, after, self.hw), self.hw)  # type: ignore[operator]
            if self._schedule(body * copies, self.walker.entry(new, outer), body_after) is not None:
                self._unrolled.add(id(new))
                self._keep.append(new)
                return [new] + ([Note(f"the last {len(tail) // len(body)} iteration(s)")] + tail if tail else [])
        return None

    def _run(self, run: list[Line], env: dict[str, Value], depth: int, live_out: set[str]) -> list[Line] | None:
        """Schedule one basic block; returns its last bundle (which a following LOOP may join)."""
        if not run:
            return None
        got = self._schedule(run, dict(env), live_out)
        if got is None:
            got = self._schedule(run, env, live_out, rename=False)
        else:
            for line in run:  # step env past the block (pointer values do not depend on register names)
                step(line.text, env, self.hw)
        assert got is not None
        bundles, texts, ops = got
        placed = [b for b in bundles if b]
        for b in placed:
            self.lines.append("    " * depth + _bundle_text([Line(texts[i], run[i].comment) for i in b]))
        self.bundles += len(placed)
        self.dynamic += len(placed) * self.trips
        self._last_ops = [ops[i] for i in placed[-1]]
        return [Line(texts[i], run[i].comment) for i in placed[-1]]

    def _loop(self, loop: Loop, env: dict[str, Value], depth: int, last: list[Line] | None,
              after: set[str]) -> None:
        self.labels += 1
        end = f"end_{self.labels}"
        head = Line(f"{'LOOPI' if isinstance(loop.count, int) else 'LOOP'} {loop.count}, {end}", loop.comment)
        joins = last is not None and all(o.unit != "CTL" for o in self._last_ops) and not (
            isinstance(loop.count, str) and any(r == loop.count for o in self._last_ops for r, _ in o.writes))
        if joins:
            assert last is not None
            self.lines[-1] = "    " * depth + _bundle_text(last + [head])
        else:
            self.lines.append("    " * depth + _bundle_text([head]))
            self.bundles += 1
            self.dynamic += self.trips
        outer = dict(env)
        trips = self.trips
        self.trips *= loop.count if isinstance(loop.count, int) else 1
        self.block(loop.body, self.walker.entry(loop, outer), depth + 1, live_at_body_end(loop, after, self.hw))
        self.trips = trips
        self.lines.append("    " * depth + f"{end}:")
        env.update(self.walker.exit(loop, outer))


def optimize(source: str, hw: VLIWConfig) -> str:
    """The -O2 form of a template kernel (see the module docstring); same results, fewer cycles."""
    header, tree = parse_program(source)
    best: tuple[int, int, Emitter] | None = None
    for factor, full in SIZES:
        em = Emitter(hw, factor, full)
        em.block(tree, {p: (None, 0) for p in TRACKED + ["r0"]}, 0, set())
        if em.bundles <= hw.imem_bundles and (best is None or em.dynamic < best[2].dynamic):
            best = (factor, full, em)
        if best is not None and factor == MAX_UNROLL and full == FULL_UNROLL_OPS:
            break  # the full-size unrolling fits: nothing smaller can be faster
    if best is None:  # nothing fits: the smallest form (no unrolling), which the assembler will refuse as too long
        best = (1, 0, em)
    factor, _, em = best
    note = (f"// -O2: list-scheduled bundles, innermost loops unrolled up to {factor}x" if factor >= 2
            else "// -O2: list-scheduled bundles")
    return "\n".join(header + [note] + em.lines) + "\n"
