"""The CPU case study's ten tasks (the paper's Table 10): exact Python models of the expected memory state.

Each task is a classic scalar benchmark kernel over int32 memory, defined by its C source
(``kcgym/sims/cpu/baseline/<task>.c``, the GCC ``-O2`` baseline) and by the model here, which
computes what that C function leaves in the output tensors. Arithmetic wraps modulo 2^32 as the
hardware's does (the C sources compute in ``unsigned`` where a sum or product may overflow, so
the C is defined too). Inputs are int32; every task declares stress sets from the edge of its
stated domain (extreme values, ties, presorted keys...), where shortcuts that pass the default
draw fail, and none makes the baseline run more than the step budget's multiple of its default
dynamic count.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from kcgym.tasks.base import StressSet, Task, TaskConfig

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
SPECIAL_VALUES = np.array([0, 1, -1, 2, -2, INT32_MIN, INT32_MAX, INT32_MIN + 1, 1 << 30, -(1 << 30), 0x55555555,
                           -0x55555556, 0x7FFF, -0x8000], np.int64)  # word values where arithmetic shortcuts fail
SMALL_RANGE = 1 << 15  # default operands of the arithmetic tasks: |x| < 2^15 (their stress sets go to 2^31)


def wrap32(x: ArrayLike) -> np.ndarray:
    """Integers reduced modulo 2^32 to int32 (two's complement), as the 32-bit datapath leaves them."""
    return ((np.asarray(x, np.int64) + (1 << 31)) % (1 << 32) - (1 << 31)).astype(np.int32)


def random_words(rng: np.random.Generator, shape: int | tuple[int, ...], bound: int | None = None) -> np.ndarray:
    """int32 uniform on [-bound, bound) (the whole int32 range when ``bound`` is None)."""
    lo, hi = (INT32_MIN, INT32_MAX + 1) if bound is None else (-bound, bound)
    return rng.integers(lo, hi, shape, dtype=np.int64).astype(np.int32)


def special_words(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Every entry one of :data:`SPECIAL_VALUES` (0, +-1, INT32_MIN/MAX, alternating bits...)."""
    return rng.choice(SPECIAL_VALUES, size=x.shape).astype(np.int32)


def full_range(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Uniform over the whole int32 range: sums and products wrap."""
    return random_words(rng, x.shape)


def few_values(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Entries from {INT32_MIN, -1, 0, 1, INT32_MAX}: many ties, and comparisons by subtraction overflow."""
    return rng.choice(np.array([INT32_MIN, -1, 0, 1, INT32_MAX], np.int64), size=x.shape).astype(np.int32)


def descending(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The default draw sorted in reverse (descending): a first- or last-element pivot degrades to n^2."""
    return np.sort(x)[::-1].copy()


SPECIAL = StressSet("special_values", "operands drawn from 0, +-1, +-2, INT32_MIN, INT32_MAX, +-2^30, alternating "
                    "bit patterns, +-2^15: wrap-around and sign edges", {})
FULL_RANGE = StressSet("full_range", "operands uniform over the whole int32 range: sums and products wrap "
                       "modulo 2^32", {})


def _on(stress: StressSet, transform, *names: str) -> StressSet:
    return StressSet(stress.name, stress.description, dict.fromkeys(names, transform))


# the C sources of the tasks (task data: the definition the agent reads, and what the GCC baseline compiles)
C_SOURCES = Path(__file__).resolve().parents[1] / "sims" / "cpu" / "baseline"


class CPUTask(Task):
    """A task of the CPU case study: int32 tensors, an exact reference (the C function's effect)."""

    family = "int32"

    def reference_c(self) -> str:
        """The task's C source: ``kernel``'s effect on the outputs is what a kernel must reproduce (the prompt
        shows it, as the paper's CPU tasks came with their C code)."""
        return (C_SOURCES / f"{self.name}.c").read_text()


# ---- L1 ---------------------------------------------------------------------------------------
class Multiply(CPUTask):
    formula = "C[i] = A[i] * B[i] (mod 2^32)"
    description = ("Elementwise product of two int32 arrays, low 32 bits: C[i] = A[i] * B[i] mod 2^32. The C "
                   "baseline multiplies in software by shift-and-add (the riscv-tests 'multiply' benchmark's "
                   "idea); any method that leaves the same words is correct.")
    stress_sets = (_on(SPECIAL, special_words, "A", "B"),)

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"A": random_words(rng, cfg["n"]), "B": random_words(rng, cfg["n"])}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"C": wrap32(inputs["A"].astype(np.int64) * inputs["B"].astype(np.int64))}


class VVAdd(CPUTask):
    formula = "C[i] = A[i] + B[i] (mod 2^32)"
    description = "Elementwise sum of two int32 arrays, wrapping modulo 2^32: C[i] = A[i] + B[i]."
    stress_sets = (_on(FULL_RANGE, full_range, "A", "B"),)

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"A": random_words(rng, cfg["n"], SMALL_RANGE), "B": random_words(rng, cfg["n"], SMALL_RANGE)}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"C": wrap32(inputs["A"].astype(np.int64) + inputs["B"])}


