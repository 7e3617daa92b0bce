"""verifiers adapter: one rollout against a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytest.importorskip("verifiers")
pytest.importorskip("datasets")

from kcgym.integrations.verifiers import load_environment  # noqa: E402
from tests.envs.fake_accelerator import FAST  # noqa: E402
from tests.integrations.conftest import FAKE_ID  # noqa: E402


class ScriptedModel(BaseHTTPRequestHandler):
    """``POST /v1/chat/completions``: answers each request with the next scripted assistant message."""

    script: list[dict] = []
    requests: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(body)
        turn = len(type(self).requests) - 1
        message = self.script[min(turn, len(self.script) - 1)]
        reply = {
            "id": f"chatcmpl-{turn}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "scripted"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", **message},
                    "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:  # keep test output clean
        pass


def tool_call(i: int, name: str, **arguments) -> dict:
    return {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


@pytest.fixture
def server():
    ScriptedModel.requests = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), ScriptedModel)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def rollout(base_url: str, **env_kwargs):
    from openai import AsyncOpenAI
    from verifiers.clients import OpenAIChatCompletionsClient

    env = load_environment(env_ids=[FAKE_ID], configs=[1], seeds=[5], **env_kwargs)
    row = env.dataset[0]
    client = OpenAIChatCompletionsClient(AsyncOpenAI(base_url=base_url, api_key="test", max_retries=0, timeout=30))
    rollout_input = {"prompt": row["prompt"], "example_id": 0, "info": row["info"], "answer": ""}
    return asyncio.run(env.run_rollout(rollout_input, client, "scripted", {})), row


def test_one_rollout_scores_the_submitted_kernel(server: str):
    ScriptedModel.script = [
        {"content": None, "tool_calls": [tool_call(1, "write_kernel", source=FAST)]},
        {"content": "checking", "tool_calls": [tool_call(2, "simulate")]},
        {"content": None, "tool_calls": [tool_call(3, "submit")]},
    ]
    out, row = rollout(server)
    assert out["reward"] == pytest.approx(1 + 3 * math.log(1.6) / math.log(3.2))  # FAST: 100 vs 160 baseline, SOL 50
    assert out["metrics"]["kcgym_correct"] == 1.0 and out["metrics"]["kcgym_speedup"] == pytest.approx(1.6)
    assert len(ScriptedModel.requests) == 3  # submit ended the episode: no fourth model call
    first, last = ScriptedModel.requests[0], ScriptedModel.requests[-1]
    assert {t["function"]["name"] for t in first["tools"]} >= {"write_kernel", "simulate", "submit", "read_docs"}
    assert first["messages"][0]["content"] == row["prompt"][0]["content"]
    tool_results = [m for m in last["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_results] == ["call_1", "call_2"]
    assert "correct" in tool_results[1]["content"].lower()


def test_a_text_answer_ends_the_episode_with_the_current_kernel(server: str):
    ScriptedModel.script = [
        {"content": None, "tool_calls": [tool_call(1, "write_kernel", source=FAST)]},
        {"content": "I am done."},
    ]
    out, _ = rollout(server, max_turns=6)
    assert out["reward"] == pytest.approx(1 + 3 * math.log(1.6) / math.log(3.2))
    assert len(ScriptedModel.requests) == 2


def test_bad_env_ids_are_named():
    with pytest.raises(ValueError, match="did you mean 'KernelCraft-NPU-relu'"):
        load_environment(env_ids=["KernelCraft-NPU-rel"])
