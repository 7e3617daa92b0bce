"""The RVV speedup baseline as the paper has it: C with RVV intrinsics, compiled by clang-14 at -O2.

Each task's kernel is one C function ``kernel`` in ``baseline/<file>.c`` (shared routines in
``baseline/kcgym_rvv.h``), written the way a competent programmer writes intrinsics code:
strip-mined loops at LMUL=1 on int8, int32 accumulators in m4, no unrolling, no staging.
:data:`CLANG` turns it into VLEN-agnostic RVV 1.0 assembly, committed next to it as
``baseline/<file>.s`` (``scripts/regen_rvv_baseline.py`` regenerates it; a test compares where
clang-14 is installed). The per-config program is a generated stub -- the function's arguments
in ``a0..a7`` (tensor addresses in external memory, sizes, task constants; a parameter block in
``.rodata`` for the shapes where eight registers would not do; scratch buffers in ``.bss``, i.e.
the DTCM) and ``j kernel`` -- followed by the committed ``.s`` exactly as clang wrote it.

The stub jumps with ``j`` rather than ``tail``: ``tail`` leaves a code address in ``t1``, and
code lies at 0 in the simulator but elsewhere under QEMU (the differential test compares
registers); ``j`` reaches all of the ITCM.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

BASELINE_DIR = Path(__file__).resolve().parent / "baseline"
CLANG = "clang-14"
CLANG_FLAGS = ("--target=riscv32", "-march=rv32imzve32x", "-menable-experimental-extensions", "-O2", "-S")
ARG_REGISTERS = 8  # a0..a7: the ILP32 calling convention's integer argument registers
STUB_ARGS = "kcgym_args"  # the stub's parameter block (.rodata) and scratch buffer (.bss)
STUB_SCRATCH = "kcgym_scratch"
SCRATCH_ALIGN = 16  # bytes: a VLEN boundary


@dataclass(frozen=True)
class Block:
    """int32 words in ``.rodata``, passed by address: a C ``struct`` of shapes and constants."""

    words: tuple[int, ...]


@dataclass(frozen=True)
class Scratch:
    """A zeroed buffer in ``.bss`` (the DTCM), passed by address: a C local array's home."""

    nbytes: int


Arg = int | Block | Scratch
Params = dict[str, int]
# (config params, tensor byte addresses, task constants) -> (C file stem, the kernel's arguments)
Kernel = Callable[[Params, Params, Params], tuple[str, list[Arg]]]


def _gemm(x: int, w: int, bias: int, y: int, batch: int, m: int, k: int, n: int, c: Params) -> tuple[str, list[Arg]]:
    return "matmul", [x, w, bias, y, Block((batch, m, k, n, c["mult"], c["zero_point"]))]


def _conv(p: Params, a: Params, c: Params) -> tuple[str, list[Arg]]:
    return "conv2d", [a["X"], a["W"], a["bias"], a["Y"],
                      Block((p["H"], p["cin"], p["cout"], p["k"], c["mult"], c["zero_point"]))]


