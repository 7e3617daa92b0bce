"""The LLM agent through the real ``openai`` client against a scripted server on 127.0.0.1."""

from __future__ import annotations

import json
import time

import pytest

from kcgym.eval.episode import run_episode
from kcgym.eval.suite import EpisodeSpec
from tests.baselines.openai_stub import StubServer, error, legacy_call, quirk, slow, text, tool_call, tool_calls
from tests.baselines.transcripts import assert_openai_chat
from tests.envs.fake_accelerator import FAST, SYNTAX

SPEC = EpisodeSpec(env_id="KernelCraft-FAKE-copy", accelerator="FAKE", task="copy", level=1, config=1, run=0, seed=0)
WIN = [tool_call("write_kernel", {"source": FAST}), tool_call("simulate", {}), tool_call("submit", {})]


def play(script, **options):
    with StubServer(script) as server:
        opts = {"model": "stub-model", "base_url": server.base_url, "timeout_s": 10.0, **options}
        record, transcript = run_episode(SPEC, "llm", opts)
    return record, transcript, server.requests


def test_correct_kernel_after_a_syntax_error():
    script = [tool_call("write_kernel", {"source": SYNTAX}, content="first try"), tool_call("assemble", {}), *WIN]
    record, transcript, requests = play(script)
    assert record.success and record.error_class is None
    assert record.speedup == pytest.approx(1.6)
    assert record.first_correct_turn == 4 and record.turns == 5
    assert record.tool_counts == {"assemble": 1, "simulate": 1, "submit": 1, "write_kernel": 2}
    assert (record.tokens.prompt, record.tokens.completion, record.tokens.reasoning) == (500, 50, 15)
    assert record.tokens.api_calls == 5 and record.model == "stub-model"
    # the request: native function calling, the env's own tools, one call per step
    first = requests[0]
    assert first["parallel_tool_calls"] is False and first["tool_choice"] == "auto"
    assert [t["function"]["name"] for t in first["tools"]][0] == "write_kernel"
    assert first["messages"][0]["role"] == "system" and "Workflow" in first["messages"][0]["content"]
    # the transcript contract
    assert set(transcript) == {"env_id", "config", "seed", "agent", "model", "tools", "messages", "reward", "success"}
    assert transcript["success"] is True and transcript["reward"] == pytest.approx(record.reward)
    roles = [m["role"] for m in transcript["messages"]]
    assert roles == ["system", "user"] + ["assistant", "tool"] * 5
    asst = transcript["messages"][2]
    assert asst["content"] == "first try"
    call = asst["tool_calls"][0]
    assert call["type"] == "function" and json.loads(call["function"]["arguments"]) == {"source": SYNTAX}
    assert transcript["messages"][3]["tool_call_id"] == call["id"]
    assert "FAILED" in transcript["messages"][5]["content"]  # the assemble error reached the model
    json.dumps(transcript)  # serialisable as is
    assert_openai_chat(transcript)


def test_a_reply_without_tool_call_is_nudged_once():
    record, transcript, requests = play([text("Here is my plan: ..."), *WIN])
    assert record.success
    msgs = transcript["messages"]
    assert msgs[2] == {"role": "assistant", "content": "Here is my plan: ..."}
    assert msgs[3]["role"] == "user" and "tool call" in msgs[3]["content"]
    assert requests[1]["messages"][-1]["role"] == "user"


def test_two_replies_without_tool_call_end_as_tool_use_failure():
    record, transcript, _ = play([text("COPY"), text("I am done.")])
    assert not record.success and record.error_class == "tool_use"
    assert "without a tool call" in record.error
    assert transcript["success"] is False


def test_malformed_arguments_are_an_ordinary_turn():
    record, transcript, _ = play([tool_call("write_kernel", '{"source": '), *WIN])
    assert record.success
    assert record.tool_counts.get("invalid") == 1
    assert "not valid JSON" in transcript["messages"][3]["content"]


def test_rate_limit_then_success():
    record, _, requests = play([error(429, "slow down", headers={"retry-after": "0"}), *WIN])
    assert record.success and len(requests) == 4


