"""Parse and validate an action (one tool call) into ``(tool name, arguments, call id)``.

Accepted shapes, as dicts or as a JSON string of one:

- flat: ``{"name": ..., "arguments": {...} | "<json>", "id"?: ...}`` (also the Responses-API
  ``{"type": "function_call", "name", "arguments", "call_id"}``);
- chat completions: ``{"id"?: ..., "type": "function", "function": {"name", "arguments"}}``,
  or the OpenAI SDK's tool-call object itself.

Anything else raises :class:`InvalidAction` with a message precise enough for a model to fix
its call; the env turns it into an ordinary (wasted) turn, never an exception.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kcgym.envs.tools import PAPER_NAMES, TOOLS, Param, Tool
from kcgym.suggest import did_you_mean
from kcgym.text import excerpt, safe_repr, sanitize, valid_text

_FLAT_KEYS = ("name", "arguments", "id", "call_id", "type", "status")
_CHAT_KEYS = ("id", "type", "function", "index")
_FUNCTION_KEYS = ("name", "arguments")
EXAMPLE = '{"name": "simulate", "arguments": {}}'
# Envelope keys other tool-call formats use, too far from ours for a spelling hint ("args" is not a
# near miss of "arguments"): the known mistakes, named like the paper's tool names in PAPER_NAMES.
KEY_ALIASES: dict[str, str] = {"args": "arguments", "params": "arguments", "parameters": "arguments",
                               "input": "arguments", "tool": "name", "tool_name": "name", "function_name": "name"}


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]
    call_id: str | None = None


class InvalidAction(ValueError):
    """A malformed tool call; ``call_id`` and ``tool`` are kept where they could be read."""

    def __init__(self, message: str, *, call_id: str | None = None, tool: str | None = None):
        super().__init__(message)
        self.message = message
        self.call_id = call_id
        self.tool = tool


def _show(value: Any, limit: int = 40) -> str:
    """A short ``repr`` of a JSON value the agent sent, for error messages."""
    return sanitize(safe_repr(value, limit))


def _check_keys(obj: dict[str, Any], allowed: tuple[str, ...], where: str) -> None:
    extra = [k for k in obj if k not in allowed]
    if extra:
        k = extra[0] if isinstance(extra[0], str) else safe_repr(extra[0], 60)
        alias = KEY_ALIASES.get(k)
        hint = f" (did you mean {alias!r}?)" if alias in allowed else did_you_mean(k, list(allowed))
        raise InvalidAction(
            f"unexpected key {_show(k, 60)} in {where}{hint}; "
            f"allowed keys: {', '.join(allowed)}"
        )


def _loads(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as e:  # ValueError: also an integer of over 4,300 digits
        detail = (
            f"{e.msg} at line {e.lineno} column {e.colno}" if isinstance(e, json.JSONDecodeError) else str(e)
        )
        raise InvalidAction(f"{what} is not valid JSON ({detail}): {excerpt(text)}") from None


def _to_mapping(action: Any) -> dict[str, Any]:
    if hasattr(action, "model_dump") and callable(action.model_dump):  # OpenAI SDK objects (pydantic)
        action = action.model_dump(exclude_none=True)
    if isinstance(action, (bytes, bytearray)):
        action = action.decode("utf-8", errors="replace")
    if isinstance(action, str):
        if not action.strip():
            raise InvalidAction(f"empty action; send one tool call, e.g. {EXAMPLE}")
        action = _loads(action.strip(), "the action")
    if isinstance(action, list):
        raise InvalidAction(
            f"got a list of {len(action)} item(s); send exactly one tool call per step, e.g. {EXAMPLE}"
        )
    if not isinstance(action, Mapping):
        raise InvalidAction(f"a tool call must be a JSON object, got {type(action).__name__}; e.g. {EXAMPLE}")
    return dict(action)


def _call_id(obj: dict[str, Any]) -> str | None:
    cid = obj.get("id", obj.get("call_id"))
    return cid if isinstance(cid, str) else None


def split_action(action: Any) -> tuple[str, Any, str | None]:
    """``(name, raw arguments, call id)`` from any accepted shape, checking the shape only."""
    obj = _to_mapping(action)
    call_id = _call_id(obj)
    try:
        if "function" in obj:
            _check_keys(obj, _CHAT_KEYS, "the tool call")
            if obj.get("type", "function") != "function":
                raise InvalidAction(f"tool call type must be 'function', got {_show(obj['type'])}")
            fn = obj["function"]
            if not isinstance(fn, Mapping):
                raise InvalidAction(
                    f"'function' must be an object with name and arguments, got {type(fn).__name__}"
                )
            fn = dict(fn)
            _check_keys(fn, _FUNCTION_KEYS, "'function'")
        else:
            _check_keys(obj, _FLAT_KEYS, "the tool call")
            if obj.get("type", "function") not in ("function", "function_call"):
                raise InvalidAction(f"tool call type must be 'function', got {_show(obj['type'])}")
            fn = obj
        for key in ("id", "call_id"):
            if obj.get(key) is not None and not isinstance(obj[key], str):
                raise InvalidAction(f"'{key}' must be a string, got {type(obj[key]).__name__}")
        if "name" not in fn:
            raise InvalidAction(f"the tool call has no 'name'; e.g. {EXAMPLE}")
        name = fn["name"]
        if not isinstance(name, str) or not name:
            raise InvalidAction(f"'name' must be a non-empty string, got {_show(name)}")
        name = valid_text(name)
        return name, fn.get("arguments"), call_id
    except InvalidAction as e:
        e.call_id = call_id
        raise


def _type_name(value: Any) -> str:
    return {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        list: "array",
        dict: "object",
    }.get(type(value), type(value).__name__)


def _check_value(p: Param, value: Any) -> tuple[Any, str | None]:
    if p.type == "string":
        if not isinstance(value, str):
            return None, f"argument {p.name!r} must be a string, got {_type_name(value)}"
        return value, None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        return (
            None,
            f"argument {p.name!r} must be an integer, got {_type_name(value)} {_show(value)}",
        )
    if p.minimum is not None and value < p.minimum or p.maximum is not None and value > p.maximum:
        return None, f"argument {p.name!r} must be in {p.minimum}..{p.maximum}, got {_show(value)}"
    return value, None


def validate_arguments(tool: Tool, raw: Any) -> dict[str, Any]:
    """Arguments of ``tool`` from a dict or JSON string; all unknown/missing/wrong-typed ones at once."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        raw = {}
    if isinstance(raw, str):
        raw = _loads(raw, f"the arguments of {tool.name}")
    if not isinstance(raw, Mapping):
        raise InvalidAction(f"the arguments of {tool.name} must be a JSON object, got {_type_name(raw)}")
    names = [p.name for p in tool.params]
    problems: list[str] = []
    for key in raw:
        if key not in names:
            takes = f"it takes: {', '.join(names)}" if names else "it takes no arguments"
            word = key if isinstance(key, str) else safe_repr(key, 60)
            problems.append(f"unexpected argument {_show(word, 60)}{did_you_mean(word, names)} ({takes})")
    args: dict[str, Any] = {}
    for p in tool.params:
        value = raw.get(p.name)
        if value is None:
            if p.required:
                problems.append(f"missing required argument {p.name!r} ({p.type})")
            args[p.name] = p.default
            continue
        args[p.name], problem = _check_value(p, value)
        if problem:
            problems.append(problem)
    if problems:
        raise InvalidAction(f"bad arguments for {tool.signature()}: " + "; ".join(problems))
    return args


def parse_action(action: Any, tools: Mapping[str, Tool] = TOOLS) -> ToolCall:
    """The tool call in ``action``, validated against ``tools``; :class:`InvalidAction` otherwise."""
    name, raw, call_id = split_action(action)
    tool = tools.get(name)
    if tool is None:
        hint = (
            f" (did you mean {PAPER_NAMES[name]!r}?)"
            if name in PAPER_NAMES
            else did_you_mean(name, list(tools))
        )
        listing = ", ".join(t.signature() for t in tools.values())
        raise InvalidAction(
            f"unknown tool {excerpt(name, 60)}{hint}; available tools: {listing}", call_id=call_id
        )
    try:
        args = validate_arguments(tool, raw)
    except InvalidAction as e:
        e.call_id, e.tool = call_id, name
        raise
    return ToolCall(name=name, arguments=args, call_id=call_id)
