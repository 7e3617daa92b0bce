"""Differential test: the CPU simulator against QEMU (GNU binutils + qemu-riscv32), bit for bit.

Covers every scalar mnemonic (the RVV diff test's scalar snippets, under a scalar prologue), programs with
calls, the stack and data-dependent loops, and every task's GCC baseline kernel and every expert on real
task inputs. The final registers, the data RAM and the tensors must equal QEMU's. Skips with the reason
when the tools are not installed. (Counter CSRs are left out: QEMU reads the host's clock.)
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from kcgym.sims.cpu import ACCELERATOR
from kcgym.sims.cpu.accelerator import arch_state, simulate_images
from kcgym.sims.cpu.assembler import SCALAR_CLASSES, assemble
from kcgym.sims.cpu.config import CPUConfig
from kcgym.sims.rvv import isa as I
from kcgym.sims.rvv.qemu import run_qemu, unavailable_reason
from tests.sims.rvv import isa_programs as P

if unavailable_reason() is not None and os.environ.get("KCGYM_REQUIRE_QEMU") == "1":
    pytest.fail(f"KCGYM_REQUIRE_QEMU=1 but the QEMU differential test cannot run: {unavailable_reason()}",
                pytrace=False)
pytestmark = pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))
HW = CPUConfig()
MACHINE_MODE = ("pmp",)  # writes machine CSRs and traps: QEMU's user mode cannot run it (test_pmp.py checks it)
QEMU_TEXT = 0x4000_0000  # where kcgym/sims/rvv/qemu.py links the harness and the kernel
IGNORED_X = (1, 3)  # ra holds a code address, gp the harness's dump address
SCALAR_PROLOGUE = "    li s0, 0x20000000\n" + "".join(f"    lw {r}, {512 + 4 * i}(s0)\n" for i, r in
                                                        enumerate(P.SCALARS)) + f"""\
    li s11, {0x20000000 + P.LOG_OFFSET}
    li t2, {0x20000000 + P.LOAD_AREA + 0x100}
    li t3, {0x20000000 + P.STORE_AREA + 0x100}
