"""The reset prompt: everything an agent needs to write a kernel for a machine it has never seen.

Modelled on the KernelCraft system prompt (paper App. H): role, a two-phase workflow
(correctness first, then speed), the tools and their typical flow, the hardware config, the
memory layout, the task, and (by default, as in the paper) the full ISA documentation.
With ``example_in_prompt`` (the paper's one-shot setting, Table 8) it also carries one correct,
commented kernel for a *different* task of the same machine (:func:`demonstration`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from kcgym.envs.docsearch import full_text
from kcgym.envs.reports import tolerance_text
from kcgym.envs.rewards import RewardSpec
from kcgym.envs.tools import Tool
from kcgym.sims.base import Accelerator, DocSection
from kcgym.tasks.base import Task, TaskConfig

WORKFLOW = """\
## Workflow

Phase 1 - correctness (target: match rate 100% on every output element):
  1. Study the task, the memory layout and the ISA; plan the data movement, tiling and loops.
  2. Write the COMPLETE kernel with write_kernel (never a fragment or a diff).
  3. simulate it (assemble first if you are unsure of the syntax).
  4. If the match rate is below 100%, call view_output to see which rows are wrong, fix the
     kernel and simulate again.

Phase 2 - performance (only once the kernel is correct):
  1. Note the baseline cycles (this accelerator's template compiler) and your speedup.
  2. Use profile to find the bottleneck (instruction mix, unit utilisation, roofline bound).
  3. Optimise (e.g. overlap memory transfers with compute, reduce instruction count, reuse
     loaded data), then write_kernel and simulate again: stay correct, compare cycles.

Finally call submit. Typical flow:
  write_kernel -> assemble -> simulate -> view_output -> (fix) -> simulate -> profile ->
  write_kernel -> simulate -> submit"""


def _tools_section(tools: Sequence[Tool]) -> str:
    lines = ["## Tools", "", "Call exactly one tool per turn."]
    for t in tools:
        lines.append(f"- {t.signature()}: {t.description}")
    return "\n".join(lines)


def task_section(task: Task, cfg: TaskConfig) -> str:
    lines = [
        f"## Task: {task.title} (`{task.name}`, level {task.level}, {task.category})",
        "",
        f"Formula: {task.formula}",
        "",
        task.description.strip(),
        "",
        f"Configuration: {cfg.label}",
        "",
        "Tensors (row-major):",
    ]
    for t in task.tensors(cfg):
        shape = "x".join(str(s) for s in t.shape)
        desc = f" - {t.description}" if t.description else ""
        lines.append(f"- {t.name} ({t.role}): shape [{shape}]{desc}")
    lines.append("")
    lines.append("Input domain (the values your kernel must handle; every input set lies in it):")
    lines.extend(f"- {name}: {text}" for name, text in task.input_domain(cfg).items())
    if task.stress_sets:
        lines.append("")
        lines.append(
            "Hidden evaluation (submit) runs fresh default input sets plus stress sets drawn from the edge of this "
            "domain, so a kernel that is correct only for typical values fails; simulate runs the visible default "
            "set only. Stress sets:"
        )
        lines.extend(f"- {s.name}: {s.description}" for s in task.stress_sets)
    reference_c = getattr(task, "reference_c", None)  # tasks defined by a C function (the CPU case study)
    if reference_c is not None:
        lines += ["", "Reference C source (the outputs must be what `kernel` leaves in them; the baseline is "
                  "GCC -O2 of exactly this):", "```c", reference_c().strip(), "```"]
    consts = task.constants(cfg)
    if consts:
        lines.append("")
        lines.append("Constants (placed in memory for you, see the layout):")
        lines.extend(f"- {k} = {v!r}" for k, v in consts.items())
    lines.append("")
    lines.append(f"Correctness: every output element must satisfy {tolerance_text(task.tolerance)}.")
    return "\n".join(lines)


# The one-shot demonstration task per machine, first choice first; the next one is used when the env's own
# task is the first. NPU: the paper's PLENA demo (scaled dot-product attention); VLIW: the paper's AMD demo
# (GEMM); RVV: kcgym's choice (the paper names none for Coral): GEMM as on VLIW, gemv when the task is matmul;
# CPU: kcgym's choice (the paper's CPU study names none): the dot product, an L1 loop that shows the calling
# convention, loads, the multiplier and a counted loop; vvadd when the task is dotprod.
# A machine not listed here (a plugin) demonstrates its first supported task other than the env's own.
DEMO_TASKS: dict[str, tuple[str, ...]] = {
    "NPU": ("sdpa", "matmul"),
    "VLIW": ("matmul", "gemv"),
    "RVV": ("matmul", "gemv"),
    "CPU": ("dotprod", "vvadd"),
}
DEMO_CONFIG = 1  # the demonstration is the C1 kernel: the smallest, so it stays short


@dataclass(frozen=True)
class Demonstration:
    """A kernel generated (never typed in) by the machine's expert or compiler for another task at C1."""

    task: Task
    cfg: TaskConfig
    source: str
    origin: str  # "expert" (hand-written reference kernels) or "compiler" (the template compiler)


def _supported_tasks(accelerator: Accelerator) -> list[Task]:
    from kcgym.tasks import tasks_for

    try:
        table = tasks_for(accelerator.numerics)
    except KeyError:
        return []
    return [t for t in table.values() if accelerator.supports(t)]


def demonstration(accelerator: Accelerator, task: Task, hw: BaseModel) -> Demonstration | None:
    """The one-shot example for an env of ``task`` on ``accelerator``: never ``task`` itself.

    The expert kernel where one exists (the paper's demos are curated reference kernels), else the compiler's;
    both are generated for this very ``hw``, so the example runs on the machine the agent programs.
    None when the machine has no other task that either can generate.
    """
    supported = {t.name: t for t in _supported_tasks(accelerator)}
    preferred = [n for n in DEMO_TASKS.get(accelerator.name, ()) if n in supported]
    for name in dict.fromkeys([*preferred, *supported]):
        if name == task.name:
            continue
        demo = supported[name]
        try:
            cfg = demo.config(accelerator.name, DEMO_CONFIG)
        except KeyError:
            continue
        for origin, make in (("expert", accelerator.expert), ("compiler", accelerator.compile)):
            try:
                source = make(demo, cfg, hw)
            except (ValueError, NotImplementedError, KeyError):  # this hw cannot map the demo task
                continue
            if source:
                return Demonstration(task=demo, cfg=cfg, source=source, origin=origin)
    return None


def example_section(accelerator: Accelerator, task: Task, hw: BaseModel) -> str:
    """The one-shot prompt section: the demonstration task's spec and layout, then its kernel."""
    demo = demonstration(accelerator, task, hw)
    if demo is None:
        raise ValueError(f"example_in_prompt: the {accelerator.name} machine has no task other than "
                         f"{task.name!r} with a kernel to demonstrate")
    who = "kcgym's hand-written expert kernels" if demo.origin == "expert" else "the machine's template compiler"
    lines = [
        "## Example: a correct kernel for a different task",
        "",
        f"A demonstration of this machine's assembly, written by {who}: a complete, correct kernel for the "
        f"task `{demo.task.name}` ({demo.task.title}, configuration {demo.cfg.label}). It is NOT your task: "
        "your shapes, memory layout and formula are the ones stated above. Use it to learn the syntax, the data "
        "movement and the idioms (the comments are the generator's).",
        "",
        f"Formula of the example task: {demo.task.formula}",
        "",
        "Tensors of the example (row-major):",
    ]
    for t in demo.task.tensors(demo.cfg):
        lines.append(f"- {t.name} ({t.role}): shape [{'x'.join(str(s) for s in t.shape)}]")
    lines += [
        "",
        "Memory layout of the example:",
        "",
        accelerator.layout(demo.task, demo.cfg, hw).describe().rstrip("\n"),
        "",
        f"The example kernel (`{demo.task.name}`, {demo.cfg.label}):",
        "",
        "```asm",
        demo.source.rstrip("\n"),
        "```",
    ]
    return "\n".join(lines)


def build_prompt(
    *,
    accelerator: Accelerator,
    task: Task,
    cfg: TaskConfig,
    hw: BaseModel,
    max_turns: int,
    reward: RewardSpec,
    tools: Sequence[Tool],
    docs: Sequence[DocSection] | None,
    example: bool = False,
) -> str:
    """The first observation of an episode. ``docs=None`` leaves the ISA docs to ``read_docs``; ``example``:
    the one-shot demonstration (:func:`example_section`) after the memory layout."""
    role = (
        "You are an expert assembly programmer for custom AI accelerators. Your job: write a correct and "
        f"fast kernel for the {accelerator.name} accelerator, in its own assembly language. The machine: "
        f"{accelerator.summary.strip()} It is modelled on {accelerator.modelled_on}. You have not seen it "
        "before: everything you need is below and in the documentation. There is no human in the loop "
        "after this message; work with the tools until you submit."
    )
    budget = (
        "## Turn budget and scoring\n\n"
        f"You have {max_turns} tool calls in total; every call counts, including malformed ones. When "
        "they run out, your current kernel is evaluated as if you had submitted it. submit evaluates the "
        "kernel on fresh hidden inputs (same shapes, new values, including stress inputs from the edge of the "
        "stated input domain), so do not special-case the visible inputs. " + reward.describe()
    )
    layout = accelerator.layout(task, cfg, hw).describe()
    parts = [
        role,
        WORKFLOW,
        _tools_section(tools),
        budget,
        "## Hardware configuration\n\n" + accelerator.hardware_summary(hw).strip(),
        task_section(task, cfg),
        "## Memory layout\n\n" + layout,
    ]
    if example:
        parts.append(example_section(accelerator, task, hw))
    if docs is None:
        parts.append(
            "## Documentation\n\nThe ISA documentation is not included here: call read_docs() for the list "
            "of sections, read_docs(section=...) to read one, read_docs(query=...) to search."
        )
    else:
        parts.append(
            "## Documentation\n\nThe complete ISA documentation follows (read_docs can also search it).\n\n"
            + full_text(docs).rstrip("\n")
        )
    parts.append(f"Begin. Remember: one tool call per turn, {max_turns} turns in total.")
    return "\n\n".join(parts) + "\n"
