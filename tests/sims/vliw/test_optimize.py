"""The VLIW compiler's -O2 back end: it keeps every result bit for bit and only moves, copies and renames.

The conformance suite checks every compiler kernel against the references at every config; these pin what
the back end itself promises: memory order where addresses may overlap, no bundle with two loads of one
bank where the bank is known, unrolled copies with registers of their own, the instruction memory respected,
and the same output bits as the template's one-operation-per-bundle kernel in fewer cycles.
"""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.sims.vliw import ACCELERATOR
from kcgym.sims.vliw.compiler import compile_task, template_kernel
from kcgym.sims.vliw.compiler.optimize import (
    Line,
    Loop,
    Unsupported,
    allocate,
    live_before,
    optimize,
    parse_program,
    step,
)
from kcgym.sims.vliw.config import VLIWConfig
from kcgym.sims.vliw.schedule import Access, schedule
from kcgym.tasks import TASKS
from tests.sims.vliw.harness import fault_name, run

HW = ACCELERATOR.make_hw()


def _bundles(source: str) -> list[str]:
    return [ln.split("//")[0].strip() for ln in source.splitlines() if ln.split("//")[0].strip()]


def _env() -> dict:
    return {f"{f}{i}": (None, 0) for f, n in (("p", 8), ("r", 16)) for i in range(n)}


def test_a_load_after_a_store_to_the_same_line_stays_after_it():
    out = _bundles(optimize("// t\n// g\nVBCST x0, 1.0\nVST x0, p0, 0\nVLD x1, p0, 0\nVST x1, p1, 64\n", HW))
    assert out.index("VLD x1, p0, 0") > out.index("VST x0, p0, 0")
    st, _ = run(optimize("// t\n// g\nVBCST x0, 1.0\nVST x0, p0, 0\nVLD x1, p0, 0\nPMOVI p1, 64\n"
                         "VST x1, p1, 0\nMOVI r1, 0\nDMAO p1, r1, r0, 1, 64\n", HW))
    assert fault_name(st) == "NONE" and np.all(np.asarray(st.ext[:32]) == 1.0)


def test_accesses_to_disjoint_buffers_reorder_and_overlapping_ones_do_not():
    env = _env()
    env["p1"] = (None, 4096)
    a, b = step("VST x0, p0, 64", env, HW)[0], step("VLD x1, p1, 64", env, HW)[0]
    c = step("VLD x2, p0, 64", env, HW)[0]  # p0 is 64 now: the line the store wrote
    assert not a.conflicts(b) and a.conflicts(Access("DM", None, 0, 2, write=False))
    assert c.lo == 64 and not a.conflicts(c)  # the store wrote bytes 0..63


def test_two_loads_of_one_known_bank_never_share_a_bundle():
    def src(second: int) -> str:
        return (f"// t\n// g\nPMOVI p0, 0\nPMOVI p1, {second}\nPMOVI p2, {3 * HW.bank_bytes}\nLOOPI 2, e\n"
                "    VLD x0, p0, 64\n    VLD x1, p1, 64\n    VADD x2, x0, x1\n    VST x2, p2, 64\ne:\n")

    assert not any(b.count("VLD") == 2 for b in _bundles(optimize(src(128), HW)))
    assert any(b.count("VLD") == 2 for b in _bundles(optimize(src(HW.bank_bytes), HW)))


def test_unrolled_copies_get_registers_of_their_own():
    src = ("// t\n// g\nVBCST x8, 0.0\nMOVI r1, 0\nPMOVI p0, 0\nDMAI p0, r1, r0, 1, 1024\n"
           "LOOPI 16, e\n    VLD x0, p0, 64\n    VMAX x1, x0, x8\n    VST x1, p1, 64\ne:\n"
           "PMOVI p1, 0\nMOVI r2, 2048\nDMAO p1, r2, r0, 1, 1024\n")
    out = optimize(src, HW)
    assert "unrolled" in out and len({b.split(",")[0] for b in _bundles(out) if b.startswith("VLD")}) > 2
    ext = np.concatenate([np.linspace(-4, 4, 512), np.zeros(1536)]).astype(np.float32)
    want, _ = run(src, ext)
    got, _ = run(out, ext)
    assert fault_name(got) == "NONE" and np.array_equal(np.asarray(got.ext[1024:1536]), np.maximum(ext[:512], 0))
    assert np.array_equal(np.asarray(got.ext[1024:1536]), np.asarray(want.ext[1024:1536]))


