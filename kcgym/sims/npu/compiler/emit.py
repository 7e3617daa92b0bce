"""The assembly emitter shared by the template compiler and the expert kernels."""

from __future__ import annotations

from collections.abc import Callable

from kcgym.isa.spec import Imm
from kcgym.sims.base import MemoryLayout
from kcgym.sims.emit import Emitter
from kcgym.sims.npu.isa import make_isa


def _addi_range() -> tuple[int, int]:
    """S_ADDI_INT's immediate range, from the instruction table."""
    kind = make_isa().by_mnemonic["S_ADDI_INT"].operands[-1].kind
    assert isinstance(kind, Imm)
    return int(kind.lo), int(kind.hi)


ADDI_LO, ADDI_HI = _addi_range()


class Asm(Emitter):
    """The NPU emitter: lines, comments, constant loading into gp registers and hardware loops."""

    comment_marker = ";"
    default_author = "the kcgym NPU template compiler"

    def li(self, reg: str, value: int, comment: str = "") -> None:
        """reg = value, via S_LUI_INT + S_ADDI_INT when it does not fit one immediate."""
        if ADDI_LO <= value <= ADDI_HI:
            self(f"S_ADDI_INT {reg}, gp0, {value}", comment)
        else:
            self(f"S_LUI_INT {reg}, {value >> 12}", comment)
            self(f"S_ADDI_INT {reg}, {reg}, {value & 0xFFF}")

    def loop(self, reg: str, count: int, comment: str = "") -> _Loop:
        return _Loop(self, reg, count, comment)


class _Loop:
    def __init__(self, asm: Asm, reg: str, count: int, comment: str):
        self.asm, self.reg, self.count, self.comment = asm, reg, count, comment

    def __enter__(self) -> None:
        self.asm(f"C_LOOP_START {self.reg}, {self.count}", self.comment)
        self.asm.indent += 1

    def __exit__(self, *exc: object) -> None:
        self.asm.indent -= 1
        self.asm(f"C_LOOP_END {self.reg}")


def base_address(asm: Asm, layout: MemoryLayout, name: str, areg: str, tmp: str = "gp1") -> None:
    """areg = HBM offset of tensor ``name``."""
    asm.li(tmp, layout.region(name).offset, f"HBM offset of {name}")
    asm(f"C_SET_ADDR_REG {areg}, {tmp}, gp0", f"{areg} = &{name}")


def load_constant(asm: Asm, layout: MemoryLayout, name: str, freg: str) -> None:
    """freg = the FP SRAM constant ``name``."""
    asm(f"S_LD_FP {freg}, gp0, {layout.region(name).offset}", f"{freg} = {name}")


def prefetch_all_rows(asm: Asm, layout: MemoryLayout, rows: int, group: int, vlen: int) -> None:
    """Queue every DMA of X into VSRAM (row r <- HBM row r, ``group`` rows each) before any compute; a1 = &Y.

    The experts that keep a whole input in VSRAM start this way, so the DMA latency is paid once.
    """
    base_address(asm, layout, "X", "a0")
    asm.li("gp2", 0, "VSRAM row r of X <- HBM row r: one register addresses both")
    with asm.loop("gp15", rows // group, f"queue every input DMA ({group} rows each) before any compute"):
        asm(f"H_PREFETCH_V gp2, gp2, a0, 0, {group}")
        asm(f"S_ADDI_INT gp2, gp2, {group * vlen}")
    base_address(asm, layout, "Y", "a1")


def prefetch_weight_tiles(asm: Asm, mlen: int, ld: int, tiles: int, stride_note: str,
                          tile_note: Callable[[int], str]) -> None:
    """MSRAM tile t <- the MLEN x MLEN block of W (a1) at row t * MLEN, column gp8, rows ``ld`` apart."""
    asm.li("gp1", ld)
    asm("C_SET_STRIDE_REG gp1", stride_note)
    for t in range(tiles):
        asm.li("gp2", t * mlen * ld)
        asm("S_ADD_INT gp2, gp2, gp8")
        asm.li("gp3", t * mlen * mlen)
        asm("H_PREFETCH_M gp3, gp2, a1, 1", tile_note(t))
