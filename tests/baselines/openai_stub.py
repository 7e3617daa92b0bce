"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for offline agent tests.

Each POST to ``/v1/chat/completions`` takes the next entry of the script (or calls it, if it
is a function of the request body) and answers with it: a tool call, a text reply, an HTTP
error, or a reply after a delay. Requests are kept for assertions. No internet involved.

It also plays the quirks a real server showed (llama-cpp-python 0.3.36, ``chatml-function-calling``,
checked by ``tests/baselines/test_local_llm.py``) so the default suite covers them: like that server
it answers an assistant message whose ``content`` is ``null`` with a 500 validation error, and a
reply can drop ``usage``, omit or repeat tool-call ids, carry a (wrong) legacy ``function_call``
beside ``tool_calls``, send ``content`` as parts, or use another ``finish_reason`` (see ``quirk``).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = dict[str, Any]


def tool_call(name: str, arguments: dict[str, Any] | str, content: str | None = None) -> Reply:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"tool_calls": [(name, raw)], "content": content}


def tool_calls(*calls: tuple[str, dict[str, Any]]) -> Reply:
    return {"tool_calls": [(n, json.dumps(a)) for n, a in calls]}


def text(content: str) -> Reply:
    return {"text": content}


def error(status: int, message: str = "error", code: str | None = None, headers: dict[str, str] | None = None) -> Reply:
    return {"status": status, "message": message, "code": code, "headers": headers or {}}


def slow(seconds: float, reply: Reply) -> Reply:
    return {**reply, "sleep": seconds}


def legacy_call(name: str, arguments: dict[str, Any]) -> Reply:
    """Only the pre-tools ``function_call`` field, no ``tool_calls``."""
    return {"text": None, "function_call": {"name": name, "arguments": json.dumps(arguments)}}


def quirk(reply: Reply, *, ids: list[str | None] | None = None, usage: bool = True, finish: str | None = "",
          function_call: dict[str, str] | None = None, parts: bool = False) -> Reply:
    """``reply`` with a server quirk: tool-call ``ids`` as given (None: no id field), no ``usage``, another
    ``finish_reason`` (None: null), a legacy ``function_call`` beside the tool calls, ``content`` as parts."""
    extra: Reply = {"usage": usage, "function_call": function_call, "parts": parts}
    if ids is not None:
        extra["ids"] = ids
    if finish != "":
        extra["finish"] = finish
    return {**reply, **extra}


class StubServer:
    """``with StubServer(script) as s: OpenAI(base_url=s.base_url)``."""

    def __init__(self, script: list[Reply] | Callable[[dict[str, Any]], Reply]):
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._n = 0
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                reply = stub._next(body)
                if reply.get("sleep"):
                    time.sleep(reply["sleep"])
                status, payload, headers = stub._render(reply, body)
                data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            self._n += 1
            if callable(self.script):
                return self.script(body)
            if not self.script:
                return text("(script exhausted)")
            return self.script.pop(0)

    def _render(self, reply: Reply, body: dict[str, Any]) -> tuple[int, dict[str, Any] | str, dict[str, str]]:
        if "raw" in reply:  # a broken server: whatever bytes it sends
            return 200, reply["raw"], {}
        if "status" in reply:
            err = {"message": reply["message"], "type": "error", "code": reply.get("code")}
            return reply["status"], {"error": err}, reply.get("headers", {})
        nulls = [i for i, m in enumerate(body.get("messages", [])) if m.get("role") == "assistant"
                 and m.get("content") is None]
        if nulls:  # llama-cpp-python's request validation (a 500, not a 400)
            return 500, {"error": {"message": f"validation error: messages.{nulls[0]}.content: Input should be a "
                                              "valid string", "type": "internal_server_error"}}, {}
        message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
        finish = "stop"
        if "text" in reply:
            message["content"] = reply["text"]
        else:
            ids = reply.get("ids") or [f"call_{self._n}_{i}" for i in range(len(reply["tool_calls"]))]
            message["tool_calls"] = [
                {"type": "function", "function": {"name": n, "arguments": a}} | ({"id": ids[i]} if ids[i] else {})
                for i, (n, a) in enumerate(reply["tool_calls"])
            ]
            finish = "tool_calls"
        if reply.get("function_call"):
            message["function_call"] = reply["function_call"]
            finish = "function_call" if "tool_calls" not in message else finish
        if reply.get("parts") and isinstance(message["content"], str):
            message["content"] = [{"type": "text", "text": message["content"]}]
        payload = {
            "id": f"chatcmpl-{self._n}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "stub"),
            "choices": [{"index": 0, "message": message, "finish_reason": reply.get("finish", finish)}],
        }
        if reply.get("usage", True):
            payload["usage"] = {
                "prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110,
                "completion_tokens_details": {"reasoning_tokens": 3},
            }
        return 200, payload, {}

    def __enter__(self) -> StubServer:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
