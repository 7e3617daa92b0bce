"""Machine mode on the CPU: the stored CSRs, PMP checks and traps, to the RISC-V privileged spec (v1.12).

Two privilege modes, M and U. ``mstatus`` keeps MIE, MPIE, MPP and MPRV (the others read 0); a trap
(an access fault: cause 1 fetch, 5 load, 7 store; cause 2, an illegal instruction: a machine CSR or mret
in U mode, or a write to a read-only counter) saves pc in ``mepc``, the cause in ``mcause``, the
address in ``mtval``, the mode in MPP, MIE in MPIE, enters M and jumps to ``mtvec``'s BASE; ``mret``
returns to MPP, sets MIE = MPIE, MPIE = 1, MPP = U and clears MPRV when it returns to U (3.1.6.1, 3.3.2).
With MPRV = 1, loads and stores are checked as if in mode MPP (3.1.6.3); fetches never are.

PMP (3.7): 16 entries, granularity 4 bytes. An entry's address mode A (``pmpcfg`` bits 4:3) is OFF, TOR
(``pmpaddr[i-1] <= a/4 < pmpaddr[i]``, 0 below entry 0), NA4 (the word at ``pmpaddr``) or NAPOT (the
trailing ones of ``pmpaddr`` give the size). The lowest-numbered entry matching the access decides: it
succeeds if the mode is M and the entry is unlocked, else iff the entry's R/W/X bit allows it; with no
match, M succeeds and U fails. A locked entry (L, bit 7) ignores writes to its ``pmpcfg`` byte and
``pmpaddr`` (and, if it is TOR, to the ``pmpaddr`` below it). Every access here is aligned and at most 4
bytes, so it lies in one 4-byte word and matches an entry wholly or not at all.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from kcgym.sims.cpu.assembler import STORED

PRIV_U, PRIV_M = 0, 3
MIE, MPIE, MPRV = 1 << 3, 1 << 7, 1 << 17
MPP_SHIFT, MPP_MASK = 11, 3 << 11
MSTATUS_KEPT = MIE | MPIE | MPP_MASK | MPRV
CAUSE_FETCH, CAUSE_ILLEGAL, CAUSE_LOAD, CAUSE_STORE = 1, 2, 5, 7
A_OFF, A_TOR, A_NA4, A_NAPOT = range(4)
LOCK = 0x80
PERM_R, PERM_W, PERM_X = 1, 2, 4
N_PMP = 16
CFG0, ADDR0 = STORED["pmpcfg0"], STORED["pmpaddr0"]
MSTATUS, MTVEC, MEPC, MCAUSE, MTVAL = (STORED[n] for n in ("mstatus", "mtvec", "mepc", "mcause", "mtval"))


def _u(x: jax.Array) -> jax.Array:
    return jax.lax.bitcast_convert_type(x, jnp.uint32)


def cfg_bytes(csr: jax.Array) -> jax.Array:
    """The 16 ``pmpcfg`` bytes (entry i in byte i % 4 of ``pmpcfg{i // 4}``)."""
    words = _u(csr[CFG0 : CFG0 + 4])
    return ((words[jnp.arange(N_PMP) // 4] >> (8 * (jnp.arange(N_PMP) % 4)).astype(jnp.uint32)) & 0xFF).astype(
        jnp.int32)


def pmp_allows(csr: jax.Array, address: jax.Array, priv: jax.Array, perm: jax.Array) -> jax.Array:
    """Whether an aligned access of <= 4 bytes at ``address`` with privilege ``priv`` and permission bit ``perm``
    (PERM_R/W/X) passes the PMP check. With every entry OFF nothing matches (M passes, U fails): a real branch,
    so code that never programs the PMP pays nothing for it."""
    cfg = cfg_bytes(csr)

    def check() -> jax.Array:
        addr = _u(csr[ADDR0 : ADDR0 + N_PMP])
        word = _u(address) >> 2
        a = (cfg >> 3) & 3
        below = jnp.concatenate([jnp.zeros(1, jnp.uint32), addr[:-1]])
        tor = (below <= word) & (word < addr)
        mask = ~(addr ^ (addr + 1))  # addr ^ (addr + 1): its trailing ones and the zero above them (the size)
        napot = (word & mask) == (addr & mask)
        match = jnp.select([a == A_TOR, a == A_NA4, a == A_NAPOT], [tor, word == addr, napot], False)
        entry = cfg[jnp.argmax(match)]
        allowed = (priv == PRIV_M) & ((entry & LOCK) == 0) | ((entry & perm) != 0)
        return jnp.where(jnp.any(match), allowed, priv == PRIV_M)

    return jax.lax.cond(jnp.any(((cfg >> 3) & 3) != A_OFF), check, lambda: priv == PRIV_M)


def legal_write(csr: jax.Array, index: jax.Array, value: jax.Array) -> jax.Array:
    """The value CSR ``index`` (a stored one) holds after writing ``value``: WARL fields and PMP locks applied."""
    old = csr[jnp.clip(index, 0, csr.shape[0] - 1)]
    cfg = cfg_bytes(csr)
    # pmpcfg: locked bytes keep their value
    k = index - CFG0
    lanes = jnp.arange(4)
    locked_lane = (cfg[jnp.clip(4 * k, 0, N_PMP - 4) + lanes] & LOCK) != 0
    byte_mask = jnp.sum(jnp.where(locked_lane, jnp.uint32(0xFF) << (8 * lanes).astype(jnp.uint32), 0)).astype(
        jnp.uint32)
    cfg_value = jax.lax.bitcast_convert_type((_u(old) & byte_mask) | (_u(value) & ~byte_mask), jnp.int32)
    # pmpaddr i: ignored if entry i is locked, or entry i + 1 is locked and TOR
    i = jnp.clip(index - ADDR0, 0, N_PMP - 1)
    nxt = cfg[jnp.clip(i + 1, 0, N_PMP - 1)]
    addr_locked = ((cfg[i] & LOCK) != 0) | (i + 1 < N_PMP) & ((nxt & LOCK) != 0) & (((nxt >> 3) & 3) == A_TOR)
    mpp = (value & MPP_MASK) >> MPP_SHIFT
    mstatus = (value & MSTATUS_KEPT & ~MPP_MASK) | jnp.where(mpp == PRIV_M, PRIV_M << MPP_SHIFT, 0)  # MPP: M or U
    is_cfg = (index >= CFG0) & (index < CFG0 + 4)
    is_addr = (index >= ADDR0) & (index < ADDR0 + N_PMP)
    return jnp.select([index == MSTATUS, index == MTVEC, index == MEPC, is_cfg, is_addr],
                      [mstatus, value & ~2, value & ~3, cfg_value, jnp.where(addr_locked, old, value)], value)


def commit(csr: jax.Array, priv: jax.Array, write: jax.Array, index: jax.Array, value: jax.Array, trap: jax.Array,
           mret: jax.Array, epc: jax.Array, cause: jax.Array, tval: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The CSRs and privilege after one instruction: a CSR write (``write``), a trap into M, or an mret."""
    csr = csr.at[index].set(jnp.where(write, legal_write(csr, index, value), csr[index]))
    mstatus = csr[MSTATUS]
    mpp = (mstatus >> MPP_SHIFT) & 3
    entered = (mstatus & ~(MPP_MASK | MPIE | MIE)) | (priv << MPP_SHIFT) | jnp.where((mstatus & MIE) != 0, MPIE, 0)
    returned = (mstatus & ~(MPP_MASK | MIE | MPRV)) | MPIE | jnp.where((mstatus & MPIE) != 0, MIE, 0) | \
        jnp.where(mpp == PRIV_M, mstatus & MPRV, 0)  # MPP becomes U; returning below M clears MPRV
    csr = csr.at[MSTATUS].set(jnp.select([trap, mret], [entered, returned], mstatus))
    for k, v in ((MEPC, epc), (MCAUSE, cause), (MTVAL, tval)):
        csr = csr.at[k].set(jnp.where(trap, v, csr[k]))
    return csr, jnp.select([trap, mret], [jnp.int32(PRIV_M), mpp], priv)
