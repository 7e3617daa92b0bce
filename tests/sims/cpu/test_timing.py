"""CPU timing contract: one test per numbered rule of the guide's Timing model section (CPU-Tn).

Each test runs small kernels and checks the rule's formula, computed here from the same config the guide
prints, against the simulator's pipeline trace (per instruction: fetch, dispatch, issue, complete, commit)
or its cycle count. The last tests are the issue's "Done when": the model rewards what it should.
"""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.sims.cpu import ACCELERATOR
from kcgym.sims.cpu import machine as M
from kcgym.sims.cpu.accelerator import pipeline_trace, simulate_images
from kcgym.sims.cpu.assembler import assemble
from kcgym.sims.cpu.config import TENSOR_BASE, CPUConfig
from kcgym.sims.rvv import isa as I
from tests.sims.contract import check_every_rule_has_a_test

HW = CPUConfig()
WIDE = CPUConfig(line_bytes=1024)  # one I-cache line holds 256 instructions: no fetch misses after the first
PC, F, D, ISSUE, X, C = range(6)
IMAGE = np.zeros(64 * 1024, np.uint8)


def trace(source: str, hw: CPUConfig = HW, n: int = 256, image: np.ndarray = IMAGE) -> np.ndarray:
    return pipeline_trace(assemble(source, hw), image, hw, n)


def state(source: str, hw: CPUConfig = HW, image: np.ndarray = IMAGE) -> M.State:
    p = assemble(source, hw)
    st = simulate_images(p, image[None], hw, 100_000)
    assert int(st.ctl[0, M.FAULT]) == 0 and int(st.ctl[0, M.HALTED]) == 1
    return st


def cycles(source: str, hw: CPUConfig = HW, image: np.ndarray = IMAGE) -> int:
    return int(state(source, hw, image).ctl[0, M.T_END])


def stat(st: M.State, name: str) -> int:
    return int(st.stats[0, M.STATS.index(name)])


def unit_of(word: np.ndarray) -> int:
    cls = I.CLASSES[int(word[I.F_CLS])]
    return {"MULDIV": M.U_MULDIV, "LOAD": M.U_MEM, "STORE": M.U_MEM, "BRANCH": M.U_BRANCH,
            "JUMP": M.U_BRANCH}.get(cls, M.U_ALU)


def check_back_end(source: str, hw: CPUConfig, n: int = 256) -> np.ndarray:
    """Recompute CPU-T3, T4, T5 (non-memory) and T7 from the trace's own fetch times and the program."""
    p = assemble(source, hw)
    rows = pipeline_trace(p, IMAGE, hw, n)
    units = [hw.alu_units, hw.muldiv_units, hw.mem_units, hw.branch_units]
    queues = [hw.alu_queue, hw.muldiv_queue, hw.mem_queue, hw.branch_queue]
    ready = [0] * 32
    by_unit: list[list[int]] = [[], [], [], []]
    div_free = 0
    for i, row in enumerate(rows):
        w = p.words[row[PC]]
        cls, u = I.CLASSES[int(w[I.F_CLS])], unit_of(w)
        q = min(by_unit[u][-queues[u]:]) if len(by_unit[u]) >= queues[u] else -1
        d = max(row[F] + hw.frontend_depth, rows[i - 1][D] if i else 0,
                rows[i - hw.decode_width][D] + 1 if i >= hw.decode_width else 0,
                rows[i - hw.rob_entries][C] + 1 if i >= hw.rob_entries else 0, q + 1)
        assert row[D] == d, f"CPU-T3 at step {i}: {row[D]} != {d}"
        reads1 = cls in ("ALU", "MULDIV", "LOAD", "STORE", "BRANCH", "JUMP")
        reads2 = cls in ("MULDIV", "STORE", "BRANCH") or cls == "ALU" and w[I.F_SRC] == I.SRC_V
        r = max(d + 1, ready[w[I.F_RS1]] if reads1 else 0, ready[w[I.F_RS2]] if reads2 else 0)
        is_div = cls == "MULDIV" and w[I.F_SUB] >= I.OP["div"]
        if is_div:
            r = max(r, div_free)
        t = r
        while sum(1 for j in range(i) if unit_of(p.words[rows[j][PC]]) == u and rows[j][ISSUE] == t) >= units[u]:
            t += 1
        assert row[ISSUE] == t, f"CPU-T4 at step {i}: {row[ISSUE]} != {t}"
        lat = {"MULDIV": hw.div_latency if is_div else hw.mul_latency, "ALU": hw.alu_latency}.get(cls, 1)
        if cls != "LOAD":
            assert row[X] == t + lat, f"CPU-T5 at step {i}"
        c = max(row[X], rows[i - 1][C] if i else 0, rows[i - hw.commit_width][C] + 1 if i >= hw.commit_width else 0)
        assert row[C] == c, f"CPU-T7 at step {i}: {row[C]} != {c}"
        if is_div:
            div_free = row[X]
        if w[I.F_RD] and cls in ("ALU", "MULDIV", "LOAD", "JUMP", "CSR"):
            ready[w[I.F_RD]] = row[X]
        by_unit[u].append(row[ISSUE])
    return rows


