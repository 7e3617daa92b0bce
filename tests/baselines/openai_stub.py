"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for offline agent tests.

Each POST to ``/v1/chat/completions`` takes the next entry of the script (or calls it, if it
is a function of the request body) and answers with it: a tool call, a text reply, an HTTP
error, or a reply after a delay. Requests are kept for assertions. No internet involved.
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
        message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
        finish = "stop"
        if "text" in reply:
            message["content"] = reply["text"]
        else:
            message["tool_calls"] = [
                {"id": f"call_{self._n}_{i}", "type": "function", "function": {"name": n, "arguments": a}}
                for i, (n, a) in enumerate(reply["tool_calls"])
            ]
            finish = "tool_calls"
        usage = {
            "prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110,
            "completion_tokens_details": {"reasoning_tokens": 3},
        }
        payload = {
            "id": f"chatcmpl-{self._n}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "stub"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }
        return 200, payload, {}

    def __enter__(self) -> StubServer:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