def test_a_500_storm_exhausts_the_retries():
    record, _, requests = play([error(500, "boom")] * 5 + WIN, max_retries=2)
    assert not record.success and record.error_class == "api"
    assert "gave up after 3 attempts" in record.error and len(requests) == 3


def timed(script: list) -> tuple[list, list[float]]:
    """A stub script that also records when each request arrived (monotonic seconds)."""
    arrivals: list[float] = []
    replies = list(script)

    def next_reply(body):
        arrivals.append(time.monotonic())
        return replies.pop(0) if replies else text("(script exhausted)")

    return next_reply, arrivals


def gaps(arrivals: list[float]) -> list[float]:
    return [b - a for a, b in zip(arrivals, arrivals[1:], strict=False)]


# The openai SDK's retry schedule (openai._base_client: 0.5 s doubling up to 8 s, minus up to 25%
# jitter; a Retry-After in (0, 60] s is used as given), measured here against the stub server.
def test_the_sdk_backs_off_exponentially_with_jitter():
    script, arrivals = timed([error(503, "busy")] * 2 + WIN)
    record, _, _ = play(script, max_retries=2)
    assert record.success
    first, second = gaps(arrivals)[:2]
    assert 0.375 <= first < 0.5 + 0.25 and 0.75 <= second < 1.0 + 0.25, (first, second)


def test_retry_after_is_honoured():
    script, arrivals = timed([error(429, "slow down", headers={"retry-after": "1.2"}), *WIN])
    record, _, _ = play(script, max_retries=1)
    assert record.success and 1.2 <= gaps(arrivals)[0] < 1.2 + 0.4, gaps(arrivals)


def test_a_client_error_is_not_retried():
    record, _, requests = play([error(404, "no such model"), *WIN], max_retries=3)
    assert record.error_class == "api" and "NotFoundError (404)" in record.error and len(requests) == 1


def test_an_overflow_reported_as_a_5xx_is_still_an_overflow():
    """Some servers send a 500 for a too-long prompt; the SDK retries it, kcgym still names it."""
    record, _, requests = play([error(500, "prompt is too long")] * 2 + WIN, max_retries=1)
    assert record.error.startswith("context overflow") and len(requests) == 2


def test_a_slow_reply_times_out():
    record, _, _ = play([slow(3.0, WIN[0])] * 2, timeout_s=0.3, max_retries=1)
    assert record.error_class == "api" and "Timeout" in record.error


def test_context_overflow_is_a_clear_api_error():
    overflow = error(400, "This model's maximum context length is 8192 tokens", code="context_length_exceeded")
    record, _, requests = play([tool_call("read_docs", {}), overflow])
    assert record.error_class == "api" and record.error.startswith("context overflow")
    assert len(requests) == 2  # not retried


def test_several_calls_in_one_reply_are_queued_as_steps():
    reply = tool_calls(("write_kernel", {"source": FAST}), ("simulate", {}), ("submit", {}))
    record, transcript, requests = play([reply])
    assert record.success and len(requests) == 1 and record.turns == 3
    assert [m["role"] for m in transcript["messages"][2:]] == ["assistant", "tool"] * 3


def test_a_server_that_rejects_newer_parameters_still_works():
    script = [error(400, "Unrecognized request argument: parallel_tool_calls"),
              error(400, "unknown field max_completion_tokens"), *WIN]
    record, _, requests = play(script, max_tokens=64)
    assert record.success and requests[0]["max_completion_tokens"] == 64
    assert "parallel_tool_calls" not in requests[1] and requests[2]["max_tokens"] == 64
    assert all("max_completion_tokens" not in r and "parallel_tool_calls" not in r for r in requests[2:])


def test_an_unreadable_reply_is_an_api_error():
    record, _, _ = play([{"raw": "<html>502 bad gateway</html>"}, {"raw": '{"choices": "nope"}'}])
    assert record.error_class == "api" and "unreadable reply" in record.error


# -- what real servers send (see baselines/replies.py; found against llama-cpp-python by test_local_llm.py) ------


def test_null_assistant_content_is_sent_as_empty_string():
    """llama-cpp-python answers ``content: null`` beside tool calls with a 500 (the stub does too)."""
    record, transcript, requests = play(list(WIN))
    assert record.success and len(requests) == 3
    assert requests[1]["messages"][2]["content"] == "" and transcript["messages"][2]["content"] is None


