"""Keep observations inside the declared ``Text`` space: printable ASCII, bounded length.

Gymnasium checks that every observation lies in ``observation_space``; docs and tool
output are free-form (Markdown with ``x``/``<=`` symbols, diagnostics quoting the agent's
own source), so every string the env returns goes through :func:`to_observation`.
"""

from __future__ import annotations

import math
import string
import unicodedata
from typing import Any

CHARSET = string.printable
_CHARSET = frozenset(CHARSET)

# Common typography and maths in docs -> ASCII that an assembly programmer reads the same way.
_UNICODE_TO_ASCII: dict[str, str] = {
    "\u00d7": "x",  # ×
    "\u00f7": "/",  # ÷
    "\u2264": "<=",
    "\u2265": ">=",
    "\u2260": "!=",
    "\u2248": "~=",
    "\u00b1": "+/-",
    "\u2192": "->",
    "\u2190": "<-",
    "\u2194": "<->",
    "\u21d2": "=>",
    "\u2013": "-",  # en dash
    "\u2014": "--",  # em dash
    "\u2212": "-",  # minus sign
    "\u2018": "'",
    "\u2019": "'",
    "\u201c": '"',
    "\u201d": '"',
    "\u2026": "...",
    "\u2022": "*",
    "\u00b7": "*",
    "\u22c5": "*",
    "\u2219": "*",
    "\u00a0": " ",
    "\u2009": " ",
    "\u202f": " ",
    "\u00b2": "^2",
    "\u00b3": "^3",
    "\u221a": "sqrt",
    "\u2211": "sum",
    "\u220f": "prod",
    "\u221e": "inf",
    "\u2208": " in ",
    "\u2308": "ceil(",
    "\u2309": ")",
    "\u230a": "floor(",
    "\u230b": ")",
    "\u03b1": "alpha",
    "\u03b2": "beta",
    "\u03b3": "gamma",
    "\u03b5": "eps",
    "\u03bb": "lambda",
    "\u03bc": "mu",
    "\u00b5": "u",  # micro sign
    "\u03c0": "pi",
    "\u03c3": "sigma",
    "\u03b8": "theta",
    "\u2500": "-",
    "\u2502": "|",
    "\u2713": "[ok]",
    "\u2717": "[x]",
}


def sanitize(text: str) -> str:
    """Map ``text`` onto printable ASCII: known symbols spelled out, accents dropped, rest ``?``."""
    if text.isascii() and all(c in _CHARSET for c in text):
        return text
    out: list[str] = []
    for ch in text:
        if ch in _CHARSET:
            out.append(ch)
        elif ch in _UNICODE_TO_ASCII:
            out.append(_UNICODE_TO_ASCII[ch])
        else:
            decomposed = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
            out.append(decomposed if decomposed and all(c in _CHARSET for c in decomposed) else "?")
    return "".join(out)


def truncate_middle(text: str, limit: int) -> str:
    """Cut the middle of ``text`` so it fits in ``limit`` chars; the head and tail carry the signal."""
    if len(text) <= limit:
        return text
    marker_len = 64
    keep = max(limit - marker_len, 0)
    head = keep * 2 // 3
    tail = keep - head
    cut = len(text) - head - tail
    marker = f"\n... [truncated {cut} chars] ...\n"
    return text[:head] + marker + (text[len(text) - tail :] if tail else "")


def to_observation(text: str, limit: int) -> str:
    """A valid observation: sanitised, at most ``limit`` chars, never empty."""
    out = truncate_middle(sanitize(text), limit)
    return out if out else "(no output)"


def excerpt(text: str, limit: int = 80) -> str:
    """A short ``repr``-style excerpt of agent input for error messages."""
    shown = text if len(text) <= limit else text[: limit - 3] + "..."
    return sanitize(repr(shown))


def valid_text(text: str) -> str:
    """``text`` as valid UTF-8: lone surrogates (``"\\ud800"``, which no encoder accepts) become U+FFFD.

    The one choke point for text an agent sent that kcgym hands back (kernel sources quoted in
    diagnostics, score records, transcripts), so ``json.dumps``/``model_dump_json`` never raise.
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def json_safe(value: Any) -> Any:
    """``value`` with every string made :func:`valid_text`, dict keys made strings, and numpy scalars,
    tuples and non-finite floats turned into JSON types (NaN and infinities become None)."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {valid_text(str(k)): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return json_safe(value.tolist())
    return valid_text(str(value))


def safe_repr(value: Any, limit: int = 10_000) -> str:
    """``repr(value)`` cut to ``limit`` chars, never raising (an int of over 4,300 digits has no repr)."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001  (ValueError for huge ints; anything from a hostile __repr__)
        if isinstance(value, int):
            return f"<integer of {value.bit_length()} bits>"
        return f"<unprintable {type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."
