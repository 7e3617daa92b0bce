"""The transcript contract, checked against the ``openai`` SDK's own request types.

A transcript is valid OpenAI chat format when its messages and tools validate as the SDK's
``ChatCompletionMessageParam`` / ``ChatCompletionToolParam`` (the shapes a chat-completions
request takes), and every tool call is answered, by id, by the tool message right after it.
"""

from __future__ import annotations

from typing import Any

from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam
from pydantic import TypeAdapter

_MESSAGES = TypeAdapter(list[ChatCompletionMessageParam])
_TOOLS = TypeAdapter(list[ChatCompletionToolParam])


def assert_openai_chat(transcript: dict[str, Any]) -> None:
    messages = transcript["messages"]
    _MESSAGES.validate_python(messages, strict=True)
    _TOOLS.validate_python(transcript["tools"])
    assert [m["role"] for m in messages[:2]] == ["system", "user"]
    ids = [c["id"] for m in messages for c in m.get("tool_calls") or ()]
    assert all(ids) and len(ids) == len(set(ids)), f"tool-call ids must be unique and non-empty: {ids}"
    for i, m in enumerate(messages):
        assert m["role"] != "tool" or (messages[i - 1].get("tool_calls") or [{}])[0].get("id") == m["tool_call_id"]
        for c in m.get("tool_calls") or ():
            assert c["type"] == "function" and isinstance(c["function"]["arguments"], str)
            assert messages[i + 1]["role"] == "tool" and messages[i + 1]["tool_call_id"] == c["id"]
