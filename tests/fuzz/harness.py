"""Grammar-aware fuzzing of every input path: generators and the properties they must satisfy.

Generators (hypothesis strategies):

- :func:`sources`: valid programs (each machine's compiler kernels at C1, the guide-style
  snippets and the hostile sources of issue 14) mutated line by line: operands dropped,
  duplicated or replaced by huge numbers, deep expressions, Unicode and lone surrogates;
  random directives (``.rept``/``.irp``/``.macro``/``.if``/``.equ``/data) inserted; lines
  deleted, duplicated, swapped, wrapped in repeats;
- :func:`actions`: raw actions: random JSON values, wrong types, oversized fields, huge
  integer literals, tool calls with mutated kernels.

Properties (each raises ``AssertionError`` on a finding): :func:`check_assembly`,
:func:`check_step`, :func:`check_batch`. Each call returns within its time bound (a
``SIGALRM`` guard turns a hang into a finding) and never lets an exception out. Shared by the
fast profile in the default suite (``tests/fuzz/test_fuzz.py``) and the long profile
(``benchmarks/bench_fuzz.py``).
"""

from __future__ import annotations

import contextlib
import json
import math
import resource
import signal
import time
from collections.abc import Iterator
from functools import cache

from hypothesis import strategies as st

from kcgym.envs.tools import TOOLS
from kcgym.isa.diagnostics import AssemblyError
from kcgym.registry import ACCELERATORS
from tests.isa.hostile import SYNTAX, hostile_sources

MACHINES = ("NPU", "VLIW", "RVV")
SEED_TASKS = ("relu", "softmax", "matmul")
ASSEMBLY_SECONDS = 3.0  # CPU seconds per assembly (the worst known cases take ~0.5 s)
ASSEMBLY_PEAK_BYTES = 256 << 20  # growth of the process peak RSS one assembly may cause
STEP_SECONDS = 120.0  # bound per env step / batch (a new program shape may compile the simulator)


class Hang(Exception):
    """Raised by the alarm inside a call that ran past its bound."""


@contextlib.contextmanager
def time_limit(seconds: float, *, cpu: bool = False) -> Iterator[None]:
    """Raise :class:`Hang` in the main thread if the block runs longer than ``seconds``.

    ``cpu=True`` counts this process's CPU time (``ITIMER_PROF``), so a machine shared with other
    jobs does not turn a slow-but-bounded case into a false finding.
    """

    def on_alarm(signum, frame):
        raise Hang(f"still running after {seconds} {'CPU ' if cpu else ''}s")

    sig, timer = (signal.SIGPROF, signal.ITIMER_PROF) if cpu else (signal.SIGALRM, signal.ITIMER_REAL)
    old = signal.signal(sig, on_alarm)
    signal.setitimer(timer, seconds)
    try:
        yield
    finally:
        signal.setitimer(timer, 0)
        signal.signal(sig, old)


@cache
def seed_programs(machine: str) -> tuple[str, ...]:
    """Valid programs to mutate: the compiler's kernels at C1, plus the hostile sources."""
    from kcgym.tasks import tasks_for

    acc = ACCELERATORS[machine]
    hw = acc.make_hw(None)
    table = tasks_for(acc.numerics)
    out = []
    for name in SEED_TASKS:
        task = table[name]
        if acc.supports(task):
            out.append(acc.compile(task, task.config(machine, 1), hw))
    return (*out, *hostile_sources(machine).values())


# -- pieces of assembly --------------------------------------------------------------------
def _numbers() -> st.SearchStrategy[str]:
    return st.one_of(
        st.integers(-(2**70), 2**70).map(str),
        st.integers(0, 2**64).map(hex),
        st.sampled_from(["0", "1", "-1", "4096", "65535", "0x7fffffff", "1e999", "1.5", "0b" + "1" * 70,
                         "9" * 25, "1" * 5000, "1__0", "0x", "08"]),
    )


@st.composite
def expressions(draw, depth: int = 0) -> str:
    """Constant expressions, from a literal to 40-deep nesting of every operator."""
    if depth > 3 or draw(st.booleans()):
        return draw(st.one_of(_numbers(), st.sampled_from(["X", "a", "MLEN", "VLEN", "label_0", "1b", "%hi(1)"])))
    kind = draw(st.sampled_from(["bin", "unary", "paren", "deep"]))
    if kind == "deep":
        n = draw(st.sampled_from([10, 31, 33, 40, 200]))
        return "(" * n + draw(_numbers()) + ")" * n
    if kind == "unary":
        return draw(st.sampled_from("-~+")) + draw(expressions(depth + 1))
    if kind == "paren":
        return "(" + draw(expressions(depth + 1)) + ")"
    op = draw(st.sampled_from(["+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^"]))
    return draw(expressions(depth + 1)) + f" {op} " + draw(expressions(depth + 1))


