"""Reading a chat-completion reply into tool calls, whatever shape the server gave it.

OpenAI-compatible servers agree on the request and differ in the reply. Seen against real
servers (llama.cpp through llama-cpp-python, and the formats vLLM and Ollama fall back to when
their tool parser is off) and each covered by a case of ``tests/baselines/openai_stub.py``:

- native ``tool_calls`` (the normal case), with ``arguments`` a JSON string or already an object;
- the legacy ``function_call`` field instead of ``tool_calls``;
- no tool call at all but the call written into ``content``: ``functions.NAME:`` + JSON
  (llama-cpp-python's ``chatml-function-calling`` syntax, which its text branch can emit),
  ``<tool_call>{"name": ..., "arguments": ...}</tool_call>`` (Hermes/Qwen templates), or a bare
  or fenced JSON object ``{"name": ..., "arguments"|"parameters": ...}`` (Llama 3 style);
- ``content`` as a list of text parts instead of a string;
- tool-call ids missing, empty, or repeated (within a reply or across the episode);
- ``finish_reason`` ``length`` / ``max_tokens`` (cut off), ``function_call``, ``eos`` or none.

A call written in text is taken only if it names one of the env's tools, so prose that merely
mentions a tool stays prose (and is nudged). Arguments are passed on as the model wrote them:
malformed JSON is the env's to judge, as for any policy.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

CUT_OFF = frozenset({"length", "max_tokens"})  # finish reasons that mean "stopped at the output-token limit"

_FUNCTIONS = re.compile(r"functions\.([A-Za-z_][\w-]*):")
_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)


@dataclass(frozen=True)
class Call:
    """One tool call of a reply; ``id`` is the server's (None when it gave none)."""

    name: str
    arguments: str | dict[str, Any]
    id: str | None = None


def text_of(content: Any) -> str | None:
    """``content`` as a string: some servers send a list of ``{"type": "text", "text": ...}`` parts."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") if isinstance(p, dict) else getattr(p, "text", None) for p in content]
        return "".join(p for p in parts if isinstance(p, str))
    return str(content)


def is_cut_off(finish_reason: Any) -> bool:
    return str(finish_reason or "").lower() in CUT_OFF


def parse(message: Any, tool_names: set[str]) -> tuple[list[Call], str | None]:
    """``(calls, content)`` of an assistant message; content loses the text a call was read from."""
    content = text_of(getattr(message, "content", None))
    calls = [_native(c) for c in getattr(message, "tool_calls", None) or []]
    calls = [c for c in calls if c is not None]
    if calls:
        return calls, content
    legacy = getattr(message, "function_call", None)
    if legacy is not None and _get(legacy, "name"):
        return [Call(_get(legacy, "name"), _get(legacy, "arguments") or "{}")], content
    if content:
        return _from_text(content, tool_names)
    return [], content


def _get(obj: Any, key: str) -> Any:
    """A field of an SDK object, or of a dict where the SDK left one (an unexpected shape)."""
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def _native(call: Any) -> Call | None:
    fn = _get(call, "function")
    if fn is None:
        return None
    arguments = _get(fn, "arguments")
    return Call(_get(fn, "name") or "", "" if arguments is None else arguments, _get(call, "id") or None)


def _from_text(content: str, tool_names: set[str]) -> tuple[list[Call], str | None]:
    """Tool calls written into a text reply (see the module docstring), or none."""
    marks = [m for m in _FUNCTIONS.finditer(content) if m.group(1) in tool_names]
    if marks:
        calls = []
        for m, nxt in zip(marks, [*marks[1:], None], strict=True):
            body = content[m.end(): nxt.start() if nxt else len(content)].strip()
            calls.append(Call(m.group(1), body or "{}"))
        return calls, content[: marks[0].start()].strip() or None
    tagged = _TAGGED.findall(content)
    if tagged:
        calls = [c for c in (_json_call(t) for t in tagged) if c is not None and c.name in tool_names]
        if calls:
            return calls, content[: content.index("<tool_call>")].strip() or None
    stripped = content.strip()
    fenced = _FENCE.match(stripped)
    call = _json_call(fenced.group(1) if fenced else stripped)
    if call is not None and call.name in tool_names:
        return [call], None
    return [], content


def _json_call(text: str) -> Call | None:
    """``{"name": N, "arguments"|"parameters": A}`` (A an object or a JSON string), else None."""
    try:
        obj = json.loads(text)
    except ValueError:
        return None
    if isinstance(obj, dict) and isinstance(obj.get("function"), dict):  # {"type": "function", "function": {...}}
        obj = obj["function"]
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
        return None
    arguments = obj.get("arguments", obj.get("parameters", {}))
    return Call(obj["name"], arguments if isinstance(arguments, (str, dict)) else json.dumps(arguments))


def unique_id(call_id: str | None, used: set[str], fresh: Any) -> str:
    """The server's id unless it is missing or already used in this episode; then ``fresh()``'s."""
    while not call_id or call_id in used:
        call_id = fresh()
    used.add(call_id)
    return call_id
