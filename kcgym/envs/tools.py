"""The ONE tool registry: each tool's name, description, argument schema and handler.

The action validator (:mod:`kcgym.envs.actions`), the OpenAI ``tools=`` list
(:func:`openai_tools`, ``env.unwrapped.tools``), the prompt's tool list and the handlers the
env dispatches to are all derived from :data:`TOOLS`, so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from kcgym.envs import docsearch, reports

if TYPE_CHECKING:
    from pydantic import BaseModel

    from kcgym.evaluation import KernelReport
    from kcgym.sims.base import Accelerator, DocSection
    from kcgym.tasks.base import Tolerance


class EpisodeContext(Protocol):
    """All a tool handler may see of the running episode: the env implements it, handlers get nothing else.

    Keeping this narrow keeps the tools apart from the env (the env imports the tools, never the
    reverse) and lets a handler run against any object with these members (tests use a small fake).
    """

    accelerator: Accelerator
    hw: BaseModel
    visible_inputs: int

    @property
    def kernel(self) -> str | None: ...  # the saved source, None before the first write_kernel

    def set_kernel(self, source: str) -> None: ...

    @property
    def max_source_chars(self) -> int: ...

    @property
    def tolerance(self) -> Tolerance: ...

    @property
    def docs(self) -> list[DocSection]: ...

    @property
    def last_run(self) -> tuple[str, KernelReport] | None: ...  # (source, report) of the last visible run

    def evaluate_visible(self, attribute: bool = False) -> KernelReport: ...

    def score_of(self, report: KernelReport) -> float: ...


@dataclass(frozen=True)
class Param:
    """One argument of a tool. Optional arguments may also be passed as ``null``."""

    name: str
    type: Literal["string", "integer"]
    description: str
    required: bool = False
    default: Any = None
    minimum: int | None = None
    maximum: int | None = None

    def schema(self, strict: bool = False) -> dict[str, Any]:
        """JSON schema; ``strict`` (OpenAI strict mode): optional means nullable, no range keywords."""
        nullable = strict and not self.required
        s: dict[str, Any] = {
            "type": [self.type, "null"] if nullable else self.type,
            "description": self.description,
        }
        if not strict:
            if self.minimum is not None:
                s["minimum"] = self.minimum
            if self.maximum is not None:
                s["maximum"] = self.maximum
        return s


@dataclass
class ToolResult:
    """What a handler returns: the observation text, structured info, and whether it failed."""

    text: str
    info: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    ends_episode: bool = False

    @classmethod
    def failure(cls, message: str) -> ToolResult:
        return cls(text=f"Error: {message}", error=message)


Handler = Callable[[EpisodeContext, dict[str, Any]], ToolResult]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    params: tuple[Param, ...]
    handler: Handler
    needs_kernel: bool = False

    def parameters(self, strict: bool = False) -> dict[str, Any]:
        """JSON schema of the arguments. ``strict``: OpenAI strict mode (all listed, optional = nullable)."""
        props = {p.name: p.schema(strict) for p in self.params}
        required = [p.name for p in self.params if p.required or strict]
        return {"type": "object", "properties": props, "required": required, "additionalProperties": False}

    def openai(self, strict: bool = False) -> dict[str, Any]:
        fn: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters(strict),
        }
        if strict:
            fn["strict"] = True
        return {"type": "function", "function": fn}

    def signature(self) -> str:
        args = ", ".join(p.name if p.required else f"{p.name}?" for p in self.params)
        return f"{self.name}({args})"


# -- handlers -----------------------------------------------------------------------------


def _write_kernel(ctx: EpisodeContext, args: dict[str, Any]) -> ToolResult:
    source: str = args["source"]
    if not source.strip():
        return ToolResult.failure("source is empty; send the complete assembly program")
    limit = ctx.max_source_chars
    if len(source) > limit:
        return ToolResult.failure(
            f"source is {len(source):,} characters; the limit is {limit:,}. Nothing was saved."
        )
    replaced = ctx.kernel is not None
    ctx.set_kernel(source)
    n_lines = len(source.splitlines())
    text = (
        f"Saved kernel ({n_lines} lines, {len(source):,} characters"
        + (", replacing the previous version" if replaced else "")
        + "). Next: assemble to check syntax, or simulate to run it."
    )
    return ToolResult(text=text, info={"lines": n_lines, "chars": len(source)})


def _assemble(ctx: EpisodeContext, args: dict[str, Any]) -> ToolResult:
    from kcgym.evaluation import assemble_cached
    from kcgym.isa.diagnostics import AssemblyError

    try:
        program = assemble_cached(ctx.accelerator, ctx.kernel or "", ctx.hw)  # by (machine, hw, source hash)
    except AssemblyError as e:
        n_err = len(e.errors)
        info = {"assembled": False, "errors": n_err, "warnings": len(e.diagnostics) - n_err}
        text = f"Assembly FAILED with {n_err} error(s).\n\n{e.render()}"
        return ToolResult(text=text, info=info, error=f"assembly failed with {n_err} error(s)")
    warnings = list(program.warnings)
    text = f"OK: {program.length} instructions, {len(warnings)} warning(s)."
    if warnings:
        text += "\n\n" + "\n".join(w.render() for w in warnings)
    text += "\nNext: simulate to check correctness and cycles."
    return ToolResult(
        text=text, info={"assembled": True, "static_instructions": program.length, "warnings": len(warnings)}
    )


def _simulate(ctx: EpisodeContext, args: dict[str, Any]) -> ToolResult:
    report = ctx.evaluate_visible()
    n = ctx.visible_inputs
    what = f"Simulation on {n} visible input set{'s' if n != 1 else ''}"
    text = reports.render_run(report, ctx.kernel or "", ctx.tolerance, what)
    if report.assembled and not report.correct:
        text += "\nNext: view_output shows which rows are wrong."
    elif report.correct and not report.below_roofline:
        score = ctx.score_of(report)
        text += f"\n  Score if also correct on the hidden inputs: {score:.3f}"
    info = reports.report_info(report)
    info["visible_score"] = ctx.score_of(report)
    return ToolResult(text=text, info=info, error=None if report.assembled else "assembly failed")


def _view_output(ctx: EpisodeContext, args: dict[str, Any]) -> ToolResult:
    last = ctx.last_run
    if last is None:
        return ToolResult.failure("no simulation results yet; call simulate first")
    source, report = last
    result = reports.view_output(report, ctx.tolerance, args["rows"], args["output"])
    if isinstance(result, str):
        return ToolResult.failure(result)
    text, info = result
    if source != ctx.kernel:
        text = "Note: these results are from the last simulation, before the latest write_kernel.\n" + text
        info["stale"] = True
    return ToolResult(text=text, info=info)


def _profile(ctx: EpisodeContext, args: dict[str, Any]) -> ToolResult:
    report = ctx.evaluate_visible(attribute=True)
    text = reports.render_profile(report, ctx.tolerance)
    info = reports.report_info(report) | reports.profile_info(report)
    return ToolResult(text=text, info=info, error=None if report.assembled else "assembly failed")


def _read_docs(ctx: EpisodeContext, args: dict[str, Any]) -> ToolResult:
    sections = ctx.docs
    section, query = args["section"], args["query"]
    info: dict[str, Any] = {"section": section, "query": query}
    scope = sections
    if section is not None:
        try:
            found = docsearch.find_section(sections, section)
        except KeyError as e:
            return ToolResult.failure(str(e.args[0]))
        if query is None:
            return ToolResult(text=docsearch.render_section(found), info=info)
        scope = [found]
    if query is None:
        return ToolResult(text=docsearch.section_index(sections), info=info)
    text, n = docsearch.grep(scope, query)
    info["matches"] = n
    return ToolResult(text=text, info=info)


def _submit(ctx: EpisodeContext, args: dict[str, Any]) -> ToolResult:
    return ToolResult(text="Kernel submitted.", ends_episode=True)


# -- the registry ---------------------------------------------------------------------------

_TOOL_LIST: tuple[Tool, ...] = (
    Tool(
        name="write_kernel",
        description=(
            "Save the complete assembly source of your kernel, replacing any previous version. Always send "
            "the whole program, never a fragment or a diff. Returns the line count; it does not assemble or "
            "run anything, so call assemble or simulate next."
        ),
        params=(Param("source", "string", "The complete assembly program.", required=True),),
        handler=_write_kernel,
    ),
    Tool(
        name="assemble",
        description=(
            "Check the syntax of the saved kernel without running it. Returns 'OK: N instructions' plus any "
            "warnings, or every assembler error at once with line:col, the offending text and a hint."
        ),
        params=(),
        handler=_assemble,
        needs_kernel=True,
    ),
    Tool(
        name="simulate",
        description=(
            "Assemble the saved kernel and run it on the visible test inputs. Returns whether it is correct "
            "(every output element must match: match rate 100%), per-output match statistics, the cycle "
            "count, the template compiler's baseline cycles and your speedup over it, the roofline lower "
            "bound, the speed of light (the fewest cycles any correct kernel can take) and your share of it, "
            "and any runtime fault or first NaN/Inf with its source line."
        ),
        params=(),
        handler=_simulate,
        needs_kernel=True,
    ),
    Tool(
        name="view_output",
        description=(
            "Compare the outputs of the most recent simulation with the expected values, row by row: "
            "matching elements, max abs error, actual vs expected min/max, NaN/Inf count. Rows with "
            "mismatches are listed first. Use it to find indexing, layout and tiling bugs."
        ),
        params=(
            Param("rows", "integer", "How many rows to show (1-64).", default=8, minimum=1, maximum=64),
            Param("output", "string", "Which output tensor to show; defaults to the first output."),
        ),
        handler=_view_output,
    ),
    Tool(
        name="profile",
        description=(
            "Run the saved kernel and show where the cycles go: per source line and per loop, executions, issue "
            "cycles and stall cycles by cause (operand/result latency, DMA or prefetch, unit busy, bank conflict, "
            "queue full, branch), hottest first, adding up to the total; dynamic operation counts by category; "
            "busy cycles and utilisation of each hardware unit; cycles vs the baseline and the roofline lower "
            "bound; and the speed-of-light terms (which constraint binds, binding first). Use it to find the "
            "bottleneck when optimising."
        ),
        params=(),
        handler=_profile,
        needs_kernel=True,
    ),
    Tool(
        name="read_docs",
        description=(
            "Read the accelerator documentation (programming guide and instruction reference). No arguments: "
            "list the sections. section: that section's full text. query: case-insensitive search of all "
            "sections (or only of `section`), returning matching lines with context."
        ),
        params=(
            Param("section", "string", "A section id from the list, e.g. the instruction reference."),
            Param("query", "string", "Text to search for, e.g. a mnemonic or a topic like 'prefetch'."),
        ),
        handler=_read_docs,
    ),
    Tool(
        name="submit",
        description=(
            "Submit the saved kernel as your final answer. It is evaluated on fresh hidden inputs and the "
            "episode ends; no further tool calls are possible. Submit after simulate reports a correct "
            "kernel."
        ),
        params=(),
        handler=_submit,
        needs_kernel=True,
    ),
)

TOOLS: dict[str, Tool] = {t.name: t for t in _TOOL_LIST}

# The paper's tool names (KernelCraft App. H), for "did you mean" when an agent uses them.
PAPER_NAMES: dict[str, str] = {
    "write_code": "write_kernel",
    "check_syntax": "assemble",
    "run_evaluation": "simulate",
    "grep_docs": "read_docs",
    "get_instruction_size": "profile",
}


def openai_tools(strict: bool = False) -> list[dict[str, Any]]:
    """OpenAI ``tools=`` entries, fresh dicts on every call (callers may mutate them)."""
    return [t.openai(strict) for t in _TOOL_LIST]
