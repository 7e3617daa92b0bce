""""Did you mean": the one bounded near-miss finder every error message uses.

Unknown names come from hostile input (an RL policy may send a megabyte-long tool name), and
``difflib`` is quadratic in the word length, so the search is capped: words longer than
``MAX_SUGGESTED_WORD`` get no hint, and a word is compared against at most
``MAX_SUGGESTION_CANDIDATES`` options of similar length (those sharing its first letter first).
An exact case-insensitive match wins over any fuzzy one.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from kcgym.limits import MAX_SUGGESTED_WORD, MAX_SUGGESTION_CANDIDATES


def closest(word: object, options: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The option nearest to ``word`` (case-insensitive fallback), or None; bounded time."""
    word = str(word)
    if not word or len(word) > MAX_SUGGESTED_WORD:
        return None
    n, first, lowered = len(word), word[0].lower(), word.lower()
    slack = max(2, n // 3)
    alike: list[str] = []  # same first letter and similar length: where near misses are
    other: list[str] = []
    for o in options:
        o = str(o)
        if o.lower() == lowered:
            return o
        if abs(len(o) - n) <= slack:
            if o[:1].lower() == first:
                if len(alike) < MAX_SUGGESTION_CANDIDATES:
                    alike.append(o)
            elif len(other) < MAX_SUGGESTION_CANDIDATES:
                other.append(o)
    near = (alike + other)[:MAX_SUGGESTION_CANDIDATES]
    close = difflib.get_close_matches(word, near, n=1, cutoff=cutoff)
    if not close:
        by_lower = {o.lower(): o for o in near}
        close = [by_lower[c] for c in difflib.get_close_matches(lowered, list(by_lower), n=1, cutoff=cutoff)]
    return close[0] if close else None


def did_you_mean(word: object, options: Iterable[str], cutoff: float = 0.6) -> str:
    """`` (did you mean 'x'?)`` for the nearest option, or ``""`` when nothing is near."""
    hint = closest(word, options, cutoff)
    return f" (did you mean {hint!r}?)" if hint else ""
