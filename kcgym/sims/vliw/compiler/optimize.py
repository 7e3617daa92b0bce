"""The VLIW compiler's back end: what an ``-O2`` VLIW compiler does to the templates' one-operation-per-bundle code.

Three passes over the templates' assembly, nothing more (no software pipelining across iterations, no
reassociation of floating-point chains, no fusion across operators: those are the agent's job):

1. **Unrolling.** An innermost ``LOOPI`` whose count is known is unrolled: completely when small
   (:data:`FULL_UNROLL_OPS`), else by up to :data:`MAX_UNROLL` copies with the remainder after the loop.
   Registers a body defines before it uses them (its temporaries) get fresh names from the registers
   the program never mentions in all copies but the last, so the copies are independent; a register the
   copies share (an accumulator, a post-incremented pointer) keeps its chain. No free registers, no unroll.
2. **List scheduling** of each basic block (the operations between loop boundaries) with the experts'
   scheduler (:mod:`kcgym.sims.vliw.schedule`) over the machine's latencies and slots. Memory dependences
   come from a symbolic walk of the pointer registers (constants, post-increments, induction variables of
   enclosing loops): accesses that may overlap keep their order, accesses known to share a DM bank do not
   share a bundle. DMAs are operations like the others, so each issues as soon as its registers and the
   memory it reads allow (the block's first bundle, usually). A loop's ``LOOPI`` joins the last bundle before it.
3. **Size.** If the result does not fit the instruction memory, the unroll factor is halved until it does.

Empty bundles are dropped: the hardware interlocks on latencies (VLIW-T1), so a NOP bundle would cost
the cycle the stall costs anyway.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable
from dataclasses import dataclass, field

from kcgym.isa.spec import Reg
from kcgym.sims.vliw.config import VECTOR_BYTES, VLIWConfig
from kcgym.sims.vliw.isa import C, P, R, X
from kcgym.sims.vliw.schedule import Access, Op, operands, parse, schedule_ops

MAX_UNROLL = 8  # copies of an innermost loop body, at most
FULL_UNROLL_OPS = 48  # an innermost loop of at most this many operations in all (count x body) is unrolled completely
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


Node = Line | Note | Loop


# ---- parsing the templates' assembly ----------------------------------------------------
def parse_program(source: str) -> tuple[list[str], list[Node]]:
    """The header comment lines and the loop tree of ``source`` (as :class:`~kcgym.sims.vliw.compiler.Asm` writes it)."""
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


# ---- unrolling --------------------------------------------------------------------------
def _registers(text: str, hw: VLIWConfig) -> list[tuple[str, bool, bool]]:
    """(register, read, written) of each register operand of one operation."""
    spec, args = operands(text, hw)
    return [(arg, not od.name.endswith("d"), od.kind.write)
            for od, arg in zip(spec.operands, args, strict=True) if isinstance(od.kind, Reg)]


def _mentioned(nodes: list[Node], hw: VLIWConfig, into: set[str]) -> set[str]:
    for n in nodes:
        if isinstance(n, Line):
            into.update(r for r, _, _ in _registers(n.text, hw))
        elif isinstance(n, Loop):
            if isinstance(n.count, str):
                into.add(n.count)
            _mentioned(n.body, hw, into)
    return into


def free_registers(nodes: list[Node], hw: VLIWConfig) -> dict[str, list[str]]:
    """Per register file, the registers the program never names (r0 excluded: it is hardwired)."""
    used = _mentioned(nodes, hw, set())
    return {p: [r for i, r in enumerate(f.names()) if r not in used and i != f.zero] for p, f in FILES.items()}


def temporaries(body: list[Line], hw: VLIWConfig) -> list[str]:
    """Registers the body writes, purely, before it reads them: each iteration's own values."""
    seen: set[str] = set()
    temps: list[str] = []
    for line in body:
        regs = _registers(line.text, hw)
        read = {r for r, rd, _ in regs if rd}
        for r, _, wr in regs:
            if r not in seen:
                seen.add(r)
                if wr and r not in read:
                    temps.append(r)
    return temps