def test_every_rule_has_a_contract_test():
    check_every_rule_has_a_test(ACCELERATOR.docs(HW), globals(), "CPU")


def straight(n: int) -> str:
    """n independent ALU instructions (destinations rotate over t0..t6)."""
    return "\n".join(f"addi t{k % 7}, zero, {k}" for k in range(n))


def test_cpu_t1_fetch_groups_taken_jumps_and_the_fetch_buffer():
    rows = trace(straight(8))
    L = HW.mem_latency  # the first fetch misses the cold I-cache (CPU-T2)
    assert [r[F] for r in rows] == [L] * 4 + [L + 1] * 4
    rows = trace("addi t0, zero, 1\nj 1f\n1: addi t1, zero, 1")
    assert rows[2][F] == rows[1][F] + 1  # a jump ends the group
    # fetch runs ahead of dispatch (4 vs 2 per cycle) until the fetch buffer is full: F >= D(i - fetch_buffer)
    rows = trace(straight(96), WIDE)
    fb, fw = WIDE.fetch_width and WIDE.fetch_buffer, WIDE.fetch_width
    group, slots, binding = rows[0][F], 1, 0
    for i in range(1, len(rows)):
        cand = group if slots < fw else group + 1
        limit = rows[i - fb][D] if i >= fb else -1
        f = max(cand, limit)
        binding += limit > cand
        slots = slots + 1 if f == group and slots < fw else 1
        group = f
        assert rows[i][F] == f, f"CPU-T1 at step {i}"
    assert binding, "the fetch buffer never limited fetch"


def test_cpu_t2_icache_misses_cost_the_memory_latency():
    rows = trace(straight(20))  # 16 instructions per 64-byte line: instruction 16 opens a cold line
    per_line = HW.line_bytes // 4
    assert rows[per_line][F] == rows[per_line - 1][F] + 1 + HW.mem_latency
    st = state("li t0, 5\n1: addi t0, t0, -1\nbnez t0, 1b")  # the loop stays in its line: one miss in all
    assert stat(st, "icache_misses") == 1
    small = CPUConfig(icache_bytes=2 * HW.line_bytes, icache_ways=1)  # two direct-mapped lines
    src = "j 2f\n" + "nop\n" * (2 * per_line - 1) + "2: li t0, 3\n1: addi t0, t0, -1\nbnez t0, 1b\n"
    assert stat(state(src, small), "icache_misses") == 2  # line 0, then line 2 (it evicts line 0: same set)


def test_cpu_t3_dispatch_width_rob_and_issue_queues():
    check_back_end(straight(64), WIDE)
    # a divide at the head blocks commit: the ROB fills and dispatch waits for C(i - rob_entries) + 1
    small_rob = CPUConfig(line_bytes=1024, rob_entries=8)
    rows = check_back_end("li t0, 7\ndiv t1, t0, t0\n" + straight(24), small_rob)
    assert rows[2 + 8][D] == rows[2][C] + 1 > rows[2 + 8][F] + small_rob.frontend_depth
    # a chain of multiplies fills a 2-entry MUL/DIV queue
    q2 = CPUConfig(line_bytes=1024, muldiv_queue=2)
    check_back_end("li t0, 3\n" + "mul t0, t0, t0\n" * 12, q2)


