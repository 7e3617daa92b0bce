"""Straight-line runs of bundles compiled to Python: the VLIW pre-pass's hot loop without its
per-bundle decoding.

``trace.prepass`` steps a program bundle by bundle, and for each dynamic bundle it re-reads what never
changes (which slots are active, their register indices, access sizes, the scoreboard's reads and writes,
which levelling rule applies). Most programs run few static bundles many times (a C3-C5 kernel: 50-900
bundles, hundreds to tens of thousands of times each), so where a run of bundles is entered often
(:data:`BLOCK_AFTER` times) this module writes the pre-pass's own per-bundle code for exactly those bundles
-- every static choice made, every static index a literal -- and compiles it once. What is left per dynamic
bundle is the value-dependent work: the address screen, timing, renaming, levels, the emitted operations,
the registers.

A block holds only bundles without control (no LOOP/LOOPI/branch/HALT/DMA) and ends where a loop may end
(the bundle before any LOOP's end label), so it never needs the loop stack. It runs all its bundles or
returns at the first one that needs the generic path (a screen that does not pass, i.e. a possible fault or
wrap-around, or the cycle limit), before touching any state of that bundle; ``prepass`` then steps that
bundle the old way. A block's code is a function of the config, the pre-pass's constants and its bundles'
words only (its pcs are relative to an argument), so the compiled code is kept per process and shared by every
program (:data:`BLOCK_CACHE_ENTRIES`): a batch of similar kernels compiles a block once. The generic path stays
the reference: ``tests/sims/vliw/test_prepass_blocks.py`` compares the whole Trace with blocks and without
(``BLOCK_AFTER = None``), ``test_prepass_block_cache.py`` blocks found compiled by other programs.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from types import CodeType
from typing import Any

import numpy as np

BLOCK_AFTER: int | None = 24  # entries at a bundle before the run from it is compiled (None: never compile) ...
BLOCK_MAX = 48  # bundles of one block (a compiled block's size; longer runs chain blocks)

BLOCK_MIN_RUNS = 256  # ... and only where the program's LOOPI counts run it at least this often (a compile costs
# what many runs of the compiled code save; timing the pre-pass of matmul, decoder_llama and batch_matmul C3
# with 1 to 4096 here, 256 and 1024 did alike and best, 1 compiled too much of decoder_llama)

BLOCK_CACHE_ENTRIES = 256  # compiled blocks kept per process, shared by every program (least recently used
# out first): a batch of similar kernels (an RL batch, a benchmark's variants) compiles a block once. A block of
# BLOCK_MAX bundles is some 50-80 KB of code (matmul C3's 33-bundle block marshals to 55 KB), so at most ~20 MB

_RET = "return {j}, t_issue, t_end, steps, nx, nc, nl, n_ops"


def cold_bundles(recs: list, ck_loopi: int) -> list[int]:
    """Bundles whose enclosing LOOPIs' counts multiply to fewer than :data:`BLOCK_MIN_RUNS` runs (register
    LOOPs and branches count once: an estimate; a rolled loop's iterations count too). The products saturate
    at the threshold (only "fewer or not" matters): one array slice per LOOPI, whatever the words (the
    assembler nests loops 4 deep at most; program words that did not come from it need not, and exact
    products over thousands of nested LOOPIs would be ever longer integers: seconds)."""
    runs = np.ones(len(recs), np.int64)
    for pc, rec in enumerate(recs):
        ctl = rec[9]
        if ctl[0] == ck_loopi and ctl[1] > 1:
            body = runs[pc + 1:min(ctl[2], len(recs))]
            np.minimum(body * min(int(ctl[1]), BLOCK_MIN_RUNS), BLOCK_MIN_RUNS, out=body)
    return np.flatnonzero(runs < BLOCK_MIN_RUNS).tolist()


def extent(recs: list, start: int, loop_ends: frozenset, n_dec: int) -> int:
    """Bundles from ``start`` a block may hold: no control, and none but the last before a loop's end."""
    n = 0
    pc = start
    while pc < n_dec and n < BLOCK_MAX:
        rec = recs[pc]
        if rec[9][0] or rec[10]:  # control (CK_*), or a DMA (slow)
            break
        n += 1
        if pc + 1 in loop_ends:
            break
        pc += 1
    return n