def _renamed(line: Line, names: dict[str, str], hw: VLIWConfig) -> Line:
    if not names:
        return line
    spec, args = operands(line.text, hw)
    new = [names.get(a, a) if isinstance(od.kind, Reg) else a for od, a in zip(spec.operands, args, strict=True)]
    return Line(f"{line.text.split(' ', 1)[0]} " + ", ".join(new), line.comment)


def _copies(body: list[Line], count: int, sets: list[dict[str, str]], hw: VLIWConfig) -> list[Node]:
    """``count`` copies of ``body``: copy k renamed by ``sets[k]``, the last one with the original names."""
    out: list[Node] = []
    for k in range(count):
        names = sets[k] if k < count - 1 else {}
        out += [_renamed(line, names, hw) for line in body]
    return out


def unroll(nodes: list[Node], free: dict[str, list[str]], hw: VLIWConfig, max_unroll: int,
           full_ops: int) -> list[Node]:
    """``nodes`` with every innermost loop of known count unrolled (see the module docstring)."""
    out: list[Node] = []
    for n in nodes:
        if not isinstance(n, Loop):
            out.append(n)
        elif any(isinstance(b, Loop) for b in n.body):
            out.append(Loop(n.count, n.comment, unroll(n.body, free, hw, max_unroll, full_ops)))
        else:
            out += _unroll_inner(n, free, hw, max_unroll, full_ops)
    return out


