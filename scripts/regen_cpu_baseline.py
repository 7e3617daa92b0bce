"""Regenerate the CPU baseline's assembly: GCC -O2 output of every kcgym/sims/cpu/baseline/<task>.c.

    python scripts/regen_cpu_baseline.py           # rewrite the .s files
    python scripts/regen_cpu_baseline.py --check   # exit 1 if a committed .s differs from a fresh compile

The flags and the compiler are kcgym.sims.cpu.compiler's (GCC_FLAGS); the lines that name the
compiler build (.ident) are not compared, so another build of the same GCC version agrees.
"""

from __future__ import annotations

import argparse
import sys

from kcgym.sims.cpu import compiler as C


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 on a difference")
    parser.add_argument("tasks", nargs="*", default=sorted(C.TEMPLATES), help="tasks (default: all)")
    args = parser.parse_args(argv)
    if not C.gcc_available():
        print(f"{C.GCC} is not installed (apt-get install gcc-riscv64-unknown-elf)", file=sys.stderr)
        return 2
    stale = []
    for name in args.tasks:
        fresh = C.run_gcc(name)
        path = C.BASELINE_DIR / f"{name}.s"
        same = path.exists() and C.code_lines(path.read_text()) == C.code_lines(fresh)
        if args.check:
            stale += [] if same else [name]
        elif not same:
            path.write_text(fresh)
            print(f"wrote {path}")
    if stale:
        print(f"stale GCC output (run scripts/regen_cpu_baseline.py): {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
