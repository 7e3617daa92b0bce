"""The (accelerator x task) table and its registration with Gymnasium."""

from __future__ import annotations

import gymnasium as gym
import pytest

import kcgym
from kcgym import registry
from kcgym.tasks import manifest


def test_ids_follow_the_table():
    assert registry.env_id("NPU", "matmul") == "KernelCraft-NPU-matmul"
    assert [registry.env_id(a, t) for a, ts in registry.SUPPORTED.items() for t in ts] == kcgym.ENV_IDS
    assert len(set(kcgym.ENV_IDS)) == len(kcgym.ENV_IDS)
    for acc in registry.SUPPORTED:  # the table is the manifest's, row by row, in its (the paper's) order
        assert registry.SUPPORTED[acc] == manifest.tasks_on(acc)
        assert registry.UNSUPPORTED[acc] == manifest.unsupported_on(acc)
    paper = [e.name for e in manifest.MANIFEST if e.paper_id is not None]
    assert len(paper) == 23 and set(paper) <= set(registry.SUPPORTED["NPU"])  # every paper task runs on the NPU


def test_every_machine_runs_or_names_why_not_each_task():
    """No silent holes: each (machine, task) cell is a variant with shapes or an explicit reason, never both."""
    assert manifest.machines() == list(registry.ACCELERATORS)
    for entry in manifest.MANIFEST:
        for acc in registry.ACCELERATORS:
            runs, reason = entry.variant_on(acc) is not None, entry.unsupported.get(acc, "")
            assert runs != bool(reason.strip()), (acc, entry.name)
        assert len(entry.machines()) == len(set(entry.machines())), entry.name  # one number format per machine


def test_manifest_registry_gym_supports_and_list_agree(capsys):
    """The manifest, the registry, Gymnasium's ids, each machine's supports() and `kcgym list` say the same."""
    from kcgym.cli import main
    from kcgym.tasks import tasks_for

    machines = tuple(f"{registry.ENV_PREFIX}-{acc}-" for acc in registry.SUPPORTED)
    registered = [eid for eid in gym.registry if eid.startswith(machines)]  # (test doubles may add their own)
    assert registered == kcgym.ENV_IDS
    for acc, names in registry.SUPPORTED.items():
        machine = registry.ACCELERATORS[acc]
        table = tasks_for(machine.numerics)
        for entry in manifest.MANIFEST:
            family_on = entry.variant_on(acc)
            assert (entry.name in names) == (family_on is not None)
            if family_on is not None:
                assert family_on[0] == machine.numerics, (acc, entry.name)  # the machine's number format
                assert machine.supports(table[entry.name]), (acc, entry.name)
                assert len(table[entry.name].configs(acc)) == 5
            elif entry.name in table:
                assert not machine.supports(table[entry.name]), (acc, entry.name)
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    listed = [line.split()[0] for line in lines if line.startswith(registry.ENV_PREFIX + "-")]
    assert listed == kcgym.ENV_IDS
    holes = [line for line in lines if ": not supported \u2014 " in line]
    assert holes == [f"{acc} {name}: not supported \u2014 {why}"
                     for acc, cells in registry.UNSUPPORTED.items() for name, why in cells.items()]
    assert len(lines) == len(listed) + len(holes)


def test_every_id_is_registered_without_a_time_limit():
    for eid in kcgym.ENV_IDS:
        spec = gym.spec(eid)
        assert spec.entry_point == "kcgym.envs.kernel_env:KernelCraftEnv"
        assert spec.max_episode_steps is None  # the env truncates itself so the last kernel is scored
        acc, task = registry.parse_env_id(eid)
        assert spec.kwargs == {"accelerator": acc, "task": task}


def test_register_all_is_idempotent():
    before = len(gym.registry)
    assert registry.register_all() == kcgym.ENV_IDS
    assert len(gym.registry) == before


def test_every_supported_task_exists():
    from kcgym.registry import task_for
    from kcgym.tasks import TASKS

    for acc, tasks in registry.SUPPORTED.items():
        for t in tasks:
            assert task_for(acc, t).name == t  # resolved in the accelerator's number-format family
    assert kcgym.TASKS is TASKS


def test_lookup_errors_suggest():
    with pytest.raises(KeyError, match="did you mean 'KernelCraft-NPU-matmul'"):
        registry.parse_env_id("KernelCraft-NPU-matmull")
    with pytest.raises(KeyError, match="did you mean 'KernelCraft-NPU-matmul'"):
        registry.parse_env_id("NPU-matmul")
    with pytest.raises(KeyError, match="did you mean 'NPU'"):
        registry.ACCELERATORS["npu"]
    assert list(registry.ACCELERATORS) == list(registry.SUPPORTED)


def test_import_is_light():
    """`import kcgym` registers envs without importing a simulator or JAX."""
    import subprocess
    import sys

    code = "import sys, kcgym; print('jax' in sys.modules, 'kcgym.sims.npu' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