def _unroll_inner(loop: Loop, free: dict[str, list[str]], hw: VLIWConfig, max_unroll: int,
                  full_ops: int) -> list[Node]:
    body = [b for b in loop.body if isinstance(b, Line)]
    count = loop.count
    if not isinstance(count, int) or count < 2 or not body or max_unroll < 2:
        return [loop]
    temps = temporaries(body, hw)
    capacity = max_unroll - 1  # renamed copies the free registers allow
    for prefix, regs in free.items():
        need = sum(1 for t in temps if t[0] == prefix)
        if need:
            capacity = min(capacity, len(regs) // need)
    sets = []
    for k in range(max(capacity, 0)):
        names: dict[str, str] = {}
        for prefix in free:
            mine = [t for t in temps if t[0] == prefix]
            names.update(zip(mine, free[prefix][k * len(mine):(k + 1) * len(mine)], strict=True))
        sets.append(names)
    notes: list[Node] = [b for b in loop.body if isinstance(b, Note)]
    if count - 1 <= capacity and count * len(body) <= full_ops:
        return notes + [Note(f"{loop.comment + ': ' if loop.comment else ''}unrolled {count}x")] + \
            _copies(body, count, sets, hw)
    u = min(capacity + 1, count // 2)
    if u < 2:
        return [loop]
    main = Loop(count // u, f"{loop.comment + ', ' if loop.comment else ''}unrolled {u}x",
                notes + _copies(body, u, sets, hw))
    rest = count % u
    return [main] + ([Note(f"the last {rest} iteration(s)")] + _copies(body, rest, sets, hw) if rest else [])


# ---- pointer values: what each memory access touches -------------------------------------
Value = tuple[Hashable | None, int]  # (symbolic base, byte offset); base None: a known address
_fresh = itertools.count()


def _unknown() -> Value:
    return (("unknown", next(_fresh)), 0)


def _shift(v: Value, by: int) -> Value:
    return (v[0], v[1] + by)


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
        base, off = env[args[1]]
        acc.append(Access("DM", base, off, off + DM_WIDTH[mn], write=mn == "VST", banked=True))
    elif spec.cls == "DMA":
        rows, rowbytes = _int(args[3]), _int(args[4])
        base, off = env[args[0]]
        if rows is None or rowbytes is None:
            base, off, rows, rowbytes = _unknown()[0], 0, 1, hw.dm_bytes
        into = mn.startswith("DMAI")
        acc += [Access("DM", base, off, off + rows * rowbytes, write=into),
                Access("EXT", EXT.base, 0, 1, write=not into)]
    # the pointer registers it writes
    if mn in DM_WIDTH:
        inc = _int(args[2])
        env[args[1]] = _shift(env[args[1]], inc) if inc is not None else _unknown()
    elif mn == "PMOVI" and _int(args[1]) is not None:
        env[args[0]] = (None, int(args[1], 0))
    elif mn == "PADDI" and _int(args[2]) is not None:
        env[args[0]] = _shift(env[args[1]], int(args[2], 0))
    else:
        for r, _, wr in _registers(text, hw):
            if wr and r.startswith("p"):
                env[r] = _unknown()
    return tuple(acc)


class Walker:
    """Pointer values through the loop tree: entry values of loop bodies as induction variables."""

    def __init__(self, hw: VLIWConfig):
        self.hw = hw
        self._strides: dict[int, dict[str, int | None]] = {}

    def strides(self, loop: Loop) -> dict[str, int | None]:
        """Per pointer register, what one iteration adds to it (None: not a constant)."""
        if id(loop) not in self._strides:
            env: dict[str, Value] = {p: (("start", id(loop), p), 0) for p in P.names()}
            self.effect(loop.body, env)
            self._strides[id(loop)] = {p: v[1] if v[0] == ("start", id(loop), p) else None for p, v in env.items()}
        return self._strides[id(loop)]

    def entry(self, loop: Loop, env: dict[str, Value]) -> dict[str, Value]:
        """Pointer values at the top of any iteration, from those before the loop."""
        out = {}
        for p, s in self.strides(loop).items():
            if s == 0:
                out[p] = env[p]
            elif s is None:
                out[p] = _unknown()
            else:
                out[p] = (("iv", id(loop), env[p][0], s), env[p][1])
        return out

    def exit(self, loop: Loop, env: dict[str, Value]) -> dict[str, Value]:
        """Pointer values after the loop."""
        out = {}
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


# ---- scheduling and emission -------------------------------------------------------------
def _bundle_text(ops: list[Line]) -> str:
    comments = list(dict.fromkeys(o.comment for o in ops if o.comment))
    text = " || ".join(o.text for o in ops)
    return text + (f"    // {'; '.join(comments)}" if comments else "")


class Emitter:
    """Schedules the blocks of a loop tree and writes the bundles, one line each."""

    def __init__(self, hw: VLIWConfig):
        self.hw, self.walker = hw, Walker(hw)
        self.lines: list[str] = []
        self.bundles = 0
        self.labels = 0
        self._last_ops: list[Op] = []

    def block(self, nodes: list[Node], env: dict[str, Value], depth: int) -> None:
        run: list[Line] = []
        for n in nodes:
            if isinstance(n, Line):
                run.append(n)
            elif isinstance(n, Note):
                self.lines.append("    " * depth + f"// {n.text}")
            else:
                last = self._run(run, env, depth)
                run = []
                self._loop(n, env, depth, last)
        self._run(run, env, depth)

    def _run(self, run: list[Line], env: dict[str, Value], depth: int) -> list[Line] | None:
        """Schedule one basic block; returns its last bundle (which a following LOOP may join)."""
        if not run:
            return None
        ops = [parse(line.text, self.hw, step(line.text, env, self.hw)) for line in run]
        placed = [b for b in schedule_ops(ops, self.hw) if b]
        for b in placed:
            self.lines.append("    " * depth + _bundle_text([run[i] for i in b]))
        self.bundles += len(placed)
        self._last_ops = [ops[i] for i in placed[-1]]
        return [run[i] for i in placed[-1]]

    def _loop(self, loop: Loop, env: dict[str, Value], depth: int, last: list[Line] | None) -> None:
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
        outer = dict(env)
        body_env = self.walker.entry(loop, outer)
        self.block(loop.body, body_env, depth + 1)
        self.lines.append("    " * depth + f"{end}:")
        env.update(self.walker.exit(loop, outer))


def optimize(source: str, hw: VLIWConfig) -> str:
    """The -O2 form of a template kernel (see the module docstring); same results, fewer cycles."""
    header, tree = parse_program(source)
    free = free_registers(tree, hw)
    factor, full = MAX_UNROLL, FULL_UNROLL_OPS
    while True:
        em = Emitter(hw)
        em.block(unroll(tree, free, hw, factor, full), {p: (None, 0) for p in P.names()}, 0)
        if em.bundles <= hw.imem_bundles or factor < 2:
            break
        factor, full = factor // 2, full // 2
    note = (f"// -O2: list-scheduled bundles, innermost loops unrolled up to {factor}x" if factor >= 2
            else "// -O2: list-scheduled bundles")
    return "\n".join(header + [note] + em.lines) + "\n"