@pytest.mark.parametrize("written", [
    "functions.write_kernel:\n" + json.dumps({"source": FAST}),  # llama-cpp-python chatml-function-calling
    "Writing it now.\n<tool_call>" + json.dumps({"name": "write_kernel", "arguments": {"source": FAST}})
    + "</tool_call>",
    "```json\n" + json.dumps({"name": "write_kernel", "parameters": {"source": FAST}}) + "\n```",
    json.dumps({"type": "function", "function": {"name": "write_kernel", "arguments": json.dumps({"source": FAST})}}),
], ids=["functions-prefix", "tool_call-tag", "fenced-json", "bare-json"])
def test_a_tool_call_written_into_the_text_is_played(written):
    record, transcript, requests = play([text(written), *WIN[1:]])
    assert record.success and record.tool_counts["write_kernel"] == 1 and len(requests) == 3
    call = transcript["messages"][2]["tool_calls"][0]
    assert call["function"]["name"] == "write_kernel" and json.loads(call["function"]["arguments"]) == {"source": FAST}
    assert transcript["messages"][2]["content"] in (None, "Writing it now.")
    assert_openai_chat(transcript)


def test_text_that_only_mentions_a_tool_is_nudged():
    record, transcript, _ = play([text('Next I will simulate. {"name": "not_a_tool"}'), *WIN])
    assert record.success and transcript["messages"][3]["role"] == "user"


def test_text_calling_two_tools_in_the_functions_syntax_is_two_steps():
    written = "functions.write_kernel:\n" + json.dumps({"source": FAST}) + "\nfunctions.simulate:\n{}"
    record, transcript, _ = play([text(written), WIN[2]])
    assert record.success and record.turns == 3
    assert [m["tool_calls"][0]["function"]["name"] for m in transcript["messages"][2::2]] == [
        "write_kernel", "simulate", "submit"]


def test_a_legacy_function_call_is_a_tool_call():
    record, transcript, _ = play([legacy_call("write_kernel", {"source": FAST}), *WIN[1:]])
    assert record.success and record.tool_counts["write_kernel"] == 1
    assert_openai_chat(transcript)


def test_tool_calls_win_over_a_disagreeing_legacy_function_call():
    """llama-cpp-python fills ``function_call`` beside ``tool_calls`` with another (or an empty) name."""
    script = [quirk(r, function_call={"name": "assemble:", "arguments": "{}"}) for r in WIN]
    record, _, _ = play(script)
    assert record.success and "assemble" not in record.tool_counts


def test_missing_and_repeated_tool_call_ids_are_replaced():
    script = [quirk(WIN[0], ids=[None]), quirk(WIN[1], ids=["call_1"]), quirk(WIN[2], ids=["call_1"])]
    record, transcript, _ = play(script)
    assert record.success
    assert_openai_chat(transcript)


def test_a_reply_without_usage_counts_the_call_not_tokens():
    record, _, _ = play([quirk(r, usage=False) for r in WIN])
    assert record.success and record.tokens.api_calls == 3 and record.tokens.prompt == record.tokens.completion == 0


def test_content_as_text_parts():
    record, transcript, _ = play([quirk(text("my plan"), parts=True), *WIN])
    assert record.success and transcript["messages"][2] == {"role": "assistant", "content": "my plan"}


@pytest.mark.parametrize("finish", [None, "eos", "stop", "function_call"])
def test_any_finish_reason_with_tool_calls_is_played(finish):
    record, _, _ = play([quirk(r, finish=finish) for r in WIN])
    assert record.success


def test_max_tokens_finish_reason_reads_as_cut_off():
    record, _, _ = play([quirk(text("half a ker"), finish="max_tokens")] * 2)
    assert record.error_class == "tool_use" and "cut off" in record.error


def test_arguments_sent_as_an_object():
    record, transcript, _ = play([{"tool_calls": [("write_kernel", {"source": FAST})]}, *WIN[1:]])
    assert record.success
    assert json.loads(transcript["messages"][2]["tool_calls"][0]["function"]["arguments"]) == {"source": FAST}
