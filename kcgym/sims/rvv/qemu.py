"""Run a kernel on real RISC-V semantics: GNU binutils + ``qemu-riscv32`` (user mode, RVV 1.0, VLEN=128).

The differential tests use this as the oracle for the JAX simulator. The kernel source is
wrapped in a prologue (zero the registers, set ``sp`` and ``ra`` as the simulator does) and
an epilogue (store the architectural state, write it and both data memories to stdout,
exit). A linker script places the data sections at the DTCM address in the assembler's order
(:data:`kcgym.sims.rvv.sections.DATA_ORDER`, padded to the DTCM's size) and the
external-memory image at ``0x20000000``, so absolute addresses in kernels mean the same
thing in both worlds. ``gp`` holds the dump address and ``ra`` a code address, so those two
registers are not compared.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kcgym.sims.rvv.config import DTCM_BASE, EXT_BASE, VLENB, RVVConfig
from kcgym.sims.rvv.sections import linker_data_patterns

QEMU = "qemu-riscv32"
QEMU_CPU = "rv32,v=true,vlen=128,elen=32,vext_spec=v1.0"
DUMP_BASE = 0x3000_0000
DUMP_BYTES = 256 + 32 * VLENB
PREFIXES = ("riscv64-unknown-elf-", "riscv64-linux-gnu-")


def toolchain() -> tuple[str, str] | None:
    """``(as, ld)`` of an installed RISC-V binutils, or None."""
    for prefix in PREFIXES:
        a, ld = shutil.which(prefix + "as"), shutil.which(prefix + "ld")
        if a and ld:
            return a, ld
    return None


def unavailable_reason() -> str | None:
    """Why the QEMU oracle cannot run here (None if it can)."""
    if toolchain() is None:
        return ("RISC-V binutils not installed (apt-get install binutils-riscv64-unknown-elf or "
                "binutils-riscv64-linux-gnu)")
    if shutil.which(QEMU) is None:
        return "qemu-riscv32 not installed (apt-get install qemu-user)"
    return None


@dataclass
class ArchState:
    """Architectural state after a run: what the differential test compares."""

    x: np.ndarray  # int32[32] (x1 = ra and x3 = gp are harness registers)
    vl: int
    vtype: int
    vregs: np.ndarray  # uint8[32 * VLENB]
    dtcm: np.ndarray  # uint8[dtcm bytes]
    ext: np.ndarray  # uint8[ext bytes]


def _wrap(source: str, hw: RVVConfig, ext_size: int) -> str:
    # GNU as takes '.attribute arch' only before the first instruction, and it would narrow the ISA the harness
    # needs (a GCC file says rv32im); LLVM's '.addrsig' tables are unknown to it. Both only label the object
    # file for a linker, so the harness drops them.
    source = re.sub(r"(?im)^[ \t]*\.(attribute|addrsig|addrsig_sym)\b.*$", "", source)
    zero = "\n".join(f"    li x{i}, 0" for i in range(4, 32))
    saves = "\n".join(f"    sw x{i}, {4 * i}(gp)" for i in range(32))
    vsaves = "\n".join(f"    vse8.v v{8 * k}, (t1)\n    addi t1, t1, 128" for k in range(4))
    return f"""
    .section .text.kcgym_start, "ax"
    .globl _start
_start:
    li gp, {DUMP_BASE}
    li sp, {DTCM_BASE + hw.dtcm_bytes}
    la ra, __kcgym_epilogue
{zero}
    j __kcgym_kernel
    .text
__kcgym_kernel:
{source}
    .text
__kcgym_epilogue:
{saves}
    csrr t0, vl
    sw t0, 128(gp)
    csrr t0, vtype
    sw t0, 132(gp)
    addi t1, gp, 256
    li t0, 128
    vsetvli t0, t0, e8, m8, ta, ma
{vsaves}
    li a0, 1
    mv a1, gp
    li a2, {DUMP_BYTES}
    li a7, 64
    ecall
    li a0, 1
    li a1, {DTCM_BASE}
    li a2, {hw.dtcm_bytes}
    li a7, 64
    ecall
    li a0, 1
    li a1, {EXT_BASE}
    li a2, {ext_size}
    li a7, 64
    ecall
    li a0, 0
    li a7, 93
    ecall
