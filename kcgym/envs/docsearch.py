"""Looking things up in an accelerator's docs: the section index, one section, grep.

Shared by the ``read_docs`` tool and ``kcgym docs`` so that a person at a terminal sees
exactly what the agent sees.
"""

from __future__ import annotations

from collections.abc import Sequence

from kcgym.sims.base import DocSection
from kcgym.suggest import closest

GREP_CONTEXT = 2
GREP_MAX_MATCHES = 40
GREP_MAX_CHARS = 12_000


def section_index(
    sections: Sequence[DocSection],
    opener: str = "read_docs(section=<id>)",
    searcher: str = "read_docs(query=<text>)",
    everything: str | None = None,
) -> str:
    """``id: title`` per section, with how to open one (the tool's syntax, or the CLI's)."""
    width = max((len(s.id) for s in sections), default=0)
    rows = [f"  {s.id.ljust(width)}  {s.title}  ({len(s.text.splitlines())} lines)" for s in sections]
    tail = f"; print them all with {everything}" if everything else ""
    return (
        "Documentation sections:\n"
        + "\n".join(rows)
        + f"\n\nOpen one with {opener}; search all with {searcher}{tail}."
    )


def full_text(sections: Sequence[DocSection]) -> str:
    """Every section, as the reset prompt carries them (``docs_in_prompt=True``) and ``kcgym docs --all`` prints."""
    return "\n\n".join(f"### [{d.id}] {d.title}\n\n{d.text.strip()}" for d in sections) + "\n"


def find_section(sections: Sequence[DocSection], key: str) -> DocSection:
    """The section whose id (or title) is ``key``, case-insensitively; ``KeyError`` with a suggestion."""
    k = key.strip().lower()
    for s in sections:
        if s.id.lower() == k or s.title.lower() == k:
            return s
    ids = [s.id for s in sections]
    close = closest(k, ids, cutoff=0.5)
    hint = f" Did you mean {close!r}?" if close else ""
    raise KeyError(f"No documentation section {key!r}.{hint} Sections: {', '.join(ids)}.")


def render_section(section: DocSection) -> str:
    return f"# [{section.id}] {section.title}\n\n{section.text.strip()}\n"


def _matching_lines(lines: list[str], query: str) -> list[int]:
    q = query.lower()
    hits = [i for i, line in enumerate(lines) if q in line.lower()]
    words = q.split()
    if not hits and len(words) > 1:  # a phrase that never occurs verbatim: all words on one line
        hits = [i for i, line in enumerate(lines) if all(w in line.lower() for w in words)]
    return hits


def grep(sections: Sequence[DocSection], query: str, context: int = GREP_CONTEXT) -> tuple[str, int]:
    """Case-insensitive line search with ``context`` lines around each hit, grouped by section.

    A multi-word query first matches as a phrase, then as all-words-on-one-line. Output is
    bounded; returns ``(text, number of matching lines)``.
    """
    query = query.strip()
    if not query:
        return "Empty query: give a word or phrase to search for.", 0
    blocks: list[str] = []
    total = 0
    shown = 0
    for s in sections:
        lines = s.text.splitlines()
        hits = _matching_lines(lines, query)
        if not hits:
            continue
        total += len(hits)
        if shown >= GREP_MAX_MATCHES:
            continue
        hits = hits[: GREP_MAX_MATCHES - shown]
        shown += len(hits)
        windows: list[list[int]] = []
        for h in hits:
            lo, hi = max(0, h - context), min(len(lines) - 1, h + context)
            if windows and lo <= windows[-1][1] + 1:
                windows[-1][1] = hi
            else:
                windows.append([lo, hi])
        hit_set = set(hits)
        parts = [f"== [{s.id}] {s.title} =="]
        for lo, hi in windows:
            for i in range(lo, hi + 1):
                mark = ">" if i in hit_set else " "
                parts.append(f"{mark}{i + 1:5d}| {lines[i]}")
            parts.append("   ...")
        blocks.append("\n".join(parts[:-1]))
    if total == 0:
        ids = ", ".join(s.id for s in sections)
        return f"No matches for {query!r}. Try a shorter or different word, or open a section: {ids}.", 0
    text = f"{total} matching line(s) for {query!r}:\n\n" + "\n\n".join(blocks)
    if len(text) > GREP_MAX_CHARS or shown < total:
        text = text[:GREP_MAX_CHARS]
        text += (
            f"\n\n[output limited: showing {shown} of {total} matching lines; "
            "use a more specific query or read_docs(section=<id>)]"
        )
    return text, total