def test_cpu_t4_issue_slots_per_class_and_out_of_order_issue():
    rows = check_back_end(straight(40), WIDE)
    issues = [r[ISSUE] for r in rows]
    assert max(issues.count(t) for t in set(issues)) == WIDE.alu_units
    # a multiply chain and independent adds: the adds issue before older multiplies that wait
    src = "li t0, 3\n" + "mul t0, t0, t0\naddi t1, zero, 1\n" * 6
    rows = check_back_end(src, WIDE)
    assert any(rows[j][ISSUE] < rows[j - 1][ISSUE] for j in range(2, len(rows)))
    # the divider is not pipelined: two independent divides are div_latency apart
    rows = check_back_end("li t0, 9\ndiv t1, t0, t0\ndiv t2, t0, t0", WIDE)
    assert rows[2][ISSUE] == rows[1][X] == rows[1][ISSUE] + WIDE.div_latency


def test_cpu_t5_result_latencies():
    rows = check_back_end("li t0, 3\nmul t1, t0, t0\naddi t2, t1, 1\ndiv t3, t2, t0\naddi t4, t3, 1", WIDE)
    assert rows[2][ISSUE] == rows[1][ISSUE] + WIDE.mul_latency
    assert rows[4][ISSUE] == rows[3][ISSUE] + WIDE.div_latency
    assert rows[1][X] - rows[1][ISSUE] == WIDE.mul_latency


def test_cpu_t6_dcache_hits_misses_lru_and_store_forwarding():
    lat, L = HW.dcache_latency, HW.mem_latency
    rows = trace(f"li a0, {TENSOR_BASE}\nlw t0, 0(a0)\nlw t1, 4(a0)\nlw t2, 64(a0)")
    assert rows[2][X] == rows[2][ISSUE] + lat + L  # cold: a miss
    assert rows[3][X] == max(rows[3][ISSUE] + lat, rows[2][X])  # same line: waits for the arrival
    assert rows[4][X] == rows[4][ISSUE] + lat + L  # the next line: another miss
    rows = trace(f"li a0, {TENSOR_BASE}\nlw t0, 0(a0)\nsub t1, t0, t0\nadd a1, a0, t1\nlw t2, 4(a1)")
    assert rows[5][ISSUE] > rows[2][X] and rows[5][X] == rows[5][ISSUE] + lat  # after the arrival: a plain hit
    # LRU: ways + 1 lines of one set evict the least recently used one
    stride = HW.sets("dcache") * HW.line_bytes
    ways = HW.dcache_ways
    touch = "".join(f"lw t0, 0(a0)\nli t1, {stride * (k + 1)}\nadd t1, a0, t1\nlw t0, 0(t1)\n" for k in range(ways))
    src = f"li a0, {TENSOR_BASE}\n{touch}lw t2, 0(a0)\n"
    assert stat(state(src), "dcache_misses") == ways + 1  # a0's line was reused each time: never the victim
    src = f"li a0, {TENSOR_BASE}\nlw t0, 0(a0)\n" + "".join(
        f"li t1, {stride * (k + 1)}\nadd t1, a0, t1\nlw t0, 0(t1)\n" for k in range(ways)) + "lw t2, 0(a0)\n"
    assert stat(state(src), "dcache_misses") == ways + 2  # a0's line was the LRU victim: it misses again
    # a store allocates its line and completes at I + 1; a load of its bytes is forwarded
    rows = trace(f"li a0, {TENSOR_BASE}\nli t0, 5\nsw t0, 0(a0)\nlw t1, 0(a0)")
    assert rows[3][X] == rows[3][ISSUE] + 1
    assert rows[4][X] == max(rows[4][ISSUE] + lat, rows[3][ISSUE] + lat, rows[3][ISSUE] + lat + L)
    st = state(f"li a0, {TENSOR_BASE}\nli t0, 5\nsw t0, 0(a0)\nlw t1, 0(a0)")
    assert stat(st, "forwarded_loads") == 1 and stat(st, "dcache_misses") == 1


