"""Trajectory export: episodes as chat-format JSONL for SFT or offline RL.

One line per episode, the transcript object that ``kcgym eval`` writes beside
``episodes.jsonl`` (each record's ``transcript`` field, relative to the run directory):

    {"env_id", "config", "seed", "agent", "model", "tools": [OpenAI tool schemas],
     "messages": [system (the env prompt), user, assistant tool calls, tool results, ...],
     "reward", "success"}

``messages`` + ``tools`` is the conversational tool-calling format SFT trainers read (TRL's
``SFTTrainer`` takes both columns as they are); ``reward``/``success`` filter or weight them.
Two sources: :class:`TrajectoryRecorder`, a wrapper that records any env run in that shape,
and :func:`export_run_dir`, which collects the transcripts of a ``kcgym eval`` run directory.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

import gymnasium
from pydantic import BaseModel, ConfigDict, ValidationError

from kcgym.envs.actions import InvalidAction, split_action
from kcgym.text import json_safe, safe_repr

EPISODES_FILE = "episodes.jsonl"
# The first user message of every episode, after the env prompt as the system message. The one source:
# the agents' sessions, the trajectory recorder and the verifiers dataset all open with opening_messages().
KICKOFF = (
    "Write, test and submit the kernel for this task now. Work only through tool calls, one per turn; "
    "the episode ends when you call submit or run out of turns."
)


def opening_messages(system_prompt: str) -> list[dict[str, Any]]:
    """The first two chat messages of an episode: the system prompt (the env's reset observation) and
    :data:`KICKOFF`."""
    return [{"role": "system", "content": system_prompt}, {"role": "user", "content": KICKOFF}]


class FunctionCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: str  # a JSON string, as the model sent it


class ToolCallMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class Message(BaseModel):
    """One OpenAI chat message; extra keys (e.g. a model's reasoning) are kept."""

    model_config = ConfigDict(extra="allow")

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[ToolCallMessage] | None = None
    tool_call_id: str | None = None


class Transcript(BaseModel):
    """One episode in chat form: the contract between ``kcgym eval`` and this exporter."""

    model_config = ConfigDict(extra="allow")

    env_id: str
    config: int
    seed: int
    agent: str
    model: str | None = None
    tools: list[dict[str, Any]]
    messages: list[Message]
    reward: float
    success: bool

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=False)


class TrajectoryRecorder(gymnasium.Wrapper):
    """Records an episode of a kcgym env as a :class:`Transcript` (the shape ``kcgym eval`` writes).

    The env prompt becomes the system message, a fixed kickoff the user message, every action an
    assistant tool call (a malformed one: an assistant text message holding it) and every
    observation a tool message. ``transcript()`` is complete once the episode has ended.
    """

    def __init__(self, env: gymnasium.Env, *, agent: str = "unknown", model: str | None = None):
        super().__init__(env)
        self.agent = agent
        self.model = model
        self.messages: list[dict[str, Any]] = []
        self.tools: list[dict[str, Any]] = []
        self.seed: int | None = None
        self.reward = 0.0
        self.success = False
        self.done = False
        self._calls = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        self.seed = int(info.get("seed", seed if seed is not None else 0))
        u: Any = self.env.unwrapped  # a KernelCraftEnv (Gymnasium types it as a plain Env)
        self.tools = list(info.get("tools") or u.tools)
        self.messages = opening_messages(obs)
        self.reward, self.success, self.done, self._calls = 0.0, False, False, 0
        return obs, info

    def step(self, action: Any):
        if not self.messages:
            raise gymnasium.error.ResetNeeded("call reset() before step()")
        self._calls += 1
        call_id = f"call_{self._calls}"
        try:
            name, arguments, given_id = split_action(action)
            call_id = given_id or call_id
            raw = arguments if isinstance(arguments, str) else _as_text({} if arguments is None else arguments)
            self.messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": raw}}],
                }
            )
            answer: dict[str, Any] = {"role": "tool", "tool_call_id": call_id}
        except InvalidAction:  # not a tool call at all: the model wrote text, the env answers as a user
            self.messages.append({"role": "assistant", "content": _as_text(action)})
            answer = {"role": "user"}
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.messages.append({**answer, "content": obs})
        self.reward += float(reward)
        if terminated or truncated:
            self.done = True
            self.success = bool((info.get("episode") or {}).get("success"))
        return obs, reward, terminated, truncated, info

    def transcript(self) -> dict[str, Any]:
        """The episode so far as a transcript object (JSON-ready)."""
        u: Any = self.env.unwrapped
        record = Transcript(
            env_id=u.env_id,
            config=u.cfg.index,
            seed=self.seed if self.seed is not None else 0,
            agent=self.agent,
            model=self.model,
            tools=self.tools,
            messages=[Message(**m) for m in self.messages],
            reward=self.reward,
            success=self.success,
        ).to_json()
        return json_safe(record)  # valid UTF-8 and JSON types, whatever the agent sent


