"""The ``kcgym`` command: list envs, read docs, print baselines, check a kernel by hand.

``kcgym check`` goes through the env's own scoring and rendering code, so a person at the
terminal sees exactly what an agent's ``simulate`` call would show for the same seed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

EXIT_OK = 0
EXIT_INCORRECT = 1
EXIT_USAGE = 2
EXIT_ASSEMBLY = 3

EXIT_CODES_HELP = """\
exit codes:
  0  success (for check: the kernel is correct)
  1  the kernel is incorrect, faulted, or suspiciously below the roofline bound
  2  usage error (unknown env id or accelerator, bad config or --hw, missing file)
  3  the kernel did not assemble
"""


class UsageError(Exception):
    """A mistake in the command line: reported on stderr with exit code 2."""


def _parse_hw(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        hw = json.loads(text)
    except json.JSONDecodeError as e:
        raise UsageError(f"--hw is not valid JSON: {e.msg}") from None
    if not isinstance(hw, dict):
        raise UsageError("--hw must be a JSON object, e.g. '{\"mlen\": 32}'")
    return hw


def _resolve(env_id: str) -> tuple[str, str]:
    from kcgym.registry import parse_env_id

    try:
        return parse_env_id(env_id)
    except KeyError as e:
        raise UsageError(e.args[0]) from None


def _accelerator(name: str):
    from kcgym.registry import ACCELERATORS

    try:
        return ACCELERATORS[name]
    except KeyError as e:
        raise UsageError(e.args[0]) from None


def _make_env(env_id: str, config: int, hw: str | None):
    from kcgym.envs.kernel_env import KernelCraftEnv

    acc, task = _resolve(env_id)
    try:
        # docs_in_prompt=False: the CLI never shows the prompt, so do not build the docs for it
        return KernelCraftEnv(
            accelerator=acc, task=task, config=config, hw=_parse_hw(hw), docs_in_prompt=False
        )
    except ValueError as e:  # bad config index, invalid hw field (pydantic errors are ValueErrors)
        raise UsageError(str(e)) from None


# -- subcommands -------------------------------------------------------------------------------


def cmd_list(args: argparse.Namespace) -> int:
    from kcgym.registry import SUPPORTED, env_id
    from kcgym.tasks import task_for

    rows = []
    for acc, tasks in SUPPORTED.items():
        if args.accelerator and acc != args.accelerator:
            continue
        for name in tasks:
            task = task_for(acc, name)
            configs = [c.label for c in task.configs(acc)]
            rows.append(
                {"env_id": env_id(acc, name), "level": task.level, "title": task.title, "configs": configs}
            )
    if args.json:
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    width = max((len(r["env_id"]) for r in rows), default=0)
    title_w = max((len(r["title"]) for r in rows), default=0)
    for r in rows:
        configs = "; ".join(r["configs"])
        print(f"{r['env_id'].ljust(width)}  L{r['level']}  {r['title'].ljust(title_w)}  {configs}")
    return EXIT_OK


def cmd_docs(args: argparse.Namespace) -> int:
    from kcgym.envs import docsearch
    from kcgym.envs.text import sanitize

    acc = _accelerator(args.accelerator)
    try:
        hw = acc.make_hw(_parse_hw(args.hw))
    except ValueError as e:
        raise UsageError(str(e)) from None
    sections = acc.docs(hw)
    if args.section is not None:
        try:
            section = docsearch.find_section(sections, args.section)
        except KeyError as e:
            raise UsageError(e.args[0]) from None
        if args.query is None:
            print(sanitize(docsearch.render_section(section)))
            return EXIT_OK
        sections = [section]
    if args.query is not None:
        print(sanitize(docsearch.grep(sections, args.query)[0]))
    else:
        print(sanitize(docsearch.section_index(sections)))
    return EXIT_OK


def cmd_baseline(args: argparse.Namespace) -> int:
    env = _make_env(args.env_id, args.config, args.hw)
    print(env.accelerator.compile(env.task, env.cfg, env.hw), end="")
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    from kcgym.envs import reports

    path = Path(args.kernel_file)
    if not path.is_file():
        raise UsageError(f"kernel file not found: {path}")
    if args.seed < 0:
        raise UsageError(f"--seed must be >= 0, got {args.seed}")
    source = path.read_text(encoding="utf-8", errors="replace")
    env = _make_env(args.env_id, args.config, args.hw)
    env.reset(seed=args.seed)
    env.set_kernel(source)
    report = env.evaluate_visible()
    if args.json:
        out = {
            "env_id": args.env_id,
            "config": env.cfg.label,
            "seed": args.seed,
            "score": env.score_of(report),
        }
        out.update(reports.report_info(report))
        out["diagnostics"] = [d.render() for d in report.diagnostics]
        print(json.dumps(out, indent=2))
    else:
        what = f"{args.env_id} {env.cfg.label}, visible inputs of seed {args.seed}"
        print(reports.render_run(report, source, env.task.tolerance, what))
    if not report.assembled:
        return EXIT_ASSEMBLY
    if not report.correct or report.fault is not None or report.below_roofline:
        return EXIT_INCORRECT
    return EXIT_OK


# -- parser ----------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    from kcgym import __version__

    parser = argparse.ArgumentParser(
        prog="kcgym",
        description="kcgym: agentic kernel generation on simulated AI accelerators.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"kcgym {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    def add(name: str, help_: str) -> argparse.ArgumentParser:
        return sub.add_parser(
            name,
            help=help_,
            description=help_,
            epilog=EXIT_CODES_HELP,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )

    p = add("list", "List the env ids with their level, task title and configurations C1..C5.")
    p.add_argument("--accelerator", help="only this accelerator (e.g. NPU)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_list)

    p = add("docs", "Print an accelerator's documentation: the section list, one section, or a search.")
    p.add_argument("accelerator", metavar="ACC", help="accelerator name, e.g. NPU")
    p.add_argument("--section", help="print this section (id from the list)")
    p.add_argument("--query", help="case-insensitive search, as the read_docs tool does")
    p.add_argument("--hw", metavar="JSON", help="hardware-config overrides, e.g. '{\"mlen\": 32}'")
    p.set_defaults(func=cmd_docs)

    p = add("baseline", "Print the template compiler's kernel (the speedup baseline) for an env and config.")
    p.add_argument("env_id", metavar="ENV_ID", help="e.g. KernelCraft-NPU-matmul")
    p.add_argument("--config", type=int, default=1, metavar="N", help="configuration 1..5 (default 1)")
    p.add_argument("--hw", metavar="JSON", help="hardware-config overrides")
    p.set_defaults(func=cmd_baseline)

    p = add(
        "check", "Assemble and simulate a kernel file on an env's visible inputs, as the simulate tool does."
    )
    p.add_argument("env_id", metavar="ENV_ID", help="e.g. KernelCraft-NPU-matmul")
    p.add_argument("kernel_file", metavar="KERNEL_FILE", help="assembly source file")
    p.add_argument("--config", type=int, default=1, metavar="N", help="configuration 1..5 (default 1)")
    p.add_argument(
        "--seed", type=int, default=0, metavar="S", help="input seed, as in env.reset(seed=S) (default 0)"
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--hw", metavar="JSON", help="hardware-config overrides")
    p.set_defaults(func=cmd_check)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)  # exits with 2 on argparse usage errors
    try:
        return args.func(args)
    except UsageError as e:
        print(f"kcgym {args.command}: error: {e}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
