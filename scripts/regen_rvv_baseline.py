"""Regenerate the RVV baseline's assembly: clang-14 -O2 of every kcgym/sims/rvv/baseline/*.c into its .s.

    python scripts/regen_rvv_baseline.py           # rewrite every .s from its .c
    python scripts/regen_rvv_baseline.py --check   # exit 1 naming each .s that differs (the .ident line aside)

The flags are kcgym.sims.rvv.clang_baseline.CLANG_FLAGS (RV32IM + Zve32x, VLEN-agnostic RVV 1.0).
tests/sims/rvv/test_clang_baseline.py runs the check where clang-14 is installed.
"""

from __future__ import annotations

import argparse
import sys

from kcgym.sims.rvv import clang_baseline as CB


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare instead of writing")
    args = ap.parse_args(argv)
    if (why := CB.clang_unavailable()) is not None:
        print(why, file=sys.stderr)
        return 2
    stale = []
    for stem in CB.stems():
        fresh = CB.compile_c(stem)
        if args.check:
            if CB.without_ident(fresh) != CB.without_ident(CB.assembly(stem)):
                stale.append(stem)
        else:
            (CB.BASELINE_DIR / f"{stem}.s").write_text(fresh, encoding="utf-8")
            print(f"wrote {stem}.s")
    for stem in stale:
        print(f"{stem}.s differs from clang's output for {stem}.c (run scripts/regen_rvv_baseline.py)")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