def test_cpu_t7_in_order_commit_and_the_cycle_count():
    src = "li t0, 3\nmul t1, t0, t0\n" + straight(12)
    rows = check_back_end(src, WIDE)
    assert cycles(src, WIDE) == rows[-1][C] + 1
    assert cycles(src + "\nret", WIDE) == trace(src + "\nret", WIDE)[-1][C] + 1  # the halt adds nothing


def test_cpu_t8_branch_prediction_and_the_redirect():
    loop = "li t0, 6\n1: addi t0, t0, -1\nbnez t0, 1b\naddi t1, zero, 1"
    bimodal = CPUConfig(predictor=0)
    # bimodal: the counter starts at 1 (not taken), so the first back edge and the final exit mispredict
    assert stat(state(loop, bimodal), "mispredicts") == 2
    rows = trace(loop, bimodal)
    first_branch = 2
    assert rows[first_branch + 1][F] == rows[first_branch][X] + HW.mispredict_penalty
    # gshare indexes by history too: the same loop warms a new counter per history value
    gshare = CPUConfig(predictor=1, history_bits=4)
    assert stat(state(loop, gshare), "mispredicts") > 2
    # returns come from the return-address stack; another jalr from its last target
    call = "call f\ncall f\nj 9f\nf: addi t0, t0, 1\nret\n9: addi t1, zero, 1"
    st = state(call)
    assert stat(st, "mispredicts") == 2  # the two `call`s (auipc + jalr) miss the empty target table once each
    assert stat(st, "branches") == 4  # 2 jalr calls + 2 returns (jal is not counted)
    # the second call from another site misses again; a repeat from the same site would hit
    loop_call = "li s0, 3\n1: call f\naddi s0, s0, -1\nbnez s0, 1b\nj 9f\nf: ret\n9: nop"
    assert stat(state(loop_call, bimodal), "mispredicts") == 1 + 2  # the first call; the loop branch twice


def test_cpu_t9_initial_state_and_counters():
    p = assemble("rdcycle t0\nrdinstret t1\naddi t2, zero, 1\ncsrr t3, instret\ncsrr t4, mcycleh", HW)
    st = simulate_images(p, IMAGE[None], HW, 1000)
    rows = pipeline_trace(p, IMAGE, HW)
    x = np.asarray(st.x[0])
    assert x[5] == rows[0][ISSUE] and x[6] == 1 and x[28] == 3 and x[29] == 0
    assert rows[1][ISSUE] >= rows[0][C] + 1  # csrr is serialising
    st = state("addi t0, zero, 1")
    x = np.asarray(st.x[0])
    assert x[1] == 4 * 1 and x[2] == 0x10000 + HW.ram_bytes and not np.delete(x, [1, 2, 5]).any()


def test_cpu_t10_traps_and_mret_redirect_the_fetch():
    src = ("la t0, 3f\ncsrw mtvec, t0\ncsrw cycle, zero\naddi t1, zero, 1\nj 9f\n"
           "3: csrr t2, mepc\naddi t2, t2, 4\ncsrw mepc, t2\nmret\n9: nop")
    p = assemble(src, HW)
    rows = pipeline_trace(p, IMAGE, HW)
    pcs = [int(r[PC]) for r in rows]
    trap = pcs.index(3)  # csrw cycle (a read-only CSR): an illegal-instruction trap, timed as a csrr
    assert rows[trap][X] == rows[trap][ISSUE] + 1 and rows[trap][ISSUE] >= rows[trap - 1][C] + 1
    assert pcs[trap + 1] == 6 and rows[trap + 1][F] == rows[trap][X] + HW.mispredict_penalty
    mret = pcs.index(9)
    assert pcs[mret + 1] == 4 and rows[mret + 1][F] == rows[mret][X] + HW.mispredict_penalty


