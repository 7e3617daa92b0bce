"""The bounded cache of assembly outcomes (kcgym.isa.program.ProgramCache, kcgym.evaluation.assemble_cached)."""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.evaluation import assemble_cached
from kcgym.isa.diagnostics import AssemblyError, Diagnostic
from kcgym.isa.program import Program, ProgramCache
from kcgym.limits import MAX_CACHED_PROGRAM_CHARS, MAX_CACHED_PROGRAMS
from kcgym.registry import ACCELERATORS


def _program(source: str) -> Program:
    return Program(isa_name="T", words=np.zeros((1, 4), np.int32), lines=[1], origins=[None], source=source)


def _counting(fail: bool = False):
    calls = []

    def assemble(source: str) -> Program:
        calls.append(source)
        if fail:
            raise AssemblyError([Diagnostic.error("E001", "unknown instruction 'x'", line=1)])
        return _program(source)

    return assemble, calls


def test_a_hit_returns_the_same_read_only_program():
    cache = ProgramCache(4, 1000)
    assemble, calls = _counting()
    first = cache.get("k", "src", assemble)
    assert cache.get("k", "src", assemble) is first and calls == ["src"]
    assert (cache.hits, cache.misses) == (1, 1)
    with pytest.raises(ValueError):
        first.words[0, 0] = 1  # shared between callers: nobody may change it


def test_failures_are_cached_and_raised_fresh_each_time():
    cache = ProgramCache(4, 1000)
    assemble, calls = _counting(fail=True)
    errors = []
    for _ in range(2):
        with pytest.raises(AssemblyError) as e:
            cache.get("k", "src", assemble)
        errors.append(e.value)
    assert len(calls) == 1 and errors[0] is not errors[1]
    assert errors[0].render() == errors[1].render() and "E001" in errors[0].render()


def test_least_recently_used_goes_first_by_count_and_by_chars():
    cache = ProgramCache(2, 10)
    assemble, calls = _counting()
    cache.get("a", "a", assemble)
    cache.get("b", "b", assemble)
    cache.get("a", "a", assemble)  # a is now the most recent
    cache.get("c", "c", assemble)  # drops b
    assert len(cache) == 2
    cache.get("a", "a", assemble)
    cache.get("b", "b", assemble)
    assert calls == ["a", "b", "c", "b"]
    cache.get("big", "x" * 10, assemble)  # the whole char budget: everything else goes
    assert len(cache) == 1
    cache.get("huge", "x" * 11, assemble)  # larger than the whole budget: assembled, never kept
    cache.get("huge", "x" * 11, assemble)
    assert calls[-2:] == ["x" * 11] * 2 and len(cache) == 1


def test_the_process_cache_is_bounded_by_named_limits():
    from kcgym.evaluation import _PROGRAMS

    assert (_PROGRAMS.max_entries, _PROGRAMS.max_chars) == (MAX_CACHED_PROGRAMS, MAX_CACHED_PROGRAM_CHARS)


def test_assemble_cached_keys_on_machine_hw_and_source():
    acc = ACCELERATORS["NPU"]
    hw, tiny = acc.make_hw(), acc.make_hw({"imem_size": 1})
    source = "S_ADDI_INT gp1, gp0, 5\nS_ADDI_INT gp2, gp0, 6\n"
    program = assemble_cached(acc, source, hw)
    assert assemble_cached(acc, source, hw) is program
    assert np.array_equal(program.words, acc.assemble(source, hw).words)
    with pytest.raises(AssemblyError, match="error"):  # the same source on another hw: its own outcome
        assemble_cached(acc, source, tiny)
    other = assemble_cached(acc, source + "; another source\n", hw)
    assert other is not program and np.array_equal(other.words, program.words)
    vliw = ACCELERATORS["VLIW"]
    with pytest.raises(AssemblyError):  # the same text on another machine is not the NPU's program
        assemble_cached(vliw, source, vliw.make_hw())


def test_evaluate_with_precomputed_expected_outputs_is_the_same_report():
    import gymnasium as gym

    import kcgym  # noqa: F401

    env = gym.make("KernelCraft-NPU-relu", config=1, docs_in_prompt=False).unwrapped
    ev = env.evaluator
    inputs = ev.input_sets(7, 2)
    source = env.accelerator.compile(env.task, env.cfg, env.hw)
    plain = ev.evaluate(source, inputs)
    given = ev.evaluate(source, inputs, expected=ev.expected_outputs(inputs))
    assert plain.correct and given.correct and plain.cycles == given.cycles
    assert [s.max_margin for s in plain.sets] == [s.max_margin for s in given.sets]
    assert all(np.array_equal(plain.expected[k], given.expected[k]) for k in plain.expected)
