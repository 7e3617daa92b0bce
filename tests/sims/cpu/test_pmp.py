"""Machine mode and PMP on the CPU, against the privileged spec's rules (v1.12: 3.1.6, 3.3.2, 3.7).

Each test sets PMP entries in M mode, drops to U with ``mret`` (or sets MPRV), makes accesses, and reads what
the trap handler logged (mcause, mtval, mepc per trap) and what the accesses did. Entry 15 always grants
U-mode execution of the program (NAPOT over its first 4 KiB, X only). QEMU's user mode cannot run machine
mode, so these rules are the oracle.
"""

from __future__ import annotations

import numpy as np

from kcgym.sims.cpu import machine as M
from kcgym.sims.cpu.accelerator import simulate_images
from kcgym.sims.cpu.assembler import assemble
from kcgym.sims.cpu.config import TENSOR_BASE, CPUConfig

HW = CPUConfig()
T = TENSOR_BASE
NAPOT, TOR, NA4, R, W, X, L = 0x18, 0x08, 0x10, 1, 2, 4, 0x80
CODE_ENTRY = "li t0, 0x1FF\ncsrw pmpaddr15, t0\nli t0, 0x1C000000\ncsrw pmpcfg3, t0\n"  # entry 15: NAPOT 4 KiB, X


