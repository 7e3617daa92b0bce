"""Which episodes an evaluation runs: registered envs x configs x runs, filtered by the flags.

The suite is read from Gymnasium's registry (every ``KernelCraft-*`` env with kcgym's entry
point), so accelerators and tasks added to :mod:`kcgym.registry`, or registered by a plugin
module, are evaluated without any change here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
from pydantic import BaseModel, ConfigDict

from kcgym.eval.records import HwPoint
from kcgym.registry import ENTRY_POINT, ENV_PREFIX, canonical_accelerator, parse_config, unknown_name_message


class EpisodeSpec(BaseModel):
    """One episode to play (the agent is chosen by the run, not the spec)."""

    model_config = ConfigDict(frozen=True)

    env_id: str
    accelerator: str
    task: str
    level: int
    config: int
    run: int
    seed: int
    one_shot: bool = False  # gym.make(..., example_in_prompt=True)
    hw: HwPoint = ()  # hw overrides of a sweep point (gym.make(..., hw=dict(hw)))


def _objects(spec: gymnasium.envs.registration.EnvSpec) -> tuple[Any, Any]:
    """The (Accelerator, Task) objects behind a registered env id, without building the env."""
    from kcgym.envs.kernel_env import resolve_accelerator, resolve_task

    acc = resolve_accelerator(spec.kwargs["accelerator"])
    return acc, resolve_task(spec.kwargs["task"], acc)


def registered_envs() -> list[tuple[str, Any, Any]]:
    """``(env_id, accelerator, task)`` for every registered KernelCraft env, in registry order."""
    out = []
    for eid, spec in gymnasium.registry.items():
        if not eid.startswith(ENV_PREFIX + "-"):
            continue
        entry = spec.entry_point if isinstance(spec.entry_point, str) else ""
        if entry != ENTRY_POINT and getattr(spec.entry_point, "__name__", "") != "KernelCraftEnv":
            continue
        acc, task = _objects(spec)
        out.append((eid, acc, task))
    return out


def parse_configs(text: str) -> list[int]:
    """``"1-3,5"`` (or ``"C1-C3,C5"``) -> ``[1, 2, 3, 5]``; ValueError naming the bad part.

    The upper end is checked by :func:`plan`, which knows how many configurations the tasks have.
    """
    out: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        try:
            if "-" in part:
                lo, hi = (parse_config(x) for x in part.split("-", 1))
                if lo > hi:
                    raise ValueError
                out.update(range(lo, hi + 1))
            else:
                out.add(parse_config(part))
        except ValueError:
            raise ValueError(
                f"bad config range {part!r} in {text!r}; expected e.g. '1', '1-5', '1,3' or 'C2'"
            ) from None
    if not out or min(out) < 1:
        raise ValueError(f"configs must be >= 1, got {text!r}")
    return sorted(out)


def plan(
    *,
    accelerators: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    levels: Sequence[int] | None = None,
    configs: Sequence[int] = (1,),
    runs: int = 1,
    seed: int = 0,
    one_shot: bool = False,
) -> list[EpisodeSpec]:
    """The episodes of a suite; unknown accelerator or task names raise ValueError (did you mean)."""
    if runs < 1:
        raise ValueError(f"runs must be >= 1, got {runs}")
    envs = registered_envs()
    known_accs = list(dict.fromkeys(acc.name for _, acc, _ in envs))
    known_tasks = list(dict.fromkeys(task.name for _, _, task in envs))
    try:  # accelerator names in any case, as everywhere on the command line
        accelerators = [canonical_accelerator(name, known_accs) for name in accelerators or ()]
    except KeyError as e:
        raise ValueError(e.args[0]) from None
    most = max((len(task.configs(acc.name)) for _, acc, task in envs), default=0)
    beyond = [c for c in configs if c > most]
    if beyond:  # silently dropping them would run less than was asked for
        raise ValueError(f"configs are 1..{most} (C1..C{most}); got {', '.join(map(str, beyond))}")
    for name in tasks or ():
        if name not in known_tasks:
            raise ValueError(unknown_name_message("task", name, known_tasks))
    specs = []
    for eid, acc, task in envs:
        if accelerators and acc.name not in accelerators:
            continue
        if tasks and task.name not in tasks:
            continue
        if levels and task.level not in levels:
            continue
        available = len(task.configs(acc.name))
        for c in configs:
            if c > available:
                continue
            for r in range(runs):
                specs.append(
                    EpisodeSpec(
                        env_id=eid, accelerator=acc.name, task=task.name, level=task.level, config=c, run=r,
                        seed=seed + r, one_shot=one_shot,
                    )
                )
    return specs
