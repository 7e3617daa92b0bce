"""VLIW interpreter speed: simulated bundles per second, warm, and cold compile time.

Runs compiler kernels through ``Machine.run_one`` under ``jit(vmap(...))`` exactly as
``VLIWAccelerator.execute`` does, for each interpreter variant given by ``--variants``,
side by side in one process: every repeat runs every variant in turn, so the noise of a
shared machine hits all of them alike, and the table reports medians. Bundles/s counts
bundles of one input set (a batch of 3 runs the same bundles on 3 input sets at once).
Every variant's final state (registers, memories, counters, timing, faults) must equal the
first variant's bit for bit, on the full run and on a run stopped by a step budget in the
middle of the kernel.

    PYTHONPATH=. python benchmarks/bench_vliw_interp.py [--kernels matmul:2,gemv:5] [--batches 1,3]
        [--repeats 3] [--variants 'old=@00816fa;new={}']

A variant is ``name=JSON`` (keyword arguments of this checkout's ``Machine``) or ``name=@REV``
(``machine.py`` as of git revision REV, loaded beside the current one).

Measured (benchmarks/results/vliw_interp.txt, 2 shared cores): the interpreter of this
branch against the one before it (00816fa), bit-identical on every kernel: 2.7-3.8x
bundles/s at batch 1 (e.g. gemv C5 30k -> 81k) and 4.7-8.2x at batch 3 (15k -> 75k),
geometric mean 4.1x. Cold compile in that run 9.2 -> 9.4 s (batch 1), 11.3 -> 10.6 s
(batch 3); on a quieter machine 4.5 s before, 6.4-7.6 s after (the vector-slot switch).
``pytest tests/sims/vliw/`` from a cold compile cache: 119 s before, 59 s after.
What paid, in order, each measured side by side against the previous commit:
keeping the DM update in place (the store sat beside loads of the old DM, so XLA copied the
whole DM twice per bundle; loads are now prefetched after the previous bundle's store, and
register files are written by selects): ~4x at batch 3, ~1.3x at batch 1; picking a slot's
result by a select chain instead of stack-and-index: 1.08x; ready times and control words by
select chains instead of a scatter and a concatenation, plus each bundle's register indices
and latencies decoded once per run: 1.36x together; the vector slot computing only its
encoded sub-op in a ``lax.switch``: 1.12x at batch 1, 1.35x at batch 3 (compile +50%);
plain (non-DMA) steps skipping the DMA geometry checks, which cannot fire there: 1.12x.
Tried and dropped: two or four bundles per loop iteration (0.2-0.5x and under 0.15x: the
loop's own cost is a fraction of a microsecond here, and the second bundle's DM update did
not stay cheap), a ``lax.switch`` in the move slot (no measurable gain).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jax
import numpy as np

from kcgym.sims.vliw import ACCELERATOR
from kcgym.sims.vliw import machine as M
from kcgym.sims.vliw.accelerator import EXT_BUCKET
from kcgym.tasks import TASKS
from kcgym.tasks.numerics import round_bf16

DEFAULT_KERNELS = "matmul:2,softmax:5,gemv:5,batch_matmul:1"


def ext_images(name: str, index: int, batch: int, hw) -> tuple[np.ndarray, int, np.ndarray]:
    """The EXT images ``[batch, H]`` (as ``VLIWAccelerator.run`` builds them), their limit, and the program words."""
    task = TASKS[name]
    cfg = task.config("VLIW", index)
    layout = ACCELERATOR.layout(task, cfg, hw)
    limit = ACCELERATOR.ext_size(layout)
    ext = np.full((batch, M.bucket(limit, EXT_BUCKET)), np.nan, np.float32)
    for b in range(batch):
        inputs = task.generate_inputs(cfg, np.random.default_rng([0, b, index]))
        for r in layout.regions:
            if r.role == "input":
                ext[b, r.offset : r.offset + r.size] = np.asarray(inputs[r.name], np.float32).reshape(-1)
            elif r.role == "constant":
                ext[b, r.offset : r.offset + r.size] = round_bf16(np.float32(task.constants(cfg)[r.name]))
    program = ACCELERATOR.assemble(ACCELERATOR.compile(task, cfg, hw), hw)
    machine = M.Machine(hw)
    return ext, limit, program.padded(hw.imem_bundles + 1, machine.halt_row)


def machine_at(rev: str, hw):
    """A ``Machine`` built from ``kcgym/sims/vliw/machine.py`` as of git revision ``rev``."""
    src = subprocess.run(["git", "show", f"{rev}:kcgym/sims/vliw/machine.py"], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parents[1]).stdout
    path = Path(tempfile.mkdtemp()) / f"vliw_machine_{rev.replace('~', '_').replace('/', '_')}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module.Machine(hw)


def same_state(a: M.State, b: M.State, ignore: tuple[str, ...] = ()) -> list[str]:
    """Names of the state fields that differ bit for bit (NaN payloads included)."""
    return [f for f, x, y in zip(M.State._fields, a, b, strict=True)
            if f not in ignore and (np.asarray(x).shape != np.asarray(y).shape
            or not np.array_equal(np.asarray(x).view(np.int32), np.asarray(y).view(np.int32)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", default=DEFAULT_KERNELS, help="task:config,...")
    ap.add_argument("--batches", default="1,3")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--variants", default="current={}", help="name=JSON Machine kwargs;...")
    args = ap.parse_args()
    jax.config.update("jax_enable_compilation_cache", False)  # cold compile = a real compile
    hw = ACCELERATOR.make_hw()
    variants = {}
    for item in args.variants.split(";"):
        vname, _, kw = item.partition("=")
        variants[vname] = kw if kw.startswith("@") else json.loads(kw or "{}")
    kernels = [(k.split(":")[0], int(k.split(":")[1])) for k in args.kernels.split(",")]
    batches = [int(b) for b in args.batches.split(",")]
    images = {(k, b): ext_images(*k, b, hw) for k in kernels for b in batches}

    runners, compile_s = {}, {}
    for vname, kw in variants.items():
        machine = machine_at(kw[1:], hw) if isinstance(kw, str) else M.Machine(hw, **kw)
        fn = jax.jit(jax.vmap(machine.run_one, in_axes=(None, 0, None, None)))
        for b in batches:
            ext, limit, words = images[(kernels[0], b)]
            t0 = time.perf_counter()
            runners[(vname, b)] = fn.lower(words, ext, np.int32(limit), np.int32(1)).compile()
            compile_s[(vname, b)] = time.perf_counter() - t0
            print(f"compiled {vname} batch {b}: {compile_s[(vname, b)]:.1f} s", flush=True)

    def run(vname: str, key, max_steps: int) -> tuple[M.State, float]:
        ext, limit, words = images[key]
        t0 = time.perf_counter()
        st = jax.block_until_ready(runners[(vname, key[1])](words, ext, np.int32(limit), np.int32(max_steps)))
        return jax.device_get(st), time.perf_counter() - t0

    first = next(iter(variants))
    times: dict = {}
    bundles = {}
    for key in images:
        ref, _ = run(first, key, 50_000_000)
        bundles[key] = int(ref.ctl[0, M.STEPS])
        cut = bundles[key] // 2 + 1  # an odd step budget, mid-kernel
        ref_cut, _ = run(first, key, cut)
        assert int(ref_cut.ctl[0, M.STEPS]) == cut and not ref_cut.ctl[0, M.HALTED]
        for vname in variants:
            for budget, want in ((50_000_000, ref), (cut, ref_cut)):
                got, _ = run(vname, key, budget)
                # after a stop, the interpreter before 2026-11-30 still decremented the loop counter of the
                # uncommitted bundle (invisible in any result); only the loop stack may differ there
                bad = same_state(want, got, ignore=("loops",) if budget == cut else ())
                assert not bad, f"{vname} differs from {first} on {key} (max_steps {budget}): {bad}"
    for _ in range(args.repeats):
        for key in images:
            for vname in variants:
                _, dt = run(vname, key, 50_000_000)
                times.setdefault((vname, key), []).append(dt)

    print(f"\nbundles/s (median of {args.repeats}); ratio = variant / {first}; all final states bit-identical")
    head = f"{'kernel':<16}{'batch':>6}{'bundles':>9}" + "".join(f"{v:>14}{'ratio':>7}" for v in variants)
    print(head)
    ratios: dict = {}
    for key in images:
        (name, index), b = key
        base = statistics.median(times[(first, key)])
        cells = ""
        for vname in variants:
            med = statistics.median(times[(vname, key)])
            ratios.setdefault(vname, []).append(base / med)
            cells += f"{bundles[key] / med:>14.0f}{base / med:>7.2f}"
        print(f"{name + ' C' + str(index):<16}{b:>6}{bundles[key]:>9}{cells}")
    print("geomean ratio: " + ", ".join(f"{v} {np.exp(np.mean(np.log(r))):.2f}" for v, r in ratios.items()))
    print("cold compile s: " + ", ".join(f"{v} b{b} {compile_s[(v, b)]:.1f}" for v in variants for b in batches))


if __name__ == "__main__":
    main()
