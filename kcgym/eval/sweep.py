"""Hardware sweeps (co-design, the paper's §5.4): play agents over a grid of hardware configs.

A designer asks "what does a wider systolic array or more HBM bandwidth buy on matmul?": ``kcgym sweep``
turns each ``--hw FIELD=v1,v2,...`` into an axis, plays the compiler and expert kernels (and any agent)
at every point of their cartesian product through the ordinary eval harness (so a point's record is an
ordinary episode record with its ``hw_overrides``, and ``--resume`` skips recorded points), and
records a point the hw model rejects, or whose task the compiler cannot map, as ``invalid`` with the
reason: a hole in the design space, not a failure of an agent.

An axis may tie fields together: ``MLEN+VLEN=32,64`` sets both to each value (the NPU needs MLEN = VLEN).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from kcgym import __version__
from kcgym.envs.kernel_env import resolve_accelerator, resolve_task
from kcgym.eval.records import EpisodeRecord, HwPoint, hw_point, point_text
from kcgym.eval.runner import RunSummary, run_eval
from kcgym.eval.store import RunStore
from kcgym.eval.suite import EpisodeSpec, plan
from kcgym.limits import MAX_SWEEP_POINTS
from kcgym.suggest import did_you_mean

AXIS_EXAMPLE = "'hbm_bytes_per_cycle=32,64,128' or 'MLEN+VLEN=32,64'"
DEFAULT_SWEEP_AGENTS = ("compiler", "expert")
log = logging.getLogger(__name__)


class SweepError(ValueError):
    """A sweep that cannot be run as asked: an unknown field, a value of the wrong type, a grid too large."""


@dataclass(frozen=True)
class Axis:
    """One swept parameter: the field(s) it sets (tied fields get the same value) and its values, in order."""

    fields: tuple[str, ...]
    values: tuple[Any, ...]

    @property
    def name(self) -> str:
        return "+".join(self.fields)


@dataclass
class SweepSummary:
    run: RunSummary
    points: int  # grid points
    invalid: list[tuple[str, int, HwPoint, str]]  # (task, config, point, reason), one per invalid cell


def parse_axis(accelerator: Any, text: str) -> Axis:
    """``FIELD[+FIELD...]=v1,v2,...`` -> an :class:`Axis`; SweepError naming the bad part (did you mean)."""
    name, sep, values_text = text.partition("=")
    if not sep or not name.strip() or not values_text.strip():
        raise SweepError(f"--hw {text!r}: expected FIELD=v1,v2,..., e.g. {AXIS_EXAMPLE}")
    model = accelerator.hw_model
    valid = list(model.model_fields)
    fields = tuple(f.strip() for f in name.split("+"))
    for f in fields:
        if f not in model.model_fields:
            raise SweepError(f"--hw {text!r}: unknown {accelerator.name} hw field {f!r}{did_you_mean(f, valid)}; "
                             f"valid: {', '.join(valid)}")
    if len(set(fields)) != len(fields):
        raise SweepError(f"--hw {text!r}: a field is named twice")
    values: list[Any] = []
    for raw in values_text.split(","):
        raw = raw.strip()
        if not raw:
            raise SweepError(f"--hw {text!r}: an empty value; expected comma-separated values, e.g. {AXIS_EXAMPLE}")
        for f in fields:
            annotation = model.model_fields[f].annotation
            try:
                value = TypeAdapter(annotation).validate_python(raw)
            except ValidationError:
                kind = {int: "integer", float: "number", bool: "true/false"}.get(annotation, str(annotation))
                raise SweepError(f"--hw {text!r}: {f} takes {kind} values, got {raw!r}") from None
        if value in values:
            raise SweepError(f"--hw {text!r}: the value {raw} is given twice")
        values.append(value)
    return Axis(fields=fields, values=tuple(values))


def parse_axes(accelerator: Any, texts: Sequence[str]) -> list[Axis]:
    """Every ``--hw`` of a sweep; a field on two axes, no axis at all or too many points is a SweepError."""
    if not texts:
        raise SweepError(f"a sweep needs at least one --hw FIELD=v1,v2,..., e.g. --hw {AXIS_EXAMPLE}")
    axes = [parse_axis(accelerator, t) for t in texts]
    seen: set[str] = set()
    for axis in axes:
        twice = seen.intersection(axis.fields)
        if twice:
            raise SweepError(f"hw field {sorted(twice)[0]!r} is swept by two --hw axes; give it one")
        seen.update(axis.fields)
    n = 1
    for axis in axes:
        n *= len(axis.values)
    if n > MAX_SWEEP_POINTS:
        raise SweepError(f"the grid has {n} points; at most {MAX_SWEEP_POINTS} per sweep (kcgym.limits."
                         "MAX_SWEEP_POINTS): split it into several sweeps")
    return axes


def grid(axes: Sequence[Axis]) -> list[HwPoint]:
    """The cartesian product of the axes, first axis slowest; each point its sorted overrides."""
    points = []
    for combo in itertools.product(*(axis.values for axis in axes)):
        overrides = {f: v for axis, v in zip(axes, combo, strict=True) for f in axis.fields}
        points.append(hw_point(overrides))
    return points


def plan_sweep(
    accelerator: str, axes: Sequence[Axis], *, tasks: Sequence[str] | None = None, configs: Sequence[int] = (1,),
    runs: int = 1, seed: int = 0, one_shot: bool = False,
) -> list[EpisodeSpec]:
    """The episodes of a sweep: :func:`kcgym.eval.suite.plan`'s for one machine, at every grid point."""
    base = plan(accelerators=[accelerator], tasks=tasks, configs=configs, runs=runs, seed=seed, one_shot=one_shot)
    return [s.model_copy(update={"hw": p}) for s in base for p in grid(axes)]