# task name -> its C kernel and arguments: a new task adds its .c file and one row here
KERNELS: dict[str, Kernel] = {
    "relu": lambda p, a, c: ("relu", [a["X"], a["Y"], p["n"]]),
    "silu": lambda p, a, c: ("table_activation", [a["X"], a["Y"], p["n"], a["T"]]),
    "gelu": lambda p, a, c: ("table_activation", [a["X"], a["Y"], p["n"], a["T"]]),
    "softmax": lambda p, a, c: ("softmax", [a["X"], a["Y"], p["n"] // p["hidden"], p["hidden"], a["E"]]),
    "layernorm": lambda p, a, c: ("layernorm", [a["X"], a["Y"], p["n"] // p["hidden"], p["hidden"]]),
    "rmsnorm": lambda p, a, c: ("rmsnorm", [a["X"], a["Y"], p["n"] // p["hidden"], p["hidden"]]),
    "gemv": lambda p, a, c: ("gemv", [a["A"], a["x"], a["y"], p["M"], p["N"], c["mult"], c["zero_point"]]),
    "matmul": lambda p, a, c: _gemm(a["X"], a["W"], 0, a["Y"], 1, p["M"], p["K"], p["N"], c),
    "batch_matmul": lambda p, a, c: _gemm(a["X"], a["W"], 0, a["Y"], p["B"], p["M"], p["K"], p["N"], c),
    "linear": lambda p, a, c: _gemm(a["X"], a["W"], a["bias"], a["Y"], 1, p["batch"], p["hin"], p["hout"], c),
    "conv2d": _conv,
    "depthwise_conv": lambda p, a, c: ("depthwise_conv", [a["X"], a["W"], a["bias"], a["Y"],
                                                          Block((p["H"], p["c"], p["k"], c["mult"], c["zero_point"]))]),
    "conv_block": lambda p, a, c: ("conv_block", [
        a["X"], a["W1"], a["b1"], a["W2"], a["b2"], a["Y"], Scratch(p["H"] * p["H"] * p["cout"]),
        Block((p["H"], p["cin"], p["cout"], p["k"], c["mult1"], c["mult2"], c["zero_point"]))]),
    "ffn": lambda p, a, c: ("ffn", [
        a["X"], a["W1"], a["b1"], a["W2"], a["b2"], a["Y"], Scratch(p["T"] * p["f"]),
        Block((p["T"], p["d"], p["f"], c["mult1"], c["mult2"], c["zero_point"]))]),
    "swiglu": lambda p, a, c: ("swiglu", [
        a["X"], a["Wg"], a["Wu"], a["Wd"], a["S"], a["Y"], Scratch(3 * p["T"] * p["f"]),
        Block((p["T"], p["d"], p["f"], c["mult_g"], c["mult_u"], c["mult_d"], c["zero_point"]))]),
}


def c_source(stem: str) -> Path:
    return BASELINE_DIR / f"{stem}.c"


def assembly(stem: str) -> str:
    """The committed clang output for ``baseline/<stem>.c``."""
    return (BASELINE_DIR / f"{stem}.s").read_text(encoding="utf-8")


def stub(args: list[Arg]) -> str:
    """Arguments into a0..a7 (blocks and scratch get their own sections), then ``j kernel``."""
    if len(args) > ARG_REGISTERS:
        raise ValueError(f"{len(args)} arguments: the stub passes at most {ARG_REGISTERS} (a0..a7); use a Block")
    text, data = [".text", ".globl kcgym_stub", "kcgym_stub:"], []
    for reg, arg in enumerate(args):
        if isinstance(arg, int):
            text.append(f"    li a{reg}, {arg}")
            continue
        name = f"{STUB_ARGS if isinstance(arg, Block) else STUB_SCRATCH}{reg}"
        text += [f"    lui a{reg}, %hi({name})", f"    addi a{reg}, a{reg}, %lo({name})"]
        if isinstance(arg, Block):
            data += [".section .rodata", ".p2align 2", f"{name}:", *(f"    .word {w}" for w in arg.words)]
        else:
            data += [".section .bss", f".p2align {SCRATCH_ALIGN.bit_length() - 1}", f"{name}:",
                     f"    .zero {arg.nbytes}"]
    return "\n".join([*data, *text, "    j kernel", ""])


def program(task_name: str, params: Params, addrs: Params, consts: Params) -> str | None:
    """The baseline program for one config (stub + clang's assembly), or None where the task has no C kernel."""
    kernel = KERNELS.get(task_name)
    if kernel is None:
        return None
    stem, args = kernel(params, addrs, consts)
    return f"# kcgym RVV baseline: clang-14 -O2 of baseline/{stem}.c\n" + stub(args) + assembly(stem)


def stems() -> list[str]:
    """Every C kernel file (without .c), in name order."""
    return sorted(p.stem for p in BASELINE_DIR.glob("*.c"))


def clang_unavailable() -> str | None:
    """Why the C kernels cannot be recompiled here (None if they can)."""
    return None if shutil.which(CLANG) else f"{CLANG} not installed (apt-get install clang-14)"


def compile_c(stem: str) -> str:
    """clang-14's assembly for ``baseline/<stem>.c``, compiled in the baseline directory (stable ``.file`` names)."""
    with tempfile.TemporaryDirectory(prefix="kcgym_clang_") as d:
        out = Path(d) / f"{stem}.s"
        r = subprocess.run([CLANG, *CLANG_FLAGS, f"{stem}.c", "-o", str(out)], cwd=BASELINE_DIR,
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise RuntimeError(f"{CLANG} failed on {stem}.c:\n{r.stderr[-3000:]}")
        return out.read_text(encoding="utf-8")


def without_ident(assembly_text: str) -> str:
    """The assembly without clang's ``.ident`` line (the build string of the installed clang)."""
    return re.sub(r"(?m)^\s*\.ident\s.*\n", "", assembly_text)
