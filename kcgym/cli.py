"""The ``kcgym`` command: list envs, read docs, print baselines, check a kernel, evaluate agents, sweep hw, report.

``kcgym check`` goes through the env's own scoring and rendering code, so a person at the
terminal sees exactly what an agent's ``simulate`` call would show for the same seed.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

EXIT_OK = 0
EXIT_INCORRECT = 1
EXIT_USAGE = 2
EXIT_ASSEMBLY = 3
EXIT_INTERNAL = 70  # EX_SOFTWARE: a kcgym bug (traceback logged), never a raw Python traceback
EXIT_EVAL_FAILED = 4
EXIT_INTERRUPTED = 130

EXIT_CODES_HELP = """\
exit codes:
  0  success (for check: the kernel is correct)
  1  the kernel is incorrect, faulted, or suspiciously below the roofline bound
  2  usage error (unknown env id or accelerator, bad config or --hw, missing file)
  3  the kernel did not assemble
  4  eval: every episode failed for API or harness reasons (see the first errors; then --rerun-errors)
  70  internal error in kcgym (a bug: the traceback is logged; please report it)
  130  eval was interrupted (Ctrl-C); rerun with --resume
"""
CHECK_EXIT_CODES_HELP = """\
exit codes:
  0  the kernel is correct
  1  the kernel is incorrect, faulted, or suspiciously below the roofline bound
  2  usage error (unknown env id, bad config or --hw, missing or empty file)
  3  the kernel did not assemble
"""
EVAL_EXIT_CODES_HELP = """\
exit codes:
  0  the run finished (whatever the agents scored)
  2  usage error (bad flag value, unknown name, missing credentials, --resume without a run)
  4  every episode failed for API or harness reasons (see the first errors; then --rerun-errors)
  130  interrupted (Ctrl-C); rerun with --resume