class Copy(CPUTask):
    formula = "Y[i] = X[i]"
    description = "Copy n int32 words from X to Y (memcpy of 4n bytes; X and Y do not overlap)."
    stress_sets = (_on(SPECIAL, special_words, "X"),)

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"X": random_words(rng, cfg["n"])}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"Y": inputs["X"].copy()}


class Median(CPUTask):
    formula = "Y[i] = median(X[i-1], X[i], X[i+1]); Y[0] = X[0], Y[n-1] = X[n-1]"
    description = ("3-element median filter over n int32 words (signed comparisons): Y[i] = the median of X[i-1], "
                   "X[i], X[i+1] for 0 < i < n-1; the two end points are copied (Y[0] = X[0], Y[n-1] = X[n-1]).")
    stress_sets = (StressSet("few_values", "entries from INT32_MIN, -1, 0, 1, INT32_MAX: ties everywhere, and a "
                             "comparison by subtraction overflows", {"X": few_values}),)

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"X": random_words(rng, cfg["n"])}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        x = inputs["X"]
        y = x.copy()
        y[1:-1] = np.median(np.stack([x[:-2], x[1:-1], x[2:]]).astype(np.int64), axis=0).astype(np.int32)
        return {"Y": y}


class DotProd(CPUTask):
    formula = "Y[0] = sum_i A[i] * B[i] (mod 2^32)"
    description = "Dot product of two int32 arrays, products and sum wrapping modulo 2^32, into the one word Y[0]."
    stress_sets = (_on(FULL_RANGE, full_range, "A", "B"),)

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"A": random_words(rng, cfg["n"], SMALL_RANGE), "B": random_words(rng, cfg["n"], SMALL_RANGE)}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        prods = wrap32(inputs["A"].astype(np.int64) * inputs["B"].astype(np.int64)).astype(np.int64)
        return {"Y": wrap32([prods.sum()])}


# ---- L2 ---------------------------------------------------------------------------------------
class QSort(CPUTask):
    formula = "Y = sort(X) (signed, ascending)"
    description = "Sort n int32 keys into ascending signed order: Y = sorted(X). X is left as it is."
    stress_sets = (
        StressSet("reversed", "the keys in descending order (a first- or last-element pivot goes n^2)",
                  {"X": descending}),
        StressSet("few_values", "keys from INT32_MIN, -1, 0, 1, INT32_MAX: long runs of equal keys, and a "
                  "comparison by subtraction overflows", {"X": few_values}),
    )

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"X": random_words(rng, cfg["n"])}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"Y": np.sort(inputs["X"])}


