"""How far the NPU compiler kernels of the composite tasks drift from their staged references.

The tolerance of a composite task is set from this measurement (never wider than needed):
for each (task, config) and seed it runs the compiler kernel on the simulator and prints the
largest absolute error, the absolute tolerance the kernel would need at the paper's rtol
(``max(|a - e| - 0.01 |e|)``) and the fraction of elements outside the paper's default
tolerance (atol 0.012, rtol 0.01).

    python benchmarks/npu_composite_drift.py [--tasks decoder_llama,decoder_t5] [--configs 1,2,3] [--seeds 6]
"""

from __future__ import annotations

import argparse

import numpy as np

from kcgym.sims.npu import ACCELERATOR
from kcgym.tasks import TASKS
from kcgym.tasks.base import BF16_TOLERANCE


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", default="rope,ffn,swiglu,sdpa,flash_attention,mha,gqa,mqa,decoder_llama,decoder_t5")
    ap.add_argument("--configs", default="1,2,3,4,5")
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    hw = ACCELERATOR.make_hw()
    tol = BF16_TOLERANCE
    print(f"{'task':15s} {'cfg':3s} {'seed':>4s} {'max |err|':>9s} {'needed atol':>11s} {'outside default':>15s}")
    for name in args.tasks.split(","):
        task = TASKS[name]
        for index in (int(c) for c in args.configs.split(",")):
            cfg = task.config("NPU", index)
            program = ACCELERATOR.assemble(ACCELERATOR.compile(task, cfg, hw), hw)
            inputs = [task.generate_inputs(cfg, np.random.default_rng([s, 0, index])) for s in range(args.seeds)]
            for seed, (res, inp) in enumerate(zip(ACCELERATOR.run(program, task, cfg, hw, inputs, 50_000_000),
                                                  inputs, strict=True)):
                for key, expected in task.reference(cfg, inp).items():
                    err = np.abs(res.outputs[key].astype(np.float64) - expected)
                    need = float(np.max(err - tol.rtol * np.abs(expected)))
                    outside = float(np.mean(err > tol.atol + tol.rtol * np.abs(expected)))
                    row = f"{name:15s} C{index:<2d} {seed:4d} {err.max():9.5f} {need:11.5f} {outside:15.5f}"
                    print(row, flush=True)


if __name__ == "__main__":
    main()
