"""The assembler (with its plain-line fast path and line memo) against the frozen oracle
(``tests/isa/reference_assembler.py``): the same Program (words, lines, origins, slot lines, warnings) or the
same diagnostics (every field, in order) on every compiler and expert kernel, the hostile sources and seeded
mutants; cold (memos empty) and warm (memos filled by earlier sources) alike."""

from __future__ import annotations

import functools

import pytest

from kcgym.isa import assembler
from kcgym.isa.diagnostics import AssemblyError
from kcgym.registry import ACCELERATORS
from tests.isa import corpus
from tests.isa import reference_assembler as reference

MUTANTS_PER_KERNEL = 5
FUZZ_EXAMPLES = 60  # per machine in the default tier (20x in the slow tier)


def _isa(machine: str):
    from kcgym.sims.npu.isa import make_isa as npu_isa
    from kcgym.sims.vliw.isa import make_isa as vliw_isa

    return (npu_isa if machine == "NPU" else vliw_isa)(ACCELERATORS[machine].make_hw())


def outcome(assemble, isa, hw, source: str):
    """Everything an assembly yields, comparable with ``==``."""
    try:
        p = assemble(isa, source, hw)
    except AssemblyError as e:
        return ("error", [tuple(vars(d).values()) for d in e.diagnostics])
    return ("ok", p.isa_name, p.words.dtype.str, p.words.shape, p.words.tobytes(), p.lines, p.origins, p.source,
            [tuple(vars(d).values()) for d in p.warnings], p.slot_lines)


@functools.cache
def _kernels(machine: str, configs: tuple[int, ...]) -> dict[str, str]:
    return corpus.kernels(machine, configs)


def _check(machine: str, sources: dict[str, str]) -> int:
    """Assemble every source warm, then cold, with both assemblers; returns how many assembled."""
    hw = ACCELERATORS[machine].make_hw()
    isa = _isa(machine)
    want = {k: outcome(reference.assemble, isa, hw, s) for k, s in sources.items()}
    for cold in (False, True):
        for k, s in sources.items():
            if cold:
                t = assembler._tables(isa)
                for memo in (t.parsed, t.checked, t.rows, t.writes, t.lines):
                    memo.clear()
            got = outcome(assembler.assemble, isa, hw, s)
            assert got == want[k], f"{machine} {k} ({'cold' if cold else 'warm'})"
    return sum(w[0] == "ok" for w in want.values())


@pytest.mark.parametrize("machine", corpus.MACHINES)
def test_kernels_c1_c2_match_the_oracle(machine):
    sources = _kernels(machine, (1,))
    assert len(sources) >= 10
    assert _check(machine, sources) == len(sources)  # every compiler and expert kernel assembles
    isa, hw = _isa(machine), ACCELERATORS[machine].make_hw()
    plain = [k for k, s in sources.items() if assembler._assemble_plain(isa, assembler._tables(isa), s, hw)]
    assert len(plain) == len(sources)  # ... and through the fast path: the comparison above is not vacuous


@pytest.mark.parametrize("machine", corpus.MACHINES)
def test_hostile_sources_match_the_oracle(machine):
    _check(machine, corpus.hostile(machine))


@pytest.mark.parametrize("machine", corpus.MACHINES)
def test_mutants_match_the_oracle(machine):
    kernels = _kernels(machine, (1,))
    sources = {f"{k} mutant {i}": m for n, (k, s) in enumerate(sorted(kernels.items()))
               for i, m in enumerate(corpus.mutants(s, machine, MUTANTS_PER_KERNEL, seed=n))}
    n_ok = _check(machine, sources)
    assert 0 < n_ok < len(sources)  # the corpus holds both outcomes


