"""The trace-ahead RVV simulator (``kcgym/sims/rvv/trace.py``) against its oracle, the interpreter.

The whole final machine state must match bit for bit (registers, vector registers, memory, vl/vtype,
scoreboard times, counts, busy cycles, faults): on every compiler and expert kernel (C1 here, C2..C5 in
the slow tier), the ISA programs (every mnemonic), the hack battery, and programs that branch on data
(the pre-pass gives up), fault, speculate an indexed access wrongly, or run out of steps.
"""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.evaluation import Evaluator
from kcgym.sims.interpreter import round_up
from kcgym.sims.rvv import ACCELERATOR, trace
from kcgym.sims.rvv.accelerator import simulate_images
from kcgym.sims.rvv.assembler import HALT_WORD
from kcgym.tasks import tasks_for
from tests.sims.rvv import adversarial
from tests.sims.rvv import isa_programs as P

HW = ACCELERATOR.make_hw()
TASKS = tasks_for("int8")
MAX_STEPS = 20_000_000
HACKS = (adversarial.zeros, adversarial.constant, adversarial.copy_input, adversarial.spin, adversarial.out_of_bounds)


def _both(monkeypatch, program, images, max_steps=MAX_STEPS, ext_size=None, hw=HW):
    monkeypatch.setenv(trace.SIM_ENV, "trace")
    new = simulate_images(program, images, hw, max_steps, ext_size)
    monkeypatch.setenv(trace.SIM_ENV, "oracle")
    old = simulate_images(program, images, hw, max_steps, ext_size)
    for field in old._fields:
        np.testing.assert_array_equal(np.asarray(getattr(new, field)), np.asarray(getattr(old, field)), err_msg=field)
    return new


def _traced(program, ext_size, max_steps=MAX_STEPS) -> bool:
    """Whether the pre-pass kept this program (False: it gave up and the interpreter ran)."""
    words = program.padded(round_up(program.length + 1, HW.itcm_instructions + 1), HALT_WORD)
    dtcm = bytes(program.data).ljust(HW.dtcm_bytes, b"\0")
    tr, _ = trace.traced(words, program.length, HW.model_dump_json(), ext_size, max_steps, dtcm)
    return tr is not None


def _kernel_images(name: str, index: int, sets: int = 2):
    task = TASKS[name]
    cfg = task.config("RVV", index)
    layout = ACCELERATOR.layout(task, cfg, HW)
    inputs = Evaluator(ACCELERATOR, task, cfg, HW).input_sets(0, sets)
    return task, cfg, layout, np.stack([ACCELERATOR.ext_image(task, cfg, HW, i, layout) for i in inputs])


def _kernels(index: int):
    for name in TASKS:
        yield name, index, "compiler"
        task = TASKS[name]
        if ACCELERATOR.expert(task, task.config("RVV", index), HW) is not None:
            yield name, index, "expert"


def _check_kernel(monkeypatch, name, index, which):
    task, cfg, layout, images = _kernel_images(name, index)
    source = ACCELERATOR.compile(task, cfg, HW) if which == "compiler" else ACCELERATOR.expert(task, cfg, HW)
    _both(monkeypatch, ACCELERATOR.assemble(source, HW), images)


@pytest.mark.parametrize(("name", "index", "which"), list(_kernels(1)))
def test_kernels_c1(monkeypatch, name, index, which):
    _check_kernel(monkeypatch, name, index, which)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "index", "which"), [k for i in (2, 3, 4, 5) for k in _kernels(i)])
def test_kernels_c2_to_c5(monkeypatch, name, index, which):
    _check_kernel(monkeypatch, name, index, which)


def test_the_compiler_kernels_mostly_take_the_trace_path():
    """The pre-pass keeps a kernel whose control never reads data (clang's matmul reloads its saved return
    address and stub arguments from the DTCM: known values, not data), and gives up on gemv and softmax (their
    C code branches on loaded or reduced values): a regression that gave up everywhere would pass the
    differential tests silently."""
    for name, expect in (("matmul", True), ("conv2d", True), ("ffn", True), ("gelu", True), ("swiglu", True),
                         ("gemv", False), ("softmax", False)):
        task, cfg, layout, _ = _kernel_images(name, 1, 1)
        program = ACCELERATOR.assemble(ACCELERATOR.compile(task, cfg, HW), HW)
        assert _traced(program, ACCELERATOR.ext_size(task, cfg, HW, layout)) is expect, name


ISA_SEEDS = (0, 1)  # each seed shuffles every mnemonic's snippet (random operands, vtypes) into programs


@pytest.mark.parametrize(("seed", "k"), [(s, k) for s in ISA_SEEDS for k in range(len(P.programs(seed=s)))])
def test_isa_programs(monkeypatch, seed, k):
    source, _ = P.programs(seed=seed)[k]
    _both(monkeypatch, ACCELERATOR.assemble(source, HW), np.stack([P.ext_image(k), P.ext_image(k + 100)]))


@pytest.mark.parametrize("hack", HACKS, ids=lambda h: h.__name__)
def test_hack_battery(monkeypatch, hack):
    task, cfg, layout, images = _kernel_images("matmul", 1)
    _both(monkeypatch, ACCELERATOR.assemble(hack(task, layout, HW), HW), images, max_steps=5_000)


