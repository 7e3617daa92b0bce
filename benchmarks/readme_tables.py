"""The README's measured numbers, generated from the committed results files (one source per fact).

Every table (or sentence) of measured numbers in README.md sits between ``<!-- generated: NAME -->`` and
``<!-- end generated -->``; :data:`BLOCKS` says, per NAME, which benchmark script renders it from which
results file. The benchmark writes the results file; this rewrites the README from the files:

    python benchmarks/readme_tables.py           # check: name every stale block, exit 1 if any
    python benchmarks/readme_tables.py --write   # rewrite every block from its results file

``tests/test_readme_numbers.py`` runs the check, so a README number that disagrees with its results file
fails the suite. To add a block: a ``render``-style function in the benchmark (results rows -> Markdown),
an entry here, and the markers in the README (the first ``--write`` fills them). An entry whose script
or results file does not exist yet (``optional``) is skipped until both do.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
RESULTS = BENCH / "results"
README = ROOT / "README.md"
END = "<!-- end generated -->"


def begin(name: str) -> str:
    return f"<!-- generated: {name} -->"


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@dataclass(frozen=True)
class Block:
    """One generated README block: ``render(module, results)`` of ``script`` over ``results`` (file names)."""

    name: str
    script: str  # benchmarks/<script>.py
    results: tuple[str, ...]  # files under benchmarks/results/, the first required, the rest optional
    render: Callable[[ModuleType, list[Path]], str]
    inline: bool = False  # a sentence inside a paragraph (no newlines around the content)
    optional: bool = False  # skipped while the script or its first results file does not exist

    def paths(self) -> list[Path]:
        return [RESULTS / r for r in self.results]

    def available(self) -> bool:
        return (BENCH / f"{self.script}.py").exists() and self.paths()[0].exists()

    def text(self) -> str:
        """The block's content as the results files say it should read."""
        return self.render(bench(self.script), self.paths()).strip()


def _spin(m: ModuleType, p: list[Path]) -> str:
    return m.readme_sentence(_jsonl(p[0]), _jsonl(p[1]) if p[1].exists() else None)


def _speed(m: ModuleType, p: list[Path]) -> str:
    return m.readme_table(_jsonl(p[0]))


BLOCKS: tuple[Block, ...] = (
    Block("npu-compiler", "bench_npu", ("npu.jsonl",), lambda m, p: m.readme_table(m.load(p[0]))),
    Block("npu-composites", "bench_npu", ("npu.jsonl",), lambda m, p: m.readme_composites(m.load(p[0]))),
    Block("npu-experts", "bench_npu_experts", ("npu_experts.jsonl",), lambda m, p: m.render(m.load(p[0]))),
    Block("vliw-experts", "bench_vliw", ("vliw.jsonl",), lambda m, p: m.readme_speedups(m.load(str(p[0])))),
    Block("vliw-compiler", "bench_vliw", ("vliw.jsonl",), lambda m, p: m.readme_compiler(m.load(str(p[0])))),
    Block("vliw-baseline", "bench_vliw_baseline", ("vliw_baseline.jsonl",), lambda m, p: m.readme_table(m.load(p[0]))),
    Block("compile", "bench_compile", ("compile.jsonl",), lambda m, p: m.render(_jsonl(p[0]))),
    Block("assemble", "bench_assemble", ("assemble.jsonl",), lambda m, p: m.render(_jsonl(p[0])), optional=True),
    Block("rvv-compiler", "bench_rvv", ("rvv.jsonl",), lambda m, p: m.readme_table(m.load(p[0]))),
    Block("rvv-experts", "bench_rvv", ("rvv_experts.jsonl",), lambda m, p: m.render_experts(m.load(p[0]))),
    Block("rvv-speed", "bench_rvv", ("rvv_speed.jsonl",), lambda m, p: m.render_speed(m.load(p[0]))),
    Block("rvv-baseline", "bench_rvv_baseline", ("rvv_baseline.jsonl",), lambda m, p: m.readme_table(m.load(p[0]))),
    Block("sol", "bench_sol", ("sol.jsonl",), lambda m, p: m.render(m.load(p[0]))),
    Block("cpu-tasks", "bench_cpu_tasks", ("cpu_tasks.jsonl",), lambda m, p: m.render(m.load(p[0]))),
    Block("spin", "bench_spin", ("spin.jsonl", "spin_experts_c1.jsonl"), _spin, inline=True),
    Block("fuzz", "bench_fuzz", ("fuzz.json",), lambda m, p: m.readme_sentence(json.loads(p[0].read_text())),
          inline=True),
    Block("scoring", "bench_scoring", ("scoring.jsonl",), lambda m, p: m.render(_jsonl(p[0]))),
    Block("scoring-profile", "bench_scoring", ("scoring_profile.jsonl",), lambda m, p: m.render_profile(_jsonl(p[0]))),
    Block("scoring-merge", "bench_scoring", ("scoring_merge.jsonl",), lambda m, p: m.render_merge(_jsonl(p[0]))),
    Block("scoring-floor", "bench_scoring", ("scoring_profile.jsonl",), lambda m, p: m.render_floor(_jsonl(p[0])),
          inline=True),
    Block("rvv-qemu", "bench_rvv_qemu", ("rvv_qemu.jsonl",), lambda m, p: m.render(_jsonl(p[0]))),
    Block("program-axis", "bench_program_axis", ("program_axis.json",),
          lambda m, p: m.readme_sentence(json.loads(p[0].read_text())), inline=True),
    Block("speed", "bench_speed", ("speed.jsonl",), _speed),
    Block("speed-sweep", "bench_speed", ("speed_sweep.jsonl",), lambda m, p: m.readme_sweep(_jsonl(p[0]))),
    Block("cpu-machine", "bench_cpu_machine", ("cpu_machine.jsonl",), lambda m, p: m.readme_table(m.load(p[0]))),
    Block("eval-side-by-side", "bench_eval", ("eval_side_by_side.jsonl",), lambda m, p: m.render(_jsonl(p[0]))),
    Block("sweep", "bench_sweep", ("sweep_npu_matmul_c3/episodes.jsonl",), lambda m, p: m.render(p[0])),
)