def _bundle(rec: tuple, j: int, c: dict) -> tuple[list[str], int]:
    """The pre-pass's code for bundle ``j`` of a block (``trace.prepass``'s loop body, its static choices made),
    and the data operations it emits. Its pc is ``q + j`` (``q``: the block's first bundle, an argument), so one
    compiled block serves the same bundles at any pc."""
    reads, writes, end_lat, ld0, ld1, st_, vec, scl, mov, _ctl, _slow, multi = rec
    ret = _RET.format(j=j)
    L = []
    if reads:
        L.append(f"dep = ready[{reads[0]}]")
        for i in reads[1:]:
            L += [f"v = ready[{i}]", "if v > dep:", "    dep = v"]
    else:
        L.append("dep = 0")
    lb = c["LB"]
    for k, ld in ((0, ld0), (1, ld1)):
        if ld is None:
            continue
        pi, lim, msk = ld[0], ld[1], ld[2]
        L += [f"a{k} = p[{pi}]", f"if a{k} < 0 or a{k} > {lim} or a{k} & {msk}:", f"    {ret}",
              f"ln{k} = a{k} // {lb}", f"v = line_ready[ln{k}]", "if v > dep:", "    dep = v"]
    if st_ is not None:
        L += [f"sa = p[{st_[0]}]", f"if sa < 0 or sa > {c['ST_LIM']} or sa & {c['VECTOR_MASK']}:", f"    {ret}",
              f"lns = sa // {lb}", "v = line_ready[lns]", "if v > dep:", "    dep = v", "v = line_read[lns]",
              "if v > dep:", "    dep = v"]
    if vec is not None and vec[11]:
        L += [f"if not 0 <= r[{vec[7]}] < {c['LANES']}:", f"    {ret}"]
    if mov is not None and mov[9]:
        L += [f"if not 0 <= r[{mov[4]}] < {c['LANES']}:", f"    {ret}"]
    L += ["steps += 1", "t = t_issue if t_issue > dep else dep"]
    if multi:
        bank = c["BANK"]
        ks = [f"a0 // {bank}" if ld0 is not None else None, f"a1 // {bank}" if ld1 is not None else None,
              f"sa // {bank}" if st_ is not None else None]
        terms = [f"({ks[x]} == {ks[y]})" for x, y in ((0, 1), (0, 2), (1, 2)) if ks[x] and ks[y]]
        L.append("t += " + " + ".join(terms))
    for i, lat in writes:
        L.append(f"ready[{i}] = t + {lat}")
    if any(i == 0 for i, _ in writes):
        L.append("ready[0] = 0")
    L += [f"cj = q + {j}" if j else "cj = q", "execs[cj] += 1"]

    def ring(d: str, to_c: bool) -> list[str]:
        """The next ring slot not held by a register (``trace.prepass``'s ``new_x`` / ``new_c``)."""
        n, base, size, held = ("nc", c["CBASE"], c["C_SLOTS"], "cs") if to_c else ("nx", c["XBASE"], c["X_SLOTS"], "xs")
        take = [f"{d} = {base} + {n} % {size}", f"{n} += 1"]
        return [*take, f"while {d} in {held}:", *(f"    {s}" for s in take)]

    def level(rd: list[str], dst: str, lvl: str) -> list[str]:
        """``lvl``: one more than the last writes of ``rd`` and ``dst`` and the last reads of ``dst``."""
        out = [f"{lvl} = lw[{rd[0]}]"] if rd else [f"{lvl} = 0"]
        for x in rd[1:]:
            out += [f"v = lw[{x}]", f"if v > {lvl}:", f"    {lvl} = v"]
        out += [f"v = lw[{dst}]", f"if v > {lvl}:", f"    {lvl} = v", f"v = lr[{dst}]", f"if v > {lvl}:",
                f"    {lvl} = v", f"{lvl} += 1"]
        for x in rd:
            out += [f"if lr[{x}] < {lvl}:", f"    lr[{x}] = {lvl}"]
        return [*out, f"lw[{dst}] = {lvl}"]

    out: list[str] = []  # the bundle's operations, emitted together (their values as computed in order)
    for k, ld in ((0, ld0), (1, ld1)):
        if ld is None:
            continue
        b = ld[3]
        lane = f"(a{k} // 2) % {c['LANES']}" if b else "0"
        L += [f"s{k} = lines[ln{k}]", *ring(f"d{k}", False), *level([f"s{k}"], f"d{k}", f"l{k}")]
        out.append(f"{c['K_LD']}, steps, cj, l{k}, d{k}, s{k}, {lane}, {b}, 0, 0, 0, 0")
    if st_ is not None:
        L += [f"ss = xs[{st_[1]}]", f"dst = nl % {c['N_RING']}", "nl += 1", "while line_held[dst]:",
              f"    dst = nl % {c['N_RING']}", "    nl += 1", "line_held[lines[lns]] = False", "line_held[dst] = True",
              "lines[lns] = dst", *level(["ss"], "dst", "ls")]
        out.append(f"{c['K_LD']}, steps, cj, ls, dst, ss, 0, 0, 0, 0, 0, 0")
    if vec is not None:
        kind, vsub, mode, ia, ib, ica, icd, ilane, h, vc, _vreg, _vchk = vec
        rd = ["vca"] if mode == 1 else ["va", "vb", "vcd"] if mode else ["va", "vb"]
        L += [f"va = xs[{ia}]", f"vb = xs[{ib}]", f"vca = cs[{ica}]", f"vcd = cs[{icd}]", *ring("dv", vc),
              *level(rd, "dv", "lv"), f"vl = r[{ilane}]"]
        out.append(f"{kind}, steps, cj, lv, dv, va, vb, vca, vcd, 0 if vl < 0 else {c['LANES'] - 1} "
                   f"if vl >= {c['LANES']} else vl, {h}, {vsub}")
    if mov is not None:
        msub, a_c, ma, mt, mlane, f1, rmode, mc, _mreg, _mchk = mov
        rd = [] if not rmode else ["ma_", "mt_"] if rmode == 1 else ["ma_"]
        L += [f"ma_ = {'cs' if a_c else 'xs'}[{ma}]", f"mt_ = xs[{mt}]", *ring("dm", mc), *level(rd, "dm", "lm")]
        out.append(f"{c['K_MOV']}, steps, cj, lm, dm, ma_, mt_, r[{mlane}], {f1}, {msub}, 0, 0")
    n_ops = len(out)
    if out:
        L.append(f"emit(({', '.join(out)}))")
    if ld0 is not None:
        L.append(f"xs[{ld0[4]}] = d0")
    if ld1 is not None:
        L.append(f"xs[{ld1[4]}] = d1")
    if vec is not None:
        L.append(f"{'cs' if vec[9] else 'xs'}[{vec[10]}] = dv")
    if mov is not None:
        L.append(f"{'cs' if mov[7] else 'xs'}[{mov[8]}] = dm")
    if scl is not None:
        ssub, i1, i2, to_p, sreg, f1 = scl
        val = {2: f"r[{i1}] + {i2}", 11: f"p[{i1}] + {i2}", 0: f"{f1}", 8: f"{f1}", 1: f"r[{i1}] + r[{i2}]",
               3: f"r[{i1}] - r[{i2}]", 4: f"r[{i1}] * r[{i2}]", 5: f"r[{i1}] << {i2}", 6: f"r[{i1}] >> {i2}",
               7: f"r[{i1}] & {i2}", 9: f"r[{i1}]", 10: f"p[{i1}] + r[{i2}]"}.get(ssub, f"p[{i1}]")
        L.append(f"val = {val}")
    lo, hi = c["I32_LO"], c["I32_HI"]
    for k, (ld, a) in enumerate(((ld0, "a0"), (ld1, "a1"), (st_, "sa"))):
        if ld is None:
            continue
        pi, inc = (ld[0], ld[5]) if k < 2 else (ld[0], ld[2])
        L += [f"v = {a} + {inc}", f"p[{pi}] = v if {lo} <= v <= {hi} else _w(v)"]
    if scl is not None:
        L += [f"if not {lo} <= val <= {hi}:", "    val = _w(val)", f"{'p' if scl[3] else 'r'}[{scl[4]}] = val",
              "r[0] = 0"]
    L += ["t_issue = t + 1", f"if t + {end_lat} > t_end:", f"    t_end = t + {end_lat}"]
    if n_ops:
        L.append(f"n_ops += {n_ops}")
    return L, n_ops


