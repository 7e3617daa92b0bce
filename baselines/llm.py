"""The paper's agent: an LLM driving the env through native function calling, nothing else.

Any OpenAI-compatible endpoint works (OpenAI, vLLM, llama.cpp server, Ollama, OpenRouter):
the tools are ``env.unwrapped.tools`` as given, the system prompt is the env's reset prompt
(role, two-phase workflow, tools, hardware config, memory layout, task, ISA docs: the
paper's App. H structure, built once in :mod:`kcgym.envs.prompts`), and each tool call the
model makes is one env step. There is no scaffold beyond that loop, as in the paper.

Failures are recorded, not raised: a reply without a tool call is nudged once and then ends
the episode as a tool-use failure (the paper's "T"); rate limits, 5xx, timeouts and dropped
connections are retried by the ``openai`` SDK itself (``max_retries`` on the client: exponential
backoff from 0.5 s up to 8 s with jitter, a server's ``Retry-After`` honoured), and what is left
after its retries ends the episode as an API failure. kcgym keeps only the classification: which
failure is transient (the SDK retried it), a context overflow (ends the episode at once, with a clear
message), a parameter an older server rejects (dropped for the rest of the episode), or an
unreadable reply.
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

from baselines import replies
from baselines.base import Agent
from baselines.session import Session

NUDGE = (
    "You replied without calling a tool, so nothing happened. This environment only acts through tool "
    "calls: call write_kernel with the complete program, then simulate, and call submit when the kernel "
    "is correct. Reply with a tool call now."
)
_CONTEXT_MARKERS = ("context_length_exceeded", "context length", "maximum context", "too many tokens",
                    "prompt is too long", "exceeds the context")


# Parameters some OpenAI-compatible servers reject -> what to send instead (None: drop it). Without
# parallel_tool_calls=False several calls in one reply are still played one step each.
_FALLBACKS: dict[str, str | None] = {"parallel_tool_calls": None, "max_completion_tokens": "max_tokens"}


class APIFailure(Exception):
    """The endpoint could not produce a reply (after retries where retrying makes sense)."""


def missing_credentials(base_url: str | None, key_env: str) -> str | None:
    """Why the default endpoint (OpenAI) cannot be called, or None: local servers often need no key."""
    if base_url or os.environ.get("OPENAI_BASE_URL") or os.environ.get(key_env):
        return None
    return (f"no API key: ${key_env} is not set and the endpoint is the default (OpenAI); export {key_env}=... "
            "(or name the variable with --api-key-env), or pass --base-url URL for a local server")


def is_context_overflow(error: Exception) -> bool:
    code = str(getattr(error, "code", "") or "")
    text = f"{code} {error}".lower()
    return any(m in text for m in _CONTEXT_MARKERS)


class LLMAgent(Agent):
    """Native function calling through the ``openai`` client; one tool call per env step."""

    name: ClassVar[str] = "llm"

    def __init__(self, options=None):
        super().__init__(options)
        self._client: Any = None
        self._rejected: set[str] = set()  # request parameters this server refused

    @property
    def model(self) -> str | None:
        return self.options.model

    def client(self) -> Any:
        if self._client is None:
            from openai import OpenAI

            o = self.options
            # The SDK retries transient failures (429, 408, 409, 5xx, timeouts, dropped connections).
            self._client = OpenAI(
                api_key=os.environ.get(o.api_key_env) or "not-needed",
                base_url=o.base_url,
                timeout=o.timeout_s,
                max_retries=o.max_retries,
            )
        return self._client

    def play(self, session: Session) -> None:
        if not self.options.model:
            raise ValueError("the llm agent needs a model name (--model)")
        session.start()
        missing = missing_credentials(self.options.base_url, self.options.api_key_env)
        if missing:  # no key can work: say so at once instead of retrying for a minute
            session.fail("api", missing)
            return
        nudges = 0
        tool_names = {t["function"]["name"] for t in session.tools}
        used_ids: set[str] = set()  # tool-call ids must be unique in a transcript; servers repeat or omit them
        while not session.done:
            try:
                message, finish = self._complete(session)
            except APIFailure as e:
                session.fail("api", str(e))
                return
            calls, content = replies.parse(message, tool_names)
            if not calls:
                session.say("assistant", content)
                if nudges >= self.options.max_nudges:
                    cut = (" (its last reply was cut off at the output-token limit)"
                           if replies.is_cut_off(finish) else "")
                    session.fail("tool_use", f"the model replied without a tool call {nudges + 1} time(s){cut}")
                    return
                nudges += 1
                session.say("user", NUDGE)
                continue
            # Several calls in one reply are queued: each is its own env step (and assistant message).
            for i, call in enumerate(calls):
                if session.done:
                    break
                session.call(
                    call.name,
                    call.arguments,
                    call_id=replies.unique_id(call.id, used_ids, session.new_call_id),
                    content=content if i == 0 else None,
                )

    # -- the model call ------------------------------------------------------------------------
    def _request(self, session: Session) -> dict[str, Any]:
        o = self.options
        kwargs: dict[str, Any] = {
            "model": o.model,
            "messages": _wire(session.messages),
            "tools": session.tools,
            "tool_choice": "auto",
            "parallel_tool_calls": False,
        }
        if o.temperature is not None:
            kwargs["temperature"] = o.temperature
        if o.reasoning_effort is not None:
            kwargs["reasoning_effort"] = o.reasoning_effort
        if o.max_tokens is not None:
            kwargs["max_completion_tokens"] = o.max_tokens
        for name in self._rejected:
            value = kwargs.pop(name, None)
            if _FALLBACKS[name] is not None and value is not None:
                kwargs[_FALLBACKS[name]] = value
        return kwargs

    def _complete(self, session: Session) -> tuple[Any, str | None]:
        """``(message, finish_reason)`` of one chat completion (the SDK has retried transient errors);
        raises APIFailure when there is no usable reply."""
        import openai

        while True:
            request = self._request(session)
            try:
                response = self.client().chat.completions.create(**request)
            except openai.BadRequestError as e:
                if is_context_overflow(e):
                    raise APIFailure(f"context overflow: the conversation no longer fits the model's context "
                                     f"window ({e})") from None
                rejected = [k for k in _FALLBACKS if k in request and k in str(e)]
                if rejected:  # an older server: drop (or rename) the parameter for the rest of the episode
                    self._rejected.update(rejected)
                    continue
                raise APIFailure(f"bad request (400): {e}") from None
            except openai.APIError as e:
                raise APIFailure(self._classify(e)) from None
            except ValueError as e:  # an unreadable reply (bad JSON, wrong shape)
                raise APIFailure(f"unreadable reply: {_describe(e)}") from None
            session.tokens.add(getattr(response, "usage", None))
            choices = getattr(response, "choices", None) or []
            if not choices:
                raise APIFailure("the endpoint returned no choices")
            return choices[0].message, getattr(choices[0], "finish_reason", None)

    def _classify(self, e: Exception) -> str:
        """What an error the SDK raised (after its own retries, where it retries) means for the record."""
        if is_context_overflow(e):
            return f"context overflow: {e}"
        if is_transient(e):
            return f"gave up after {self.options.max_retries + 1} attempts: {_describe(e)}"
        if getattr(e, "status_code", None) is not None:  # a 4xx the SDK does not retry (401, 403, 404, ...)
            return _describe(e)
        return f"unreadable reply: {_describe(e)}"


def is_transient(error: Exception) -> bool:
    """Whether the SDK retries this failure: rate limits, request/lock timeouts, 5xx, timeouts, dropped
    connections (its ``_should_retry``; a server's ``x-should-retry`` header aside)."""
    import openai

    if isinstance(error, openai.APITimeoutError | openai.APIConnectionError):
        return True
    status = getattr(error, "status_code", None)
    return isinstance(error, openai.APIStatusError) and status is not None and (status in (408, 409, 429)
                                                                               or status >= 500)


def _wire(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages as sent: an assistant tool call's ``None`` content becomes ``""`` (llama-cpp-python's
    server rejects ``null`` there, with a 500); the transcript keeps OpenAI's ``null``."""
    return [{**m, "content": ""} if m["role"] == "assistant" and m.get("content") is None else m for m in messages]


def _describe(error: Exception) -> str:
    status = getattr(error, "status_code", None)
    kind = type(error).__name__
    return f"{kind} ({status}): {error}" if status else f"{kind}: {error}"