# ---- the issue's "Done when": the model rewards what it should ------------------------------------------

def test_independent_instructions_overlap():
    src = ".rept 100\naddi t0, zero, 1\naddi t1, zero, 2\naddi t2, zero, 3\naddi t3, zero, 4\n.endr"
    st = state(src, WIDE)
    assert int(st.ctl[0, M.STEPS]) / int(st.ctl[0, M.T_END]) > 1.5  # IPC near the dispatch width of 2
    chain = ".rept 400\naddi t0, t0, 1\n.endr"
    assert cycles(chain, WIDE) > cycles(src, WIDE) * 1.5  # a dependence chain runs at 1 per cycle


def test_a_mispredicted_branch_costs_the_penalty():
    src = "li t0, 40\n1: addi t0, t0, -1\nbnez t0, 1b\naddi t1, zero, 1"  # the exit's miss delays the addi
    base = CPUConfig(predictor=0)
    slow = CPUConfig(predictor=0, mispredict_penalty=base.mispredict_penalty + 10)
    misses = stat(state(src, base), "mispredicts")
    assert misses == 2
    assert cycles(src, slow) - cycles(src, base) == 10 * misses


def test_a_cache_miss_costs_the_miss_latency():
    # a pointer chase through 3 lines: every miss is on the critical path (plus the one cold I-cache miss)
    image = IMAGE.copy()
    for k, nxt in enumerate((128, 256, 0)):
        image[128 * k : 128 * k + 4] = np.frombuffer(np.int32(TENSOR_BASE + nxt).tobytes(), np.uint8)
    src = f"li a0, {TENSOR_BASE}\nlw a0, 0(a0)\nlw a0, 0(a0)\nlw a0, 0(a0)\naddi a1, a0, 1"
    slow = CPUConfig(mem_latency=HW.mem_latency + 10)
    assert cycles(src, slow, image) - cycles(src, HW, image) == 10 * (1 + 3)


def test_a_larger_rob_helps_a_latency_bound_loop():
    # each iteration loads from a new line: the misses are independent, so more of them overlap in a larger ROB
    src = f"li a0, {TENSOR_BASE}\nli t0, 64\n1: lw t1, 0(a0)\nadd t2, t2, t1\naddi a0, a0, 64\naddi t0, t0, -1\n" \
          "bnez t0, 1b"
    small, large = (CPUConfig(rob_entries=r) for r in (16, 128))
    assert cycles(src, large) < 0.6 * cycles(src, small)


def test_determinism_and_vmap_equals_the_loop():
    src = f"li a0, {TENSOR_BASE}\nlw t0, 0(a0)\n1: addi t0, t0, -1\nandi t1, t0, 3\nbeqz t1, 2f\nsw t0, 8(a0)\n" \
          "2: bgtz t0, 1b\nret"
    p = assemble(src, HW)
    images = np.zeros((3, 256), np.uint8)
    for b, n in enumerate((5, 17, 40)):
        images[b, :4] = np.frombuffer(np.int32(n).tobytes(), np.uint8)
    loop = simulate_images(p, images, HW, 10_000)
    again = simulate_images(p, images, HW, 10_000)
    vmapped = simulate_images(p, images, HW, 10_000, batched=True)
    for name in M.State._fields:
        a, b, c = (np.asarray(getattr(s, name)) for s in (loop, again, vmapped))
        assert np.array_equal(a, b), name
        assert np.array_equal(a, c), name
    assert len({int(t) for t in loop.ctl[:, M.T_END]}) == 3  # the data changes the timing


@pytest.mark.parametrize("field", ["fetch_width", "decode_width", "commit_width", "alu_units", "rob_entries"])
def test_narrower_machines_are_never_faster(field):
    src = ".rept 30\naddi t0, zero, 1\naddi t1, zero, 2\nmul t2, t3, t4\nlw t5, -4(sp)\n.endr"
    narrow = CPUConfig(**{field: 1})
    assert cycles(src, narrow) >= cycles(src, HW)
