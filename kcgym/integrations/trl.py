"""TRL adapter: a ``GRPOTrainer`` reward function backed by kcgym, and a prompt dataset builder.

```python
from trl import GRPOConfig, GRPOTrainer
from kcgym.integrations.trl import KernelReward, build_dataset

dataset = build_dataset([("KernelCraft-NPU-relu", 1), ("KernelCraft-NPU-matmul", 1)], repeats=64)
trainer = GRPOTrainer(model=..., reward_funcs=KernelReward(), train_dataset=dataset, args=GRPOConfig(...))
```

Each dataset row carries its ``env_id``, ``config`` and ``seed`` columns; TRL passes them to
the reward function beside the completions, which are grouped by (env id, config) and scored
through :mod:`kcgym.scoring` in one batch per group. The reward of a completion is exactly the
score the multi-turn env's ``submit`` would give its kernel (0 if it is missing, does not
assemble or is wrong; else ``1 + clip(log2(speedup), -0.9, 3)``).
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

from kcgym.envs.rewards import RewardSpec
from kcgym.integrations.prompts import chat_prompt
from kcgym.scoring import BatchScorer, Completion, KernelScore, internal_error_scores, scorer_for

log = logging.getLogger(__name__)

EnvConfig = tuple[str, int]


class KernelReward:
    """A TRL reward function: ``(prompts, completions, **dataset columns) -> list[float]``.

    Args:
        env_id, config: used for rows without ``env_id`` / ``config`` columns.
        reward: a :class:`RewardSpec` (or its dict) for every env; hw: hardware overrides.
        seed: hidden-input seed for rows without a ``seed`` column.
        hidden_inputs: input sets each kernel is checked on.
        require_fence: a completion without a fenced code block scores 0 (else the whole text is the kernel).
    """

    __name__ = "kcgym_reward"  # TRL logs rewards under the function's name

    def __init__(
        self,
        env_id: str | None = None,
        config: int = 1,
        *,
        reward: RewardSpec | dict[str, Any] | None = None,
        hw: dict[str, Any] | None = None,
        seed: int = 0,
        hidden_inputs: int = 3,
        require_fence: bool = True,
    ):
        self.env_id = env_id
        self.config = int(config)
        self.reward = RewardSpec.of(reward)
        self.hw = hw
        self.seed = int(seed)
        self.hidden_inputs = int(hidden_inputs)
        self.require_fence = require_fence
        self.history: list[list[KernelScore]] = []  # every call's records, in order (for logs and tests)
        self._lock = threading.Lock()
        if env_id is not None:
            self.scorer(env_id, self.config)  # fail fast on a bad id

    def scorer(self, env_id: str, config: int) -> BatchScorer:
        return scorer_for(env_id, config, hw=self.hw, reward=self.reward, hidden_inputs=self.hidden_inputs)

    def __call__(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Completion],
        env_id: Sequence[str] | None = None,
        config: Sequence[int] | None = None,
        seed: Sequence[int] | None = None,
        log_metric: Callable[[str, float], None] | None = None,
        **kwargs: Any,
    ) -> list[float]:
        n = len(completions)
        ids = list(env_id) if env_id is not None else [self.env_id] * n
        if any(i is None for i in ids):
            raise ValueError(
                "no env id for a completion: give the dataset an 'env_id' column (build_dataset does) "
                "or construct KernelReward(env_id=...)"
            )
        configs = [int(c) for c in config] if config is not None else [self.config] * n
        seeds = [int(s) for s in seed] if seed is not None else [self.seed] * n
        if not len(ids) == len(configs) == len(seeds) == n:
            raise ValueError(f"{n} completions but {len(ids)} env ids, {len(configs)} configs and {len(seeds)} seeds")
        groups: dict[tuple[str, int, int], list[int]] = defaultdict(list)
        for i, key in enumerate(zip(cast(list[str], ids), configs, seeds, strict=True)):
            groups[key].append(i)
        records: list[KernelScore | None] = [None] * n
        for (eid, cfg, s), rows in groups.items():
            try:
                batch = self.scorer(eid, cfg).score_completions(
                    [completions[i] for i in rows], seed=s, require_fence=self.require_fence
                )
            except Exception as e:  # noqa: BLE001  (a kcgym bug costs this group its reward, not the run)
                log.exception("internal error scoring %d completion(s) for %s C%s", len(rows), eid, cfg)
                batch = internal_error_scores(e, len(rows))
            for i, rec in zip(rows, batch, strict=True):
                records[i] = rec.model_copy(update={"index": i})
        done = [r for r in records if r is not None]
        with self._lock:
            self.history.append(done)
        if log_metric is not None and done:
            log_metric("kcgym/correct", sum(r.correct for r in done) / n)
            log_metric("kcgym/assembled", sum(r.assembled for r in done) / n)
            log_metric("kcgym/kernel_found", sum(r.kernel_found for r in done) / n)
        return [r.reward for r in done]


def build_dataset(
    pairs: Iterable[EnvConfig | str],
    *,
    repeats: int = 1,
    docs_in_prompt: bool = True,
    hw: dict[str, Any] | None = None,
    reward: RewardSpec | dict[str, Any] | None = None,
    first_seed: int = 0,
):
    """A ``datasets.Dataset`` of conversational prompts, one row per (env id, config) and repeat.

    Columns: ``prompt`` (``[system, user]`` chat messages, TRL's conversational format),
    ``env_id``, ``config`` and ``seed`` (distinct per row, so hidden inputs vary over training).
    A bare env id in ``pairs`` means config 1.
    """
    from datasets import Dataset

    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    rows: list[dict[str, Any]] = []
    prompts: dict[EnvConfig, list[dict[str, Any]]] = {}
    for pair in pairs:
        eid, cfg = (pair, 1) if isinstance(pair, str) else (pair[0], int(pair[1]))
        if (eid, cfg) not in prompts:
            env = scorer_for(eid, cfg, hw=hw, reward=reward).env
            prompts[(eid, cfg)] = chat_prompt(env, docs_in_prompt=docs_in_prompt)
        rows.append({"prompt": prompts[(eid, cfg)], "env_id": eid, "config": cfg})
    if not rows:
        raise ValueError("build_dataset needs at least one (env id, config) pair")
    out: list[dict[str, Any]] = []
    for _ in range(repeats):
        for row in rows:
            out.append({**row, "seed": first_seed + len(out)})
    return Dataset.from_list(out)