@pytest.mark.parametrize("machine", corpus.MACHINES)
def test_small_sources_match_the_oracle(machine):
    nop = corpus.hostile_sources.__globals__["SYNTAX"][machine]["nop"]
    sources = ["", "\n\n", nop, f"  {nop}  // c\n", f"{nop}\n" * 3, "lbl:\n" + nop, f"a: b: {nop}\na:",
               "{\n" + nop + "\n}", "{ " + nop + " }", f"{nop} {{ {nop} }} {nop}", "{\n}", "}", "{", "{\nlbl:\n}",
               f"{nop} || {nop}", f"{nop} ; {nop} ;", f"{nop} |||x", "LOOPI 1, e\nNOP\ne:\nHALT",
               "LOOPI 1, e\ne:", "J e\ne: NOP", "MOVI r1, LANES\nMOVI r2, e\ne: NOP", "MOVI r1, LOG2E",
               "S_ADDI_INT gp1, gp0, MLEN", "S_LI_FP f1, -0.0\nS_LI_FP f2, 0.0", "S_ADDI_INT gp0, gp0, 1",
               "C_LOOP_START gp1, 2\nC_NOP\nC_LOOP_END gp1", "C_LOOP_START gp1, 2\nC_LOOP_END gp1",
               "C_LOOP_START gp1, 2\nS_ADDI_INT gp1, gp1, 1\nC_LOOP_END gp1", "C_LOOP_END gp1",
               ".L1: NOP\n.L1: NOP", "0x10", "NOP\r\nNOP\r\n", "MOVI r1, 0x7fffffff", "MOVI r1, 1 || MOVI r1, 2",
               "{\nNOP\nMOVI r1, 1\n}\nHALT", "MOVI r1, 1 {\nNOP\nMOVI r2, 2 }\nHALT", "{ MOVI r1, 1\nMOVI r1, 2 }",
               "{\nLOOPI 1, e\nMOVI r2, 3\n}\nNOP\ne: HALT", "{\nNOP\n{\n}", "NOP }\n{ NOP",
               "MOVI r1, LANES\nLANES: NOP\nHALT", "MOVI r1, LANES + 1\nNOP\nLANES: HALT"]  # a label shadows a symbol
    _check(machine, {repr(s): s for s in sources})


@pytest.mark.slow
@pytest.mark.parametrize("machine", corpus.MACHINES)
def test_every_kernel_c1_c5_and_its_mutants_match_the_oracle(machine):
    kernels = _kernels(machine, (1, 2, 3, 4, 5))
    assert _check(machine, kernels) == len(kernels)
    sources = {f"{k} mutant {i}": m for n, (k, s) in enumerate(sorted(kernels.items()))
               for i, m in enumerate(corpus.mutants(s, machine, 3 * MUTANTS_PER_KERNEL, seed=1000 + n))}
    _check(machine, sources)


def _fuzz_case(machine: str, source: str) -> None:
    hw = ACCELERATORS[machine].make_hw()
    isa = _isa(machine)
    assert outcome(assembler.assemble, isa, hw, source) == outcome(reference.assemble, isa, hw, source)


@pytest.mark.parametrize("machine", corpus.MACHINES)
def test_fuzzed_sources_match_the_oracle(machine):
    """The fuzzer's grammar-aware sources (tests/fuzz/harness.py: mutated kernels, directives, odd text)."""
    from hypothesis import HealthCheck, given, settings

    from tests.fuzz.harness import sources

    @settings(max_examples=FUZZ_EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(sources(machine))
    def check(source):
        _fuzz_case(machine, source)

    check()


@pytest.mark.slow
@pytest.mark.parametrize("machine", corpus.MACHINES)
def test_many_fuzzed_sources_match_the_oracle(machine):
    from hypothesis import HealthCheck, given, settings

    from tests.fuzz.harness import sources

    @settings(max_examples=20 * FUZZ_EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(sources(machine))
    def check(source):
        _fuzz_case(machine, source)

    check()


def _budget_sources(machine: str, lines: int, imem: int) -> dict[str, str]:
    nop = corpus.hostile_sources.__globals__["SYNTAX"][machine]["nop"]
    return {"lines at the budget": f"{nop}\n\n" * lines, "lines past the budget": f"{nop}\n" * (lines + 1),
            "words at imem": f"{nop}\n" * imem, "words past imem": f"{nop}\n" * (imem + 1)}


@pytest.mark.parametrize("machine", corpus.MACHINES)
def test_budget_boundaries_match_the_oracle(machine, monkeypatch):
    """Right at and just past the preprocessor's line budget and the instruction memory (E013, E014), both made
    small here (the slow tier runs the real ones)."""
    from kcgym.isa import preprocess

    sources = _budget_sources(machine, 64, 48)
    with monkeypatch.context() as m:  # the line budget, the instruction memory left as it is
        for module in (assembler, preprocess):
            m.setattr(module, "MAX_EXPANDED_LINES", 64)
        _check(machine, {k: v for k, v in sources.items() if k.startswith("lines")})
    with monkeypatch.context() as m:
        m.setattr(_isa(machine), "max_program", 48)
        _check(machine, {k: v for k, v in sources.items() if k.startswith("words")})


@pytest.mark.slow
@pytest.mark.parametrize("machine", corpus.MACHINES)
def test_real_budget_boundaries_match_the_oracle(machine):
    from kcgym.limits import MAX_EXPANDED_LINES

    _check(machine, _budget_sources(machine, MAX_EXPANDED_LINES, _isa(machine).max_program))
