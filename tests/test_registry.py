"""The (accelerator x task) table and its registration with Gymnasium."""

from __future__ import annotations

import gymnasium as gym
import pytest

import kcgym
from kcgym import registry


def test_ids_follow_the_table():
    assert registry.env_id("NPU", "matmul") == "KernelCraft-NPU-matmul"
    assert [registry.env_id(a, t) for a, ts in registry.SUPPORTED.items() for t in ts] == kcgym.ENV_IDS
    assert len(set(kcgym.ENV_IDS)) == len(kcgym.ENV_IDS)
    assert set(registry.SUPPORTED["NPU"]) == {
        "silu",
        "relu",
        "gelu",
        "softmax",
        "layernorm",
        "rmsnorm",
        "gemv",
        "matmul",
        "batch_matmul",
        "linear",
        "conv2d",
        "depthwise_conv",
        "rope",
        "ffn",
        "swiglu",
        "sdpa",
        "flash_attention",
        "mha",
        "gqa",
        "mqa",
        "conv_block",
        "decoder_llama",
        "decoder_t5",
    }


def test_every_id_is_registered_without_a_time_limit():
    for eid in kcgym.ENV_IDS:
        spec = gym.spec(eid)
        assert spec.entry_point == "kcgym.envs.kernel_env:KernelCraftEnv"
        assert spec.max_episode_steps is None  # the env truncates itself so the last kernel is scored
        acc, task = registry.parse_env_id(eid)
        assert spec.kwargs == {"accelerator": acc, "task": task}


def test_register_all_is_idempotent():
    before = len(gym.registry)
    assert registry.register_all() == kcgym.ENV_IDS
    assert len(gym.registry) == before


def test_every_supported_task_exists():
    from kcgym.tasks import TASKS, task_for

    for acc, tasks in registry.SUPPORTED.items():
        for t in tasks:
            assert task_for(acc, t).name == t  # resolved in the accelerator's number-format family
    assert kcgym.TASKS is TASKS


def test_lookup_errors_suggest():
    with pytest.raises(KeyError, match="did you mean 'KernelCraft-NPU-matmul'"):
        registry.parse_env_id("KernelCraft-NPU-matmull")
    with pytest.raises(KeyError, match="did you mean 'KernelCraft-NPU-matmul'"):
        registry.parse_env_id("NPU-matmul")
    with pytest.raises(KeyError, match="did you mean 'NPU'"):
        registry.ACCELERATORS["npu"]
    assert list(registry.ACCELERATORS) == list(registry.SUPPORTED)


def test_import_is_light():
    """`import kcgym` registers envs without importing a simulator or JAX."""
    import subprocess
    import sys

    code = "import sys, kcgym; print('jax' in sys.modules, 'kcgym.sims.npu' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
