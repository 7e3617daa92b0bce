"""One conformance suite for every registered (machine, task, config) cell.

Per cell: the compiler's kernel is correct on the hidden sets (default and stress) and earns reward 1.0;
every hack of the battery (tests/conformance/hacks.py) fails and earns 0; the expert kernel, where one
exists, is correct and never beats the speed of light; two runs are bit-identical; a batch of input sets
gives what one-by-one runs give; Gymnasium's env checker passes. C1 of every cell (and C2 where it is
cheap, cells.CHEAP_WORK) runs by default, the rest under ``-m slow``. What is specific to one machine
stays in tests/sims/<machine>/.
"""

from __future__ import annotations

import gymnasium as gym
import pytest

import kcgym  # noqa: F401  (registers the env ids)
from kcgym.registry import ACCELERATORS
from tests.conformance import hacks
from tests.conformance.cells import same_result
from tests.envs.test_env_checker import _check_without_warnings


def test_every_machine_emits_every_hack():
    for machine in ACCELERATORS:
        module = hacks.emitter(machine)
        missing = [f for f in hacks.EMITTER_FUNCTIONS if not callable(getattr(module, f, None))]
        assert not missing, f"{module.__name__} lacks {missing}"


def test_compiler_kernel_is_correct_on_the_hidden_sets_with_reward_1(cell):
    rep = cell.compiler
    assert rep.fault is None, rep.fault.render()
    assert rep.correct, [(s.name, s.match_rate, s.max_margin) for s in rep.sets if not s.correct]
    assert [s.name for s in rep.sets] == cell.set_names and any(n.startswith("stress") for n in cell.set_names)
    assert cell.reward(rep) == 1.0
    assert rep.speedup == 1.0 and not rep.below_roofline
    assert rep.cycles >= rep.sol_cycles and not rep.beats_sol


@pytest.mark.parametrize("hack", hacks.HACKS, ids=lambda h: h.name)
def test_hack_fails(cell, hack):
    if hack.name == "copy_input" and hacks.copy_is_the_answer(cell):
        pytest.skip(f"{cell.id}: the task's output is a copy of its input (the CPU's copy task)")
    rep = hack.play(cell)
    assert rep.assembled, rep.diagnostics_text
    assert not rep.correct and rep.match_rate < 1.0 and not any(s.correct for s in rep.sets)
    assert cell.reward(rep) == 0.0
    if hack.fault is None:
        assert rep.fault is None, rep.fault.render()
        return
    assert rep.fault is not None and rep.fault.name.startswith(hack.fault), rep.fault
    assert rep.fault.line is not None and rep.fault.source
    if hack.name == "out_of_bounds":
        assert rep.fault.line == len(hack.source(cell).splitlines()), rep.fault.render()
    if hack.name == "infinite_loop":  # bounded: stopped at the step budget
        assert rep.instructions is not None and rep.instructions <= cell.budget
    if hack.name == "half_written" and cell.acc.numerics == "bf16":  # unwritten float outputs are NaN-poisoned
        assert all(s.n_nonfinite > 0 for s in rep.sets)


def test_expert_is_correct_and_not_below_the_speed_of_light(cell):
    if cell.expert_source is None:
        pytest.skip(f"no expert kernel for {cell.id}")
    rep = cell.expert
    assert rep.fault is None, rep.fault.render()
    assert rep.correct, [(s.name, s.match_rate, s.max_margin) for s in rep.sets if not s.correct]
    sol = cell.ev.speed_of_light()
    assert rep.cycles >= sol.cycles, f"{cell.id}: expert {rep.cycles} cycles < speed of light {sol.lines()}"
    assert not rep.beats_sol and not rep.below_roofline and cell.reward(rep) > 0


def test_two_runs_are_identical(cell):
    again = cell.evaluate(cell.ev.baseline().source)
    first = cell.compiler
    assert (again.cycles, again.instructions, again.fault) == (first.cycles, first.instructions, first.fault)
    assert again.sets == first.sets
    assert again.outputs.keys() == first.outputs.keys()
    for name, out in first.outputs.items():
        assert out.tobytes() == again.outputs[name].tobytes(), name


def test_a_batch_equals_one_at_a_time(cell):
    """The first default set and the last stress set, alone, give what they give inside the batch."""
    source = cell.ev.baseline().source
    together = cell.run_batched(source)
    which = [0, len(together) - 1]
    for i, alone in zip(which, cell.run_alone(source, which), strict=True):
        assert same_result(together[i], alone), cell.set_names[i]
    if not cell.acc.data_dependent_timing:
        assert len({r.cycles for r in together}) == 1, "cycles depend on the data"


def test_gymnasium_env_checker_passes(cell):
    """check_env sends random (invalid) actions only, so this never runs the simulator."""
    env = gym.make(cell.env_id, config=cell.id.index)
    _check_without_warnings(env)
    env.close()