def invalid_reason(accelerator: Any, task: Any, cfg: Any, point: HwPoint) -> str | None:
    """Why a point cannot be played: the hw model rejects it, or the compiler cannot map the task; else None."""
    try:
        hw = accelerator.make_hw(dict(point))
    except ValueError as e:
        return str(e).removeprefix(f"invalid {accelerator.name} hw config: ")
    what = f"the compiler cannot map {task.name} {cfg.label.split(' ')[0]} to it"
    try:
        accelerator.compile(task, cfg, hw)
    except ValueError as e:  # the templates' own "does not fit" errors
        return f"{what}: {e}"
    except Exception as e:  # noqa: BLE001  (a template limit without its own message: still a hole, said as such)
        log.debug("the %s compiler failed on %s %s at %s", accelerator.name, task.name, cfg.label, dict(point),
                  exc_info=True)
        return f"{what}: {type(e).__name__}: {e} (a template limit without its own message)"
    return None


def _invalid_record(spec: EpisodeSpec, agent: str, options: dict[str, Any], reason: str) -> EpisodeRecord:
    return EpisodeRecord(
        agent=agent, model=options.get("model") if agent == "llm" else None, env_id=spec.env_id,
        accelerator=spec.accelerator, task=spec.task, level=spec.level, config=spec.config, run=spec.run,
        seed=spec.seed, suite_version=__version__, hw_overrides=dict(spec.hw), one_shot=spec.one_shot,
        status="invalid", excluded_reason=reason,
    )


def run_sweep(
    specs: Sequence[EpisodeSpec],
    agents: Sequence[str],
    run_dir: str | Path,
    *,
    options: dict[str, Any] | None = None,
    resume: bool = False,
    concurrency: int = 1,
    progress: bool = True,
    note: Callable[[str], None] | None = None,
    **eval_kwargs: Any,
) -> SweepSummary:
    """Play the valid points with :func:`kcgym.eval.runner.run_eval`, then record the invalid ones (once).

    ``note(text)`` is told each invalid (task, config, point) before the run starts; ``eval_kwargs`` go to
    ``run_eval`` (``backend``, ``plugins``).
    """
    options = dict(options or {})
    reasons: dict[tuple[str, int, HwPoint], str | None] = {}
    valid: list[EpisodeSpec] = []
    invalid: list[EpisodeSpec] = []
    for s in specs:
        cell = (s.task, s.config, s.hw)
        if cell not in reasons:
            acc = resolve_accelerator(s.accelerator)
            task = resolve_task(s.task, acc)
            reasons[cell] = invalid_reason(acc, task, task.config(acc.name, s.config), s.hw)
            if reasons[cell] is not None and note is not None:
                note(f"invalid: {s.env_id} C{s.config} [{point_text(s.hw)}]: {reasons[cell]}")
        (invalid if reasons[cell] is not None else valid).append(s)
    summary = run_eval(valid, agents, run_dir, options=options, resume=resume, concurrency=concurrency,
                       progress=progress, **eval_kwargs)
    store = RunStore(run_dir)
    recorded = store.finished()
    for s in invalid:
        for agent in agents:
            rec = _invalid_record(s, agent, options, str(reasons[(s.task, s.config, s.hw)]))
            if rec.key not in recorded:
                store.append(rec)
    cells = [(t, c, p, r) for (t, c, p), r in reasons.items() if r is not None]
    return SweepSummary(run=summary, points=len({s.hw for s in specs}), invalid=cells)