def shared_low_bytes(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Keys that differ only in their top byte (the low 24 bits all equal): only the last digit pass sorts."""
    low = int(rng.integers(0, 1 << 24))
    return ((rng.integers(0, 256, x.shape, dtype=np.int64) << 24) | low).astype(np.uint32).view(np.int32)


class RSort(CPUTask):
    formula = "Y = sort(X as unsigned 32-bit keys)"
    description = ("Sort n 32-bit keys into ascending UNSIGNED order (a key with its top bit set is larger than "
                   "every key without it), e.g. by an LSD radix sort on bytes; the C baseline uses the scratch "
                   "region as its second buffer. X is left as it is.")
    stress_sets = (StressSet("shared_low_bytes", "keys equal in their low 24 bits, differing only in the top "
                             "byte: a sort that skips or mis-orders the last digit pass fails",
                             {"X": shared_low_bytes}),)

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"X": random_words(rng, cfg["n"])}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"Y": np.sort(inputs["X"].view(np.uint32)).view(np.int32)}


def extreme_pegs(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Peg labels INT32_MIN, -1 and INT32_MAX in a random order."""
    return rng.permutation(np.array([INT32_MIN, -1, INT32_MAX], np.int64)).astype(np.int32)


def hanoi_moves(discs: int, src: int, dst: int, via: int) -> list[tuple[int, int, int]]:
    """The optimal move list (disc, from, to) of the classic recursion, iteratively."""
    moves: list[tuple[int, int, int]] = []
    stack: list[tuple[int, int, int, int, bool]] = [(discs, src, dst, via, False)]
    while stack:
        n, a, b, c, expanded = stack.pop()
        if n == 0:
            continue
        if expanded:
            moves.append((n, a, b))
            continue
        stack.append((n - 1, c, b, a, False))  # after the move: the n-1 discs from via onto dst
        stack.append((n, a, b, c, True))  # the move of disc n itself
        stack.append((n - 1, a, c, b, False))  # first: the n-1 smaller discs from src onto via
    return moves


class Towers(CPUTask):
    formula = "moves = hanoi(discs, P[0] -> P[2] via P[1])"
    description = ("Towers of Hanoi: move a tower of `discs` discs (1 smallest .. discs largest) from peg P[0] to "
                   "peg P[2], using P[1], in the optimal 2^discs - 1 moves of the classic recursion "
                   "hanoi(n, from, to, via) = hanoi(n-1, from, via, to); move disc n from -> to; "
                   "hanoi(n-1, via, to, from). Move k is the record moves[k] = (disc, from peg label, to peg "
                   "label); the three labels are P's words.")
    stress_sets = (StressSet("extreme_labels", "peg labels INT32_MIN, -1 and INT32_MAX in a random order",
                             {"P": extreme_pegs}),)

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        labels = rng.choice(1 << 16, size=3, replace=False).astype(np.int32)
        return {"P": labels}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        p = [int(v) for v in inputs["P"]]
        return {"moves": np.array(hanoi_moves(cfg["discs"], p[0], p[2], p[1]), np.int32)}


# ---- L3: Dhrystone -------------------------------------------------------------------------------
DHRY_ARRAY = 50  # Arr_1_Glob[50], Arr_2_Glob[50][50]
DHRY_STATE = 16  # words of the final-state record (see Dhrystone.reference)
DHRY_B_RANGE = (2, 14)  # per run: Int_2_Loc in 2..14 (so Proc_8's indices stay inside the 50-entry arrays)
IDENT_1, IDENT_2, IDENT_3, IDENT_4, IDENT_5 = range(5)
STR_1 = "DHRYSTONE PROGRAM, 1'ST STRING"
STR_2 = "DHRYSTONE PROGRAM, 2'ND STRING"
STR_3 = "DHRYSTONE PROGRAM, 3'RD STRING"
STR_SOME = "DHRYSTONE PROGRAM, SOME STRING"


@dataclass
class _Record:
    """Dhrystone's record (the variant the benchmark uses): a pointer, three scalars and a 31-char string."""

    ptr: _Record | None = None
    discr: int = 0
    enum_comp: int = 0
    int_comp: int = 0
    string: str = ""

    def assign(self, other: _Record) -> None:  # C's struct assignment *this = *other
        self.ptr, self.discr, self.enum_comp, self.int_comp, self.string = (other.ptr, other.discr, other.enum_comp,
                                                                            other.int_comp, other.string)


@dataclass
class _Dhrystone:
    """The benchmark's globals and procedures, statement for statement as dhrystone.c runs them."""

    arr1: list[int]
    arr2: list[list[int]]
    int_glob: int = 0
    bool_glob: int = 0
    ch_1: int = 0
    ch_2: int = 0
    glob: _Record = field(default_factory=_Record)
    next_glob: _Record = field(default_factory=_Record)

    def proc_1(self, p: _Record) -> None:
        nxt = p.ptr
        assert nxt is not None
        nxt.assign(self.glob)
        p.int_comp = 5
        nxt.int_comp = p.int_comp
        nxt.ptr = p.ptr
        nxt.ptr = self.proc_3(nxt.ptr)
        if nxt.discr == IDENT_1:
            nxt.int_comp = 6
            nxt.enum_comp = self.proc_6(p.enum_comp, nxt.enum_comp)
            nxt.ptr = self.glob.ptr
            nxt.int_comp = self.proc_7(nxt.int_comp, 10)
        else:
            assert p.ptr is not None
            p.assign(p.ptr)

    def proc_2(self, value: int) -> int:
        loc = value + 10
        while True:  # Ch_1_Glob is 'A' here (Proc_5 set it), so the loop body runs once
            if self.ch_1 == ord("A"):
                loc -= 1
                value = loc - self.int_glob
                break
        return value

    def proc_3(self, ptr: _Record | None) -> _Record | None:
        ptr = self.glob.ptr
        self.glob.int_comp = self.proc_7(10, self.int_glob)
        return ptr

    def proc_4(self) -> None:
        self.bool_glob = int(self.ch_1 == ord("A")) | self.bool_glob
        self.ch_2 = ord("B")

    def proc_5(self) -> None:
        self.ch_1 = ord("A")
        self.bool_glob = 0

    def proc_6(self, value: int, out: int) -> int:
        out = value
        if not self.func_3(value):
            out = IDENT_4
        if value == IDENT_1:
            out = IDENT_1
        elif value == IDENT_2:
            out = IDENT_1 if self.int_glob > 100 else IDENT_4
        elif value == IDENT_3:
            out = IDENT_2
        elif value == IDENT_5:
            out = IDENT_3
        return out

    @staticmethod
    def proc_7(a: int, b: int) -> int:
        return b + (a + 2)

    def proc_8(self, int_1: int, int_2: int) -> None:
        loc = int_1 + 5
        self.arr1[loc] = int_2
        self.arr1[loc + 1] = self.arr1[loc]
        self.arr1[loc + 30] = loc
        for index in (loc, loc + 1):
            self.arr2[loc][index] = loc
        self.arr2[loc][loc - 1] += 1
        self.arr2[loc + 20][loc] = self.arr1[loc]
        self.int_glob = 5

    def func_1(self, ch_1: int, ch_2: int) -> int:
        if ch_1 != ch_2:
            return IDENT_1
        self.ch_1 = ch_1
        return IDENT_2

    def func_2(self, s1: str, s2: str) -> int:
        loc, ch = 2, 0
        while loc <= 2:
            if self.func_1(ord(s1[loc]), ord(s2[loc + 1])) == IDENT_1:
                ch = ord("A")
                loc += 1
        if ord("W") <= ch < ord("Z"):
            loc = 7
        if ch == ord("R"):
            return 1
        if s1 > s2:  # strcmp(s1, s2) > 0 on ASCII strings
            loc += 7
            self.int_glob = loc
            return 1
        return 0

    @staticmethod
    def func_3(value: int) -> bool:
        return value == IDENT_3


def c_div(a: int, b: int) -> int:
    """C's integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def dhrystone(seeds: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(state[16], Arr_1_Glob[50], Arr_2_Glob[50, 50]) after one run of the main loop per seed row (a, b)."""
    d = _Dhrystone([0] * DHRY_ARRAY, [[0] * DHRY_ARRAY for _ in range(DHRY_ARRAY)])
    d.glob.ptr = d.next_glob
    d.glob.discr, d.glob.enum_comp, d.glob.int_comp, d.glob.string = IDENT_1, IDENT_3, 40, STR_SOME
    str_1, str_2 = STR_1, ""
    d.arr2[8][7] = 10
    int_1 = int_2 = int_3 = 0
    enum_loc, ch_index = 0, 0
    for run, (a, b) in enumerate(seeds.tolist(), start=1):
        d.proc_5()
        d.proc_4()
        int_1, int_2 = int(a), int(b)
        str_2 = STR_2
        enum_loc = IDENT_2
        d.bool_glob = int(not d.func_2(str_1, str_2))
        while int_1 < int_2:
            int_3 = 5 * int_1 - int_2
            int_3 = d.proc_7(int_1, int_2)
            int_1 += 1
        d.proc_8(int_1, int_3)
        d.proc_1(d.glob)
        ch_index = ord("A")
        while ch_index <= d.ch_2:
            if enum_loc == d.func_1(ch_index, ord("C")):
                enum_loc = d.proc_6(IDENT_1, enum_loc)
                str_2 = STR_3
                int_2 = run
                d.int_glob = run
            ch_index += 1
        int_2 = int_2 * int_1
        int_1 = c_div(int_2, int_3)
        int_2 = 7 * (int_2 - int_3) - int_1
        int_1 = d.proc_2(int_1)
    g, nx = d.glob, d.next_glob
    state = [d.int_glob, d.bool_glob, d.ch_1, d.ch_2, int_1, int_2, int_3, enum_loc, g.int_comp, g.enum_comp,
             g.discr, nx.int_comp, nx.enum_comp, nx.discr, sum(map(ord, str_2)), ch_index]
    return wrap32(state), wrap32(d.arr1), wrap32(d.arr2)


def dhrystone_seeds(rng: np.random.Generator, runs: int) -> np.ndarray:
    """Per run (a, b): b uniform on 2..14, a uniform on 1..b-1 (so the Int_1_Loc < Int_2_Loc loop runs)."""
    b = rng.integers(DHRY_B_RANGE[0], DHRY_B_RANGE[1] + 1, runs)
    a = 1 + (rng.random(runs) * (b - 1)).astype(np.int64)
    return np.stack([a, b], axis=1).astype(np.int32)


def dhrystone_edges(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Seed pairs at the domain's corners: (1, 14), (13, 14), (1, 2) in a random mix."""
    corners = np.array([[1, 14], [13, 14], [1, 2]], np.int32)
    return corners[rng.integers(0, len(corners), x.shape[0])]


class Dhrystone(CPUTask):
    formula = "state, Arr_1, Arr_2 = dhrystone(seeds)"
    description = (
        "Dhrystone (R. Weicker's synthetic integer benchmark, version 2 structure: Proc_1..Proc_8, Func_1..Func_3, "
        "records, string copy and compare, enumerations, global arrays), one pass of its main loop per row of "
        "`seeds`, where the classic constants Int_1_Loc = 2, Int_2_Loc = 3 are taken from the row (a, b) instead. "
        "The C source kcgym/sims/cpu/baseline/dhrystone.c is the definition; the outputs are its global arrays "
        "Arr_1_Glob (arr1) and Arr_2_Glob (arr2, row-major), zeroed at the start but for Arr_2_Glob[8][7] = 10, "
        "and a 16-word record `state` = (Int_Glob, Bool_Glob, Ch_1_Glob, Ch_2_Glob, Int_1_Loc, Int_2_Loc, "
        "Int_3_Loc, Enum_Loc, Ptr_Glob->Int_Comp, Ptr_Glob->Enum_Comp, Ptr_Glob->Discr, Next_Ptr_Glob->Int_Comp, "
        "Next_Ptr_Glob->Enum_Comp, Next_Ptr_Glob->Discr, the sum of Str_2_Loc's characters, Ch_Index) after "
        "the last run.")
    # the global arrays: zero at the start, a few entries written per run (the tests' "mostly zero" check skips them)
    sparse_outputs = ("arr1", "arr2")
    stress_sets = (StressSet("corner_seeds", "seed rows at the domain's corners (1, 14), (13, 14), (1, 2)",
                             {"seeds": dhrystone_edges}),)

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"seeds": dhrystone_seeds(rng, cfg["runs"])}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        state, arr1, arr2 = dhrystone(inputs["seeds"])
        return {"state": state, "arr1": arr1, "arr2": arr2}


# ---- L3: PMP -------------------------------------------------------------------------------------
PMP_R, PMP_W, PMP_X = 1, 2, 4  # pmpcfg permission bits
PMP_GRAIN_LOG2 = 3  # regions are naturally aligned powers of two of at least 8 bytes (NAPOT)
PMP_SPAN_LOG2 = 11  # probes and regions lie in a 2 KiB window: scratch's address rounded up to 512 bytes
PMP_MAX_LOG2 = 9  # regions of 8..512 bytes (so each is naturally aligned inside the window)
PROBE_READ, PROBE_WRITE = 0, 1


def pmp_allowed(regions: np.ndarray, probes: np.ndarray, base: int = 0) -> np.ndarray:
    """1 where a user-mode access is allowed: the lowest-numbered NAPOT entry that matches decides; no match faults.

    ``regions[i] = (offset, log2 size, permission bits)``, ``probes[j] = (offset, kind)`` (0 read, 1 write),
    offsets from ``base``; the privileged spec's rule for U-mode (section 3.7.1: priority by entry number,
    no matching entry denies a U-mode access).
    """
    out = np.zeros(len(probes), np.int32)
    for j, (addr, kind) in enumerate(probes.tolist()):
        need = PMP_R if kind == PROBE_READ else PMP_W
        for offset, log2, perm in regions.tolist():
            if offset <= addr < offset + (1 << log2):
                out[j] = int(perm & need != 0)
                break
    return out


def pmp_regions(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` NAPOT regions: sizes 2^3..2^9, aligned, anywhere in the window (they may overlap)."""
    log2 = rng.integers(PMP_GRAIN_LOG2, PMP_MAX_LOG2 + 1, count)
    offset = rng.integers(0, 1 << PMP_SPAN_LOG2, count) >> log2 << log2
    perm = rng.integers(0, 8, count) & ~PMP_X  # R/W only (a probe is a load or a store)
    perm = np.where(perm == PMP_W, PMP_R | PMP_W, perm)  # W without R is reserved
    perm[:1] = PMP_R  # entry 0 read-only: its first word allows a load and denies a store (see pmp_probes)
    return np.stack([offset, log2, perm], axis=1).astype(np.int32)


def pmp_probes(rng: np.random.Generator, regions: np.ndarray, count: int) -> np.ndarray:
    """Word-aligned probe offsets, most inside some region (at its first, last or a random word), some outside."""
    pick = rng.integers(0, len(regions), count)
    off, log2 = regions[pick, 0].astype(np.int64), regions[pick, 1].astype(np.int64)
    where = rng.integers(0, 4, count)
    inside = np.where(where == 0, off, np.where(where == 1, off + (1 << log2) - 4,
                                                 off + (rng.integers(0, 1 << 30, count) % (1 << log2))))
    outside = rng.integers(0, 1 << PMP_SPAN_LOG2, count)
    addr = np.where(where == 3, outside, inside) & ~3
    kind = rng.integers(0, 2, count)
    addr[:2], kind[:2] = regions[0, 0], (0, 1)  # a load and a store at entry 0's first word: outputs hold a 1 and a 0
    return np.stack([addr, kind], axis=1).astype(np.int32)


def nested_regions(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Every region at offset 0, growing (8, 16, ... bytes, then 512), permissions cycling RW, R, none: each
    probe near 0 is covered by several entries, so only the lowest-numbered match gives the right answer
    (RW first, so that with one region the answers are not nearly all 0)."""
    k = np.arange(len(x))
    log2 = np.minimum(PMP_GRAIN_LOG2 + k, PMP_MAX_LOG2)
    perm = np.array([PMP_R | PMP_W, PMP_R, 0])[k % 3]
    return np.stack([np.zeros_like(k), log2, perm], axis=1).astype(np.int32)


def probes_near_zero(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Probes at the nested regions' edges: blocks of four at offsets 0, s, 2s, 3s with s = 4, 8, 16, ... 128
    bytes (block by block, then again), loads and stores alternating."""
    j = np.arange(len(x))
    offsets = (4 * (j % 4)) << ((j // 4) % 6)
    return np.stack([offsets % (1 << (PMP_MAX_LOG2 + 1)), j % 2], axis=1).astype(np.int32)


class PMP(CPUTask):
    formula = "allowed[j] = PMP check of probes[j] under regions (U-mode)"
    description = ("Physical memory protection: program one NAPOT PMP entry per row of `regions` (offset from the "
                   "window base = the scratch region's address rounded up to 512, log2 size, R=1/W=2 permission "
                   "bits) into pmpaddr0.. / pmpcfg0.., then attempt every probe (offset, 0 load / 1 store) as a "
                   "user-mode access and record allowed[j] = 1 if it completed, 0 if it raised an access fault "
                   "(caught by a machine-mode trap handler).")
    stress_sets = (StressSet("nested", "regions nested at offset 0 with permissions cycling RW, R, none, and probes "
                             "at their edges: the lowest-numbered matching entry decides each one",
                             {"regions": nested_regions, "probes": probes_near_zero}),)

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        regions = pmp_regions(rng, cfg["nregions"])
        return {"regions": regions, "probes": pmp_probes(rng, regions, cfg["nprobes"])}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"allowed": pmp_allowed(inputs["regions"], inputs["probes"])}
