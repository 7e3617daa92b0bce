"""HBM scratch regions: the workspace the composite templates pass intermediates through.

A composite stage writes its result to HBM and the next stage prefetches it (there is no
VSRAM -> MSRAM path, so an operand computed on chip, such as the K of a projected attention,
must make that round trip anyway). The NPU layout therefore appends these regions after the
task's outputs; they start poisoned (NaN) like the outputs, and an agent may use them freely.
Shapes are padded where a 64-wide access would otherwise leave the region (s < 64).
"""

from __future__ import annotations

from dataclasses import dataclass

from kcgym.sims.npu.config import NPUConfig


@dataclass(frozen=True)
class ScratchSpec:
    name: str
    shape: tuple[int, int]
    description: str


def padded(n: int, hw: NPUConfig) -> int:
    """``n`` rounded up to whole MLEN tiles: a tile or row load of a padded matrix stays inside it."""
    return -(-n // hw.MLEN) * hw.MLEN


def scratch_name(stage: str) -> str:
    return f"tmp_{stage}"


def attention_scratch(s: int, hw: NPUConfig) -> list[ScratchSpec]:
    """Scores and probabilities of one head, s x padded(s): padding columns hold -3e38 / 0."""
    sp = padded(s, hw)
    return [
        ScratchSpec(scratch_name("S"), (s, sp), "scores of one head (padding columns -3e38)"),
        ScratchSpec(scratch_name("P"), (s, sp), "softmax of the scores (padding columns 0)"),
    ]
