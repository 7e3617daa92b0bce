"""The hand-written programming guides: one splitter for every accelerator's ``guide.md``.

A guide is Markdown with ``{{field}}`` placeholders (filled from the hardware config, so the
docs an agent reads always describe the machine it runs on) and ``## `` headings that become
the sections ``read_docs`` serves. A ``## `` line inside a code block is not a heading.
"""

from __future__ import annotations

import re
from importlib import resources

from kcgym.sims.base import DocSection

SHARED_FIELDS = ("assembler_directives", "assembly_limits")  # filled the same on every machine
RULE_ID = re.compile(r"\*\*((?:NPU|VLIW|RVV|CPU)-T\d+)\*\*")  # a numbered timing rule: **VLIW-T5**


def timing_rules(sections: list[DocSection]) -> dict[str, str]:
    """``rule id -> its text`` for every numbered timing rule of a guide (each has a contract test)."""
    rules: dict[str, str] = {}
    for sec in sections:
        for m in RULE_ID.finditer(sec.text):
            if m.group(1) in rules:
                raise ValueError(f"timing rule {m.group(1)} is defined twice")
            rest = sec.text[m.end():]
            nxt = re.search(r"\n- \*\*|\n\n", rest)
            rules[m.group(1)] = " ".join(rest[: nxt.start() if nxt else len(rest)].split())
    return rules


def slug(title: str) -> str:
    """``"Memory map & layout"`` -> ``"memory-map-layout"``: the section id agents pass to ``read_docs``."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def guide_sections(package: str, fields: dict[str, str], filename: str = "guide.md") -> list[DocSection]:
    """The sections of ``package``'s guide, placeholders filled from ``fields`` (unknown ones kept)."""
    from kcgym.isa.preprocess import DIRECTIVES_DOC
    from kcgym.limits import CYCLE_LIMIT, assembly_limits_markdown

    fields = {"assembler_directives": DIRECTIVES_DOC, "assembly_limits": assembly_limits_markdown(),
              "cycle_limit": f"{CYCLE_LIMIT:,}", **fields}
    text = resources.files(package).joinpath(filename).read_text(encoding="utf-8")
    text = re.sub(r"\{\{(\w+)\}\}", lambda m: fields.get(m.group(1), m.group(0)), text)
    sections: list[DocSection] = []
    title, fenced = None, False
    body: list[str] = []
    for line in text.splitlines() + ["## "]:
        if line.startswith("```"):
            fenced = not fenced
        if line.startswith("## ") and not fenced:
            if title:
                sections.append(
                    DocSection(id=slug(title), title=title, text=f"## {title}\n" + "\n".join(body).strip() + "\n")
                )
            title, body = line[3:].strip(), []
        else:
            body.append(line)
    return sections
