"""The inner loop every matrix expert shares: one BLEN-row block times a 64-column weight strip.

For each of the MLEN/BLEN column blocks it issues one M_MM per k-tile (operand rows
``base + offset[k]``, MSRAM tile ``slot[k]``) and one write-out. The loop is
software-pipelined: each iteration first writes out the *previous* block, so the write-out
waits only for that block's last M_MM and the matrix unit idles one cycle per block instead
of stalling behind address updates; the first iteration's write-out (an empty accumulator)
goes to a dummy block.
"""

from __future__ import annotations

from kcgym.sims.npu.compiler.emit import Asm
from kcgym.sims.npu.config import NPUConfig


def strip_times_block(asm: Asm, hw: NPUConfig, base: str, offsets: list[int], slots: list[int], out: int | str,
                      dummy: int, labels: list[str] | None = None, *, transposed: bool = False,
                      first_block: int = 0) -> None:
    """ACC blocks of (BLEN rows at ``base``) @ (the k-tiles in MSRAM ``slots``) -> VSRAM ``out`` (BLEN x MLEN).

    ``base`` is a gp register holding the VSRAM address of k-tile 0's BLEN rows (``offsets[0]``
    must be 0); k-tile k's rows are at ``base + offsets[k]``. ``out`` is an address or a gp register
    holding one. ``transposed`` uses M_TMM (tiles hold the output dimension along their rows, as
    K does in Q @ K^T); ``first_block`` skips the leading column blocks (their output columns are
    left as they are). Uses gp2, gp3, gp4, gp6, gp7 and the loop counter gp15.
    """
    B, L, T = hw.BLEN, hw.MLEN, hw.MLEN * hw.MLEN
    mm, step = ("M_TMM", B * L) if transposed else ("M_MM", B)
    if offsets[0] != 0 or len(offsets) != len(slots):
        raise ValueError("k-tile 0 must sit at the base register, and every k-tile needs a slot")
    labels = labels or [f"k-tile {k}" for k in range(len(slots))]
    asm.li("gp4", first_block * step, "column block offset inside the tiles")
    asm.li("gp2", slots[0] * T + first_block * step, "k-tile 0 of the first column block")
    if isinstance(out, str):
        asm(f"S_ADDI_INT gp6, {out}, {first_block * B}", "where this block's write-out goes")
    else:
        asm.li("gp6", out + first_block * B, "where this block's write-out goes")
    asm.li("gp7", dummy, "the first iteration writes out an empty ACC to a dummy block")
    with asm.loop("gp15", L // B - first_block, f"{B}-column blocks, write-out of the previous one first"):
        asm("M_MM_WO gp7, 0", "previous block: waits only for its last M_MM")
        asm(f"{mm} gp2, {base}", labels[0])
        asm("S_ADD_INT gp7, gp6, gp0", "the address updates hide under the M_MMs")
        asm(f"S_ADDI_INT gp6, gp6, {B}")
        for k in range(1, len(slots)):
            asm(f"S_ADDI_INT gp2, gp4, {slots[k] * T}")
            asm(f"S_ADDI_INT gp3, {base}, {offsets[k]}")
            asm(f"{mm} gp2, gp3", labels[k])
        asm(f"S_ADDI_INT gp4, gp4, {step}")
        asm(f"S_ADDI_INT gp2, gp4, {slots[0] * T}", "k-tile 0 of the next column block")
    asm("M_MM_WO gp7, 0", "the last column block")
