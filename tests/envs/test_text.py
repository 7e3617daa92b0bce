"""Observations stay inside the declared Text space: printable ASCII, bounded, never empty."""

from __future__ import annotations

import string

from hypothesis import given
from hypothesis import strategies as st

from kcgym.text import CHARSET, excerpt, sanitize, to_observation, truncate_middle


def test_common_unicode_is_spelled_out():
    assert sanitize("64×64 ≤ 2³ → x – y — z “q” é µs …") == '64x64 <= 2^3 -> x - y -- z "q" e us ...'
    assert sanitize("漢") == "?"


@given(st.text())
def test_sanitized_text_is_printable(text):
    assert set(sanitize(text)) <= set(string.printable)


@given(st.text(alphabet=CHARSET, max_size=5000), st.integers(min_value=80, max_value=3000))
def test_truncate_middle_bounds_and_keeps_ends(text, limit):
    out = truncate_middle(text, limit)
    assert len(out) <= limit
    if len(text) <= limit:
        assert out == text
    else:
        assert "[truncated" in out and out[:10] == text[:10]


def test_to_observation_never_empty_and_excerpt_is_short():
    assert to_observation("", 100) == "(no output)"
    assert len(excerpt("x" * 10_000)) < 100