def bench(script: str) -> ModuleType:
    """A benchmark script as a module (benchmarks/ is not a package; importing it runs no benchmark)."""
    name = f"_kcgym_bench_{script}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{script}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def current(readme: str, name: str) -> str | None:
    """The content of block ``name`` in ``readme`` (stripped), or None if the README has no such block."""
    if begin(name) not in readme:
        return None
    body = readme.split(begin(name), 1)[1]
    if END not in body:
        raise ValueError(f"README block {name!r} has no {END!r} after its {begin(name)!r}")
    return body.split(END, 1)[0].strip()


def replace(readme: str, block: Block, content: str) -> str:
    """``readme`` with block ``block``'s content replaced by ``content``."""
    head, body = readme.split(begin(block.name), 1)
    _, tail = body.split(END, 1)
    sep = "" if block.inline else "\n"
    return f"{head}{begin(block.name)}{sep}{content}{sep}{END}{tail}"


def stale(readme: str) -> list[str]:
    """What disagrees: one line per block whose README text is not what its results files render."""
    problems = []
    for block in BLOCKS:
        have = current(readme, block.name)
        if not block.available():
            if not block.optional or have is not None:
                problems.append(f"{block.name}: benchmarks/{block.script}.py or benchmarks/results/{block.results[0]} "
                                "is missing")
            continue
        if have is None:
            if not block.optional:
                problems.append(f"{block.name}: the README has no {begin(block.name)} ... {END} block")
            continue
        if have != block.text():
            problems.append(f"{block.name}: the README disagrees with benchmarks/results/{block.results[0]}")
    return problems


def write(readme: str) -> str:
    """``readme`` with every available block that it holds regenerated from its results files."""
    for block in BLOCKS:
        if block.available() and current(readme, block.name) is not None:
            readme = replace(readme, block, block.text())
    return readme


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="rewrite the README's generated blocks")
    args = ap.parse_args()
    text = README.read_text(encoding="utf-8")
    if args.write:
        new = write(text)
        README.write_text(new, encoding="utf-8")
        print("README.md: " + ("rewritten" if new != text else "already up to date"))
    problems = stale(README.read_text(encoding="utf-8"))
    for p in problems:
        print(p)
    if problems:
        raise SystemExit(1)
    print(f"{sum(b.available() for b in BLOCKS)} generated blocks agree with their results files")


if __name__ == "__main__":
    main()
