"""verifiers adapter: kcgym's multi-turn tool env as a verifiers ``MultiTurnEnv`` (extra ``verifiers``).

```python
from kcgym.integrations.verifiers import load_environment

env = load_environment(env_ids=["KernelCraft-NPU-relu"], configs=[1, 2], seeds=range(4))
results = env.evaluate(client, model="...", num_examples=8)   # or train with prime-rl / vf trainers
```

Each dataset row is one episode: ``prompt`` = [system: the env's task prompt, user: kickoff],
``info`` = {"kcgym": {env_id, config, seed}}. A rollout makes that kcgym env, resets it with the seed and
steps it with every tool call the model makes (the tools are kcgym's own: the same schemas,
validation and error messages as ``gym.make``); the episode ends on ``submit``, at the env's
turn limit, or when the model answers without a tool call (then the current kernel is
evaluated as if submitted, as at the turn limit). The rubric's reward is the episode's return,
i.e. the env's :class:`~kcgym.envs.rewards.RewardSpec` score of the final kernel on hidden
inputs; ``correct``, ``speedup`` and ``turns`` are logged as metrics (weight 0).

Uses the verifiers 0.3 ``MultiTurnEnv``/``Rubric`` API (``verifiers==0.3.1``; 0.4 replaced it).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from typing import Any

import gymnasium
import verifiers as vf
from verifiers.types import Messages, State, Tool, ToolMessage

import kcgym  # noqa: F401  (registers the env ids)
from kcgym.envs.tools import openai_tools
from kcgym.integrations.trajectories import opening_messages

_ENV = "kcgym_env"  # state keys
_DONE = "kcgym_done"
_EPISODE = "kcgym_episode"
_RETURN = "kcgym_return"
log = logging.getLogger(__name__)
_INFO = "kcgym"  # info[_INFO] = {env_id, config, seed}; verifiers' EnvGroup owns info["env_id"]


def kcgym_tool_defs() -> list[Tool]:
    """kcgym's tools as verifiers tool definitions (the schemas of ``env.unwrapped.tools``)."""
    return [
        Tool(
            name=t["function"]["name"], description=t["function"]["description"], parameters=t["function"]["parameters"]
        )
        for t in openai_tools()
    ]


