"""A machine's documentation: its hand-written guide's sections plus the generated instruction reference.

Every machine's ``docs.py`` holds only data (its assembler's error codes, the guide fields its
config derives); this is the one function that turns them into the sections ``read_docs`` serves.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel

from kcgym.sims.base import DocSection
from kcgym.sims.guide import guide_sections

REFERENCE_ID = "isa"
REFERENCE_TITLE = "Instruction reference (generated)"


def guide_fields(hw: BaseModel, derived: Mapping[str, object]) -> dict[str, str]:
    """``{{field}}`` values of a guide: every config field, then the quantities the config derives."""
    fields = {k: str(v) for k, v in hw.model_dump().items()}
    fields.update({k: str(v) for k, v in derived.items()})
    return fields


def machine_docs(package: str, hw: BaseModel, derived: Mapping[str, object], reference: str) -> list[DocSection]:
    """The sections of ``package``'s guide.md for ``hw``, then the instruction reference."""
    return [*guide_sections(package, guide_fields(hw, derived)),
            DocSection(id=REFERENCE_ID, title=REFERENCE_TITLE, text=reference)]
