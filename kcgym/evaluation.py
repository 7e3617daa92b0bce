"""Score one kernel for one (accelerator, task, config): assemble, simulate, check, time.

This is the single scoring path behind the env's ``simulate``/``submit`` tools, the CLI's
``kcgym check`` and batch scoring. Baseline (template compiler) cycles are computed once
per (accelerator, hw, task, config) and cached for the life of the process.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field

import numpy as np
from pydantic import BaseModel

from kcgym.isa.diagnostics import AssemblyError, Diagnostic
from kcgym.sims.base import Accelerator, FaultInfo, RunResult
from kcgym.sims.profiling import LineProfile, line_profile
from kcgym.tasks.base import Task, TaskConfig
from kcgym.tasks.compare import OutputComparison, compare_outputs

MAX_SOURCE_CHARS = 1_000_000  # ~ a full instruction memory of commented code


@dataclass
class Baseline:
    source: str
    cycles: int
    instructions: int
    static_instructions: int


@dataclass
class KernelReport:
    """Everything known about one kernel on one batch of input sets."""

    assembled: bool
    diagnostics: list[Diagnostic] = field(default_factory=list)
    diagnostics_text: str = ""
    static_instructions: int = 0
    fault: FaultInfo | None = None
    correct: bool = False
    match_rate: float = 0.0
    comparisons: list[OutputComparison] = field(default_factory=list)  # of the first input set
    cycles: int | None = None
    instructions: int | None = None
    baseline_cycles: int | None = None
    roofline_cycles: int | None = None
    speedup: float | None = None
    below_roofline: bool = False
    counts_by_category: dict[str, int] = field(default_factory=dict)
    unit_busy: dict[str, int] = field(default_factory=dict)
    first_nonfinite_line: int | None = None
    outputs: dict[str, np.ndarray] = field(default_factory=dict)  # of the first input set
    expected: dict[str, np.ndarray] = field(default_factory=dict)
    issue_unit: str = "instructions"  # what `instructions` counts: "bundles" on a VLIW machine
    line_profile: LineProfile | None = None  # cycle attribution of the first input set (Evaluator.attribute)

    @property
    def error_class(self) -> str | None:
        """'syntax' (did not assemble), 'functional' (fault or wrong), or None if correct."""
        if not self.assembled:
            return "syntax"
        if not self.correct:
            return "functional"
        return None


def _hw_key(hw: BaseModel) -> str:
    return hashlib.sha256(hw.model_dump_json().encode()).hexdigest()[:16]


class Evaluator:
    """Scores kernels for one (accelerator, task, config, hw). Thread-safe."""

    def __init__(self, accelerator: Accelerator, task: Task, cfg: TaskConfig, hw: BaseModel):
        self.accelerator = accelerator
        self.task = task
        self.cfg = cfg
        self.hw = hw
        self._lock = threading.Lock()

    # -- inputs -----------------------------------------------------------------------
    def input_sets(self, seed: int, count: int) -> list[dict[str, np.ndarray]]:
        """``count`` input sets drawn from ``seed`` (visible: seed; hidden: derived seeds)."""
        out = []
        for i in range(count):
            rng = np.random.default_rng([abs(int(seed)), int(int(seed) < 0), i, self.cfg.index])
            out.append(self.task.generate_inputs(self.cfg, rng))
        return out

    # -- baseline ---------------------------------------------------------------------
    def baseline(self) -> Baseline:
        key = (self.accelerator.name, _hw_key(self.hw), self.task.name, self.cfg.index, str(self.cfg.params))
        with _BASELINE_LOCK:
            if key not in _BASELINES:
                _BASELINES[key] = _compute_baseline(self.accelerator, self.task, self.cfg, self.hw)
            return _BASELINES[key]

    def roofline(self) -> int:
        return self.accelerator.roofline_cycles(self.task, self.cfg, self.hw)

    def _baseline_cycles_on(self, inputs: dict[str, np.ndarray]) -> int:
        """The baseline's cycles on ``inputs``: its cached count unless timing depends on the data."""
        base = self.baseline()
        if not self.accelerator.data_dependent_timing:
            return base.cycles
        digest = hashlib.sha1()
        for name in sorted(inputs):
            digest.update(name.encode())
            digest.update(np.ascontiguousarray(inputs[name]).tobytes())
        key = (self.accelerator.name, _hw_key(self.hw), self.task.name, str(self.cfg.params), digest.hexdigest())
        with _BASELINE_LOCK:
            cycles = _BASELINE_CYCLES_ON.get(key)
        if cycles is None:
            program = self.accelerator.assemble(base.source, self.hw)
            (res,) = self.accelerator.run(program, self.task, self.cfg, self.hw, [inputs], max_steps=50_000_000)
            cycles = res.cycles
            with _BASELINE_LOCK:
                if len(_BASELINE_CYCLES_ON) >= 4096:  # bounded: input sets are per episode
                    _BASELINE_CYCLES_ON.pop(next(iter(_BASELINE_CYCLES_ON)))
                _BASELINE_CYCLES_ON[key] = cycles
        return cycles

    # -- scoring ----------------------------------------------------------------------
    def evaluate(
        self,
        source: str,
        inputs: list[dict[str, np.ndarray]],
        *,
        with_baseline: bool = True,
        max_steps: int | None = None,
    ) -> KernelReport:
        if len(source) > MAX_SOURCE_CHARS:
            d = Diagnostic.error(
                "E000",
                f"kernel source is {len(source)} characters; the limit is {MAX_SOURCE_CHARS}",
                line=1,
                col=1,
            )
            return KernelReport(assembled=False, diagnostics=[d], diagnostics_text=d.render())
        try:
            program = self.accelerator.assemble(source, self.hw)
        except AssemblyError as e:
            return KernelReport(assembled=False, diagnostics=e.diagnostics, diagnostics_text=e.render())
        report = KernelReport(
            assembled=True,
            diagnostics=list(program.warnings),
            diagnostics_text="\n".join(w.render() for w in program.warnings),
            static_instructions=program.length,
            issue_unit=self.accelerator.issue_unit,
        )
        base = self.baseline() if with_baseline else None
        if max_steps is None:
            max_steps = self.accelerator.default_max_steps(base.instructions if base else 0)
        results = self.accelerator.run(program, self.task, self.cfg, self.hw, inputs, max_steps)
        report.roofline_cycles = self.roofline()
        self._fill(report, results, inputs, base)
        return report

    def attribute(self, source: str, inputs: dict[str, np.ndarray]) -> LineProfile | None:
        """Where the cycles of ``source`` on ``inputs`` went, per line and loop (None if it does not assemble).

        A separate run of the profiling interpreter: the plain one carries no per-PC counters. None also
        where the accelerator has no profiling interpreter (``supports_profile``)."""
        if not self.accelerator.supports_profile:
            return None
        try:
            program = self.accelerator.assemble(source, self.hw)
        except AssemblyError:
            return None
        max_steps = self.accelerator.default_max_steps(self.baseline().instructions)
        (res,) = self.accelerator.run(program, self.task, self.cfg, self.hw, [inputs], max_steps, profile=True)
        return line_profile(program, res.profile, self.accelerator.loop_ranges(program), res.cycles, res.unit_busy)

    def _fill(
        self,
        report: KernelReport,
        results: list[RunResult],
        inputs: list[dict[str, np.ndarray]],
        base: Baseline | None,
    ) -> None:
        first = results[0]
        report.cycles = first.cycles
        report.instructions = first.instructions
        report.counts_by_category = first.counts_by_category
        report.unit_busy = first.unit_busy
        report.fault = first.fault
        report.first_nonfinite_line = first.first_nonfinite_line
        report.outputs = first.outputs
        all_ok = first.fault is None
        rates = []
        for i, (res, inp) in enumerate(zip(results, inputs, strict=True)):
            expected = self.task.reference(self.cfg, inp)
            comps = compare_outputs(res.outputs, expected, self.task.tolerance)
            n = sum(c.n_elements for c in comps)
            rates.append(sum(c.n_match for c in comps) / n if n else 1.0)
            all_ok = all_ok and res.fault is None and all(c.correct for c in comps)
            if i == 0:
                report.comparisons = comps
                report.expected = expected
        report.match_rate = float(min(rates)) if rates else 0.0
        report.correct = bool(all_ok)
        if base is not None:
            report.baseline_cycles = self._baseline_cycles_on(inputs[0]) if inputs else base.cycles
            if report.correct and report.cycles:
                report.speedup = report.baseline_cycles / report.cycles
        if report.correct and report.roofline_cycles is not None and report.cycles is not None:
            report.below_roofline = report.cycles < report.roofline_cycles


_BASELINES: dict[tuple, Baseline] = {}
_BASELINE_CYCLES_ON: dict[tuple, int] = {}  # data-dependent machines: baseline cycles per input set
_BASELINE_LOCK = threading.RLock()


def _compute_baseline(accelerator: Accelerator, task: Task, cfg: TaskConfig, hw: BaseModel) -> Baseline:
    source = accelerator.compile(task, cfg, hw)
    program = accelerator.assemble(source, hw)
    ev = Evaluator(accelerator, task, cfg, hw)
    inputs = ev.input_sets(seed=0, count=1)
    (res,) = accelerator.run(program, task, cfg, hw, inputs, max_steps=50_000_000)
    if res.fault is not None:
        raise RuntimeError(f"compiler kernel for {task.name} {cfg.label} faulted: {res.fault.render()}")
    return Baseline(source=source, cycles=res.cycles, instructions=res.instructions, static_instructions=program.length)