def napot(base: int, size: int) -> int:
    return (base >> 2) | (size // 8 - 1)


def run(setup: str, body: str, user: bool = True) -> tuple[list[tuple[int, int, int]], M.State, object]:
    """Run ``body`` in U mode (or in M mode) after ``setup``; the (mcause, mtval, mepc) of every trap."""
    drop = "la t0, 2f\ncsrw mepc, t0\nli t0, 0x1800\ncsrc mstatus, t0\nmret\n2:\n" if user else ""
    src = f"""
    j start
handler:
    csrr t5, mcause
    sw t5, 0(s11)
    csrr t5, mtval
    sw t5, 4(s11)
    csrr t5, mepc
    sw t5, 8(s11)
    addi s11, s11, 12
    csrr t5, mcause
    li t6, 1
    beq t5, t6, 1f
    csrr t5, mepc
    addi t5, t5, 4
    csrw mepc, t5
    mret
1:  la t5, after_fetch
    csrw mepc, t5
    mret
after_fetch:
    ret
start:
    la t0, handler
    csrw mtvec, t0
    la s11, log
{CODE_ENTRY}{setup}
{drop}{body}
    ret
    .data
log: .zero 96
"""
    p = assemble(src, HW)
    image = np.zeros(4096, np.uint8)
    image[:64] = np.arange(64, dtype=np.uint8)
    st = simulate_images(p, image[None], HW, 10_000)
    assert int(st.ctl[0, M.FAULT]) == 0 and int(st.ctl[0, M.HALTED]) == 1
    mem = np.asarray(st.mem[0])
    off = p.symbols["log"] - 0x10000
    log = mem[off : off + 96].view(np.uint32).reshape(-1, 3)
    traps = [tuple(int(v) for v in row) for row in log if row[0]]
    return traps, st, p


def pc_of(p, line_text: str) -> int:
    """The byte address of the instruction whose source line is ``line_text``."""
    src = p.source.splitlines()
    return 4 * next(pc for pc in range(p.length) if src[p.line_of(pc) - 1].strip() == line_text)


def x(st: M.State, reg: int) -> int:
    return int(np.asarray(st.x[0])[reg]) & 0xFFFFFFFF


def word(st: M.State, addr: int) -> int:
    o = HW.ram_bytes + addr - T
    return int(np.asarray(st.mem[0])[o : o + 4].view(np.uint32)[0])


def test_m_mode_is_allowed_where_no_entry_matches_and_u_mode_is_not():
    traps, st, _ = run("", f"li a0, {T}\nlw a1, 8(a0)", user=False)
    assert traps == [] and x(st, 11) == 0x0B0A0908
    traps, st, p = run("", f"li a0, {T}\nlw a1, 8(a0)")
    assert traps == [(5, T + 8, pc_of(p, "lw a1, 8(a0)"))] and x(st, 11) == 0  # load access fault, rd unwritten


def test_napot_permissions_per_access_type():
    setup = f"li t0, {napot(T, 64)}\ncsrw pmpaddr0, t0\nli t0, {NAPOT | R}\ncsrw pmpcfg0, t0\n"
    traps, st, p = run(setup, f"li a0, {T}\nlw a1, 60(a0)\nli a2, 7\nsw a2, 0(a0)\nlw a3, 64(a0)")
    assert x(st, 11) == 0x3F3E3D3C  # the last word of the 64-byte region: readable
    assert traps == [(7, T, pc_of(p, "sw a2, 0(a0)")), (5, T + 64, pc_of(p, "lw a3, 64(a0)"))]
    assert word(st, T) == 0x03020100  # the denied store wrote nothing


def test_tor_na4_and_the_lowest_matching_entry_decides():
    # entry 0 OFF (its address is entry 1's lower bound); entry 1: TOR [T + 4, T + 16) read-write for U; entry 2:
    # NA4 at T + 16, no permission; entry 3: NAPOT T..T+63 read-only
    setup = (f"li t0, {(T + 4) >> 2}\ncsrw pmpaddr0, t0\nli t0, {(T + 16) >> 2}\ncsrw pmpaddr1, t0\n"
             f"li t0, {(T + 16) >> 2}\ncsrw pmpaddr2, t0\nli t0, {napot(T, 64)}\ncsrw pmpaddr3, t0\n"
             f"li t0, {((TOR | R | W) << 8) | (NA4 << 16) | ((NAPOT | R) << 24)}\ncsrw pmpcfg0, t0\n")
    traps, st, p = run(setup, f"li a0, {T}\nli a2, 9\nsw a2, 12(a0)\nlw a1, 16(a0)\nlw a3, 20(a0)\nsw a2, 20(a0)\n"
                       "lw a4, 0(a0)\nsw a2, 0(a0)")
    assert word(st, T + 12) == 9 and x(st, 13) == 0x17161514
    # below the TOR range, entry 3 decides: the load passes, the store faults
    assert traps == [(5, T + 16, pc_of(p, "lw a1, 16(a0)")), (7, T + 20, pc_of(p, "sw a2, 20(a0)")),
                     (7, T, pc_of(p, "sw a2, 0(a0)"))]
    assert x(st, 14) == 0x03020100


def test_a_locked_entry_binds_m_mode_and_ignores_writes():
    setup = (f"li t0, {napot(T, 64)}\ncsrw pmpaddr0, t0\nli t0, {NAPOT | R | L}\ncsrw pmpcfg0, t0\n"
             "li t0, 0\ncsrw pmpaddr0, t0\nli t0, 0x1F\ncsrw pmpcfg0, t0\ncsrr s0, pmpaddr0\ncsrr s1, pmpcfg0\n")
    traps, st, p = run(setup, f"li a0, {T}\nlw a1, 4(a0)\nsw a1, 8(a0)", user=False)
    assert x(st, 8) == napot(T, 64) and x(st, 9) == NAPOT | R | L  # both writes ignored
    assert x(st, 11) == 0x07060504 and traps == [(7, T + 8, pc_of(p, "sw a1, 8(a0)"))]


def test_mprv_checks_m_mode_loads_and_stores_as_mpp():
    setup = f"li t0, {napot(T, 64)}\ncsrw pmpaddr0, t0\nli t0, {NAPOT | W}\ncsrw pmpcfg0, t0\n"
    body = (f"li t0, 0x1800\ncsrc mstatus, t0\nli t0, 0x20000\ncsrs mstatus, t0\nli a0, {T}\n"
            "lw a1, 0(a0)\nsw a0, 4(a0)\ncsrr s0, mstatus\n")
    traps, st, p = run(setup, body, user=False)
    assert traps == [(5, T, pc_of(p, "lw a1, 0(a0)"))] and word(st, T + 4) == T
    # the trap entered M from M: MPP = M, so the handler's own accesses were M's; mret kept MPRV (back to M)
    assert x(st, 8) & 0x20000 and (x(st, 8) >> 11) & 3 == 0  # mret set MPP to U


def test_mret_and_trap_entry_update_mstatus():
    setup = "li t0, 0x88\ncsrs mstatus, t0\n"  # MIE and MPIE set before the drop
    traps, st, _ = run(setup, "nop")
    # mret to U: MIE = MPIE (1), MPIE = 1, MPP = U; U then ran its nop; nothing trapped
    assert traps == [] and int(st.ctl[0, M.PRIV]) == 0
    traps, st, p = run("", "csrr a0, mstatus")  # a machine CSR in U: an illegal instruction
    assert traps == [(2, 0, pc_of(p, "csrr a0, mstatus"))] and x(st, 10) == 0
    traps, _, p = run("", "csrw cycle, zero", user=False)  # cycle is read-only
    assert traps == [(2, 0, pc_of(p, "csrw cycle, zero"))]


def test_a_user_fetch_outside_the_executable_region_faults():
    traps, _, p = run("", "la a0, far\njr a0\n.rept 1100\nnop\n.endr\nfar: nop")
    far = pc_of(p, "far: nop")
    assert far >= 4096 and traps == [(1, far, far)]


def test_warl_fields_and_the_trap_timing():
    traps, st, _ = run("li t0, 0x800\ncsrs mstatus, t0\ncsrr s0, mstatus\nli t0, 0x1003\ncsrw mepc, t0\n"
                       "csrr s1, mepc\n", "nop", user=False)
    assert (x(st, 8) >> 11) & 3 == 0 and x(st, 9) == 0x1000  # MPP = 1 is not a mode here: U; mepc is 4-aligned
    # a trap redirects the fetch like a misprediction: the handler's first instruction is fetched
    # mispredict_penalty cycles after the faulting instruction completes (CPU-T10)
    from kcgym.sims.cpu.accelerator import pipeline_trace

    _, _, p = run("", f"li a0, {T}\nlw a1, 0(a0)")
    rows = pipeline_trace(p, np.zeros(4096, np.uint8), HW, 200)
    fault = next(i for i, r in enumerate(rows) if r[0] == pc_of(p, "lw a1, 0(a0)") // 4)
    assert rows[fault + 1][1] == rows[fault][4] + HW.mispredict_penalty
    assert rows[fault][4] == rows[fault][3] + 1