"""
HW_EXAMPLE = '\'{"MLEN": 32, "VLEN": 32}\''  # an NPU override that is valid (MLEN must equal VLEN)


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
        raise UsageError(f"--hw must be a JSON object, e.g. {HW_EXAMPLE}")
    return hw


def _resolve(env_id: str) -> tuple[str, str]:
    from kcgym.registry import parse_env_id

    try:
        return parse_env_id(env_id)
    except KeyError as e:
        raise UsageError(e.args[0]) from None


def _accelerator_name(name: str) -> str:
    """The registered spelling (names are case-insensitive here); usage error with a did-you-mean."""
    from kcgym.registry import canonical_accelerator

    try:
        return canonical_accelerator(name)
    except KeyError as e:
        raise UsageError(e.args[0]) from None


def _accelerator(name: str):
    from kcgym.registry import ACCELERATORS

    return ACCELERATORS[_accelerator_name(name)]


def _config_arg(text: str) -> int:
    """argparse type of ``--config``: ``3`` or ``C3`` (the range is the task's: 1..5)."""
    from kcgym.registry import parse_config

    try:
        return parse_config(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


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
    from kcgym.registry import SUPPORTED, UNSUPPORTED, env_id, task_for

    wanted = {_accelerator_name(a) for a in _csv(args.accelerator) or []}
    rows: list[dict[str, Any]] = []
    for acc, tasks in SUPPORTED.items():
        if wanted and acc not in wanted:
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
        print(f"{r['env_id'].ljust(width)}  L{r['level']}  {r['title'].ljust(title_w)}  {'; '.join(r['configs'])}")
    for acc, holes in UNSUPPORTED.items():  # the manifest's explicit holes, as the paper's Table 5 marks them
        for name, reason in holes.items() if not wanted or acc in wanted else ():
            print(f"{acc} {name}: not supported \u2014 {reason}")
    return EXIT_OK


def cmd_docs(args: argparse.Namespace) -> int:
    from kcgym.envs import docsearch
    from kcgym.sims.hwconfig import fields_table
    from kcgym.text import sanitize

    acc = _accelerator(args.accelerator)
    try:
        hw = acc.make_hw(_parse_hw(args.hw or None))
    except ValueError as e:
        raise UsageError(str(e)) from None
    if args.hw == "":  # a bare --hw: the fields it takes
        print(f"{acc.name} hardware config (override with --hw / gym.make(..., hw={{...}})):\n")
        print(fields_table(acc.hw_model))
        return EXIT_OK
    sections = acc.docs(hw)
    if args.all:
        print(sanitize(docsearch.full_text(sections)), end="")
        return EXIT_OK
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
        name = acc.name
        print(sanitize(docsearch.section_index(
            sections, opener=f"kcgym docs {name} --section <id>", searcher=f"kcgym docs {name} --query <text>",
            everything=f"kcgym docs {name} --all",
        )))
    return EXIT_OK


def cmd_baseline(args: argparse.Namespace) -> int:
    env = _make_env(args.env_id, args.config, args.hw)
    print(env.accelerator.compile(env.task, env.cfg, env.hw), end="")
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    from kcgym.envs import reports

    path = Path(args.kernel_file)
    if path.is_dir():
        raise UsageError(f"{path} is a directory; give the kernel's assembly file, e.g. {path / 'kernel.s'}")
    if not path.is_file():
        raise UsageError(f"kernel file not found: {path}")
    if args.seed < 0:
        raise UsageError(f"--seed must be >= 0, got {args.seed}")
    source = path.read_text(encoding="utf-8", errors="replace")
    if not source.strip():
        raise UsageError(f"kernel file {path} is empty: write the kernel's assembly source into it "
                         f"(`kcgym baseline {args.env_id}` prints a correct one to start from)")
    env = _make_env(args.env_id, args.config, args.hw)
    env.reset(seed=args.seed)
    env.set_kernel(source)
    report = _named_diagnostics(env.evaluate_visible(), str(path))
    if args.json:
        out = {
            "env_id": args.env_id,
            "config": env.cfg.index,
            "config_label": env.cfg.label,
            "seed": args.seed,
            "score": env.score_of(report),
        }
        out.update(reports.report_info(report))
        out["diagnostics"] = [
            {k: d.to_dict()[k] for k in ("severity", "line", "col", "code", "message", "hint")}
            for d in report.diagnostics
        ]
        print(json.dumps(out, indent=2))
    else:
        what = f"{args.env_id} {env.cfg.label}, visible inputs of seed {args.seed}"
        print(reports.render_run(report, source, env.task.tolerance, what))
    if report.internal_error is not None:
        return EXIT_INTERNAL
    if not report.assembled:
        return EXIT_ASSEMBLY
    if not report.correct or report.fault is not None or report.below_roofline:
        return EXIT_INCORRECT
    return EXIT_OK


def cmd_profile(args: argparse.Namespace) -> int:
    """The profile tool at the terminal: the same text (or --json info), plus where the cycles went."""
    from kcgym.envs import reports

    path = Path(args.kernel_file)
    if not path.is_file():
        raise UsageError(f"kernel file not found: {path}")
    source = path.read_text(encoding="utf-8", errors="replace")
    env = _make_env(args.env_id, args.config, args.hw)
    env.reset(seed=args.seed)
    env.set_kernel(source)
    report = env.evaluate_visible(attribute=True)
    if args.json:
        out = {"env_id": args.env_id, "config": env.cfg.label, "seed": args.seed}
        out.update(reports.report_info(report) | reports.profile_info(report))
        out["diagnostics"] = [d.render() for d in report.diagnostics]
        print(json.dumps(out, indent=2))
    else:
        print(reports.render_profile(report, env.task.tolerance))
    return EXIT_OK if report.assembled else EXIT_ASSEMBLY


def _named_diagnostics(report, filename: str):
    """The report with its diagnostics rendered under the user's file name instead of ``kernel.s``."""
    from kcgym.isa.diagnostics import AssemblyError

    if not report.diagnostics:
        return report
    if report.assembled:
        text = "\n".join(d.render(filename) for d in report.diagnostics)
    else:
        text = AssemblyError(report.diagnostics).render(filename)
    return dataclasses.replace(report, diagnostics_text=text)


def _csv(text: str | None) -> list[str] | None:
    if text is None:
        return None
    items = [x.strip() for x in text.split(",") if x.strip()]
    return items or None


def _default_out(command: str = "eval") -> Path:
    import datetime

    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    return Path("runs") / f"{command}-{stamp}"


def _write_report(run_dirs: list[str], out_file: Path, plots_dir: Path | None, sweep_only: bool = False) -> str:
    from kcgym.eval.report import load_runs, render, sweep_records

    try:
        records = load_runs(run_dirs)
    except FileNotFoundError as e:
        raise UsageError(str(e)) from None
    if sweep_only and not sweep_records(records):
        raise UsageError(f"--sweep: no hardware-sweep records in {', '.join(run_dirs)} (`kcgym sweep` writes them)")
    text = render(records, run_dirs, sweep_only=sweep_only)
    out_file.parent.mkdir(parents=True, exist_ok=True)
    out_file.write_text(text, encoding="utf-8")
    if plots_dir is not None and records:
        from kcgym.eval.plots import write_plots

        written = write_plots(records, plots_dir, sweep_only=sweep_only)
        text += "\nPlots: " + ", ".join(str(p) for p in written) + "\n"
    return text + f"Report written to {out_file}\n"


def _check_agent_options(options: dict[str, Any]) -> None:
    """Reject bad agent flags up front (one line naming the flag), not in a worker mid-run."""
    from pydantic import ValidationError

    from kcgym.agents import agent_options

    try:
        agent_options(**options)
    except ValidationError as e:
        err = e.errors()[0]
        flag = "--" + str(err["loc"][0]).replace("_s", "").replace("_", "-")
        raise UsageError(f"{flag}: {err['msg']}, got {err.get('input')!r}") from None


def _agent_options(args: argparse.Namespace) -> dict[str, Any]:
    """The agents' options from the shared flags (:func:`_add_agent_flags`), checked up front."""
    options = {
        "model": args.model, "base_url": args.base_url, "api_key_env": args.api_key_env,
        "temperature": args.temperature, "reasoning_effort": args.reasoning_effort, "max_tokens": args.max_tokens,
        "timeout_s": args.timeout, "max_retries": args.max_retries, "search_budget": args.search_budget,
    }
    _check_agent_options(options)
    return options


def _agents(agents: list[str], args: argparse.Namespace) -> list[str]:
    """Known agent names (did you mean), with what ``llm`` needs (a model, credentials) checked up front."""
    from kcgym.agents import agent_names, unknown_agent_message

    for name in agents:
        if name not in agent_names():
            raise UsageError(unknown_agent_message(name))
    if "llm" in agents and not args.model:
        raise UsageError("--agent llm needs --model (e.g. --model gpt-5.2, with --base-url for other servers)")
    if "llm" in agents:
        _check_credentials(args.base_url, args.api_key_env)
    return agents


def _concurrency(given: int | None, agents: list[str]) -> int:
    """Episodes in parallel: as given, else 8 with an LLM agent (I/O bound) and 2 without."""
    concurrency = given if given is not None else (8 if "llm" in agents else 2)
    if concurrency < 1:
        raise UsageError(f"--concurrency must be >= 1, got {concurrency}")
    return concurrency


def cmd_eval(args: argparse.Namespace) -> int:
    from kcgym.eval.episode import import_plugins
    from kcgym.eval.progress import plural
    from kcgym.eval.runner import RunDirError, run_eval
    from kcgym.eval.suite import parse_configs, plan

    try:
        import_plugins(args.imports)
    except ImportError as e:
        raise UsageError(f"--import: {e}") from None
    agents = _agents(_csv(args.agent) or [], args)
    if (args.resume or args.rerun_errors) and not args.out:
        flag = "--rerun-errors" if args.rerun_errors else "--resume"
        raise UsageError(f"{flag} needs --out DIR: the run directory to continue")
    try:
        levels = [int(x) for x in _csv(args.levels) or []]
    except ValueError:
        raise UsageError(f"--levels must be comma-separated integers, got {args.levels!r}") from None
    try:
        specs = plan(
            accelerators=_csv(args.accelerators), tasks=_csv(args.tasks), levels=levels or None,
            configs=parse_configs(args.configs), runs=args.runs, seed=args.seed, one_shot=args.one_shot,
        )
    except ValueError as e:
        raise UsageError(str(e)) from None
    if not specs:
        raise UsageError("the selection matches no episodes (check --accelerators, --tasks, --levels, --configs)")
    options = _agent_options(args)
    concurrency = _concurrency(args.concurrency, agents)
    out = Path(args.out) if args.out else _default_out()
    _stderr(f"kcgym eval: {plural(len(specs), 'episode')} x {plural(len(agents), 'agent')} ({', '.join(agents)}) "
            f"-> {out}")
    try:
        summary = run_eval(
            specs, agents, out, options=options, resume=args.resume, rerun_errors=args.rerun_errors,
            concurrency=concurrency,
            backend=args.backend, plugins=args.imports, progress=not args.quiet,
        )
    except RunDirError as e:
        raise UsageError(str(e)) from None
    if summary.interrupted:
        _stderr(f"\nkcgym eval: interrupted; {summary.skipped + summary.completed}/{summary.planned} episodes are "
                f"recorded in {out}. Continue with the same command plus --resume --out {out}")
        return EXIT_INTERRUPTED
    if not args.no_report:
        _stdout(_write_report([str(out)], out / "report.md", None if args.no_plots else out / "plots"))
    if summary.rerunnable:
        _stderr(f"kcgym eval: {plural(summary.rerunnable, 'episode')} failed for API or harness reasons (first "
                f"errors above); once the cause is fixed, replay them with the same command plus "
                f"--rerun-errors --out {out}")
    if summary.completed and summary.rerunnable == summary.completed:
        return EXIT_EVAL_FAILED
    return EXIT_OK


def _stdout(text: str) -> None:
    """Print, but a closed pipe (``| head``) is not an error: the run's files are already complete."""
    try:
        print(text, flush=True)
    except (BrokenPipeError, ValueError):
        _silence(sys.stdout)


def _stderr(text: str) -> None:
    try:
        print(text, file=sys.stderr, flush=True)
    except (BrokenPipeError, ValueError):
        _silence(sys.stderr)


def _silence(stream) -> None:
    """Point a broken stream at /dev/null, so that nothing (the exit flush included) fails on it again."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())


def _check_credentials(base_url: str | None, key_env: str) -> None:
    """Fail before the first episode, not after a minute of retries per episode, when no key can work."""
    from kcgym.agents import missing_credentials

    missing = missing_credentials(base_url, key_env)
    if missing:
        raise UsageError(f"--agent llm: {missing}")


def cmd_report(args: argparse.Namespace) -> int:
    first = Path(args.run_dirs[0])
    out_file = Path(args.out) if args.out else first / "report.md"
    plots = None if args.no_plots else (Path(args.plots) if args.plots else first / "plots")
    _stdout(_write_report(args.run_dirs, out_file, plots, sweep_only=args.sweep))
    return EXIT_OK


def cmd_sweep(args: argparse.Namespace) -> int:
    """Argument parsing only: the sweep itself is :mod:`kcgym.eval.sweep`."""
    from kcgym.eval.progress import plural
    from kcgym.eval.runner import RunDirError
    from kcgym.eval.suite import parse_configs
    from kcgym.eval.sweep import DEFAULT_SWEEP_AGENTS, parse_axes, plan_sweep, run_sweep

    acc = _accelerator(args.machine)
    agents = _agents(list(dict.fromkeys([*DEFAULT_SWEEP_AGENTS, *(_csv(args.agent) or [])])), args)
    if args.resume and not args.out:
        raise UsageError("--resume needs --out DIR: the sweep directory to continue")
    try:
        axes = parse_axes(acc, args.hw)
        specs = plan_sweep(acc.name, axes, tasks=_csv(args.tasks), configs=parse_configs(args.configs),
                           runs=args.runs, seed=args.seed, one_shot=args.one_shot)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if not specs:
        raise UsageError(f"the selection matches no {acc.name} episodes (check --tasks and --configs)")
    options = _agent_options(args)
    concurrency = _concurrency(args.concurrency, agents)
    out = Path(args.out) if args.out else _default_out("sweep")
    points = len({s.hw for s in specs})
    _stderr(f"kcgym sweep: {acc.name}, {plural(points, 'point')} over {', '.join(a.name for a in axes)}, "
            f"{plural(len(specs), 'episode')} x {plural(len(agents), 'agent')} ({', '.join(agents)}) -> {out}")
    try:
        summary = run_sweep(specs, agents, out, options=options, resume=args.resume, concurrency=concurrency,
                            progress=not args.quiet, note=_stderr)
    except RunDirError as e:
        raise UsageError(str(e)) from None
    if summary.run.interrupted:
        _stderr(f"\nkcgym sweep: interrupted; continue with the same command plus --resume --out {out}")
        return EXIT_INTERRUPTED
    if not args.no_report:
        _stdout(_write_report([str(out)], out / "report.md", None if args.no_plots else out / "plots",
                              sweep_only=True))
    run = summary.run
    if run.completed and run.rerunnable == run.completed:
        return EXIT_EVAL_FAILED
    return EXIT_OK


# -- parser ----------------------------------------------------------------------------------------


def _add_agent_flags(p: argparse.ArgumentParser) -> None:
    """The agents' options, shared by ``eval`` and ``sweep``."""
    p.add_argument("--model", help="model name for --agent llm")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (default: OpenAI)")
    p.add_argument("--api-key-env", default="OPENAI_API_KEY", metavar="VAR",
                   help="environment variable holding the API key (default: %(default)s)")
    p.add_argument("--temperature", type=float, help="sampling temperature (default: the server's)")
    p.add_argument("--reasoning-effort", help="e.g. low, medium, high (the paper uses medium)")
    p.add_argument("--max-tokens", type=int, metavar="N", help="max output tokens per model call")
    p.add_argument("--timeout", type=float, default=600.0, metavar="S", help="seconds per model call (default: 600)")
    p.add_argument("--max-retries", type=int, default=6, metavar="N",
                   help="retries on rate limits, 5xx and timeouts, with backoff and jitter (default: 6)")
    p.add_argument("--search-budget", type=int, default=30, metavar="N",
                   help="candidate kernels the search agent simulates per episode (default: 30)")


def build_parser() -> argparse.ArgumentParser:
    from kcgym import __version__
    from kcgym.extras import RAY_INSTALL_HINT

    parser = argparse.ArgumentParser(
        prog="kcgym",
        description="kcgym: agentic kernel generation on simulated AI accelerators.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"kcgym {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    def add(name: str, help_: str, epilog: str | None = None) -> argparse.ArgumentParser:
        return sub.add_parser(
            name,
            help=help_,
            description=help_,
            epilog=epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )

    p = add("list", "List the env ids with their level, task title and configurations C1..C5.")
    p.add_argument("--accelerator", "--accelerators", dest="accelerator", metavar="ACC,...",
                   help="only these accelerators, comma-separated, any case (e.g. NPU,RVV)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_list)

    p = add("docs", "Print an accelerator's documentation: the section list, one section, a search, all of it, "
                    "or its hardware-config fields.")
    p.add_argument("accelerator", metavar="ACC", help="accelerator name, e.g. NPU")
    p.add_argument("--section", help="print this section (id from the list)")
    p.add_argument("--query", help="case-insensitive search, as the read_docs tool does")
    p.add_argument("--all", action="store_true", help="print every section: exactly the docs the env's prompt carries")
    p.add_argument("--hw", metavar="JSON", nargs="?", const="",
                   help=f"alone: list the hardware-config fields (name, default, meaning, constraints); with JSON: "
                        f"describe the machine with these overrides, e.g. {HW_EXAMPLE}")
    p.set_defaults(func=cmd_docs)

    p = add("baseline", "Print the template compiler's kernel (the speedup baseline) for an env and config.")
    p.add_argument("env_id", metavar="ENV_ID", help="e.g. KernelCraft-NPU-matmul")
    p.add_argument("--config", type=_config_arg, default=1, metavar="N",
                   help="configuration 1..5 or C1..C5 (default 1)")
    p.add_argument("--hw", metavar="JSON", help="hardware-config overrides")
    p.set_defaults(func=cmd_baseline)

    p = add(
        "check", "Assemble and simulate a kernel file on an env's visible inputs, as the simulate tool does.",
        CHECK_EXIT_CODES_HELP,
    )
    p.add_argument("env_id", metavar="ENV_ID", help="e.g. KernelCraft-NPU-matmul")
    p.add_argument("kernel_file", metavar="KERNEL_FILE", help="assembly source file")
    p.add_argument("--config", type=_config_arg, default=1, metavar="N",
                   help="configuration 1..5 or C1..C5 (default 1)")
    p.add_argument(
        "--seed", type=int, default=0, metavar="S", help="input seed, as in env.reset(seed=S) (default 0)"
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--hw", metavar="JSON", help="hardware-config overrides")
    p.set_defaults(func=cmd_check)

    p = add("profile", "Profile a kernel file as the profile tool does: cycles per source line and loop, by cause.")
    p.add_argument("env_id", metavar="ENV_ID", help="e.g. KernelCraft-VLIW-relu")
    p.add_argument("kernel_file", metavar="KERNEL", help="assembly source file")
    p.add_argument("--config", type=int, default=1, metavar="N", help="configuration 1..5 (default 1)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="input seed (default 0)")
    p.add_argument("--json", action="store_true", help="machine-readable output (the tool's info)")
    p.add_argument("--hw", metavar="JSON", help="hardware-config overrides")
    p.set_defaults(func=cmd_profile)

    p = add(
        "eval",
        "Run agents over accelerators x tasks x configs x runs; one JSONL record per episode, then the report. "
        "With no arguments: the offline agents (compiler, expert, search) on C1 of every registered env.",
        EVAL_EXIT_CODES_HELP,
    )
    p.add_argument("--agent", default="compiler,expert,search",
                   help="agent(s), comma-separated: llm, compiler, expert, random, search (default: %(default)s)")
    p.add_argument("--accelerators", "--accelerator", dest="accelerators", metavar="ACC,...",
                   help="e.g. NPU,RVV, any case (default: all registered)")
    p.add_argument("--tasks", metavar="TASK,...", help="e.g. matmul,relu (default: all)")
    p.add_argument("--levels", metavar="L,...", help="e.g. 1,2 (default: all)")
    p.add_argument("--configs", "--config", dest="configs", default="1", metavar="RANGE",
                   help="of 1..5: e.g. 1-5, 1,3 or C1-C3 (default: %(default)s)")
    p.add_argument("--runs", type=int, default=1, metavar="N", help="runs per config (default: 1)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="seed of run 0; run r uses S+r (default: 0)")
    p.add_argument("--one-shot", action="store_true",
                   help="one-shot prompts: a correct kernel for another task of the machine in the prompt (Table 8)")
    _add_agent_flags(p)
    p.add_argument("--concurrency", type=int, metavar="K", help="episodes in parallel (default: 8 with llm, else 2)")
    p.add_argument("--out", metavar="DIR", help="run directory (default: runs/eval-<UTC time>)")
    p.add_argument("--resume", action="store_true",
                   help="continue the existing run in --out DIR, skipping recorded episodes")
    p.add_argument("--rerun-errors", action="store_true",
                   help="with --resume semantics, also replay episodes recorded with an api or harness error")
    p.add_argument("--backend", choices=["local", "ray"], default="local",
                   help=f"local threads, or Ray tasks ({RAY_INSTALL_HINT}; uses RAY_ADDRESS if set)")
    p.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE",
                   help="import a module that registers extra envs or agents (repeatable)")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.add_argument("--no-report", action="store_true", help="do not print the report at the end")
    p.add_argument("--no-plots", action="store_true", help="do not write PNG plots")
    p.set_defaults(func=cmd_eval)

    p = add("report", "Tables (Markdown, the paper's layouts) and PNG plots of one or more eval run directories.")
    p.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="directories written by kcgym eval --out")
    p.add_argument("--out", metavar="FILE", help="Markdown file (default: RUN_DIR/report.md of the first)")
    p.add_argument("--plots", metavar="DIR", help="plot directory (default: RUN_DIR/plots of the first)")
    p.add_argument("--no-plots", action="store_true", help="tables only")
    p.add_argument("--sweep", action="store_true",
                   help="only the hardware-sweep table and plots (a `kcgym sweep` directory gets them anyway)")
    p.set_defaults(func=cmd_report)

    p = add(
        "sweep",
        "Hardware sweep (co-design): the compiler and expert kernels, and optionally an agent, at every point of "
        "a grid of hw configs; records, a table and plots of cycles, speed of light and speedup per parameter.",
        EVAL_EXIT_CODES_HELP,
    )
    p.add_argument("machine", metavar="MACHINE", help="accelerator name, any case, e.g. NPU")
    p.add_argument("--hw", action="append", default=[], metavar="FIELD=v1,v2,...", required=True,
                   help="a swept parameter (repeatable: the grid is the cartesian product); FIELD+FIELD=... ties "
                        "fields, e.g. --hw 'MLEN+VLEN=32,64' --hw hbm_bytes_per_cycle=32,64 (`kcgym docs ACC --hw`)")
    p.add_argument("--tasks", metavar="TASK,...", help="e.g. matmul,relu (default: all of the machine's)")
    p.add_argument("--configs", "--config", dest="configs", default="1", metavar="RANGE",
                   help="of 1..5: e.g. 1-5, 1,3 or C1-C3 (default: %(default)s)")
    p.add_argument("--agent", metavar="A,...",
                   help="agent(s) to play beside compiler and expert, e.g. llm or search (as in kcgym eval)")
    p.add_argument("--runs", type=int, default=1, metavar="N", help="runs per point (default: 1)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="seed of run 0; run r uses S+r (default: 0)")
    p.add_argument("--one-shot", action="store_true", help="one-shot prompts for the agents (as in kcgym eval)")
    _add_agent_flags(p)
    p.add_argument("--concurrency", type=int, metavar="K", help="episodes in parallel (default: 8 with llm, else 2)")
    p.add_argument("--out", metavar="DIR", help="run directory (default: runs/sweep-<UTC time>)")
    p.add_argument("--resume", action="store_true", help="continue the sweep in --out DIR, skipping recorded points")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.add_argument("--no-report", action="store_true", help="do not print the report at the end")
    p.add_argument("--no-plots", action="store_true", help="do not write PNG plots")
    p.set_defaults(func=cmd_sweep)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)  # exits with 2 on argparse usage errors
    try:
        return args.func(args)
    except UsageError as e:
        print(f"kcgym {args.command}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # `kcgym list | head`: the reader left; that is not an error
        _silence(sys.stdout)  # no second error at exit
        return EXIT_OK
    except Exception as e:  # noqa: BLE001  (a kcgym bug: one clear line, the traceback in the log)
        import logging

        logging.getLogger("kcgym.cli").exception("internal error in kcgym %s", args.command)
        print(f"kcgym {args.command}: internal error: {type(e).__name__}: {e} (a kcgym bug; please report it)",
              file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
