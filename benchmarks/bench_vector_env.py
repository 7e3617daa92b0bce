"""Vector env throughput: whole episodes per second, single env vs ``gym.make_vec`` sync and async.

Each episode: reset, write_kernel (the compiler's kernel), simulate, submit. ``single`` steps N
envs one after another in a loop; ``sync`` and ``async`` step them through ``gym.make_vec``
(async: one spawned process per env, pipes; see ``kcgym.envs.vector.async_vector_kwargs``).
kcgym registers no native ``vector_entry_point``: sub-envs run different kernels, and the
simulators batch input sets of one program, so there is no cross-env simulation to fuse.

    python benchmarks/bench_vector_env.py [--env-id ID] [--num-envs 4] [--episodes 3]
"""

from __future__ import annotations

import argparse
import os
import time

import gymnasium as gym

import kcgym  # noqa: F401
from kcgym.envs.vector import async_vector_kwargs


def actions(kernel: str) -> list[dict]:
    return [
        {"name": "write_kernel", "arguments": {"source": kernel}},
        {"name": "simulate", "arguments": {}},
        {"name": "submit", "arguments": {}},
    ]


def run_single(env_id: str, n: int, episodes: int, kernel: str, kwargs: dict) -> float:
    envs = [gym.make(env_id, **kwargs) for _ in range(n)]
    t0 = time.perf_counter()
    for ep in range(episodes):
        for i, env in enumerate(envs):
            env.reset(seed=ep * n + i)
            for a in actions(kernel):
                env.step(a)
    return time.perf_counter() - t0


def run_vector(env_id: str, mode: str, n: int, episodes: int, kernel: str, kwargs: dict) -> float:
    envs = gym.make_vec(env_id, num_envs=n, vectorization_mode=mode, vector_kwargs=async_vector_kwargs(mode), **kwargs)
    envs.reset(seed=0)
    t_start = time.perf_counter()
    for a in actions(kernel):  # warm-up episode: worker start-up (spawn, JAX import, cache load) is not timed
        envs.step(tuple(a for _ in range(n)))
    startup = time.perf_counter() - t_start
    t0 = time.perf_counter()
    for _ in range(episodes):
        envs.step(tuple({"name": "read_docs"} for _ in range(n)))  # next-step autoreset
        for a in actions(kernel):
            envs.step(tuple(a for _ in range(n)))
    seconds = time.perf_counter() - t0
    print(f"  ({mode}: first episode incl. start-up {startup:.2f} s)")
    envs.close()
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--env-id", default="KernelCraft-NPU-matmul")
    ap.add_argument("--config", type=int, default=1)
    ap.add_argument("--num-envs", type=int, default=4)
    ap.add_argument("--episodes", type=int, default=3)
    args = ap.parse_args()
    kwargs = {"config": args.config, "docs_in_prompt": False}
    env = gym.make(args.env_id, **kwargs).unwrapped
    kernel = env.accelerator.compile(env.task, env.cfg, env.hw)
    run_single(args.env_id, 1, 1, kernel, kwargs)  # warm-up: compile / persistent cache, baseline
    total = args.num_envs * args.episodes
    print(
        f"{args.env_id} C{args.config}: {args.num_envs} envs x {args.episodes} episodes; "
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}"
    )
    for name, fn in (
        ("single", lambda: run_single(args.env_id, args.num_envs, args.episodes, kernel, kwargs)),
        ("sync", lambda: run_vector(args.env_id, "sync", args.num_envs, args.episodes, kernel, kwargs)),
        ("async", lambda: run_vector(args.env_id, "async", args.num_envs, args.episodes, kernel, kwargs)),
    ):
        seconds = fn()
        print(f"  {name:7s} {seconds:7.2f} s  {total / seconds:7.1f} episodes/s")


if __name__ == "__main__":
    main()