def _as_text(action: Any) -> str:
    if isinstance(action, str):
        return action
    try:
        return json.dumps(action)
    except (TypeError, ValueError):  # not JSON, or an int too long to print
        return safe_repr(action)


class TrajectoryError(ValueError):
    """A run directory or transcript that does not match the contract; says where."""


def read_run_dir(run_dir: str | Path) -> Iterator[dict[str, Any]]:
    """Every transcript of a ``kcgym eval`` run directory, in ``episodes.jsonl`` order (validated).

    Records without a transcript (an agent that crashed before its first turn) are skipped.
    """
    run_dir = Path(run_dir)
    episodes = run_dir / EPISODES_FILE
    if not episodes.is_file():
        raise TrajectoryError(f"{run_dir} is not a kcgym eval run directory: {EPISODES_FILE} not found")
    with episodes.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            where = f"{episodes}:{lineno}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                raise TrajectoryError(f"{where}:{e.colno}: not valid JSON ({e.msg})") from None
            if not isinstance(record, dict):
                raise TrajectoryError(f"{where}: expected a JSON object, got {type(record).__name__}")
            rel = record.get("transcript")
            if rel is None:
                continue
            path = run_dir / str(rel)
            if not path.is_file():
                raise TrajectoryError(f"{where}: transcript file {rel!r} not found in {run_dir}")
            yield load_transcript(path)


def load_transcript(path: str | Path) -> dict[str, Any]:
    """One transcript file, validated against the contract (errors name the file and the field)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise TrajectoryError(f"{path}:{e.lineno}:{e.colno}: not valid JSON ({e.msg})") from None
    try:
        return Transcript.model_validate(data).to_json()
    except ValidationError as e:
        first = e.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise TrajectoryError(f"{path}: field {field!r}: {first['msg']} ({len(e.errors())} error(s))") from None


def write_jsonl(
    transcripts: Iterable[dict[str, Any]],
    out: str | Path,
    *,
    min_reward: float | None = None,
    only_success: bool = False,
) -> int:
    """Write transcripts one per line (UTF-8 JSON); returns how many passed the filters."""
    n = 0
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for t in transcripts:
            if only_success and not t["success"]:
                continue
            if min_reward is not None and t["reward"] < min_reward:
                continue
            f.write(json.dumps(t, ensure_ascii=False) + "\n")
            n += 1
    tmp.replace(out)  # a reader never sees a half-written file
    return n


def export_run_dir(
    run_dir: str | Path, out: str | Path, *, min_reward: float | None = None, only_success: bool = False
) -> int:
    """``kcgym eval`` run directory -> chat-format JSONL; returns the number of episodes written."""
    return write_jsonl(read_run_dir(run_dir), out, min_reward=min_reward, only_success=only_success)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kcgym.integrations.trajectories",
        description="Export a kcgym eval run directory as chat-format JSONL (SFT / offline RL).",
    )
    parser.add_argument("run_dir")
    parser.add_argument("out", help="output .jsonl file")
    parser.add_argument("--min-reward", type=float, default=None)
    parser.add_argument("--only-success", action="store_true")
    args = parser.parse_args(argv)
    try:
        n = export_run_dir(args.run_dir, args.out, min_reward=args.min_reward, only_success=args.only_success)
    except TrajectoryError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {n} episode(s) to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