"""


def for_gnu_as(source: str) -> str:
    """GNU as wants ``.attribute arch`` before any instruction, and the harness's prologue comes first: drop it
    (it names the ISA string, which the harness's -march covers)."""
    return "\n".join("# " + ln if ln.lstrip().startswith(".attribute") else ln for ln in source.splitlines())


def differences(source: str, ext: np.ndarray, hw: CPUConfig = HW, max_steps: int = 5_000_000) -> list[str]:
    """Every way the CPU simulator's final state differs from QEMU's (empty: identical)."""
    program = assemble(source, hw)
    st = simulate_images(program, ext[None], hw, max_steps)
    fs = ACCELERATOR.final_state(st, 0, program)
    fault = ACCELERATOR.fault(fs, program, hw, max_steps)
    if fault is not None:
        return [f"simulator fault: {fault.render()}"]
    ours = arch_state(st, 0, hw, ext.size)
    ref = run_qemu(for_gnu_as(source), ext, hw.assembler_config(), timeout=60)
    code_end = 4 * (program.length + 1)
    ref_x = _without_code_addresses(ours.x.view(np.uint8), ref.x.view(np.uint8), code_end).view(np.int32)
    out = [f"x{i}: sim {ours.x[i]:#x} qemu {ref.x[i]:#x}" for i in range(32)
           if i not in IGNORED_X and ours.x[i] != ref_x[i]]
    for name, a, b in (("ram", ours.dtcm, ref.dtcm), ("tensors", ours.ext, ref.ext)):
        if name == "ram":
            b = _without_code_addresses(a, b, code_end)
        bad = np.flatnonzero(a != b)
        if bad.size:
            out.append(f"{name}: {bad.size} bytes differ, first at offset {bad[0]:#x} (sim {a[bad[0]]:#x} "
                       f"qemu {b[bad[0]]:#x})")
    return out


def _without_code_addresses(ours: np.ndarray, ref: np.ndarray, code_end: int) -> np.ndarray:
    """``ref`` with the words that hold code addresses in both worlds (``ra``s saved on the stack, the ``t1`` of a
    ``tail``) set to ours:
    QEMU runs the kernel from QEMU_TEXT (user mode cannot map page 0), and GNU as expands some ``li`` shorter."""
    a, b = ours.view(np.uint32), ref.copy().view(np.uint32)
    code = (a != b) & (a < code_end) & (b >= QEMU_TEXT) & (b < QEMU_TEXT + 64 * code_end)
    b[code] = a[code]
    return b.view(np.uint8)


def scalar_programs(seed: int = 0, per_program: int = 24) -> list[tuple[str, set[str]]]:
    rng = np.random.default_rng(seed)
    specs = [s for s in I.INSTRUCTIONS if s.cls in SCALAR_CLASSES and s.cls != "CSR"]
    snippets = [(s.mnemonic, P._scalar_snippet(s, rng)) for s in specs]
    order = rng.permutation(len(snippets))
    out = []
    for start in range(0, len(order), per_program):
        chunk = [snippets[i] for i in order[start : start + per_program]]
        lines = [SCALAR_PROLOGUE] + ["    " + ln if not ln.endswith(":") else ln for _, body in chunk for ln in body]
        lines += ["    ret", "    .data", "data_word: .word 0x11223344, 0x55667788"]
        out.append(("\n".join(lines) + "\n", {m for m, _ in chunk}))
    return out


PROGRAMS = scalar_programs()
# calls, the stack, recursion and data-dependent branches: what stresses the predictor, RAS and forwarding
CONTROL = {
    "recursion": """
    li a0, 12
    call fib
    li t0, 0x20000000
    sw a0, 0(t0)
    j 9f
fib: addi sp, sp, -16
    sw ra, 12(sp)
    sw s0, 8(sp)
    sw s1, 4(sp)
    mv s0, a0
    li t0, 2
    blt a0, t0, 1f
    addi a0, s0, -1
    call fib
    mv s1, a0
    addi a0, s0, -2
    call fib
    add a0, a0, s1
1:  lw ra, 12(sp)
    lw s0, 8(sp)
    lw s1, 4(sp)
    addi sp, sp, 16
    ret
9:  nop
""",
    "data_dependent": """
    li a0, 0x20000000
    li a1, 200
    li a2, 0
    li a3, 0x20000800
1:  lb t0, 0(a0)
    andi t1, t0, 1
    beqz t1, 2f
    add a2, a2, t0
    sh a2, 0(a3)
    j 3f
2:  sub a2, a2, t0
    lhu t2, 0(a3)
    xor a2, a2, t2
3:  addi a0, a0, 1
    addi a3, a3, 2
    addi a1, a1, -1
    bnez a1, 1b
    sw a2, 0(a3)
""",
}


def test_programs_cover_every_scalar_instruction():
    covered = set().union(*(m for _, m in PROGRAMS))
    assert covered == {s.mnemonic for s in I.INSTRUCTIONS if s.cls in SCALAR_CLASSES and s.cls != "CSR"}


@pytest.mark.parametrize("k", range(len(PROGRAMS)))
def test_instruction_programs_match_qemu(k):
    source, mnemonics = PROGRAMS[k]
    diffs = differences(source, P.ext_image(k))
    assert not diffs, f"covering {sorted(mnemonics)}:\n" + "\n".join(diffs[:20])


@pytest.mark.parametrize("name", sorted(CONTROL))
def test_control_programs_match_qemu(name):
    image = np.random.default_rng(3).integers(0, 256, 4096, dtype=np.uint8)
    diffs = differences(CONTROL[name], image)
    assert not diffs, "\n".join(diffs[:20])


def _kernel_cases() -> list[tuple[str, str, int]]:
    from kcgym.registry import SUPPORTED

    cases = [(name, "compiler", c) for name in SUPPORTED["CPU"] if name not in MACHINE_MODE for c in (1, 3)]
    try:
        from kcgym.sims.cpu.expert import EXPERTS  # type: ignore[attr-defined]
    except ImportError:  # no experts yet
        EXPERTS = {}
    return cases + [(name, "expert", c) for name in EXPERTS if name not in MACHINE_MODE for c in (1, 3)]


@pytest.mark.parametrize(("name", "kind", "index"), _kernel_cases())
def test_shipped_kernels_match_qemu(name, kind, index):
    """GCC baseline and expert kernels on real task inputs: same registers, RAM and tensors as QEMU."""
    from kcgym.registry import task_for

    task = task_for("CPU", name)
    cfg = task.config("CPU", index)
    source = ACCELERATOR.compile(task, cfg, HW) if kind == "compiler" else ACCELERATOR.expert(task, cfg, HW)
    if source is None:  # an expert may leave a config to the baseline (qsort's radix sort below 128 keys)
        pytest.skip(f"no {kind} kernel for {name} C{index}")
    ext = ACCELERATOR.ext_image(task, cfg, HW, task.generate_inputs(cfg, np.random.default_rng(5)))
    diffs = differences(source, ext)
    assert not diffs, "\n".join(diffs[:20])
