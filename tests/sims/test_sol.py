"""The speed of light is a true bound (no compiler or expert kernel beats it), it is reported, and it scores 4.0.

On the default hw, tests/conformance/ checks every compiler and expert kernel against the bound (C1 and
cheap C2 by default, the rest under ``-m slow``); here: the roofline floor of every cell stays below the
bound (analytic, every config), and the kernels respect the bound on one ``hw=`` override per machine
(config 1 by default, configs 2-5 under ``-m slow``). The results file of ``benchmarks/bench_sol.py``
(every config, default and override hw) is checked against the bound as the code computes it now, and
the README table against that file.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

from kcgym.envs.rewards import RewardSpec
from kcgym.evaluation import Evaluator
from kcgym.registry import ACCELERATORS, task_for
from kcgym.sims.sol import SolBound, SolTerm
from kcgym.tasks import tasks_for

ROOT = Path(__file__).resolve().parents[2]
# one timing override per machine: latency and bandwidth, the constants the bound leans on most
HW_OVERRIDES = {
    "NPU": {"hbm_latency": 40, "hbm_bytes_per_cycle": 128},
    "VLIW": {"dma_latency": 24, "dma_bytes_per_cycle": 64},
    "RVV": {"ext_latency": 8, "ext_bytes_per_cycle": 8},
    "CPU": {"mem_latency": 8, "mem_units": 2},
}


def _bench():
    spec = importlib.util.spec_from_file_location("bench_sol", ROOT / "benchmarks" / "bench_sol.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cases(configs):
    for acc_name, acc in ACCELERATORS.items():
        for name in tasks_for(acc.numerics):
            task = task_for(acc_name, name)
            if acc.supports(task):
                for c in configs:
                    yield acc_name, name, c


def _check(acc_name: str, task_name: str, index: int, hw_overrides: dict) -> None:
    acc = ACCELERATORS[acc_name]
    task = task_for(acc_name, task_name)
    cfg = task.config(acc_name, index)
    hw = acc.make_hw(hw_overrides)
    ev = Evaluator(acc, task, cfg, hw)
    sol = ev.speed_of_light()
    assert ev.roofline() <= sol.cycles  # the anti-cheat floor never exceeds the bound
    inputs = ev.input_sets(0, 1)
    for kind, source in (("compiler", acc.compile(task, cfg, hw)), ("expert", acc.expert(task, cfg, hw))):
        if source is None:
            continue
        rep = ev.evaluate(source, inputs, with_baseline=False, max_steps=50_000_000)
        assert rep.correct, f"{kind} kernel incorrect"
        assert rep.cycles >= sol.cycles, (
            f"{acc_name} {task_name} C{index} hw={hw_overrides}: the {kind} kernel ran {rep.cycles} cycles, below "
            f"the speed of light {sol.cycles} ({sol.lines()})"
        )
        assert not rep.beats_sol and not rep.below_roofline


def test_the_roofline_floor_never_exceeds_the_bound_at_any_config():
    """Analytic, so every config of every cell on both hws (the kernels are checked by conformance and below)."""
    for acc_name, task_name, index in _cases([1, 2, 3, 4, 5]):
        acc = ACCELERATORS[acc_name]
        task = task_for(acc_name, task_name)
        for overrides in (None, HW_OVERRIDES[acc_name]):
            ev = Evaluator(acc, task, task.config(acc_name, index), acc.make_hw(overrides))
            assert ev.roofline() <= ev.speed_of_light().cycles, (acc_name, task_name, index, overrides)


# on the default hw, tests/conformance/ checks every compiler and expert kernel against the bound
@pytest.mark.parametrize("acc_name, task_name, index", list(_cases([1])))
def test_no_compiler_or_expert_kernel_beats_the_speed_of_light_on_another_hw(acc_name, task_name, index):
    _check(acc_name, task_name, index, HW_OVERRIDES[acc_name])


@pytest.mark.slow
@pytest.mark.parametrize("acc_name, task_name, index", list(_cases([2, 3, 4, 5])))
def test_no_compiler_or_expert_kernel_beats_the_speed_of_light_on_another_hw_at_large_configs(acc_name, task_name,
                                                                                             index):
    _check(acc_name, task_name, index, HW_OVERRIDES[acc_name])


def test_measured_cycles_in_the_results_file_respect_the_bound_as_computed_now():
    rows = _bench().load()
    seen = {(r["accelerator"], r["task"], r["config"], r["hw_default"]) for r in rows}
    for acc_name, task_name, c in _cases([1, 2, 3, 4, 5]):  # every config (VLIW's override: C1-C2)
        assert (acc_name, task_name, c, True) in seen
        assert (acc_name == "VLIW" and c > 2) or (acc_name, task_name, c, False) in seen
    for r in rows:
        acc = ACCELERATORS[r["accelerator"]]
        task = task_for(r["accelerator"], r["task"])
        hw = acc.make_hw(r["hw"])
        sol = acc.speed_of_light(task, task.config(r["accelerator"], r["config"]), hw)
        for kind in ("compiler", "expert"):
            if f"{kind}_cycles" in r:
                assert r[f"{kind}_correct"] is not False  # None: cycles reused from bench_vliw.py (faults only)
                assert r[f"{kind}_cycles"] >= sol.cycles, (r["accelerator"], r["task"], r["config"], kind, r["hw"])


def test_readme_table_is_the_results_file():
    bench = _bench()
    readme = (ROOT / "README.md").read_text()
    block = readme.split(bench.BEGIN, 1)[1].split(bench.END, 1)[0].strip()
    assert block == bench.render(bench.load()).strip(), "README is stale: rerun python benchmarks/bench_sol.py"


def test_every_task_scores_4_at_the_speed_of_light_and_1_at_the_compiler():
    spec, paper = RewardSpec(), RewardSpec(kind="paper")
    rows = [r for r in _bench().load() if r["hw_default"]]
    assert rows
    for r in rows:
        base, sol = r["compiler_cycles"], r["sol_cycles"]
        headroom = spec.headroom(base, sol)
        assert spec.score(True, base / sol, headroom) == pytest.approx(4.0)
        assert spec.score(True, 1.0, headroom) == 1.0
        assert spec.score(True, 10 * base / sol, headroom) == pytest.approx(4.0)  # beating it: no extra credit
        assert paper.score(True, base / sol) == pytest.approx(1 + min(3.0, math.log2(base / sol)))


@pytest.mark.parametrize("acc_name", ["NPU", "VLIW", "RVV"])
def test_the_compiler_kernel_scores_1_end_to_end(acc_name):
    import gymnasium

    import kcgym  # noqa: F401
    from kcgym.registry import env_id

    env = gymnasium.make(env_id(acc_name, "relu"), config=1, docs_in_prompt=False).unwrapped
    env.reset(seed=0)
    env.step({"name": "write_kernel", "arguments": {"source": env.evaluator.baseline().source}})
    obs, r, term, trunc, info = env.step({"name": "profile", "arguments": {}})
    assert "Speed-of-light terms" in obs and "(binding" in obs
    obs, r, term, trunc, info = env.step({"name": "submit", "arguments": {}})
    assert term and r == pytest.approx(1.0)
    assert "Speed of light:" in obs and "of speed of light" in obs
    assert info["sol_cycles"] == info["episode"]["sol_cycles"] == env.evaluator.speed_of_light().cycles
    assert 0 < info["sol_share"] <= 1 and not info["beats_sol"]


def test_a_kernel_that_beats_the_bound_is_flagged_and_scored_at_it(monkeypatch):
    from tests.envs import fake_accelerator as fa
    from tests.envs.conftest import call, fake_env

    bound = SolBound.of([SolTerm(name="work", cycles=120, explanation="a bound the fake kernel beats"),
                         SolTerm(name="floor", cycles=50, explanation="physical", physical=True)])
    monkeypatch.setattr(type(fa.FAKE), "speed_of_light", lambda self, task, cfg, hw: bound)
    env = fake_env()
    env.reset(seed=0)
    call(env, "write_kernel", source=fa.FAST)  # 100 cycles: above the floor, below the bound
    obs, r, term, trunc, info = call(env, "submit")
    assert info["beats_sol"] and not info["below_roofline"] and info["episode"]["beats_sol"]
    assert r == pytest.approx(4.0)  # as if it ran at sol_cycles, no more
    assert "beats_sol" in obs
    env = fake_env(reward={"kind": "paper"})
    env.reset(seed=0)
    call(env, "write_kernel", source=fa.FAST)
    assert call(env, "submit")[1] == pytest.approx(1 + math.log2(160 / 120))  # the paper's formula, capped too


def test_bound_orders_terms_binding_first_and_follows_the_hw():
    b = SolBound.of([SolTerm(name="a", cycles=5, explanation=""), SolTerm(name="b", cycles=9, explanation="",
                                                                           physical=True),
                     SolTerm(name="zero", cycles=0, explanation="")])
    assert b.cycles == 9 and [t.name for t in b.terms] == ["b", "a"] and b.binding.name == "b"
    assert b.physical_cycles == 9 and b.share(18) == 0.5 and b.share(None) is None
    assert b.lines(18)[0].startswith("b: 9 cycles (binding, 50% of your cycles)")
    npu = ACCELERATORS["NPU"]
    task = task_for("NPU", "relu")
    cfg = task.config("NPU", 1)
    slow = npu.speed_of_light(task, cfg, npu.make_hw({"hbm_latency": 400}))
    assert slow.cycles > npu.speed_of_light(task, cfg, npu.make_hw()).cycles
    assert slow.binding.name == "hbm_latency_chain"
