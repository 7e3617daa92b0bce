"""NPU documentation: the hand-written programming guide plus the generated ISA reference."""

from __future__ import annotations

import re
from importlib import resources

from kcgym.isa.reference_docs import instruction_reference
from kcgym.sims.base import DocSection
from kcgym.sims.npu.config import NPUConfig
from kcgym.sims.npu.isa import make_isa

NPU_ERROR_CODES = {
    "E101": "bad hardware-loop counter (gp0, or reused by an enclosing loop)",
    "E102": "C_LOOP_END does not match the innermost C_LOOP_START",
    "E103": "C_LOOP_START without C_LOOP_END",
    "W001": "write to a hardwired-zero register (gp0 / f0)",
    "W101": "loop body writes its own loop counter",
    "W102": "empty loop body",
}


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def guide_sections(hw: NPUConfig) -> list[DocSection]:
    """Split guide.md at '## ' headings; ``{MLEN}``-style fields are filled from the config."""
    text = resources.files("kcgym.sims.npu").joinpath("guide.md").read_text(encoding="utf-8")
    fields = {k: str(v) for k, v in hw.model_dump().items()}
    fields.update(vsram_size=str(hw.vsram_size), msram_size=str(hw.msram_size), msram_rows=str(hw.msram_rows),
                  peak=str(int(hw.peak_macs_per_cycle)), mv_occupancy=str(hw.mv_occupancy),
                  vdma=str(hw.dma_cycles(hw.v_prefetch_rows * hw.VLEN)), mdma=str(hw.dma_cycles(hw.MLEN * hw.MLEN)))
    text = re.sub(r"\{\{(\w+)\}\}", lambda m: fields.get(m.group(1), m.group(0)), text)
    sections: list[DocSection] = []
    title, body, fenced = None, [], False
    for line in text.splitlines() + ["## "]:
        if line.startswith("```"):
            fenced = not fenced
        if line.startswith("## ") and not fenced:  # a '## ' comment inside a code block is not a heading
            if title:
                text_ = f"## {title}\n" + "\n".join(body).strip() + "\n"
                sections.append(DocSection(id=_slug(title), title=title, text=text_))
            title, body = line[3:].strip(), []
        else:
            body.append(line)
    return sections


def npu_docs(hw: NPUConfig) -> list[DocSection]:
    ref = instruction_reference(make_isa(hw), hw, NPU_ERROR_CODES)
    return [*guide_sections(hw), DocSection(id="isa", title="Instruction reference (generated)", text=ref)]