class KernelCraftVerifiersEnv(vf.MultiTurnEnv):
    """Plays kcgym episodes: every assistant tool call is one ``env.step``; rewards come from the env.

    Args:
        env_kwargs: passed to ``gym.make`` for every episode (``max_turns``, ``reward``, ``hw``, ...).
    """

    def __init__(self, env_kwargs: dict[str, Any] | None = None, **kwargs: Any):
        self.env_kwargs = dict(env_kwargs or {})
        rubric = vf.Rubric(funcs=[kcgym_reward, kcgym_correct, kcgym_speedup, kcgym_turns], weights=[1.0, 0, 0, 0])
        kwargs.setdefault("max_turns", -1)  # the kcgym env's own turn budget ends the episode
        super().__init__(rubric=rubric, tool_defs=kcgym_tool_defs(), **kwargs)

    async def setup_state(self, state: State) -> State:
        info = _info(state)
        env = gymnasium.make(info["env_id"], config=int(info.get("config", 1)), **self.env_kwargs)
        env.reset(seed=int(info.get("seed", 0)))
        state[_ENV] = env
        state[_DONE] = False
        state[_RETURN] = 0.0
        state[_EPISODE] = None
        return state

    async def env_response(self, messages: Messages, state: State, **kwargs: Any) -> Messages:
        """One tool message per tool call of the last assistant message (a text answer is settled by
        :meth:`kcgym_episode_over` before this is called)."""
        replies = []
        for call in getattr(messages[-1], "tool_calls", None) or []:
            if state[_DONE]:
                break
            action = {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
            replies.append(self._step(state, action, call.id))
        if state[_DONE]:
            state["final_env_response"] = replies
        return replies

    @staticmethod
    def _step(state: State, action: dict[str, Any], call_id: str | None) -> ToolMessage | dict[str, Any]:
        try:
            obs, reward, terminated, truncated, info = state[_ENV].step(action)
        except Exception as e:  # noqa: BLE001  (a kcgym bug ends this rollout with reward 0, not the run)
            log.exception("internal error in a kcgym rollout step")
            what = f"{type(e).__name__}: {e}"
            obs = f"internal error in kcgym ({what}); the episode is over. This is a kcgym bug; please report it."
            reward, terminated, truncated = 0.0, True, False
            info = {"internal_error": what, "episode": {"success": False, "score": 0.0, "correct": False,
                                                          "speedup": None, "error_class": "internal_error"}}
        state[_RETURN] += float(reward)
        if terminated or truncated:
            state[_DONE] = True
            state[_EPISODE] = info.get("episode")
        if call_id is None:
            return {"role": "user", "content": obs}
        return ToolMessage(role="tool", content=obs, tool_call_id=call_id)

    @vf.stop
    async def kcgym_episode_over(self, state: State) -> bool:
        if state.get(_DONE):
            return True
        # the model answered without a tool call: settle the episode now (no further model turn)
        if state["trajectory"]:
            last = state["trajectory"][-1]["completion"][-1]
            if getattr(last, "role", None) == "assistant" and not getattr(last, "tool_calls", None):
                msg = self._step(state, {"name": "submit", "arguments": {}}, None)
                if not state[_DONE]:  # no kernel was ever written: submit cannot end the episode
                    state[_DONE] = True
                state["final_env_response"] = [msg]
                return True
        return False

    @vf.cleanup
    async def close_kcgym_env(self, state: State) -> None:
        env = state.get(_ENV)
        if env is not None:
            env.close()
            state[_ENV] = None


async def kcgym_reward(state: State) -> float:
    """The episode's return: the env's score of the final kernel (0 if none was correct)."""
    return float(state.get(_RETURN, 0.0))


async def kcgym_correct(state: State) -> float:
    return float(bool((state.get(_EPISODE) or {}).get("correct")))


async def kcgym_speedup(state: State) -> float:
    return float((state.get(_EPISODE) or {}).get("speedup") or 0.0)


async def kcgym_turns(state: State) -> float:
    return float((state.get(_EPISODE) or {}).get("turns") or 0)


def _info(state: State) -> dict[str, Any]:
    info = state.get("info") or {}
    if isinstance(info, str):
        info = json.loads(info)
    episode = info.get(_INFO) if isinstance(info, dict) else None
    if not isinstance(episode, dict) or "env_id" not in episode:
        raise ValueError(
            f"dataset row has no info[{_INFO!r}] = {{env_id, config, seed}}; build it with kcgym's load_environment"
        )
    return episode


def episode_dataset(
    env_ids: Sequence[str], configs: Iterable[int], seeds: Iterable[int], env_kwargs: dict[str, Any] | None = None
):
    """One row per (env id, config, seed): ``prompt`` [system: task prompt, user: kickoff] and ``info``."""
    from datasets import Dataset

    rows = []
    seeds, configs = list(seeds), list(configs)
    for eid in env_ids:
        for cfg in configs:
            env: Any = gymnasium.make(eid, config=cfg, **(env_kwargs or {})).unwrapped
            prompt = env.prompt
            for seed in seeds:
                rows.append(
                    {
                        "prompt": opening_messages(prompt),
                        "answer": "",
                        "info": {_INFO: {"env_id": eid, "config": int(cfg), "seed": int(seed)}},
                    }
                )
    if not rows:
        raise ValueError("load_environment needs at least one env id, config and seed")
    return Dataset.from_list(rows)


def load_environment(
    env_ids: Sequence[str] | str = ("KernelCraft-NPU-relu",),
    configs: Iterable[int] = (1,),
    seeds: Iterable[int] = range(8),
    eval_seeds: Iterable[int] | None = None,
    **env_kwargs: Any,
) -> KernelCraftVerifiersEnv:
    """The verifiers entry point: kcgym episodes over (env ids x configs x seeds).

    ``env_kwargs`` go to ``gym.make`` (e.g. ``max_turns=10``, ``docs_in_prompt=False``,
    ``reward={"mode": "dense"}``). ``eval_seeds`` (default: ``seeds``) build the eval dataset.
    """
    ids = [env_ids] if isinstance(env_ids, str) else list(env_ids)
    configs = list(configs)
    for eid in ids:
        if eid not in gymnasium.registry:
            from kcgym.registry import parse_env_id

            try:
                parse_env_id(eid)
            except KeyError as e:
                raise ValueError(e.args[0]) from None
    train = episode_dataset(ids, configs, seeds, env_kwargs)
    evaluation = episode_dataset(ids, configs, eval_seeds, env_kwargs) if eval_seeds is not None else train
    return KernelCraftVerifiersEnv(env_kwargs=env_kwargs, dataset=train, eval_dataset=evaluation)