def test_a_value_live_after_the_block_keeps_its_register():
    lines = [Line("VBCST x0, 1.0"), Line("VBCST x1, 2.0"), Line("VADD x2, x0, x1")]
    got = allocate(lines, [()] * 3, {"x2"}, HW)
    assert got is not None and got[1][2].startswith("VADD x2,")


def test_liveness_sees_through_loops():
    _, tree = parse_program("// t\n// g\nLOOPI 4, e\n    VADD x1, x1, x0\ne:\nVST x1, p0, 0\n")
    assert live_before(tree, set(), HW) >= {"x0", "x1", "p0"}
    assert isinstance(tree[0], Loop)


def test_the_program_fits_a_small_instruction_memory():
    hw = VLIWConfig(imem_bundles=64)
    task = TASKS["gelu"]
    cfg = task.config("VLIW", 1)
    src = compile_task(task, cfg, hw, ACCELERATOR.kernel_layout(task, cfg, hw))
    assert ACCELERATOR.assemble(src, hw).length <= 64


def test_bundles_and_branches_are_refused():
    with pytest.raises(Unsupported):
        optimize("// t\n// g\nVBCST x0, 1.0 || MOVI r1, 0\n", HW)
    with pytest.raises(Unsupported):
        optimize("// t\n// g\nJ 0\n", HW)


def test_the_experts_schedule_is_unchanged_by_the_memory_option():
    texts = ["VLD x0, p0, 64", "VLD x1, p1, 64", "VADD x2, x0, x1", "VST x2, p2, 64"]
    assert schedule(texts, HW) == [["VLD x0, p0, 64", "VLD x1, p1, 64"], [], [], [], [], [], ["VADD x2, x0, x1"],
                                   [], ["VST x2, p2, 64"]]


@pytest.mark.parametrize("name", ["relu", "layernorm", "gemv", "depthwise_conv", "sdpa", "rope"])
def test_same_output_bits_as_the_template_in_fewer_cycles(name):
    task = TASKS[name]
    cfg = task.config("VLIW", 1)
    layout = ACCELERATOR.kernel_layout(task, cfg, HW)
    inputs = [task.generate_inputs(cfg, np.random.default_rng(7))]
    (old,) = ACCELERATOR.run(ACCELERATOR.assemble(template_kernel(task, cfg, HW, layout), HW), task, cfg, HW,
                             inputs, 10_000_000)
    (new,) = ACCELERATOR.run(ACCELERATOR.assemble(compile_task(task, cfg, HW, layout), HW), task, cfg, HW,
                             inputs, 10_000_000)
    assert old.fault is None and new.fault is None
    for k, v in old.outputs.items():
        assert np.array_equal(new.outputs[k], v, equal_nan=True), k
    assert new.cycles < old.cycles


def _live_reference(nodes, after: set[str], hw) -> set[str]:
    """Liveness without the memo: the plain recursion ``live_before`` replaced (exponential in loop depth)."""
    from kcgym.sims.vliw.compiler.optimize import _uses

    live = set(after)
    for n in reversed(nodes):
        if isinstance(n, Line):
            read, killed = _uses(n.text, hw)
            live = (live - killed) | read
        elif isinstance(n, Loop):
            top: set[str] = set()
            while True:
                again = _live_reference(n.body, live | top, hw)
                if again == top:
                    break
                top = again
            inner = _live_reference(n.body, live | top, hw)
            live = inner | live | {n.count} if isinstance(n.count, str) else inner if n.count > 0 else live
    return live


@pytest.mark.parametrize("name", ["decoder_t5", "mha"])
def test_memoised_liveness_matches_the_plain_recursion_for_every_live_out(name):
    """The per-loop memo is keyed by what is live after the loop: asking again with other registers live (or
    on another machine config) must not return an earlier answer."""
    task = TASKS[name]
    cfg = task.config("VLIW", 1)
    _, tree = parse_program(template_kernel(task, cfg, HW, ACCELERATOR.kernel_layout(task, cfg, HW)))
    loops = [n for n in tree if isinstance(n, Loop)]
    assert loops
    other = VLIWConfig(dm_bytes=2 * HW.dm_bytes)
    for after in (set(), {"r1"}, {"r1", "p3", "x5"}, {"c0", "r15"}, set()):
        for hw in (HW, other):
            assert live_before(tree, after, hw) == _live_reference(tree, after, hw)
            for loop in loops[:4]:
                assert live_before([loop], after, hw) == _live_reference([loop], after, hw)
