"""Run (agents x episodes) concurrently and resumably into a run directory.

Workers (daemon threads, or Ray tasks with ``backend="ray"``) only play episodes; the driver
thread alone writes transcripts and appends records, one per finished episode. Ctrl-C stops
the driver at once: every record already in the file is complete, and ``resume=True`` runs
exactly the episodes whose records are missing.
"""

from __future__ import annotations

import logging
import queue
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from kcgym.eval.episode import import_plugins, run_episode
from kcgym.eval.progress import Progress
from kcgym.eval.records import EpisodeKey, EpisodeRecord
from kcgym.eval.store import RunStore
from kcgym.eval.suite import EpisodeSpec
from kcgym.extras import RAY_INSTALL_HINT

Backend = Literal["local", "ray"]
RERUNNABLE = ("api", "harness")  # failures that are not the agent's verdict on the task
_ERROR_NAME = re.compile(r"\b([A-Z]\w*(?:Error|Exception|Failure|Exceeded))\b")


class RunDirError(Exception):
    """The run directory cannot be used as asked (e.g. it holds records and --resume was not given)."""


@dataclass(frozen=True)
class WorkItem:
    agent: str
    spec: EpisodeSpec


@dataclass
class RunSummary:
    run_dir: Path
    planned: int
    skipped: int  # already recorded (resume)
    completed: int
    interrupted: bool
    rerunnable: int = 0  # of the completed: failed for API or harness reasons (see RERUNNABLE)


def error_kind(record: EpisodeRecord) -> str:
    """``api: APIConnectionError``: what a failure's first report is deduplicated by."""
    m = _ERROR_NAME.search(record.error or "")
    detail = m.group(1) if m else (record.error or "").split(":", 1)[0].strip()[:60]
    return f"{record.error_class}: {detail}" if detail else str(record.error_class)


def _key(agent_name: str, model: str | None, spec: EpisodeSpec) -> EpisodeKey:
    return EpisodeKey(agent=agent_name, model=model, env_id=spec.env_id, config=spec.config, run=spec.run,
                      one_shot=spec.one_shot, hw=spec.hw)


def run_eval(
    specs: Sequence[EpisodeSpec],
    agents: Sequence[str],
    run_dir: str | Path,
    *,
    options: dict[str, Any] | None = None,
    resume: bool = False,
    rerun_errors: bool = False,
    concurrency: int = 1,
    backend: Backend = "local",
    plugins: Sequence[str] = (),
    progress: bool = True,
) -> RunSummary:
    """Play every (agent, spec) not yet recorded in ``run_dir``; returns counts.

    ``rerun_errors`` (implies ``resume``) also replays episodes recorded with an ``api`` or ``harness``
    error (an outage, a bug since fixed); the new record supersedes the old one (same key, later line).
    """
    from kcgym.agents import agent_options, make_agent

    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    options = dict(options or {})
    import_plugins(plugins)
    store = RunStore(run_dir)
    resume = resume or rerun_errors
    if store.path.exists() and store.records() and not resume:
        raise RunDirError(
            f"{store.path} already holds {len(store.records())} records; pass --resume to continue that run "
            "or choose another --out"
        )
    if resume and not store.path.exists():  # a mistyped --out must not start a (paid) run from zero
        raise RunDirError(f"--resume: there is no run to continue in {store.run_dir} (no {store.path.name}); "
                          "check --out, or drop --resume to start a new run")
    store.create()
    models = {a: make_agent(a, agent_options(**options)).model for a in agents}
    finished = {r.key for r in store.records() if not (rerun_errors and r.error_class in RERUNNABLE)}
    items = [WorkItem(a, s) for a in agents for s in specs]
    todo = [it for it in items if _key(it.agent, models[it.agent], it.spec) not in finished]
    bar = Progress(total=len(items), done_before=len(items) - len(todo), enabled=progress)
    if resume:
        bar.note(f"resuming {store.run_dir}: {len(items) - len(todo)} of {len(items)} episodes recorded, "
                 + (f"{len(todo)} left to run" if todo else "nothing left to run"), always=True)
    completed = rerunnable = 0
    interrupted = False
    reported: set[str] = set()

    def record(result: tuple[EpisodeRecord, dict[str, Any] | None]) -> None:
        nonlocal completed, rerunnable
        rec, transcript = result
        if transcript is not None:
            rec = rec.model_copy(update={"transcript": store.write_transcript(rec.key, transcript)})
        store.append(rec)
        completed += 1
        if rec.error_class in RERUNNABLE:
            rerunnable += 1
            kind = error_kind(rec)
            if kind not in reported:  # the first of each kind, in full, once (later ones: the progress line)
                reported.add(kind)
                bar.note(f"first {rec.error_class} error ({rec.label} {rec.env_id} C{rec.config}): {rec.error}",
                         always=True)
        bar.update(rec)

    try:
        if backend == "ray":
            _run_ray(todo, options, plugins, concurrency, record)
        elif backend == "local":
            _run_threads(todo, options, plugins, concurrency, record)
        else:
            raise ValueError(f"unknown backend {backend!r}; valid: local, ray")
    except KeyboardInterrupt:
        interrupted = True
    finally:
        bar.close()
    return RunSummary(Path(run_dir), len(items), len(items) - len(todo), completed, interrupted, rerunnable)