def _odd_text() -> st.SearchStrategy[str]:
    return st.one_of(
        st.text(max_size=40),
        st.sampled_from(["\ud800", "\udfff", "\x00", "\u202e", "\ufeff", "é", "\u00d7", "𝔵", "\t\t", "{", "}",
                         "||", ";", "\\", "\\@", "\\a", ":", "1:", "1b", "1f", ",", ",,", "(", ")", "%hi(",
                         "x" * 300]),
    )


def _operand(machine: str) -> st.SearchStrategy[str]:
    regs = {"NPU": ["gp1", "gp0", "f1", "a0", "gp16"], "VLIW": ["r1", "r0", "v1", "p0", "r99"],
            "RVV": ["a0", "zero", "t6", "v8", "v0.t", "x32", "8(a0)", "(a0)", "e8", "m1"]}[machine]
    return st.one_of(st.sampled_from(regs), expressions(), _odd_text())


@st.composite
def directives(draw, machine: str) -> list[str]:
    """One directive, or a block of them (repeats, macros, conditionals, data)."""
    nop = SYNTAX[machine]["nop"]
    e = draw(expressions())
    kind = draw(st.sampled_from(["rept", "irp", "macro", "if", "equ", "set", "unknown", "data", "closer"]))
    if kind == "rept":
        n = draw(st.sampled_from(["0", "1", "3", "1000", "70000", e]))
        inner = draw(st.sampled_from([[], [nop], [".rept 1000", ".endr"], [".rept 300", nop, ".endr"]]))
        return [f".rept {n}", *inner, ".endr"]
    if kind == "irp":
        return [".irp r, " + ", ".join(draw(st.lists(_operand(machine), max_size=4))), nop, ".endr"]
    if kind == "macro":
        body = draw(st.sampled_from([[nop], ["m"], ["m \\a\\a"], ["m", "m"], [".rept 100", "m", ".endr"]]))
        return [".macro m a=1", *body, ".endm", draw(st.sampled_from(["m", "m x", "m " + e, "m 1, 2"]))]
    if kind == "if":
        return [f".if {e}", nop, *draw(st.sampled_from([[], [".else", nop], [".else", ".else"]])), ".endif"]
    if kind in ("equ", "set"):
        return [f".{kind} {draw(st.sampled_from(['X', 'a', 'MLEN', 'gp1', '1x', '']))}, {e}"]
    if kind == "data":
        d = draw(st.sampled_from([".data", ".text", ".zero", ".space", ".balign", ".align", ".p2align", ".word",
                                  ".byte", ".half", ".section", ".globl"]))
        return [f"{d} {e}"]
    if kind == "closer":
        return [draw(st.sampled_from([".endr", ".endm", ".endif", ".else"]))]
    return ["." + draw(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=12)) + " " + e]


# -- mutations ----------------------------------------------------------------------------
def _split_operands(line: str) -> tuple[str, list[str]]:
    parts = line.strip().split(None, 1)
    if not parts:
        return "", []
    return parts[0], ([p.strip() for p in parts[1].split(",")] if len(parts) > 1 else [])


@st.composite
def sources(draw, machine: str) -> str:
    """A seed program with 1..6 mutations."""
    lines = draw(st.sampled_from(seed_programs(machine))).splitlines() or [""]
    for _ in range(draw(st.integers(1, 6))):
        i = draw(st.integers(0, max(0, len(lines) - 1)))
        kind = draw(st.sampled_from(["drop_op", "dup_op", "replace_op", "directive", "text", "delete",
                                     "duplicate", "swap", "wrap", "truncate"]))
        head, ops = _split_operands(lines[i]) if lines else ("", [])
        if kind in ("drop_op", "dup_op", "replace_op") and ops:
            k = draw(st.integers(0, len(ops) - 1))
            if kind == "drop_op":
                ops.pop(k)
            elif kind == "dup_op":
                ops.insert(k, ops[k])
            else:
                ops[k] = draw(_operand(machine))
            lines[i] = f"{head} " + ", ".join(ops)
        elif kind == "directive":
            lines[i:i] = draw(directives(machine))
        elif kind == "text":
            lines.insert(i, draw(_odd_text()))
        elif kind == "delete" and lines:
            lines.pop(i)
        elif kind == "duplicate" and lines:
            lines.insert(i, lines[i])
        elif kind == "swap" and len(lines) > 1:
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "wrap" and lines:
            j = draw(st.integers(i, min(len(lines), i + 8)))
            n = draw(st.sampled_from(["2", "64", "5000", "70000"]))
            lines[i:j] = [f".rept {n}", *lines[i:j], ".endr"]
        elif kind == "truncate" and lines:
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
    return "\n".join(lines)


