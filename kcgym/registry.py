"""The one (accelerator x task) table, and its registration with Gymnasium.

The table (:data:`SUPPORTED`) is derived from the task manifest (``kcgym/tasks/manifest.py``):
adding a task means writing its module under ``kcgym/tasks/`` and its manifest entry (with
its shapes on each machine that runs it); adding an accelerator means writing its package
under ``kcgym/sims/``, adding one entry to :data:`_ACCELERATOR_PATHS` and giving the manifest
entries its shapes (or the reason it lacks a task). Nothing else changes.

Registration only records strings (ids and entry points), so ``import kcgym`` stays cheap
and never imports JAX or a simulator; :data:`ACCELERATORS` imports a machine the first
time it is looked up.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

import gymnasium

from kcgym.suggest import did_you_mean
from kcgym.tasks import manifest, tasks_for

if TYPE_CHECKING:
    from kcgym.sims.base import Accelerator
    from kcgym.tasks.base import Task

ENV_PREFIX = "KernelCraft"
ENTRY_POINT = "kcgym.envs.kernel_env:KernelCraftEnv"
# Maps gym.make(id, max_episode_steps=N) onto max_turns=N instead of a TimeLimit (see its docstring).
TURN_LIMIT_WRAPPER = "kcgym.envs.kernel_env:turn_limit_wrapper"

# accelerator name -> "module:attribute" of its Accelerator instance
_ACCELERATOR_PATHS: dict[str, str] = {
    "NPU": "kcgym.sims.npu:ACCELERATOR",
    "VLIW": "kcgym.sims.vliw:ACCELERATOR",
    "RVV": "kcgym.sims.rvv:ACCELERATOR",
    "CPU": "kcgym.sims.cpu:ACCELERATOR",
}

# accelerator name -> the tasks it runs (env-id names), in the manifest's (the paper's) order
SUPPORTED: dict[str, tuple[str, ...]] = {acc: manifest.tasks_on(acc) for acc in _ACCELERATOR_PATHS}
# accelerator name -> {task name: why it has no such env} (the manifest's explicit holes)
UNSUPPORTED: dict[str, dict[str, str]] = {acc: manifest.unsupported_on(acc) for acc in _ACCELERATOR_PATHS}


class _LazyAccelerators(Mapping[str, "Accelerator"]):
    """``name -> Accelerator``, importing each simulator package on first lookup."""

    def __init__(self, paths: dict[str, str]):
        self._paths = paths
        self._loaded: dict[str, Accelerator] = {}

    def __getitem__(self, name: str) -> Accelerator:
        if name not in self._paths:
            raise KeyError(unknown_name_message("accelerator", name, list(self._paths)))
        if name not in self._loaded:
            module, _, attr = self._paths[name].partition(":")
            self._loaded[name] = getattr(importlib.import_module(module), attr)
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)

    def __repr__(self) -> str:
        return f"ACCELERATORS({', '.join(self._paths)})"


ACCELERATORS: Mapping[str, Accelerator] = _LazyAccelerators(_ACCELERATOR_PATHS)


def unknown_name_message(kind: str, name: str, valid: list[str]) -> str:
    """``unknown <kind> 'x' (did you mean 'y'?); valid: ...`` — the one wording for lookups."""
    return f"unknown {kind} {name!r}{did_you_mean(name, valid, cutoff=0.5)}; valid: {', '.join(valid)}"


def canonical_accelerator(name: str, valid: list[str] | None = None) -> str:
    """The registered spelling of an accelerator name given in any case (``"npu"`` -> ``"NPU"``).

    Names are case-insensitive on the command line; an unknown one raises ``KeyError`` with
    the did-you-mean wording of :func:`unknown_name_message`.
    """
    valid = list(_ACCELERATOR_PATHS) if valid is None else valid
    by_lower = {v.lower(): v for v in valid}
    if str(name).lower() in by_lower:
        return by_lower[str(name).lower()]
    raise KeyError(unknown_name_message("accelerator", name, valid))


CONFIG_PREFIX = "C"  # configurations are written 3 or "C3" everywhere; records store the integer


def parse_config(value: object) -> int:
    """A configuration index from ``3``, ``"3"``, ``"C3"`` or ``"c3"``; ``ValueError`` naming the forms.

    The range (1..5 for every task of the paper) is checked by the task, which knows its own count.
    """
    if isinstance(value, bool):  # bool is an int subclass; True is not a configuration
        raise ValueError(f"config must be an integer like 3 or a label like 'C3', got {value!r}")
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if text[:1].upper() == CONFIG_PREFIX:
        text = text[1:]
    label = text.split(" ", 1)[0]  # "C1 (n=256)", as `kcgym list` prints it
    if label.isdigit():
        return int(label)
    raise ValueError(f"config must be an integer like 3 or a label like 'C3', got {value!r}")


def env_id(accelerator: str, task: str) -> str:
    """``KernelCraft-<ACC>-<task>``: unversioned, as users write it (results record the suite version)."""
    return f"{ENV_PREFIX}-{accelerator}-{task}"


def parse_env_id(eid: str) -> tuple[str, str]:
    """``(accelerator, task)`` of a registered env id, or ``KeyError`` with a did-you-mean."""
    for acc, tasks in SUPPORTED.items():
        for task in tasks:
            if env_id(acc, task) == eid:
                return acc, task
    ids = all_env_ids()
    listing = f"`kcgym list` shows all {len(ids)} env ids"  # a did-you-mean, not a 3 KB dump of every id
    endings = [i for i in ids if i.lower().endswith("-" + str(eid).lower().lstrip("-"))]
    if endings:  # "matmul" or "NPU-matmul" (several: "matmul" when several accelerators run it)
        options = " or ".join(repr(e) for e in endings)
        raise KeyError(f"unknown env id {eid!r} (did you mean {options}?); {listing}")
    raise KeyError(f"unknown env id {eid!r}{did_you_mean(eid, ids)}; {listing}")


def all_env_ids() -> list[str]:
    """Every env id of the table, in table order."""
    return [env_id(acc, task) for acc, tasks in SUPPORTED.items() for task in tasks]


ENV_IDS: list[str] = all_env_ids()


def register_all() -> list[str]:
    """Register every (accelerator, task) env with Gymnasium; safe to call repeatedly.

    No ``max_episode_steps``: the env counts turns itself, because at the turn limit the
    current kernel must still be evaluated (a ``TimeLimit`` wrapper would cut that off); a
    ``max_episode_steps`` given to ``gym.make`` is moved onto ``max_turns`` by
    :data:`TURN_LIMIT_WRAPPER`.
    """
    from gymnasium.envs.registration import WrapperSpec

    turn_limit = WrapperSpec(name="TurnLimit", entry_point=TURN_LIMIT_WRAPPER, kwargs={})
    for acc, tasks in SUPPORTED.items():
        for task in tasks:
            eid = env_id(acc, task)
            if eid in gymnasium.registry:
                continue
            gymnasium.register(
                id=eid, entry_point=ENTRY_POINT, kwargs={"accelerator": acc, "task": task},
                additional_wrappers=(turn_limit,),
            )
    return list(ENV_IDS)


def task_for(accelerator: str, name: str) -> Task:
    """The task ``name`` as the accelerator ``accelerator`` (a registered name) runs it: the task family
    of the machine's number format (lives here, above both tasks and machines, so neither imports the other)."""
    numerics = getattr(ACCELERATORS[accelerator], "numerics", "bf16")
    table = tasks_for(numerics)
    if name not in table:
        raise KeyError(unknown_name_message("task", name, list(table)))
    return table[name]
