"""VLIW documentation: the hand-written programming guide plus the generated ISA reference."""

from __future__ import annotations

import re
from importlib import resources

from kcgym.isa.reference_docs import instruction_reference
from kcgym.sims.base import DocSection
from kcgym.sims.vliw.config import VLIWConfig
from kcgym.sims.vliw.isa import make_isa

VLIW_ERROR_CODES = {
    "E110": "loop end label does not follow the LOOP with a body of at least one bundle",
    "E111": "branch target past the end of the program",
    "E112": "DMA larger than DMA_MAX_BYTES",
    "E113": "loops not properly nested, or nested loops ending at the same label",
    "E114": "loops nested deeper than the hardware loop stack",
    "W001": "write to r0 (hardwired to zero)",
}


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def guide_sections(hw: VLIWConfig) -> list[DocSection]:
    """Split guide.md at '## ' headings; ``{{field}}`` placeholders are filled from the config."""
    text = resources.files("kcgym.sims.vliw").joinpath("guide.md").read_text(encoding="utf-8")
    fields = {k: str(v) for k, v in hw.model_dump().items()}
    fields.update(bank_bytes=str(hw.bank_bytes))
    text = re.sub(r"\{\{(\w+)\}\}", lambda m: fields.get(m.group(1), m.group(0)), text)
    sections: list[DocSection] = []
    title, body, fenced = None, [], False
    for line in text.splitlines() + ["## "]:
        if line.startswith("```"):
            fenced = not fenced
        if line.startswith("## ") and not fenced:
            if title:
                sections.append(DocSection(id=_slug(title), title=title,
                                           text=f"## {title}\n" + "\n".join(body).strip() + "\n"))
            title, body = line[3:].strip(), []
        else:
            body.append(line)
    return sections


def vliw_docs(hw: VLIWConfig) -> list[DocSection]:
    ref = instruction_reference(make_isa(hw), hw, VLIW_ERROR_CODES)
    return [*guide_sections(hw), DocSection(id="isa", title="Instruction reference (generated)", text=ref)]
