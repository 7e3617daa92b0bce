"""Every budget that bounds what one kernel (or one action) may cost, in one place.

An RL run samples millions of kernels; sooner or later a policy emits every degenerate string
there is. These limits make each of them an ordinary error result with ``line:col`` instead of
a hang, a memory blow-up or an exception. They are shared by all three machines (the common
preprocessor and expression evaluator enforce the assembly ones) and rendered into each
machine's guide ("Assembly limits") from these constants, so the docs cannot drift.
"""

from __future__ import annotations

import math

# -- kernel source and actions ------------------------------------------------------------
MAX_SOURCE_CHARS = 1_000_000  # ~ a full instruction memory of commented code
MAX_COMPLETION_CHARS = 2 * MAX_SOURCE_CHARS  # tail of a model completion scanned for its last fenced block
MAX_LINE_CHARS = 10_000  # code characters of one (expanded) line, comments excluded

# -- assembly: expansion of .rept / .irp / .macro -------------------------------------------
MAX_EXPANDED_LINES = 32_768  # lines the preprocessor may emit (2x the largest default instruction memory)
MAX_EXPANSION_WORK = 262_144  # preprocessor work units: 1 per .rept/.irp iteration, macro call, line copied
MAX_EXPANSION_CHARS = 2_000_000  # characters the preprocessor may copy while expanding
MAX_MACRO_DEPTH = 32  # nesting of macro calls, .rept/.irp and .if blocks
MAX_DIAGNOSTICS = 500  # errors and warnings kept per assembly (the rest are counted)

# -- assembly: expressions ---------------------------------------------------------------
MAX_EXPR_DEPTH = 32  # nesting of parentheses, unary operators and %hi/%lo functions in one expression
INT_MIN = -(1 << 63)  # integer values live in [INT_MIN, UINT_MAX]: 64 bits, signed or unsigned
UINT_MAX = (1 << 64) - 1

# -- assembly: "did you mean" -------------------------------------------------------------
MAX_SUGGESTIONS = 16  # unknown names per assembly that get a computed suggestion
MAX_SUGGESTION_CANDIDATES = 256  # names compared against one unknown name
MAX_SUGGESTED_WORD = 64  # longer unknown words get no suggestion (no near miss is that long)

# -- simulation ---------------------------------------------------------------------------
# A kernel may run STEP_BUDGET_MULTIPLE x the compiler kernel's dynamic instruction count (NPU and
# RVV: instructions; VLIW: bundles) on that config, and at least STEP_BUDGET_FLOOR steps, plus one for
# the final halt (RVV counts running past the last instruction as a step); past it, the run stops with a
# STEP_BUDGET fault. So a kernel that executes at most the multiple x the compiler's count never faults.
# Simulation time is close to linear in steps, so a spinning kernel costs about this multiple of the
# compiler kernel's simulation time (benchmarks/bench_spin.py measures it).
STEP_BUDGET_MULTIPLE = 2.5
STEP_BUDGET_FLOOR = 64
UNBASED_STEP_BUDGET = 200_000  # when no compiler kernel is known (``evaluate(..., with_baseline=False)``)
# The RVV trace path resolves a branch (jump target, address, vl) on data by running the data path up to it for
# every input set (~1.5 CPU ms a round trip): at most RESOLVE_MAX per run, and past the first RESOLVE_FREE at
# least RESOLVE_MIN_STEPS pre-passed instructions per resolution (the compiler kernels have 45-236); else the
# interpreter runs. A program that branches on a new loaded byte every few instructions would otherwise spend
# ~6 CPU s on 4096 round trips before the interpreter runs it anyway.
RESOLVE_MAX = 4096
RESOLVE_FREE = 64
RESOLVE_MIN_STEPS = 16


def step_budget(baseline_instructions: int, multiple: float = STEP_BUDGET_MULTIPLE) -> int:
    """Steps a kernel may run before it faults, from the compiler kernel's dynamic count."""
    if not (multiple > 0 and math.isfinite(multiple)):
        raise ValueError(f"the step-budget multiple must be a positive number, got {multiple!r}")
    return max(STEP_BUDGET_FLOOR, math.ceil(multiple * max(0, int(baseline_instructions)))) + 1


def assembly_limits_markdown() -> str:
    """The guides' "Assembly limits" subsection, generated from the constants above."""
    return (
        "### Assembly limits\n\n"
        f"Past a limit, assembly fails with an error at line:col: source {MAX_SOURCE_CHARS:,} chars and "
        f"{MAX_LINE_CHARS:,} code chars per line; expansion {MAX_EXPANDED_LINES:,} lines, {MAX_EXPANSION_WORK:,} "
        "work units (each `.rept`/`.irp` iteration, macro call and copied line is one, empty or not) and "
        f"{MAX_EXPANSION_CHARS:,} copied chars; nesting {MAX_MACRO_DEPTH} levels of blocks and macro calls, "
        f"{MAX_EXPR_DEPTH} of parentheses and unary operators; integers are 64-bit ({INT_MIN}..{UINT_MAX}), "
        "never big integers; RVV `.data` and alignment bytes are checked against the DTCM (and `.text` "
        f"padding against the ITCM) before allocation. The first {MAX_DIAGNOSTICS} diagnostics are shown; "
        f"the first {MAX_SUGGESTIONS} unknown names get a \"did you mean\".\n"
    )

# -- hardware models ------------------------------------------------------------------------
# Every field of every hw config (kcgym/sims/*/config.py) has a bound, checked when the config is made
# (gym.make(hw=...), `kcgym sweep --hw`), so that no override asks for a machine the simulator cannot
# hold. ONE budget: the bytes the simulator allocates for one machine's state (on-chip memories, their
# scoreboards, the instruction memory; per input set, and BatchScorer vmaps several), which each config
# adds up (HWConfig.state_parts); a memory-size field's own cap is the budget in its units. Fields that
# size no memory get sanity caps instead.
MAX_MACHINE_STATE_BYTES = 64 << 20
MAX_HW_CYCLES = 4096  # one latency, penalty or occupancy (the defaults are 1-100; a DRAM miss is ~300)
MAX_HW_ENTRIES = 64  # entries of a structure the simulator scans every step: a queue, the loop stack, DM banks

# -- the simulated clock ----------------------------------------------------------------------
# Cycle counters (issue and end times, DMA engine and line times, every scoreboard value) are int32 in the
# interpreters and the trace pre-passes alike. Past CYCLE_LIMIT a run stops with a CYCLE_LIMIT fault, checked at
# one point per machine, the same on both paths (each guide states it): VLIW, a bundle that would issue once the
# clock (max of T_ISSUE and T_END) has passed it faults before its other checks and commits nothing; NPU, an
# instruction whose scheduled completion passes it faults as its last check (it writes nothing; its time counts,
# as every NPU fault's); RVV and CPU, an instruction that would run once the clock (T_END) has passed it faults
# before its other checks. A check reads clocks the bundle or instruction did not raise yet on VLIW, RVV and CPU:
# that keeps it off the step's timing path, so the interpreters' steps cost what they did. So every counter stays
# <= CYCLE_LIMIT + one step's largest increment, which the hw bounds limit (a few MAX_HW_CYCLES latencies plus the
# longest transfer: tests/sims/test_cycle_limit.py computes it per machine and asserts the sum fits int32);
# 2**30 leaves 2**30 of headroom. Every compiler and expert kernel is orders of magnitude below it
# (benchmarks/results/*.jsonl hold their cycles).
CYCLE_LIMIT = 1 << 30

# -- evaluation -----------------------------------------------------------------------------
MAX_SWEEP_POINTS = 256  # hw-config grid points of one `kcgym sweep` (each point is a new machine: a JAX compile)

# -- process-wide caches -------------------------------------------------------------------
# Bounded so that a long-lived process that sweeps many (task, config, hw) combinations (an RL run over
# hardware variants, `kcgym sweep`) does not grow without limit; the oldest entry is dropped first.
MAX_CACHED_BASELINES = 1024  # compiler baselines (source + cycles) per (accelerator, hw, task, config)
MAX_CACHED_SCORERS = 64  # BatchScorers kept by scoring.scorer_for (each holds one env)
MAX_CACHED_PROGRAMS = 4096  # assembly outcomes kept per process, by (machine, hw, source hash): RL repeats sources
MAX_CACHED_PROGRAM_CHARS = 64_000_000  # source characters those entries may hold in all (~64 MB of text)
MAX_CACHED_OPERATIONS = 1 << 17  # facts about operation texts the VLIW -O2 compiler memoises per hw config
MAX_MEMOISED_CONFIGS = 8  # hw configs whose operation facts it keeps at once (a sweep compiles for many)
MAX_COLD_START_SHAPES = 256  # interpreter shapes whose cold start kcgym.sims.interpreter.COLD_START tracks