def _run_threads(todo, options, plugins, concurrency, record) -> None:
    """Daemon worker threads: an interrupted driver exits without waiting for running episodes."""
    work: queue.Queue[WorkItem | None] = queue.Queue()
    results: queue.Queue[tuple[EpisodeRecord, dict[str, Any] | None]] = queue.Queue()
    for it in todo:
        work.put(it)
    n_workers = min(concurrency, len(todo))
    for _ in range(n_workers):
        work.put(None)

    def worker() -> None:
        while (it := work.get()) is not None:
            results.put(_safe_run(it, options, plugins))

    for _ in range(n_workers):
        threading.Thread(target=worker, daemon=True, name="kcgym-eval-worker").start()
    for _ in range(len(todo)):
        while True:
            try:
                result = results.get(timeout=0.2)  # short waits keep Ctrl-C responsive
                break
            except queue.Empty:
                continue
        record(result)


def _safe_run(it: WorkItem, options: dict[str, Any], plugins: Sequence[str]):
    """run_episode, with a harness failure (e.g. the env cannot be made) turned into a record."""
    try:
        return run_episode(it.spec, it.agent, options, plugins)
    except Exception as e:
        logging.getLogger(__name__).exception("harness failure in %s C%s", it.spec.env_id, it.spec.config)
        from kcgym import __version__

        s = it.spec
        rec = EpisodeRecord(
            agent=it.agent, model=options.get("model") if it.agent == "llm" else None, env_id=s.env_id,
            accelerator=s.accelerator, task=s.task, level=s.level, config=s.config, run=s.run, seed=s.seed,
            hw_overrides=dict(s.hw), one_shot=s.one_shot,
            suite_version=__version__, error_class="harness", error=f"{type(e).__name__}: {e}",
        )
        return rec, None


def _run_ray(todo, options, plugins, concurrency, record) -> None:
    """Episodes as Ray tasks (at most ``concurrency`` in flight); uses a running Ray or starts one."""
    try:
        import ray
    except ImportError:
        raise RunDirError(f"--backend ray needs Ray: {RAY_INSTALL_HINT}") from None
    if not ray.is_initialized():
        ray.init(ignore_reinit_error=True, log_to_driver=False)
    remote = ray.remote(num_cpus=1)(_safe_run)
    pending: list[Any] = []
    it = iter(todo)
    try:
        while True:
            while len(pending) < concurrency:
                nxt = next(it, None)
                if nxt is None:
                    break
                pending.append(remote.remote(nxt, options, list(plugins)))
            if not pending:
                return
            ready, pending = ray.wait(pending, num_returns=1, timeout=0.5)
            for ref in ready:
                record(ray.get(ref))
    except KeyboardInterrupt:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise
