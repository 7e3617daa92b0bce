"""Batch scoring for single-turn RL: many candidate kernels for one (env id, config) in one call.

GRPO-style training samples a group of completions per prompt and needs one reward each. A
:class:`BatchScorer` scores them all on the *same* hidden input sets (those an episode reset
with ``seed`` would submit on), through the env's own :class:`~kcgym.evaluation.Evaluator`
and :class:`~kcgym.envs.rewards.RewardSpec`, so a batch reward always equals the reward the
multi-turn env would pay for the same kernel and seed. What the batch adds over scoring one by
one: the env, the inputs, their reference outputs and the baseline are built once; identical
kernels (common inside a GRPO group) are simulated once; distinct kernels are simulated
concurrently on a thread pool (the JAX simulators release the GIL while they run), or with
``backend="processes"`` on a pool of persistent worker processes, each with its own warm env (the
Python around each simulation holds the GIL, so threads cannot use more than one core for it); on a
machine that merges programs (``Accelerator.merged_programs``: the NPU, the VLIW) a chunk of distinct kernels is
simulated in one call. Assembly outcomes are cached across batches by source hash
(:func:`kcgym.evaluation.assemble_cached`).

Raw model completions are accepted too: :func:`extract_kernel` takes the kernel from the last
fenced code block; a completion without one scores 0 with ``error_class="no_kernel"``.
"""

from __future__ import annotations

import bisect
import contextlib
import gc
import json
import logging
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from kcgym.envs.kernel_env import KernelCraftEnv, episode_seeds
from kcgym.envs.rewards import RewardSpec
from kcgym.evaluation import KernelReport
from kcgym.limits import MAX_CACHED_SCORERS, MAX_COMPLETION_CHARS, STEP_BUDGET_MULTIPLE
from kcgym.registry import parse_config
from kcgym.scoring_workers import WorkerPool
from kcgym.text import valid_text

ErrorClass = Literal["no_kernel", "syntax", "functional", "below_roofline", "internal_error"]
Backend = Literal["threads", "processes"]
Completion = str | Sequence[Mapping[str, Any]]  # plain text, or chat messages (TRL's conversational format)

# An opening fence line (3+ backticks, an optional info string without backticks) and a closing one
# (the same number of backticks alone on its line); the body is everything in between.
_OPENER = re.compile(r"(`{3,})[ \t]*[^`]*")
_CLOSER = re.compile(r"(`{3,})[ \t]*")
log = logging.getLogger(__name__)
_INPUT_CACHE = 4  # hidden-input batches kept per scorer, by seed
MAX_DEFAULT_WORKERS = 8  # threads or worker processes when max_workers is not given (at most the CPU count)
CHUNKS_PER_WORKER = 2  # a small batch's distinct kernels go in about this many chunks per worker (or thread)
_ERROR_CHARS = 4_000  # error text per record: enough for every diagnostic of a typical kernel


class KernelScore(BaseModel):
    """The outcome of one candidate kernel: what happened, and the reward it earns."""

    model_config = ConfigDict(frozen=True)

    index: int  # position in the submitted batch
    kernel_found: bool  # False: a completion without a fenced code block
    assembled: bool
    correct: bool
    match_rate: float  # the worst input set's share of matching output elements
    cycles: int | None
    baseline_cycles: int | None
    speedup: float | None  # baseline cycles / cycles, for correct kernels only
    roofline_cycles: int | None
    below_roofline: bool  # faster than physically possible: a simulator bug or an exploit; scores 0
    sol_cycles: int | None = None  # the speed of light: the fewest cycles any correct kernel can take
    sol_share: float | None = None  # sol_cycles / cycles, for correct kernels only (1.0 = at the bound)
    beats_sol: bool = False  # correct and faster than sol_cycles: scored as if at sol_cycles (a bound bug)
    reward: float  # the env's RewardSpec score: 0 if incorrect, else 1 + 3 q (kind="sol") or the paper's formula
    error_class: ErrorClass | None  # None when the kernel is correct
    error: str | None  # assembler diagnostics, the runtime fault, or the mismatch summary


def extract_kernel(completion: Completion) -> str | None:
    """The kernel source in a model completion: the body of its *last* fenced code block.

    ``completion`` is text or a list of chat messages (the last assistant message is used).
    Models often sketch before answering, so the last block is taken as the final answer.
    Returns None when there is no complete fenced block (e.g. a generation cut off mid-block).
    """
    text = completion_text(completion)
    if len(text) > MAX_COMPLETION_CHARS:  # the answer is at the end: scan the tail, from a line start
        text = text[-MAX_COMPLETION_CHARS:]
        text = text[text.find("\n") + 1 :]
    return _last_fenced_block(text.replace("\r\n", "\n"))


def _last_fenced_block(text: str) -> str | None:
    """The body of the last fenced block, in one pass over the lines (plus a binary search per opener).

    Blocks are taken left to right as a lazy regex would: an opener is closed by the next line that is
    its own fence; an opener that is never closed is plain text, and scanning resumes on the next line.
    """
    lines = text.split("\n")
    closers: dict[int, list[int]] = {}  # fence length -> line indices of lines that close such a fence
    for k, line in enumerate(lines):
        if line.startswith("```") and (m := _CLOSER.fullmatch(line)):
            closers.setdefault(len(m.group(1)), []).append(k)
    last, k = None, 0
    while k < len(lines) - 1:  # an opener needs a newline after it
        line = lines[k]
        m = _OPENER.fullmatch(line) if line.startswith("```") else None
        if m:
            ends = closers.get(len(m.group(1)), [])
            j = bisect.bisect_right(ends, k)
            if j < len(ends):
                end = ends[j]
                last = (k + 1, end)
                k = end + 1
                continue
        k += 1
    if last is None:
        return None
    start, end = last
    return "".join(line + "\n" for line in lines[start:end])


