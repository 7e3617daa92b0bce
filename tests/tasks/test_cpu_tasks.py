"""The CPU case study's tasks: the paper's ten, int32 and exact, references that a trivial kernel cannot fake."""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.tasks import cpu, manifest, tasks_for

TASKS = tasks_for(manifest.CPU_FAMILY)
RUNNING = [name for name, t in TASKS.items() if t.supports("CPU")]
CASES = [(name, i) for name in RUNNING for i in range(1, 6)]


def test_the_family_is_the_papers_table_10_with_its_levels_and_budgets():
    assert list(TASKS) == ["multiply", "vvadd", "copy", "median", "dotprod", "qsort", "rsort", "towers", "dhrystone",
                           "pmp"]
    levels = {name: t.level for name, t in TASKS.items()}
    assert [n for n, lv in levels.items() if lv == 1] == ["multiply", "vvadd", "copy", "median", "dotprod"]
    assert [n for n, lv in levels.items() if lv == 2] == ["qsort", "rsort", "towers"]
    assert {t.max_turns for t in TASKS.values() if t.level < 3} == {10}
    assert {t.max_turns for t in TASKS.values() if t.level == 3} == {15}
    assert list(manifest.tasks_on("CPU")) == RUNNING
    for name in RUNNING:  # every CPU task: all int32, exact, five configs, at least one stress set
        task = TASKS[name]
        assert task.tolerance.atol == task.tolerance.rtol == 0 and task.stress_sets, name
        assert len(task.configs("CPU")) == 5 and all(t.dtype == "int32" for t in task.variant.tensors)
        assert set(task.input_domain(task.config("CPU", 1))) == {t.name for t in task.inputs(task.config("CPU", 1))}


def test_the_ml_tasks_name_why_the_cpu_lacks_them():
    for entry in manifest.MANIFEST:
        if entry.name not in TASKS:
            assert "CPU" in entry.unsupported and entry.variant_on("CPU") is None, entry.name
        else:
            assert set(manifest.ACCELERATOR_MACHINES) <= set(entry.unsupported), entry.name


def test_the_env_takes_the_cpu_turn_budgets():
    from kcgym.tasks import get_task

    assert get_task("matmul").max_turns is None  # the ML tasks keep the paper's per-level default


@pytest.mark.parametrize(("name", "index"), CASES)
def test_inputs_and_reference_are_exact_int32_and_deterministic(name, index):
    task = TASKS[name]
    cfg = task.config("CPU", index)
    inputs = task.generate_inputs(cfg, np.random.default_rng(index))
    for spec in task.inputs(cfg):
        assert inputs[spec.name].shape == spec.shape and inputs[spec.name].dtype == np.int32
    out = task.reference(cfg, inputs)
    again = task.reference(cfg, task.generate_inputs(cfg, np.random.default_rng(index)))
    for spec in task.outputs(cfg):
        assert out[spec.name].shape == spec.shape and out[spec.name].dtype == np.int32
        np.testing.assert_array_equal(out[spec.name], again[spec.name])
    for stress in task.stress_sets:  # each stress set changes the inputs and still has a defined answer
        drawn = task.stress_inputs(cfg, np.random.default_rng(index), stress)
        assert any(not np.array_equal(drawn[k], inputs[k]) for k in stress.transforms)
        task.reference(cfg, drawn)


def test_arithmetic_wraps_modulo_2_32():
    assert cpu.wrap32([2**31, -(2**31) - 1, 2**32 + 5]).tolist() == [-(2**31), 2**31 - 1, 5]
    t = TASKS["multiply"]
    cfg = t.config("CPU", 1)
    a = np.full(32, 2**31 - 1, np.int32)
    assert t.reference(cfg, {"A": a, "B": a})["C"][0] == 1  # (2^31 - 1)^2 = 1 mod 2^32
    assert TASKS["dotprod"].reference(cfg, {"A": a[:2], "B": np.full(2, 2, np.int32)})["Y"].tolist() == [-4]


def test_median_sorts_and_ties_and_keeps_the_ends():
    t = TASKS["median"]
    cfg = t.config("CPU", 1)
    x = np.array([5, 1, 9, 9, -(2**31), 2**31 - 1, 3], np.int32)
    assert t.reference(cfg, {"X": x})["Y"].tolist() == [5, 5, 9, 9, 9, 3, 3]


def test_rsort_orders_unsigned_and_qsort_signed():
    x = np.array([-1, 0, 2**31 - 1, -(2**31), 7], np.int32)
    cfg = TASKS["qsort"].config("CPU", 1)
    assert TASKS["qsort"].reference(cfg, {"X": x})["Y"].tolist() == [-(2**31), -1, 0, 7, 2**31 - 1]
    assert TASKS["rsort"].reference(cfg, {"X": x})["Y"].tolist() == [0, 7, 2**31 - 1, -(2**31), -1]


def test_towers_is_the_optimal_recursion():
    moves = cpu.hanoi_moves(3, 10, 30, 20)
    assert moves == [(1, 10, 30), (2, 10, 20), (1, 30, 20), (3, 10, 30), (1, 20, 10), (2, 20, 30), (1, 10, 30)]
    pegs: dict[int, list[int]] = {10: [6, 5, 4, 3, 2, 1], 20: [], 30: []}
    for disc, a, b in cpu.hanoi_moves(6, 10, 30, 20):  # every move legal, and the tower ends on the target
        assert pegs[a][-1] == disc and (not pegs[b] or pegs[b][-1] > disc)
        pegs[b].append(pegs[a].pop())
    assert pegs == {10: [], 20: [], 30: [6, 5, 4, 3, 2, 1]}
    for p in TASKS["towers"].configs("CPU"):
        assert p["moves"] == 2 ** p["discs"] - 1


def test_dhrystone_with_the_classic_seeds_gives_the_classic_values():
    """With Int_1_Loc = 2, Int_2_Loc = 3 every run, the final values are the ones Dhrystone 2.1 prints."""
    runs = 10
    state, arr1, arr2 = cpu.dhrystone(np.tile(np.array([[2, 3]], np.int32), (runs, 1)))
    names = ["Int_Glob", "Bool_Glob", "Ch_1_Glob", "Ch_2_Glob", "Int_1_Loc", "Int_2_Loc", "Int_3_Loc", "Enum_Loc",
             "Ptr_Glob->Int_Comp", "Ptr_Glob->Enum_Comp", "Ptr_Glob->Discr", "Next->Int_Comp", "Next->Enum_Comp",
             "Next->Discr"]
    expected = [5, 1, ord("A"), ord("B"), 5, 13, 7, 1, 17, 2, 0, 18, 1, 0]  # Dhrystone's "should be" lines
    assert dict(zip(names, state[:14].tolist(), strict=True)) == dict(zip(names, expected, strict=True))
    assert arr1[8] == 7 and arr2[8, 7] == runs + 10
    assert state[14] == sum(map(ord, cpu.STR_2))


def test_pmp_reference_follows_the_priority_rule():
    regions = np.array([[0, 4, cpu.PMP_R], [0, 8, cpu.PMP_R | cpu.PMP_W]], np.int32)
    probes = np.array([[0, 0], [0, 1], [16, 1], [252, 0], [256, 0]], np.int32)
    # entry 0 (16 bytes, read-only) wins over entry 1 where both match; nothing matches 256: denied
    assert cpu.pmp_allowed(regions, probes).tolist() == [1, 0, 1, 1, 0]
    assert "CPU" not in manifest.BY_NAME["pmp"].unsupported  # the CPU models machine mode and PMP


def test_the_prompt_shows_the_c_source_and_the_env_the_cpu_budgets():
    from kcgym.envs.prompts import task_section

    task = TASKS["dhrystone"]
    text = task_section(task, task.config("CPU", 1))
    assert "static void proc_8(" in text and "```c" in text
    assert "```c" not in task_section(tasks_for("bf16")["matmul"], tasks_for("bf16")["matmul"].config("NPU", 1))


def test_the_cpu_envs_take_the_case_studys_turn_budgets():
    import gymnasium as gym

    import kcgym  # noqa: F401  (registers the envs)

    budgets = {name: gym.make(f"KernelCraft-CPU-{name}", config=1).unwrapped.max_turns
               for name in ("multiply", "qsort", "dhrystone")}
    assert budgets == {"multiply": 10, "qsort": 10, "dhrystone": 15}
    assert gym.make("KernelCraft-CPU-qsort", config=1, max_turns=3).unwrapped.max_turns == 3