# -- raw actions --------------------------------------------------------------------------
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**80), 2**80) | st.floats() | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12,
)
_NAMES = st.one_of(st.sampled_from(list(TOOLS)), st.sampled_from(["", "submitt", "run", "write_kernel "]),
                   st.text(max_size=20), st.integers(), st.none())


@st.composite
def actions(draw, machine: str):
    """One raw action: anything a policy could emit in place of a tool call."""
    kind = draw(st.sampled_from(["json", "text", "call", "call_str", "kernel", "huge", "oversized", "chat"]))
    if kind == "json":
        return draw(_JSON)
    if kind == "text":
        return draw(_odd_text())
    if kind in ("call", "call_str"):
        call = {"name": draw(_NAMES), "arguments": draw(st.one_of(_JSON, st.dictionaries(
            st.sampled_from(["source", "rows", "output", "section", "query", "x"]), _JSON, max_size=3)))}
        if draw(st.booleans()):
            call["id"] = draw(_JSON)
        if kind == "call":
            return call
        try:
            return json.dumps(call)
        except (TypeError, ValueError):
            return str(call)
    if kind == "kernel":
        return {"name": "write_kernel", "arguments": {"source": draw(sources(machine))}}
    if kind == "huge":
        digits = "1" * draw(st.sampled_from([4301, 5000, 20000]))
        return draw(st.sampled_from([
            '{"name": "view_output", "arguments": {"rows": ' + digits + "}}",
            '{"name": "read_docs", "arguments": "{\\"section\\": ' + digits + '}"}',
            {"name": "view_output", "arguments": {"rows": 10**4400}},  # a Python int with no repr
            digits,
        ]))
    if kind == "oversized":
        n = draw(st.sampled_from([10_000, 300_000, 1_100_000]))
        return {"name": draw(st.sampled_from(["write_kernel", "x" * n])), "arguments": {"source": "x" * n}}
    return {"type": "function", "function": {"name": draw(_NAMES), "arguments": draw(_JSON)}, "id": draw(_JSON)}


# -- properties ---------------------------------------------------------------------------
def _json_ok(value, where: str) -> None:
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    text.encode("utf-8")  # lone surrogates would fail here
    assert text, where


def check_assembly(machine: str, source: str) -> None:
    """Assembling returns a program or raises AssemblyError with located diagnostics, in bounded time."""
    acc = ACCELERATORS[machine]
    hw = acc.make_hw(None)
    rss0 = _peak_rss()
    t0 = time.thread_time()  # this thread's CPU: JAX's runtime threads elsewhere in the process do not count
    try:
        with time_limit(ASSEMBLY_SECONDS, cpu=True):
            try:
                acc.assemble(source, hw)
            except AssemblyError as e:
                assert e.errors, "an AssemblyError without errors"
                for d in e.diagnostics[:50]:
                    assert d.line >= 1 and d.col >= 1, d
                    json.dumps(d.to_dict())
                e.render()
    finally:
        grown = _peak_rss() - rss0
        assert grown < ASSEMBLY_PEAK_BYTES, f"assembly raised the peak RSS by {grown >> 20} MiB"
    assert time.thread_time() - t0 < ASSEMBLY_SECONDS


def _peak_rss() -> int:
    """The process's peak resident set, in bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def check_step(env, action) -> None:
    """``env.step`` returns a valid observation, a finite reward and JSON-serialisable info."""
    if env._ep is None or env._ep.done:
        env.reset(seed=0)
    with time_limit(STEP_SECONDS):
        obs, reward, terminated, truncated, info = env.step(action)
    assert isinstance(obs, str) and env.observation_space.contains(obs), "observation outside its space"
    assert isinstance(reward, float) and math.isfinite(reward)
    assert isinstance(terminated, bool) and isinstance(truncated, bool)
    assert "internal_error" not in info, info.get("internal_error")
    _json_ok(info, "info")


def check_batch(scorer, kernels) -> None:
    """``BatchScorer.score`` returns one JSON-serialisable record per kernel, none an internal error."""
    with time_limit(STEP_SECONDS):
        records = scorer.score(kernels)
    assert len(records) == len(kernels)
    for r in records:
        r.model_dump_json()
        assert math.isfinite(r.reward) and r.error_class != "internal_error", r.error
