"""The speed-of-light bound: the fewest cycles any correct kernel can take on a machine.

A :class:`SolBound` is the maximum of named :class:`SolTerm` s, each one real constraint of the
machine's own timing model (busy cycles a unit needs for the task's work, bytes a channel must
move, latency that cannot be hidden), computed by ``kcgym/sims/<machine>/speed_of_light.py`` from
the same cost tables and config constants the simulator runs. Terms are kept in order, binding
first, so ``profile`` can show which constraint limits a kernel.

Two kinds of term:

- *physical* terms (data movement, latency) hold for any kernel whatever its numerics or algorithm;
  their maximum is the hard anti-cheat floor (a kernel below it scores 0: a simulator bug or an exploit).
- the other terms assume the work is done exactly where the task needs it (matrix MACs with fp32
  or int32 accumulation on the unit that has it, one vector pass per elementwise step) and by the
  direct algorithm (a Winograd convolution needs fewer multiplies, so MAC terms are never physical). A kernel
  that beats them (``beats_sol``) is flagged and scored as if it ran at ``sol_cycles``.

The per-task work counts shared by the bf16 machines live here (one copy for NPU and VLIW).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from kcgym.tasks.base import Task, TaskConfig


class SolTerm(BaseModel):
    """One lower bound on the cycles: a named constraint with a one-line explanation."""

    model_config = ConfigDict(frozen=True)

    name: str  # e.g. "hbm_traffic", "matrix_macs"
    cycles: int
    explanation: str
    physical: bool = False  # holds for any kernel, whatever its numerics (part of the anti-cheat floor)


class SolBound(BaseModel):
    """The speed of light: the maximum of its terms; ``terms`` are ordered binding first."""

    model_config = ConfigDict(frozen=True)

    cycles: int
    terms: tuple[SolTerm, ...]

    @classmethod
    def of(cls, terms: Iterable[SolTerm]) -> SolBound:
        """The bound of ``terms`` (zero-cycle terms dropped; stable order among equal terms)."""
        kept = sorted((t for t in terms if t.cycles > 0), key=lambda t: -t.cycles)
        return cls(cycles=max((t.cycles for t in kept), default=1), terms=tuple(kept))

    @property
    def binding(self) -> SolTerm | None:
        return self.terms[0] if self.terms else None

    @property
    def physical_cycles(self) -> int:
        """The largest physical term: a floor no kernel can beat, whatever its numerics."""
        return max((t.cycles for t in self.terms if t.physical), default=0)

    def share(self, cycles: int | None) -> float | None:
        """sol_cycles / cycles: 1.0 at the speed of light (above 1 only for a kernel that beats it)."""
        if not cycles or cycles <= 0:
            return None
        return self.cycles / cycles

    def lines(self, cycles: int | None = None) -> list[str]:
        """One line per term, binding first (with its share of ``cycles`` when given)."""
        out = []
        for i, t in enumerate(self.terms):
            tag = "binding" if i == 0 else f"{t.cycles / self.cycles:.0%} of SOL"
            of = f", {t.cycles / cycles:.0%} of your cycles" if cycles else ""
            out.append(f"{t.name}: {t.cycles:,} cycles ({tag}{of}) - {t.explanation}")
        return out


def ceil_div(a: float, b: float) -> int:
    return int(math.ceil(a / b)) if a > 0 else 0


# ---- machine-neutral work model of the bf16 tasks ----------------------------------------------
# Tasks whose MACs need exact (fp32) accumulation: dot products over a long contraction, which a
# chain of bf16-rounding vector ops cannot reproduce within tolerance on every input set.
EXACT_MAC_TASKS = frozenset({
    "gemv", "matmul", "batch_matmul", "linear", "conv2d", "ffn", "swiglu",
    "sdpa", "flash_attention", "mha", "gqa", "mqa", "conv_block", "decoder_llama", "decoder_t5",
})

# The fewest vector-unit passes each *output* element needs (one pass = one elementwise op or one
# reduction step over the element), counting only steps no correct kernel can skip:
#   relu: max(x, 0); silu / gelu: one transcendental (exp) and the product with x;
#   softmax: exp, the row sum, the scale by 1/sum; layernorm: the mean, the centring, the scale;
#   rmsnorm: the sum of squares and the scale; rope: the two products (and their sum, fused away);
#   depthwise conv: counted as MACs below, not passes.
ELEMENTWISE_PASSES: dict[str, int] = {
    "relu": 1, "silu": 2, "gelu": 2, "softmax": 3, "layernorm": 3, "rmsnorm": 2, "rope": 2,
}


def exact_macs(task: Task, cfg: TaskConfig) -> int:
    """MACs the task needs on a unit with exact accumulation (0 for elementwise tasks)."""
    return task.macs(cfg) if task.name in EXACT_MAC_TASKS else 0


def inexact_macs(task: Task, cfg: TaskConfig) -> int:
    """MACs a kernel may do with bf16-rounding vector ops (depthwise conv: k*k taps per output)."""
    return task.macs(cfg) if task.name not in EXACT_MAC_TASKS and task.name not in ELEMENTWISE_PASSES else 0


def elementwise_passes(task: Task) -> int:
    return ELEMENTWISE_PASSES.get(task.name, 0)


def elements(tensors: Iterable) -> int:
    return sum(t.size for t in tensors)
