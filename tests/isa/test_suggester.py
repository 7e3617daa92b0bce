"""The assembler's "did you mean" is kcgym.suggest's, with a per-assembly budget on top."""

from __future__ import annotations

from kcgym.isa.diagnostics import Suggester
from kcgym.limits import MAX_SUGGESTED_WORD, MAX_SUGGESTIONS
from kcgym.suggest import closest

NAMES = ["loop_start", "loop_end", "tile_row", "V_ADD_VV", "S_ADDI_INT"]


def test_same_answers_as_the_shared_finder():
    suggest = Suggester()
    for word in ("loop_strat", "tile_rwo", "v_add_vv", "S_ADDI_IT", "nothing_like_it"):
        assert suggest(word, NAMES) == closest(word, NAMES)
    assert Suggester()("v_add_vv", NAMES) == "V_ADD_VV"  # exact up to case wins


def test_budget_per_assembly_and_no_hint_for_huge_words():
    suggest = Suggester()
    assert suggest("x" * (MAX_SUGGESTED_WORD + 1), NAMES) is None  # and it costs no budget
    for _ in range(MAX_SUGGESTIONS):
        assert suggest("loop_strat", NAMES) == "loop_start"
    assert suggest("loop_strat", NAMES) is None  # spent: the rest of this assembly gets no hints
    assert Suggester()("loop_strat", NAMES) == "loop_start"  # a new assembly, a new budget
