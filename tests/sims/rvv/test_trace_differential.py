"""The trace-ahead RVV simulator (``kcgym/sims/rvv/trace.py``) against its oracle, the interpreter.

The whole final machine state must match bit for bit (registers, vector registers, memory, vl/vtype,
scoreboard times, counts, busy cycles, faults): on every compiler and expert kernel (C1 here, C2..C5 in
the slow tier; the kernels whose control reads data at every config here), the ISA programs (every
mnemonic), the hack battery, and programs that branch on data (resolved, the input sets agreeing or
splitting), fault after a resolved branch, run out of steps, speculate an indexed access wrongly, or need
what the pre-pass cannot resolve (it gives up).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from kcgym import limits
from kcgym.evaluation import Evaluator
from kcgym.sims.rvv import ACCELERATOR, trace
from kcgym.sims.rvv import isa as I
from kcgym.sims.rvv import machine as M
from kcgym.sims.rvv.accelerator import machine_inputs, simulate_images
from kcgym.sims.rvv.config import EXT_BASE
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


def _info(program, images, ext_size=None, max_steps=MAX_STEPS) -> trace.RunInfo:
    """How the trace path ran this program on these input sets (its cache cleared first)."""
    trace._TRACES.clear()
    words, mems = machine_inputs(program, images, HW)
    ext = images.shape[1] if ext_size is None else ext_size
    return trace.run_info(HW.model_dump_json(), words, program.length, mems, ext, max_steps)[1]


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


DATA_CONTROL = ("gemv", "softmax", "layernorm", "rmsnorm")  # clang's C branches on reduced values: clip, max, isqrt


def test_the_compiler_kernels_take_the_trace_path():
    """Every compiler kernel takes the trace path: one whose control never reads data with no resolution
    (clang's matmul reloads its saved return address and stub arguments from the DTCM: known values, not
    data), gemv, softmax, layernorm and rmsnorm by resolving their data branches (their input sets split
    where the branches disagree). A regression that gave up everywhere would pass the differential tests
    silently."""
    for name in ("matmul", "conv2d", "ffn", "gelu", "swiglu", *DATA_CONTROL):
        task, cfg, layout, images = _kernel_images(name, 1, 4)
        program = ACCELERATOR.assemble(ACCELERATOR.compile(task, cfg, HW), HW)
        info = _info(program, images, ACCELERATOR.ext_size(task, cfg, HW, layout))
        assert info.path == "trace", name
        assert (info.resolutions > 0) is (name in DATA_CONTROL), (name, info)
        if name in DATA_CONTROL and name != "gemv":  # gemv's clip takes the same way on all four sets
            assert info.groups > 1, (name, info)


@pytest.mark.parametrize(("name", "index"), [(n, i) if i < 5 else pytest.param(n, i, marks=pytest.mark.slow)
                                             for n in DATA_CONTROL for i in (2, 3, 4, 5)])
def test_data_control_kernels(monkeypatch, name, index):
    """The kernels that resolve data at C2..C5 (C1: ``test_kernels_c1``; C5, ~10 s each, in the slow tier), and
    their cached trees."""
    task, cfg, layout, images = _kernel_images(name, index)
    program = ACCELERATOR.assemble(ACCELERATOR.compile(task, cfg, HW), HW)
    trace._TRACES.clear()
    _both(monkeypatch, program, images)
    _both(monkeypatch, program, images)  # the tree from the cache


ISA_SEEDS = (0, 1)  # each seed shuffles every mnemonic's snippet (random operands, vtypes) into programs


@pytest.mark.parametrize(("seed", "k"), [(s, k) for s in ISA_SEEDS for k in range(len(P.programs(seed=s)))])
def test_isa_programs(monkeypatch, seed, k):
    source, _ = P.programs(seed=seed)[k]
    _both(monkeypatch, ACCELERATOR.assemble(source, HW), np.stack([P.ext_image(k), P.ext_image(k + 100)]))


# the vector classes with a data-path branch of their own (``DataPath.b_varith``, ``b_vred``, ``b_vmvxs``): every
# mnemonic of the class at several vtypes, masked and not; then the same ending in a fault (an odd register
# group at e8, m2 -- set by vsetvl from a register, so the assembler cannot see it: F_ILLEGAL_GROUP after the
# class's operations ran)
CLASS_FAULTS = {"VARITH": "li a1, 1\nvsetvl t0, x0, a1\nvadd.vv v3, v8, v16",
                "VRED": "li a1, 1\nvsetvl t0, x0, a1\nvwredsum.vs v4, v9, v16"}


@pytest.mark.parametrize("fault", [False, True], ids=["runs", "faults"])
@pytest.mark.parametrize("cls", list(CLASS_FAULTS))
def test_vector_class_branches(monkeypatch, cls, fault):
    images = np.stack([P.ext_image(3), P.ext_image(4)])
    seeds = (5,) if cls == "VARITH" else (0, 1, 2, 3)
    for source in P.class_programs(cls, seeds, CLASS_FAULTS[cls] if fault else None):
        program = ACCELERATOR.assemble(source, HW)
        assert _info(program, images).path == "trace"
        st = _both(monkeypatch, program, images)
        assert list(st.ctl[:, 3]) == [M.F_ILLEGAL_GROUP if fault else 0] * 2  # FAULT


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


def test_data_dependent_programs_resolve_or_fall_back():
    """Branches, vl and addresses from data are resolved; a masked vector access (its bytes depend on v0) gives
    up; a wrongly speculated indexed load runs, then its check sends the run to the interpreter."""
    images = np.random.default_rng(7).integers(0, 256, (2, 4096), dtype=np.uint8)
    for name, path in (("branch on loaded data", "trace"), ("vl from loaded data", "trace"),
                       ("address from vmv.x.s", "trace"), ("masked vector store", "interpreter"),
                       ("indexed load past the end", "interpreter"), ("tainted arithmetic into a vector op", "trace")):
        info = _info(ACCELERATOR.assemble(RAW[name], HW), images)
        assert info.path == path, (name, info)
        assert (info.resolutions > 0) is (name in ("branch on loaded data", "vl from loaded data",
                                                   "address from vmv.x.s")), (name, info)


# programs whose control reads data, against input sets chosen to agree or disagree (``HOSTILE_IMAGES``)
HOSTILE = {
    # the first byte decides: a branch the two sets take different ways, then a store only one makes
    "split branch": "li a0, 0x20000000\nlb t0, 0(a0)\nbltz t0, 1f\nli t1, 5\nsw t1, 4(a0)\nj 2f\n1:\n"
                    "vsetivli x0, 8, e8, m1, ta, ma\nvle8.v v1, (a0)\nvadd.vx v1, v1, t0\naddi a1, a0, 16\n"
                    "vse8.v v1, (a1)\n2:\nret\n",
    # a loop whose trip count is a loaded byte: a different length per set, then a vmv.x.s-derived store
    "loop count from data": "li a0, 0x20000000\nlbu t0, 1(a0)\nli t1, 0\n1:\naddi t1, t1, 3\naddi t0, t0, -1\n"
                            "bgtz t0, 1b\nvsetivli x0, 4, e32, m1, ta, ma\nvle32.v v2, (a0)\nvredsum.vs v3, v2, v2\n"
                            "vmv.x.s t2, v3\nadd t2, t2, t1\nsw t2, 32(a0)\nret\n",
    # a resolved branch, then a fault in one set only: the other set's address stays in bounds
    "fault after a resolved branch": "li a0, 0x20000000\nlb t0, 0(a0)\nbgez t0, 1f\nli t1, 100000\nadd a0, a0, t1\n"
                                     "1:\nlw t2, 8(a0)\nsw t2, 12(a0)\nret\n",
    # a jump target and vl from data, each differing between the sets
    "jump and vl from data": "li a0, 0x20000000\nlbu t0, 0(a0)\nandi t0, t0, 4\nla t1, 1f\nadd t1, t1, t0\n"
                             "jalr x0, 0(t1)\n1:\nli t3, 3\nli t3, 7\nlbu t5, 2(a0)\nadd t3, t3, t5\n"
                             "vsetvli t4, t3, e8, m1, ta, ma\nvle8.v v1, (a0)\naddi a1, a0, 64\nvse8.v v1, (a1)\nret\n",
    # a data-dependent loop that never ends: the step budget stops each set (after a split)
    "spin on data": "li a0, 0x20000000\nlb t0, 0(a0)\nbltz t0, 2f\n1:\nlw t1, 4(a0)\naddi t1, t1, 1\nsw t1, 4(a0)\n"
                    "lb t2, 4(a0)\nbnez t0, 1b\nj 1b\n2:\naddi t0, t0, 1\nj 1b\n",
}


def _hostile_images(agree: bool) -> np.ndarray:
    rng = np.random.default_rng(11)
    images = rng.integers(0, 256, (2, 4096), dtype=np.uint8)
    images[:, 0] = (0x83, 0x8B) if agree else (0x84, 0x10)  # negative in both, bit 2 clear / in one, set in one
    images[:, 1] = (9, 9) if agree else (5, 17)  # the loop's trip count
    images[:, 2] = (6, 6) if agree else (6, 11)  # part of vl
    return images


@pytest.mark.parametrize("agree", [True, False], ids=["sets agree", "sets disagree"])
@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_data_control(monkeypatch, name, agree):
    # the resolver itself, at any density ("spin on data" resolves every 5 instructions: past RESOLVE_FREE the
    # budget would send it to the interpreter, test_dense_resolutions_fall_back_early)
    monkeypatch.setattr(trace, "RESOLVE_MIN_STEPS", 0)
    program = ACCELERATOR.assemble(HOSTILE[name], HW)
    images = _hostile_images(agree)
    max_steps = 3_000 if name == "spin on data" else MAX_STEPS
    trace._TRACES.clear()
    st = _both(monkeypatch, program, images, max_steps)
    info = _info(program, images, max_steps=max_steps)
    assert info.path == "trace" and info.resolutions > 0, info
    assert (info.groups > 1) is (not agree), info
    words, mems = machine_inputs(program, images, HW)
    again, cached = trace.run_info(HW.model_dump_json(), words, program.length, mems, images.shape[1], max_steps)
    assert cached == info._replace(cached=True)  # the tree is cached with the input images
    for field in st._fields:
        np.testing.assert_array_equal(np.asarray(getattr(again, field)), np.asarray(getattr(st, field)))
    other = _hostile_images(not agree)
    words, mems = machine_inputs(program, other, HW)
    _, fresh = trace.run_info(HW.model_dump_json(), words, program.length, mems, other.shape[1], max_steps)
    assert not fresh.cached and fresh.resolutions > 0  # other images: explored again
    _both(monkeypatch, program, other, max_steps)  # (from the cache now, beside the first images' tree)
    if name == "fault after a resolved branch":
        assert list(st.ctl[:, 3]) == ([1, 1] if agree else [1, 0])  # FAULT: OOB in the negative set(s) only
    if name == "spin on data":
        assert list(st.ctl[:, 1]) == [max_steps] * 2 and not st.ctl[:, 2].any()  # the budget stopped both


def test_a_cached_trace_serves_any_number_of_input_sets(monkeypatch):
    """A trace cached from one input set (``simulate``) replays for four (``submit``'s hidden and stress sets)."""
    task, cfg, layout, images = _kernel_images("matmul", 1, 4)
    program = ACCELERATOR.assemble(ACCELERATOR.expert(task, cfg, HW), HW)
    trace._TRACES.clear()
    _both(monkeypatch, program, images[:1])
    _both(monkeypatch, program, images)
    _both(monkeypatch, program, images[2:])


def test_too_many_resolutions_fall_back(monkeypatch):
    """Past ``RESOLVE_MAX`` resolutions the interpreter runs (each one costs a data-path round trip)."""
    task, cfg, layout, images = _kernel_images("layernorm", 1)
    program = ACCELERATOR.assemble(ACCELERATOR.compile(task, cfg, HW), HW)
    n = _info(program, images).resolutions
    monkeypatch.setattr(trace, "RESOLVE_MAX", n - 1)
    assert _info(program, images).path == "interpreter"
    _both(monkeypatch, program, images)
    monkeypatch.setattr(trace, "RESOLVE_MAX", n)
    assert _info(program, images).path == "trace"


# a branch on a new loaded byte every few instructions: a resolution per ~7 steps
DENSE_RESOLUTIONS = ("li a0, 0x20000000\nli a2, 0\nli t3, 600\n1:\nlb t0, 0(a0)\nbltz t0, 2f\naddi a2, a2, 1\n2:\n"
                     "addi a0, a0, 1\naddi t3, t3, -1\nbnez t3, 1b\nsw a2, 0(a0)\nret\n")


def test_dense_resolutions_fall_back_early(monkeypatch):
    """Past ``RESOLVE_FREE`` resolutions a run needs ``RESOLVE_MIN_STEPS`` instructions per resolution: a
    program that branches on data every few instructions goes to the interpreter after RESOLVE_FREE + 1
    round trips, not RESOLVE_MAX; one below the density stays on the trace path."""
    program = ACCELERATOR.assemble(DENSE_RESOLUTIONS, HW)
    images = np.random.default_rng(5).integers(0, 256, (2, 4096), dtype=np.uint8)
    info = _info(program, images)
    assert info.path == "interpreter" and info.resolutions == limits.RESOLVE_FREE + 1, info
    _both(monkeypatch, program, images)
    monkeypatch.setattr(trace, "RESOLVE_MIN_STEPS", 2)
    info = _info(program, images)
    assert info.path == "trace" and info.resolutions > limits.RESOLVE_FREE + 1, info
    _both(monkeypatch, program, images)


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


@pytest.mark.parametrize("which", ["scalar", "vector", "compare"])
def test_an_operation_outside_the_instruction_table_falls_back(monkeypatch, which):
    """The data path's scalar, vector-arithmetic and shared (compare) branches switch over the operations the
    instruction table gives those (``trace.SCALAR_OPS``, ``VARITH_OPS``, ``COMPARE_OPS``); a word with another
    (no assembler makes one) must leave the program to the interpreter, not compute a different operation (the
    scalar one on a loaded value: the data path computes it)."""
    source = {"scalar": f"li a3, {EXT_BASE}\nlw a1, 0(a3)\nli a2, -3\nadd a0, a1, a2\nret\n",
              "vector": "vsetivli t0, 4, e32, m1, ta, ma\nvadd.vv v1, v2, v3\nret\n",
              "compare": "vsetivli t0, 4, e32, m1, ta, ma\nvmseq.vv v1, v2, v3\nret\n"}[which]
    program = ACCELERATOR.assemble(source, HW)
    words = program.words.copy()
    pc = int(np.flatnonzero(words[:, 1] == (trace.C_ALU if which == "scalar" else trace.C_VARITH))[-1])
    # (a vector compare's operation without its mask width; vector addition's with it)
    words[pc, 2] = I.OP[{"scalar": "min", "vector": "seq", "compare": "add"}[which]]
    program = dataclasses.replace(program, words=words)
    images = np.random.default_rng(3).integers(0, 256, (2, 4096), dtype=np.uint8)
    assert _info(program, images).path == "interpreter"
    _both(monkeypatch, program, images)
