"""Fast fuzz profile (default suite): mutated programs and raw actions never take the env down.

The long profile (>= 10,000 cases per machine) is ``benchmarks/bench_fuzz.py``; both use the
generators and properties of :mod:`tests.fuzz.harness`.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from kcgym.envs.kernel_env import KernelCraftEnv
from kcgym.scoring import BatchScorer
from tests.fuzz.harness import MACHINES, actions, check_assembly, check_batch, check_step, sources

FAST = settings(max_examples=40, deadline=None, database=None, derandomize=True,
                suppress_health_check=list(HealthCheck), phases=(Phase.explicit, Phase.generate))  # no shrinking: a
# finding is reported as found (shrinking a multi-second case takes minutes)
ENV_TASK = "relu"
_ENVS: dict[str, KernelCraftEnv] = {}


def env_for(machine: str) -> KernelCraftEnv:
    if machine not in _ENVS:
        _ENVS[machine] = KernelCraftEnv(machine, ENV_TASK, 1, docs_in_prompt=False, max_turns=4)
    return _ENVS[machine]


@pytest.mark.parametrize("machine", MACHINES)
def test_mutated_programs_assemble_or_fail_cleanly(machine):
    @FAST
    @given(sources(machine))
    def run(source):
        check_assembly(machine, source)

    run()


@pytest.mark.parametrize("machine", MACHINES)
def test_raw_actions_never_raise(machine):
    env = env_for(machine)

    @settings(FAST, max_examples=40)
    @given(st.lists(actions(machine), min_size=1, max_size=4))
    def run(batch):
        for action in batch:
            check_step(env, action)

    run()


@pytest.mark.parametrize("machine", MACHINES)
def test_mutated_kernels_simulate_and_submit(machine):
    env = env_for(machine)

    @settings(FAST, max_examples=4)
    @given(sources(machine), st.sampled_from(["simulate", "profile", "submit"]))
    def run(source, tool):
        env.reset(seed=0)
        check_step(env, {"name": "write_kernel", "arguments": {"source": source}})
        check_step(env, {"name": tool, "arguments": {}})

    run()


@pytest.mark.parametrize("machine", MACHINES)
def test_batch_scorer_on_mutated_kernels(machine):
    scorer = BatchScorer(env_for(machine), max_workers=1)

    @settings(FAST, max_examples=4)
    @given(st.lists(st.one_of(sources(machine), st.none()), min_size=1, max_size=3))
    def run(kernels):
        check_batch(scorer, kernels)

    run()