RAW = {
    "branch on loaded data": "li a0, 0x20000000\nlb t0, 0(a0)\nbltz t0, 1f\nli t1, 5\nsw t1, 4(a0)\n1:\nret\n",
    "vl from loaded data": "li a0, 0x20000000\nlbu t0, 0(a0)\nvsetvli t1, t0, e8, m1, ta, ma\nvle8.v v1, (a0)\n"
                           "vse8.v v1, (a0)\nret\n",
    "address from vmv.x.s": "li a0, 0x20000000\nvsetivli x0, 4, e32, m1, ta, ma\nvle32.v v1, (a0)\n"
                            "vmv.x.s t0, v1\nandi t0, t0, 12\nadd t0, t0, a0\nlw t1, 0(t0)\nsw t1, 16(a0)\nret\n",
    "tainted arithmetic into a vector op": "li a0, 0x20000000\nlw t0, 0(a0)\nlw t1, 4(a0)\nmul t2, t0, t1\n"
                                           "divu t3, t2, t1\nrem t4, t0, t1\nvsetivli x0, 4, e32, m1, ta, ma\n"
                                           "vmv.v.x v1, t2\nvadd.vx v1, v1, t3\nvmacc.vx v1, t4, v1\n"
                                           "vse32.v v1, (a0)\nsw t2, 32(a0)\nret\n",
    "masked vector store": "li a0, 0x20000000\nvsetivli x0, 16, e8, m1, ta, ma\nvle8.v v0, (a0)\nvmv.v.i v1, 3\n"
                           "vse8.v v1, (a0), v0.t\nret\n",
    "indexed load in bounds": "li a0, 0x20000000\nvsetivli x0, 16, e8, m1, ta, ma\nvle8.v v2, (a0)\n"
                              "vluxei8.v v1, (a0), v2\naddi a2, a0, 256\nvse8.v v1, (a2)\nret\n",
    "indexed load past the end": "li a0, 0x20000000\nli a1, 4000\nadd a1, a1, a0\nvsetivli x0, 16, e8, m1, ta, ma\n"
                                 "vle8.v v2, (a0)\nvluxei8.v v1, (a1), v2\naddi a2, a0, 256\nvse8.v v1, (a2)\nret\n",
    "indexed misaligned": "li a0, 0x20000000\nvsetivli x0, 4, e32, m1, ta, ma\nvle32.v v2, (a0)\n"
                          "vluxei32.v v1, (a0), v2\nret\n",
    "out of bounds store": "li a0, 0x20000000\nli a1, 4096\nadd a0, a0, a1\nsw a1, -2(a0)\nret\n",
    "misaligned load": "li a0, 0x20000001\nlw a1, 0(a0)\nret\n",
    "vector op before vsetvli": "vadd.vv v1, v2, v3\nret\n",
    "illegal register group": "li t1, 2\nvsetvl t0, x0, t1\nvadd.vv v2, v4, v8\nret\n",
    "bad jump": "li t0, 6\njalr zero, 0(t0)\nret\n",
    "strided load crossing out of memory": "li a0, 0x20000000\nli a1, 1000\nvsetivli x0, 8, e8, m1, ta, ma\n"
                                           "vlse8.v v1, (a0), a1\nret\n",
    "scalar loop to the end of the image": "li a0, 0x20000000\nli a1, 4096\n1:\nlbu t0, 0(a0)\nsb t0, 1(a0)\n"
                                           "addi a0, a0, 1\naddi a1, a1, -1\nbnez a1, 1b\nret\n",
    "ran off the end": "li t0, 1\nli t1, 2\n",
    "ends on a DTCM load": "lw t0, -4(sp)\n",
    "ends on a load after vector work": "vsetvli t0, x0, e32, m8, ta, ma\nvadd.vv v0, v8, v16\nlw t0, -4(sp)\n",
    "ends on an external load": "li a0, 0x20000000\nlw t0, 0(a0)\nret\n",
}


@pytest.mark.parametrize("name", list(RAW))
def test_raw_programs(monkeypatch, name):
    program = ACCELERATOR.assemble(RAW[name], HW)
    rng = np.random.default_rng(7)
    _both(monkeypatch, program, rng.integers(0, 256, (2, 4096), dtype=np.uint8))


def test_data_dependent_programs_fall_back():
    for name in ("branch on loaded data", "vl from loaded data", "address from vmv.x.s", "masked vector store",
                 "indexed load past the end"):
        expect_kept = name == "indexed load past the end"  # kept, then its speculation check fails at run time
        assert _traced(ACCELERATOR.assemble(RAW[name], HW), 4096) is expect_kept, name
    assert _traced(ACCELERATOR.assemble(RAW["tainted arithmetic into a vector op"], HW), 4096)


@pytest.mark.parametrize("max_steps", [1, 2, 100, 4_321])
def test_step_budget(monkeypatch, max_steps):
    task, cfg, layout, images = _kernel_images("matmul", 1)
    st = _both(monkeypatch, ACCELERATOR.assemble(ACCELERATOR.compile(task, cfg, HW), HW), images, max_steps)
    assert int(st.ctl[0, 1]) == max_steps and not st.ctl[0, 2]  # STEPS, HALTED: stopped by the budget


@pytest.mark.slow  # two fresh compiles (interpreter and data path) for the new machine
def test_another_machine_config(monkeypatch):
    """Every timing constant reaches the pre-pass: a config with all of them changed (and a smaller DTCM)."""
    hw = HW.model_copy(update=dict(dtcm_bytes=8192, ext_latency=7, ext_bytes_per_cycle=8, vector_queue_depth=3,
                                   load_use_latency=3, mul_latency=5, div_cycles=9, branch_penalty=2,
                                   jump_penalty=2, vmul_latency=1, vdiv_cycles_per_chunk=3))
    hw = type(HW).model_validate(hw.model_dump())
    task, cfg, layout, images = _kernel_images("matmul", 1)
    for source in (ACCELERATOR.compile(task, cfg, hw), P.programs(seed=0)[0][0]):
        program = ACCELERATOR.assemble(source, hw)
        _both(monkeypatch, program, images, hw=hw)
