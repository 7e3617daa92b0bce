"""Snapshot of everything the RVV refactors must keep bit-identical, for a before/after diff.

For every compiler and expert kernel at the chosen configs: the encoded words, cycles,
instruction count, fault, per-category counts, unit busy cycles and a hash of the outputs;
plus the ISA test programs (words and final architectural state) and the hack battery's
faulting kernels (half-written, out-of-bounds, infinite loop).

    python -m tests.sims.rvv.snapshot --configs 1 2 --out /tmp/before.json
    python -m tests.sims.rvv.snapshot --configs 1 2 --out /tmp/after.json --compare /tmp/before.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys

import numpy as np

from kcgym.sims.rvv import ACCELERATOR
from kcgym.sims.rvv import machine as M
from kcgym.sims.rvv.accelerator import arch_state, fault_info, simulate_images
from kcgym.tasks import tasks_for
from tests.sims.rvv import isa_programs as P

HW = ACCELERATOR.make_hw()
SEED = 20261130
MAX_STEPS = 2_000_000
FAULT_KERNELS = {  # small kernels that fault: the fault, pc and cycles must stay the same
    "oob": "li a0, 0x10000000\nlw a1, 0(a0)\nret\n",
    "misaligned": "li a0, 0x20000001\nlw a1, 0(a0)\nret\n",
    "loop": "1: addi a0, a0, 1\nj 1b\n",
    "vtype": "vadd.vv v1, v2, v3\nret\n",
    "group": "vsetvli t0, x0, e8, m2, ta, ma\n1:\nvadd.vv v1, v2, v4\nret\n",
    "bad_jump": "li ra, 3\nret\n",
}


def _h(a: np.ndarray | bytes) -> str:
    return hashlib.sha256(bytes(a) if isinstance(a, bytes) else np.ascontiguousarray(a).tobytes()).hexdigest()[:16]


def _result(res) -> dict:
    return {"cycles": res.cycles, "instructions": res.instructions, "counts": res.counts_by_category,
            "busy": res.unit_busy, "fault": None if res.fault is None else [res.fault.name, res.fault.pc,
                                                                            res.fault.message],
            "outputs": {k: _h(v) for k, v in sorted(res.outputs.items())}}


def kernels(configs: list[int]) -> dict:
    out = {}
    for name, task in tasks_for("int8").items():
        for index in configs:
            cfg = task.config("RVV", index)
            inputs = task.generate_inputs(cfg, np.random.default_rng(SEED + index))
            for kind in ("compiler", "expert"):
                src = ACCELERATOR.compile(task, cfg, HW) if kind == "compiler" else ACCELERATOR.expert(task, cfg, HW)
                if src is None:
                    continue
                prog = ACCELERATOR.assemble(src, HW)
                (res,) = ACCELERATOR.run(prog, task, cfg, HW, [inputs], MAX_STEPS)
                entry = {"words": _h(prog.words), "data": _h(prog.data), **_result(res)}
                if kind == "compiler" and index == configs[0]:
                    (half,) = ACCELERATOR.run(prog, task, cfg, HW, [inputs], res.instructions // 2)
                    entry["half"] = _result(half)
                out[f"{name}/C{index}/{kind}"] = entry
                print(name, index, kind, res.cycles, file=sys.stderr, flush=True)
    return out


def isa_programs() -> dict:
    out = {}
    for k, (source, _) in enumerate(P.programs(seed=0)):
        ext = P.ext_image(k)
        prog = ACCELERATOR.assemble(source, HW)
        st = simulate_images(prog, ext[None], HW, MAX_STEPS)
        a = arch_state(st, 0, HW, ext.size)
        out[f"isa/{k}"] = {"words": _h(prog.words), "cycles": int(st.ctl[0, M.T_END]), "steps": int(st.ctl[0, M.STEPS]),
                           "state": _h(np.concatenate([a.x.view(np.uint8), a.vregs, a.dtcm, a.ext])),
                           "vl": a.vl, "vtype": a.vtype, "counts": np.asarray(st.counts[0]).tolist(),
                           "busy": np.asarray(st.busy[0]).tolist()}
    for name, source in FAULT_KERNELS.items():
        prog = ACCELERATOR.assemble(source, HW)
        st = simulate_images(prog, np.zeros((1, 4096), np.uint8), HW, 10_000)
        f = fault_info(st, 0, prog, HW, 10_000)
        out[f"fault/{name}"] = {"words": _h(prog.words), "ctl": np.asarray(st.ctl[0]).tolist(),
                                "fault": None if f is None else [f.name, f.pc, f.message]}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", type=int, nargs="+", default=[1])
    ap.add_argument("--out", required=True)
    ap.add_argument("--compare", help="a snapshot to compare with: exit 1 on any difference")
    ap.add_argument("--no-isa", action="store_true", help="skip the ISA programs and fault kernels")
    args = ap.parse_args()
    snap = kernels(args.configs) | ({} if args.no_isa else isa_programs())
    with open(args.out, "w") as f:
        json.dump(snap, f, indent=1, sort_keys=True)
    if args.compare:
        with open(args.compare) as f:
            old = json.load(f)
        bad = [k for k in sorted(set(old) | set(snap)) if old.get(k) != snap.get(k)]
        for k in bad:
            print(f"DIFF {k}:\n  before {old.get(k)}\n  after  {snap.get(k)}")
        print(f"{len(snap)} entries, {len(bad)} differ")
        return 1 if bad else 0
    print(f"{len(snap)} entries written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