def completion_text(completion: Completion) -> str:
    """The text of a completion: the string itself, or the last assistant message's content."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        return str(completion.get("content") or "")
    for message in reversed(list(completion)):
        if isinstance(message, Mapping) and message.get("role", "assistant") == "assistant":
            content = message.get("content")
            if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}]
                return "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
            return str(content or "")
    return ""


_GC_LOCK = threading.Lock()
_GC_PAUSES = [0, False]  # batches now scoring; whether the first of them turned the cyclic collector off


@contextlib.contextmanager
def _gc_paused():
    """The cyclic garbage collector off while a batch is scored, back on (and the batch's young objects
    collected) when the last concurrent batch ends.

    A warm scoring process holds a million or so objects (JAX, the machine tables, cached programs), and a
    full collection walks them all: on a 2-core box one takes about 0.1 s, and a batch's allocations set one
    off every few dozen kernels (measured: VLIW matmul C1 spends 3 of its 14 ms per kernel there). A batch
    makes little cyclic garbage (reference counting frees nearly everything), so it is collected once after.
    """
    with _GC_LOCK:
        if _GC_PAUSES[0] == 0:
            _GC_PAUSES[1] = gc.isenabled()
            gc.disable()
        _GC_PAUSES[0] += 1
    try:
        yield
    finally:
        with _GC_LOCK:
            _GC_PAUSES[0] -= 1
            resume = _GC_PAUSES[0] == 0 and _GC_PAUSES[1]
            if resume:
                gc.enable()
        if resume:
            gc.collect(1)


class BatchScorer:
    """Scores kernels for one (env id, config, hw, reward); thread-safe, reusable across calls.

    Args:
        env: a registered env id (``"KernelCraft-NPU-matmul"``) or a :class:`KernelCraftEnv`.
        config: shape configuration 1..5, as ``3`` or ``"C3"`` (ignored when ``env`` is an env object).
        hw: hardware-config overrides; reward: a :class:`RewardSpec` or its dict.
        hidden_inputs: input sets every kernel is checked on (default 3, as the env's ``submit``).
        step_budget: steps a kernel may run, as a multiple of the compiler kernel's dynamic instructions.
        max_workers: threads (or worker processes) simulating distinct kernels at once (default: CPU count, at
            most ``MAX_DEFAULT_WORKERS``).
        backend: ``"threads"`` (the default) or ``"processes"``: persistent spawned workers, each with its own
            warm env (started at the first batch, seconds; :meth:`close` stops them). Same records either way.
    """

    def __init__(
        self,
        env: str | KernelCraftEnv,
        config: int = 1,
        *,
        hw: dict[str, Any] | BaseModel | None = None,
        reward: RewardSpec | dict[str, Any] | None = None,
        hidden_inputs: int | None = None,
        max_workers: int | None = None,
        step_budget: float | None = None,
        backend: Backend = "threads",
    ):
        if backend not in ("threads", "processes"):
            raise ValueError(f"backend must be 'threads' or 'processes', got {backend!r}")
        if isinstance(env, KernelCraftEnv):
            if backend == "processes":
                raise ValueError("backend='processes' builds an env in each worker from its id: pass the env id "
                                 f"({env.env_id!r}) and its options, not an env object")
            if hw is not None or reward is not None or hidden_inputs is not None or step_budget is not None:
                raise ValueError(
                    "hw, reward and hidden_inputs come from the env object (step_budget too); pass them to its "
                    "constructor instead"
                )
            self.env = env
        else:
            self.env = _make_env(env, config, hw, reward, 3 if hidden_inputs is None else hidden_inputs,
                                 STEP_BUDGET_MULTIPLE if step_budget is None else step_budget)
        self.hidden_inputs = self.env.hidden_inputs
        self.max_workers = int(max_workers) if max_workers else min(MAX_DEFAULT_WORKERS, os.cpu_count() or 1)
        if self.max_workers < 1:
            raise ValueError(f"max_workers must be >= 1, got {max_workers}")
        self.backend = backend
        e = self.env
        spec = (e.env_id, e.cfg.index, e.hw, e.reward_spec, e.hidden_inputs, e.step_budget)
        self._workers = WorkerPool(_worker_scorer, spec, self.max_workers) if backend == "processes" else None
        self._inputs: OrderedDict[int, tuple[list, list[str], list]] = OrderedDict()  # seed -> sets, names, expected
        self._lock = threading.Lock()

    @property
    def env_id(self) -> str:
        return self.env.env_id

    @property
    def reward_spec(self) -> RewardSpec:
        return self.env.reward_spec

    def baseline_cycles(self) -> int:
        """The template compiler's cycles (computed once per process, then cached)."""
        return self.env.evaluator.baseline().cycles

    def hidden_input_sets(self, seed: int) -> tuple[list, list[str]]:
        """The hidden input sets (default, then stress) an episode reset with ``seed`` submits on, and their
        names (cached)."""
        sets, names, _ = self._batch_inputs(seed)
        return sets, names

    def _batch_inputs(self, seed: int) -> tuple[list, list[str], list]:
        """The hidden input sets of ``seed``, their names and their reference outputs (cached per seed: every
        kernel of a batch is checked against the same expected outputs, computed once)."""
        with self._lock:
            if seed in self._inputs:
                self._inputs.move_to_end(seed)
                return self._inputs[seed]
        evaluator = self.env.evaluator
        sets, names = evaluator.hidden_input_sets(episode_seeds(seed)[1], self.hidden_inputs)
        entry = (sets, names, evaluator.expected_outputs(sets))
        with self._lock:
            self._inputs[seed] = entry
            while len(self._inputs) > _INPUT_CACHE:
                self._inputs.popitem(last=False)
        return entry

    def score(self, kernels: Sequence[str | None], *, seed: int = 0) -> list[KernelScore]:
        """One record per kernel source (None: no kernel found), all on the hidden inputs of ``seed``."""
        if isinstance(kernels, str):
            raise TypeError("score() takes a sequence of kernel sources; wrap a single kernel in a list")
        for i, k in enumerate(kernels):
            if k is not None and not isinstance(k, str):
                raise TypeError(f"kernel {i} is a {type(k).__name__}; expected the assembly source text (or None)")
        if self._workers is not None and any(k is not None for k in kernels):
            return self._score_in_processes(kernels, seed)
        try:
            inputs, names, expected = self._batch_inputs(seed)
            self.env.evaluator.baseline()  # once, before the threads race for it
        except Exception as e:  # noqa: BLE001  (a kcgym bug scores the batch 0, it does not end the run)
            log.exception("internal error preparing a batch for %s", self.env_id)
            report = KernelReport.of_internal_error(e)
            return [_NO_KERNEL.model_copy(update={"index": i}) if k is None else self._record(i, report)
                    for i, k in enumerate(kernels)]
        distinct = list(dict.fromkeys(k for k in kernels if k is not None))
        chunks = _even_chunks(distinct, self._chunk_size(len(distinct)))
        workers = min(self.max_workers, len(chunks))

        def evaluate(chunk: list[str]) -> list[KernelReport]:
            if len(chunk) == 1:
                return [self.env.evaluator.evaluate(chunk[0], inputs, set_names=names, expected=expected)]
            return self.env.evaluator.evaluate_many(chunk, inputs, set_names=names, expected=expected)

        with _gc_paused():
            if workers > 1:
                with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="kcgym-score") as pool:
                    done = list(pool.map(evaluate, chunks))
            else:
                done = [evaluate(c) for c in chunks]
        reports = {s: r for chunk, got in zip(chunks, done, strict=True) for s, r in zip(chunk, got, strict=True)}
        return [
            _NO_KERNEL.model_copy(update={"index": i}) if k is None else self._record(i, reports[k])
            for i, k in enumerate(kernels)
        ]

    def _score_in_processes(self, kernels: Sequence[str | None], seed: int) -> list[KernelScore]:
        """``score`` on the worker processes: distinct kernels in chunks (a few per worker, or what one merged
        simulation takes), each chunk scored by one worker's own scorer; a lost chunk scores internal_error."""
        assert self._workers is not None
        distinct = list(dict.fromkeys(k for k in kernels if k is not None))
        chunks = _even_chunks(distinct, self._chunk_size(len(distinct)))
        records: dict[str, KernelScore] = {}
        for chunk, got in zip(chunks, self._workers.score_chunks(seed, chunks), strict=True):
            if isinstance(got, BaseException):
                log.error("a scoring worker was lost (%s: %s); its %d kernels score internal_error",
                          type(got).__name__, got, len(chunk))
                got = internal_error_scores(RuntimeError(f"scoring worker lost: {type(got).__name__}: {got}"),
                                            len(chunk))
            records.update(zip(chunk, got, strict=True))
        return [_NO_KERNEL.model_copy(update={"index": i}) if k is None else
                records[k].model_copy(update={"index": i}) for i, k in enumerate(kernels)]

    def _chunk_size(self, n: int) -> int:
        """Distinct kernels per chunk (one worker's unit of work): what one merged simulation takes
        (``Accelerator.merged_programs``), but small enough that every worker gets about ``CHUNKS_PER_WORKER``
        chunks of a small batch (32 kernels on two workers: four chunks of 8, not one of 32)."""
        return max(1, min(self.env.accelerator.merged_programs, -(-n // (CHUNKS_PER_WORKER * self.max_workers))))

    def start(self) -> list[int]:
        """Start the worker processes now and wait until each is warm (``backend="processes"``; else nothing),
        so that the first batch does not pay for it: their process ids."""
        return [] if self._workers is None else self._workers.start()

    def close(self) -> None:
        """Stop the worker processes (``backend="processes"``); a later batch starts new ones."""
        if self._workers is not None:
            self._workers.close()

    def score_completions(
        self, completions: Sequence[Completion], *, seed: int = 0, require_fence: bool = True
    ) -> list[KernelScore]:
        """Score raw model completions (None: no completion, scored no_kernel); ``require_fence=False``
        treats fence-less text as the kernel."""
        if isinstance(completions, str):
            raise TypeError("score_completions() takes a sequence of completions; wrap a single one in a list")
        kernels = []
        for c in completions:
            if c is None:  # a failed generation: scores no_kernel, the rest of the batch is unaffected
                kernels.append(None)
                continue
            kernel = extract_kernel(c)
            if kernel is None and not require_fence:
                kernel = completion_text(c)
            kernels.append(kernel)
        return self.score(kernels, seed=seed)

    def _record(self, index: int, report: KernelReport) -> KernelScore:
        reward = self.env.score_of(report)
        error_class: ErrorClass | None = report.error_class  # type: ignore[assignment]
        if report.below_roofline:
            error_class = "below_roofline"
        return KernelScore(
            index=index,
            kernel_found=True,
            assembled=report.assembled,
            correct=report.correct,
            match_rate=float(report.match_rate),
            cycles=report.cycles,
            baseline_cycles=report.baseline_cycles,
            speedup=report.speedup if report.correct else None,
            roofline_cycles=report.roofline_cycles,
            below_roofline=report.below_roofline,
            sol_cycles=report.sol_cycles,
            sol_share=report.sol_share,
            beats_sol=report.beats_sol,
            reward=reward,
            error_class=error_class,
            error=_error_text(report),
        )


def _even_chunks(items: list[str], size: int) -> list[list[str]]:
    """``items`` in as few chunks of at most ``size`` as fit, of sizes differing by at most one (so that the
    workers finish together: 100 kernels in chunks of at most 32 are 4 of 25, not 32, 32, 32 and 4)."""
    n = max(1, -(-len(items) // size))
    q, r = divmod(len(items), n)
    cuts = [i * q + min(i, r) for i in range(n + 1)]
    return [items[cuts[i]:cuts[i + 1]] for i in range(n) if cuts[i + 1] > cuts[i]]


def _worker_scorer(env_id: str, config: int, hw: BaseModel, reward: RewardSpec, hidden_inputs: int,
                   step_budget: float) -> BatchScorer:
    """A worker process's own scorer (threads backend, one thread), warm: baseline, inputs of seed 0 and the
    simulator's compilations done before the first chunk arrives: one kernel alone, and (a machine that merges
    programs) a full merged call of copies of it (distinct sources, one trailing newline more each), whose
    memory is what a chunk of kernels like it needs."""
    scorer = BatchScorer(env_id, config, hw=hw, reward=reward, hidden_inputs=hidden_inputs, step_budget=step_budget,
                         max_workers=1)
    source = scorer.env.evaluator.baseline().source
    scorer.score([source])
    merged = scorer.env.accelerator.merged_programs
    if merged > 1:
        scorer.score([source + "\n" * (1 + i) for i in range(merged)])
    return scorer


def internal_error_scores(e: BaseException, n: int) -> list[KernelScore]:
    """``n`` zero-reward records of a batch whose scoring hit a kcgym bug (``error_class="internal_error"``)."""
    report = KernelReport.of_internal_error(e)
    record = _NO_KERNEL.model_copy(update={"kernel_found": True, "error_class": "internal_error",
                                           "error": _error_text(report)})
    return [record.model_copy(update={"index": i}) for i in range(n)]


def _error_text(report: KernelReport) -> str | None:
    text = _error_message(report)
    return None if text is None else valid_text(text[:_ERROR_CHARS])


_NO_KERNEL = KernelScore(
    index=0,
    kernel_found=False,
    assembled=False,
    correct=False,
    match_rate=0.0,
    cycles=None,
    baseline_cycles=None,
    speedup=None,
    roofline_cycles=None,
    below_roofline=False,
    reward=0.0,
    error_class="no_kernel",
    error="no kernel found: the completion has no complete fenced code block (```...```) holding the kernel",
)


def _error_message(report: KernelReport) -> str | None:
    if not report.assembled:
        text = report.diagnostics_text.strip()
    elif report.fault is not None:
        text = report.fault.render()
    elif not report.correct:
        wrong = [c for c in report.comparisons if not c.correct]
        parts = [f"incorrect: {report.match_rate:.1%} of output elements match on the worst input set"]
        for c in wrong:
            where = f", first mismatch at {list(c.first_mismatch)}" if c.first_mismatch is not None else ""
            parts.append(f"{c.name}: {c.n_match}/{c.n_elements} match, {c.n_nonfinite} non-finite{where}")
        text = "; ".join(parts)
    elif report.below_roofline:
        text = (
            f"{report.cycles} cycles is below the roofline bound of {report.roofline_cycles}: "
            "not physically possible, so the kernel scores 0"
        )
    else:
        return None
    return text


def _make_env(env_id: str, config: int, hw: Any, reward: Any, hidden_inputs: int,
              step_budget: float) -> KernelCraftEnv:
    import gymnasium

    import kcgym  # noqa: F401  (registers the env ids)

    try:
        spec = gymnasium.spec(env_id)
    except gymnasium.error.Error as e:
        from kcgym.registry import parse_env_id

        try:
            parse_env_id(env_id)
        except KeyError as unknown:  # the registry's message has a did-you-mean for near misses
            raise ValueError(unknown.args[0]) from None
        raise ValueError(str(e)) from None
    env = gymnasium.make(
        spec, config=config, hw=hw, reward=reward, hidden_inputs=hidden_inputs, docs_in_prompt=False,
        step_budget=step_budget,
    ).unwrapped
    if not isinstance(env, KernelCraftEnv):
        raise TypeError(f"{env_id!r} is not a kcgym env (its entry point made a {type(env).__name__})")
    return env


_SCORERS: OrderedDict[tuple, BatchScorer] = OrderedDict()  # LRU, at most MAX_CACHED_SCORERS
_SCORERS_LOCK = threading.Lock()


def scorer_for(
    env_id: str,
    config: int = 1,
    *,
    hw: dict[str, Any] | BaseModel | None = None,
    reward: RewardSpec | dict[str, Any] | None = None,
    hidden_inputs: int = 3,
) -> BatchScorer:
    """A shared :class:`BatchScorer` per (env id, config, hw, reward, hidden inputs): built once per process."""
    spec = RewardSpec.of(reward)
    hw_items = hw.model_dump(mode="json") if isinstance(hw, BaseModel) else dict(hw or {})
    key = (
        env_id, parse_config(config), json.dumps(hw_items, sort_keys=True), spec.model_dump_json(), int(hidden_inputs)
    )
    with _SCORERS_LOCK:
        if key in _SCORERS:
            _SCORERS.move_to_end(key)  # least recently used goes first
        else:
            if len(_SCORERS) >= MAX_CACHED_SCORERS:
                _SCORERS.popitem(last=False)
            _SCORERS[key] = BatchScorer(env_id, config, hw=hw, reward=spec, hidden_inputs=hidden_inputs)
        return _SCORERS[key]


def score_kernels(
    env_id: str, kernels: Sequence[str | None], config: int = 1, *, seed: int = 0, **kwargs: Any
) -> list[KernelScore]:
    """Score kernel sources for one (env id, config); ``kwargs`` as :func:`scorer_for`."""
    return scorer_for(env_id, config, **kwargs).score(kernels, seed=seed)


def score_completions(
    env_id: str,
    completions: Sequence[Completion],
    config: int = 1,
    *,
    seed: int = 0,
    require_fence: bool = True,
    **kwargs: Any,
) -> list[KernelScore]:
    """Score raw model completions for one (env id, config); ``kwargs`` as :func:`scorer_for`."""
    return scorer_for(env_id, config, **kwargs).score_completions(completions, seed=seed, require_fence=require_fence)
