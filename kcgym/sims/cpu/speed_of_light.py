"""The CPU's speed of light (see :mod:`kcgym.sims.sol`): counts of memory accesses any correct kernel makes.

Timing facts used (machine.py, the guide's CPU-T rules): the I-cache starts cold, so the first
instruction is fetched ``mem_latency`` cycles in, dispatched ``frontend_depth`` later and issued a cycle
after that (``start``); at most ``mem_units`` loads and stores issue per cycle and at most ``decode_width``
instructions dispatch and ``commit_width`` commit per cycle; a store completes a cycle after it issues;
the D-cache starts cold too, so the first load's data arrives ``dcache_latency + mem_latency`` after it
issues; the run ends a cycle after the last commit.

Every output word starts as noise and RV32 stores at most a word at a time, so a correct kernel stores
every output word; it also loads at least the input words that the outputs depend on whatever the data
(:data:`LOADED_WORDS`: for a product or a dot product one operand per element, since a zero operand
makes the other irrelevant; for Dhrystone the `b` of each run, since `a` changes only how long a loop
runs). Every term is physical: none assumes an algorithm, so any correct kernel takes at least the bound.
"""

from __future__ import annotations

from collections.abc import Callable

from kcgym.sims.cpu.config import CPUConfig
from kcgym.sims.sol import SolBound, SolTerm, ceil_div
from kcgym.tasks.base import Task, TaskConfig

# task name -> words of the inputs every correct kernel must load (see the module docstring)
LOADED_WORDS: dict[str, Callable[[TaskConfig], int]] = {
    "multiply": lambda c: c["n"],
    "vvadd": lambda c: 2 * c["n"],
    "copy": lambda c: c["n"],
    "median": lambda c: c["n"],
    "dotprod": lambda c: c["n"],
    "qsort": lambda c: c["n"],
    "rsort": lambda c: c["n"],
    "towers": lambda c: 3,
    "dhrystone": lambda c: c["runs"],
    "pmp": lambda c: 3 * c["nregions"] + 2 * c["nprobes"],
}


def output_words(task: Task, cfg: TaskConfig) -> int:
    return sum(t.size for t in task.outputs(cfg))


def speed_of_light(task: Task, cfg: TaskConfig, hw: CPUConfig) -> SolBound:
    if task.name not in LOADED_WORDS:
        raise KeyError(f"the CPU speed of light has no access count for task {task.name!r}")
    loads, stores = LOADED_WORDS[task.name](cfg), output_words(task, cfg)
    accesses = loads + stores
    start = hw.mem_latency + hw.frontend_depth + 1  # the first issue: cold I-cache, front end, dispatch
    width = min(hw.fetch_width, hw.decode_width, hw.commit_width)
    terms = [
        SolTerm(name="memory_accesses", physical=True, cycles=start + ceil_div(accesses, hw.mem_units) + 1,
                explanation=f"{loads:,} input words must be loaded and {stores:,} output words stored, one word an "
                            f"access, {hw.mem_units} access(es) per cycle, after a cold instruction fetch "
                            f"({start} cycles to the first issue)"),
        SolTerm(name="instruction_throughput", physical=True, cycles=start + ceil_div(accesses, width) + 1,
                explanation=f"those {accesses:,} loads and stores are instructions, and at most {width} per cycle "
                            "are fetched, dispatched and committed"),
    ]
    if loads:
        terms.append(SolTerm(
            name="first_miss", physical=True, cycles=start + hw.dcache_latency + hw.mem_latency + 2,
            explanation=f"the first input word misses the cold D-cache ({hw.dcache_latency} + {hw.mem_latency} "
                        "cycles), and an output store depends on it"))
    return SolBound.of(terms)
