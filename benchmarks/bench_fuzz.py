"""Long fuzz profile: >= 10,000 generated cases per machine through the assembler, env.step and BatchScorer.

The generators and properties are those of the fast profile in the default suite
(:mod:`tests.fuzz.harness`); this runs many more cases, without shrinking (a finding is reported
as found), and writes what it did to ``benchmarks/results/fuzz.json``:

  assembly   mutated programs through ``accelerator.assemble`` (``--cases`` per machine)
  actions    lists of 1-4 raw actions through ``env.step`` (``--cases / 10``)
  kernels    a mutated kernel written, then simulated / profiled / submitted (``--cases / 100``)
  batch      groups of 1-3 mutated kernels through ``BatchScorer.score`` (``--cases / 200``)

    nice -n 10 python benchmarks/bench_fuzz.py [--cases 10000] [--machines NPU VLIW RVV] [--quick]

``--quick`` runs 200 cases per machine and does not write the results file.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kcgym.envs.kernel_env import KernelCraftEnv  # noqa: E402
from kcgym.scoring import BatchScorer  # noqa: E402
from tests.fuzz.harness import (  # noqa: E402
    MACHINES,
    actions,
    check_assembly,
    check_batch,
    check_step,
    sources,
)

RESULTS = ROOT / "benchmarks" / "results" / "fuzz.json"
DEFAULT_CASES = 10_000


def run_profile(name: str, strategy, prop, n: int) -> dict:
    """Run ``prop`` on ``n`` generated cases; ``{cases, seconds, findings}`` (a finding stops the profile)."""
    count = 0

    @settings(max_examples=n, deadline=None, database=None, phases=(Phase.generate,),
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def run(case):
        nonlocal count
        count += 1
        prop(case)

    t0 = time.perf_counter()
    findings = []
    try:
        run()
    except Exception as e:  # noqa: BLE001  (a finding: recorded, not raised)
        notes = "\n".join(getattr(e, "__notes__", []))
        findings.append(f"{type(e).__name__}: {str(e)[:300]}\n{notes[:2000]}")
    seconds = time.perf_counter() - t0
    print(f"  {name:9} {count:>7} cases {seconds:8.1f} s  findings: {len(findings)}", flush=True)
    for f in findings:
        print("    " + f[:1500].replace("\n", "\n    "), flush=True)
    return {"cases": count, "seconds": round(seconds, 1), "findings": findings}


def fuzz_machine(machine: str, cases: int) -> dict:
    env = KernelCraftEnv(machine, "relu", 1, docs_in_prompt=False, max_turns=4)
    scorer = BatchScorer(env, max_workers=1)
    tools = st.sampled_from(["simulate", "profile", "submit"])

    def kernel_episode(case):
        source, tool = case
        env.reset(seed=0)
        check_step(env, {"name": "write_kernel", "arguments": {"source": source}})
        check_step(env, {"name": tool, "arguments": {}})

    def action_list(batch):
        for action in batch:
            check_step(env, action)

    print(machine, flush=True)
    return {
        "assembly": run_profile("assembly", sources(machine), lambda s: check_assembly(machine, s), cases),
        "actions": run_profile("actions", st.lists(actions(machine), min_size=1, max_size=4), action_list,
                               max(1, cases // 10)),
        "kernels": run_profile("kernels", st.tuples(sources(machine), tools), kernel_episode, max(1, cases // 100)),
        "batch": run_profile("batch", st.lists(st.one_of(sources(machine), st.none()), min_size=1, max_size=3),
                             lambda ks: check_batch(scorer, ks), max(1, cases // 200)),
    }


def readme_sentence(results: dict) -> str:
    """The README's sentence about the long profile, from its results (a test keeps the two equal)."""
    t = results["total"]
    machines = results["machines"]
    asm = min(r["assembly"]["cases"] for r in machines.values())
    n = results["cases_per_machine"]
    which = ("The long profile" if n >= DEFAULT_CASES
             else f"A reduced run (`--cases {n}`; the default is {DEFAULT_CASES:,})")
    return (f"{which} ran {t['cases']:,} cases ({asm:,}+ assembly cases per machine on "
            f"{', '.join(machines)}, plus raw-action, kernel and batch cases) in {t['seconds'] / 60:.0f} min "
            f"with {t['findings']} finding(s).")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=DEFAULT_CASES, help="assembly cases per machine")
    ap.add_argument("--machines", nargs="*", default=list(MACHINES))
    ap.add_argument("--quick", action="store_true", help="200 cases per machine, no results file")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()
    cases = 200 if args.quick else args.cases
    t0 = time.perf_counter()
    per_machine = {m: fuzz_machine(m, cases) for m in args.machines}
    total = {
        "cases": sum(p["cases"] for r in per_machine.values() for p in r.values()),
        "seconds": round(time.perf_counter() - t0, 1),
        "findings": sum(len(p["findings"]) for r in per_machine.values() for p in r.values()),
    }
    print(f"total: {total['cases']} cases in {total['seconds']} s, {total['findings']} finding(s)")
    if not args.quick:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"cases_per_machine": cases, "machines": per_machine, "total": total},
                                       indent=1) + "\n")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