"""


def _linker_script(hw: RVVConfig) -> str:
    return f"""
SECTIONS {{
  . = 0x40000000;
  .text : {{ *(.text.kcgym_start) *(.text) *(.text.*) }}
  . = {DTCM_BASE:#x};
  .data : {{ {linker_data_patterns()} . = {hw.dtcm_bytes:#x}; }}
  . = {EXT_BASE:#x};
  .ext : {{ *(.kcgym_ext) }}
  . = {DUMP_BASE:#x};
  .dump : {{ . = {DUMP_BYTES:#x}; }}
}}
"""


def build(source: str, ext_image: np.ndarray, hw: RVVConfig, tmp: Path, timeout: float = 20.0) -> Path:
    """Assemble ``source`` with GNU as and link it around ``ext_image`` in the folder ``tmp``: the ELF's path."""
    tools = toolchain()
    if tools is None or shutil.which(QEMU) is None:
        raise RuntimeError(unavailable_reason())
    gas, ld = tools
    ext = np.asarray(ext_image, np.uint8)
    (tmp / "ext.bin").write_bytes(ext.tobytes())
    (tmp / "kernel.s").write_text(_wrap(source, hw, ext.size))
    (tmp / "ext.s").write_text('    .section .kcgym_ext, "aw"\n    .incbin "ext.bin"\n')
    (tmp / "link.ld").write_text(_linker_script(hw))
    flags = ["-march=rv32im_zicsr_zve32x", "-mabi=ilp32"]
    for name in ("kernel", "ext"):
        r = subprocess.run([gas, *flags, f"{name}.s", "-o", f"{name}.o"], cwd=tmp, capture_output=True,
                           text=True, timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError(f"GNU as rejected the source:\n{r.stderr[-3000:]}")
    subprocess.run([ld, "-m", "elf32lriscv", "--no-relax", "-T", "link.ld", "kernel.o", "ext.o", "-o",
                    "kernel.elf"], cwd=tmp, check=True, capture_output=True, text=True, timeout=timeout)
    return tmp / "kernel.elf"


def run_elf(elf: Path, timeout: float = 20.0) -> subprocess.CompletedProcess:
    """One run of a built kernel under qemu-riscv32 (its stdout is the dump :func:`run_qemu` reads)."""
    return subprocess.run([QEMU, "-cpu", QEMU_CPU, f"./{elf.name}"], cwd=elf.parent, capture_output=True,
                          timeout=timeout)


def run_qemu(source: str, ext_image: np.ndarray, hw: RVVConfig | None = None, timeout: float = 20.0
             ) -> ArchState:
    """Assemble ``source`` with GNU as, link it around ``ext_image`` and run it under qemu-riscv32."""
    hw = hw or RVVConfig()
    ext = np.asarray(ext_image, np.uint8)
    with tempfile.TemporaryDirectory(prefix="kcgym_qemu_") as d:
        out = run_elf(build(source, ext, hw, Path(d), timeout), timeout)
    if out.returncode != 0:
        raise RuntimeError(f"qemu exited with {out.returncode}: {out.stderr.decode(errors='replace')[-500:]}")
    raw = np.frombuffer(out.stdout, np.uint8)
    want = DUMP_BYTES + hw.dtcm_bytes + ext.size
    if raw.size != want:
        raise RuntimeError(f"qemu wrote {raw.size} bytes, expected {want}")
    head = raw[:256].view(np.int32)
    return ArchState(x=head[:32].copy(), vl=int(head[32]), vtype=int(head[33]),
                     vregs=raw[256:DUMP_BYTES].copy(), dtcm=raw[DUMP_BYTES:DUMP_BYTES + hw.dtcm_bytes].copy(),
                     ext=raw[DUMP_BYTES + hw.dtcm_bytes:].copy())