def cycles_bound(recs: list, start: int, n: int) -> int:
    """How far the bundles ``start .. start + n - 1`` can move the clock (``max(t_issue, t_end)``) before the
    last one issues: each issues at most at the clock (its inputs are ready by ``t_end``) and moves it by at
    most one cycle plus three bank conflicts, or its end latency. A block runs only where the clock plus this
    stays within ``CYCLE_LIMIT``, so it need not check the limit per bundle."""
    return sum(3 + max(1, rec[2]) for rec in recs[start:start + n - 1])


_COMPILED: OrderedDict[Hashable, tuple[CodeType, int, int]] = OrderedDict()  # key -> (code, operations, bound)
_LOCK = threading.Lock()


def _source(recs: list, start: int, n: int, c: dict) -> tuple[str, int]:
    """The text of the block of bundles ``start .. start + n - 1`` and the data operations it emits."""
    body: list[str] = []
    total = 0
    for j in range(n):
        lines, k = _bundle(recs[start + j], j, c)
        body += lines
        total += k
    return "def block(q, t_issue, t_end, steps, nx, nc, nl, n_ops):\n" + "".join(
        f"    {s}\n" for s in (*body, _RET.format(j=n))), total


def compile_block(recs: list, start: int, n: int, c: dict, ns: dict,
                  key: Hashable | None = None) -> tuple[Callable[..., Any], int, int]:
    """``(block, data operations it emits, cycles_bound)``: ``block(start, t_issue, t_end, steps, nx, nc, nl,
    n_ops)`` runs bundles ``start .. start + n - 1`` and returns ``(bundles done, t_issue, t_end, steps, nx, nc,
    nl, n_ops)``; ``c``: the pre-pass's constants, ``ns``: its state (the lists the code reads and writes,
    ``emit``, ``_w``). ``key``: what the block's text is a function of (``trace.prepass``: the config, ``c``
    and the bundles' words), to find it compiled by an earlier program (:data:`BLOCK_CACHE_ENTRIES`)."""
    with _LOCK:  # (scoring threads share the cache)
        hit = None if key is None else _COMPILED.get(key)
        if hit is not None:
            _COMPILED.move_to_end(key)
    if hit is None:
        text, total = _source(recs, start, n, c)
        hit = (compile(text, f"<vliw block of {n}>", "exec"), total, cycles_bound(recs, start, n))
        if key is not None:
            with _LOCK:
                _COMPILED[key] = hit
                while len(_COMPILED) > BLOCK_CACHE_ENTRIES:
                    _COMPILED.popitem(last=False)
    code, total, bound = hit
    exec(code, ns)  # noqa: S102 (our own text: literals and the pre-pass's names only)
    return ns.pop("block"), total, bound
