"""The NPU instruction table (PLENA-style mnemonics). Everything else is generated from it.

Classes are the simulator's dispatch groups; units are what the timing model schedules.
Costs that depend on the hardware config are functions of :class:`NPUConfig`.
"""

from __future__ import annotations

import dataclasses
import functools

from kcgym.isa.spec import ISA, Imm, InstrSpec, Operand, Reg, RegisterFile
from kcgym.sims.npu.config import NPUConfig

GP = RegisterFile("gp", "gp", 16, "general-purpose integer register", zero=0)
FP = RegisterFile("f", "f", 8, "floating-point register", zero=0)
AR = RegisterFile("a", "a", 8, "HBM address register")

CLASSES = ("CTRL", "SINT", "SFP", "VEC", "VRED", "MM", "MV", "WO", "DMAV", "DMAM")
UNITS = ("SCALAR", "VECTOR", "MATRIX", "DMA")
CATEGORY = {  # class -> category shown by profile()
    "CTRL": "control", "SINT": "scalar_int", "SFP": "scalar_fp", "VEC": "vector", "VRED": "vector_reduce",
    "MM": "matrix", "MV": "matrix", "WO": "matrix_writeout", "DMAV": "dma_vector", "DMAM": "dma_matrix",
}


def _gd(n: str = "rd", d: str = "") -> Operand:
    return Operand(n, Reg("gp", write=True), d)


def _g(n: str, d: str = "") -> Operand:
    return Operand(n, Reg("gp"), d)


def _fd(n: str = "fd", d: str = "") -> Operand:
    return Operand(n, Reg("f", write=True), d)


def _f(n: str, d: str = "") -> Operand:
    return Operand(n, Reg("f"), d)


def _imm(n: str, lo: int, hi: int, d: str = "") -> Operand:
    return Operand(n, Imm(lo, hi), d)


def _vdma(hw: NPUConfig) -> int:
    return hw.dma_cycles(hw.v_prefetch_rows * hw.VLEN)


def _mdma(hw: NPUConfig) -> int:
    return hw.dma_cycles(hw.MLEN * hw.MLEN)


def _s(mn, ops, cls, summary, sem="", occ=1, lat=1, unit=None, hidden=()):
    unit = unit or {"CTRL": "SCALAR", "SINT": "SCALAR", "SFP": "SCALAR", "VEC": "VECTOR", "VRED": "VECTOR",
                    "MM": "MATRIX", "MV": "MATRIX", "WO": "MATRIX", "DMAV": "DMA", "DMAM": "DMA"}[cls]
    return InstrSpec(mn, tuple(ops), cls, unit, occ, lat, summary, sem, hidden)


VD, VA, VB = _g("vd", "VSRAM address of the destination row"), _g("va", "VSRAM address of row a"), \
    _g("vb", "VSRAM address of row b")
FS = _f("fs", "scalar operand")
RSTRIDE = _imm("rstride", 0, 1, "1: rows are STRIDE elements apart in HBM; 0: contiguous")
NROWS = Operand("nrows", Imm(1, 4), "rows to move, 1..V_PREFETCH_ROWS")  # upper bound set per config

INSTRUCTIONS = (
    # ---- control -------------------------------------------------------------------
    _s("C_SET_ADDR_REG", [Operand("ad", Reg("a", write=True)), _g("rs1"), _g("rs2")], "CTRL",
       "Set an HBM address register: ad = rs1 + rs2.",
       "Address registers are not initialised at start: set every one you use."),
    _s("C_SET_STRIDE_REG", [_g("rs")], "CTRL", "STRIDE = rs (elements between rows in strided DMA).",
       "Used by H_PREFETCH_V/H_PREFETCH_M/H_STORE_V with rstride=1. For a row-major matrix, STRIDE is its "
       "number of columns."),
    _s("C_LOOP_START", [_gd("rc", "loop counter register"), _imm("count", 1, 65535, "iterations")], "CTRL",
       "Start a hardware loop: rc = count; the body runs until the matching C_LOOP_END.",
       "The counter lives in rc and is decremented by C_LOOP_END: never write rc inside the body. "
       "Loops nest; each nesting level needs its own counter register."),
    _s("C_LOOP_END", [_gd("rc", "the counter of the matching C_LOOP_START")], "CTRL",
       "rc = rc - 1; if rc != 0 jump back to the first instruction of the loop body.",
       "Pairs with the innermost open C_LOOP_START, which must name the same register.",
       hidden=("body_pc",)),
    _s("C_NOP", [], "CTRL", "Do nothing for one cycle."),
    _s("C_HALT", [], "CTRL", "Stop the program (also implied after the last instruction)."),
    # ---- scalar integer ------------------------------------------------------------
    _s("S_ADD_INT", [_gd(), _g("rs1"), _g("rs2")], "SINT", "rd = rs1 + rs2 (int32, wrapping)."),
    _s("S_ADDI_INT", [_gd(), _g("rs1"), _imm("imm", -(1 << 17), (1 << 18) - 1)], "SINT",
       "rd = rs1 + imm, imm in -131072..262143.",
       "For larger constants: S_LUI_INT rd, hi then S_ADDI_INT rd, rd, lo."),
    _s("S_SUB_INT", [_gd(), _g("rs1"), _g("rs2")], "SINT", "rd = rs1 - rs2."),
    _s("S_MUL_INT", [_gd(), _g("rs1"), _g("rs2")], "SINT", "rd = rs1 * rs2 (registers only, no immediate)."),
    _s("S_LUI_INT", [_gd(), _imm("imm", 0, (1 << 19) - 1)], "SINT", "rd = imm << 12."),
    _s("S_LD_INT", [_gd(), _g("rs1"), _imm("imm", 0, 65535)], "SINT", "rd = INTSRAM[rs1 + imm]."),
    _s("S_ST_INT", [_g("rs2", "value"), _g("rs1"), _imm("imm", 0, 65535)], "SINT", "INTSRAM[rs1 + imm] = rs2."),
    # ---- scalar floating point (fp32) -------------------------------------------------
    _s("S_ADD_FP", [_fd(), _f("fs1"), _f("fs2")], "SFP", "fd = fs1 + fs2 (fp32)."),
    _s("S_SUB_FP", [_fd(), _f("fs1"), _f("fs2")], "SFP", "fd = fs1 - fs2."),
    _s("S_MUL_FP", [_fd(), _f("fs1"), _f("fs2")], "SFP", "fd = fs1 * fs2."),
    _s("S_MAX_FP", [_fd(), _f("fs1"), _f("fs2")], "SFP", "fd = max(fs1, fs2)."),
    _s("S_EXP_FP", [_fd(), _f("fs1")], "SFP", "fd = exp(fs1).", lat=2),
    _s("S_RECI_FP", [_fd(), _f("fs1")], "SFP", "fd = 1 / fs1.", lat=2),
    _s("S_SQRT_FP", [_fd(), _f("fs1")], "SFP", "fd = sqrt(fs1).", lat=2),
    _s("S_LD_FP", [_fd(), _g("rs1"), _imm("imm", 0, 65535)], "SFP", "fd = FPSRAM[rs1 + imm].",
       "Task constants (eps, 1/n, scales) are preloaded in FP SRAM; see the memory layout."),
    _s("S_ST_FP", [_f("fs", "value"), _g("rs1"), _imm("imm", 0, 65535)], "SFP", "FPSRAM[rs1 + imm] = fs."),
    _s("S_LI_FP", [_fd(), Operand("value", Imm(-3.0e38, 3.0e38, is_float=True), "float constant")], "SFP",
       "fd = value (an fp32 constant, e.g. 0.5 or -1.702)."),
    # ---- vector (one VLEN row per instruction, bf16 results) ------------------------
    _s("V_ADD_VV", [VD, VA, VB], "VEC", "row[vd] = row[va] + row[vb]."),
    _s("V_SUB_VV", [VD, VA, VB], "VEC", "row[vd] = row[va] - row[vb]."),
    _s("V_MUL_VV", [VD, VA, VB], "VEC", "row[vd] = row[va] * row[vb]."),
    _s("V_MAX_VV", [VD, VA, VB], "VEC", "row[vd] = max(row[va], row[vb])."),
    _s("V_ADD_VF", [VD, VA, FS], "VEC", "row[vd] = row[va] + fs (broadcast)."),
    _s("V_SUB_VF", [VD, VA, FS], "VEC", "row[vd] = row[va] - fs."),
    _s("V_RSUB_VF", [VD, VA, FS], "VEC", "row[vd] = fs - row[va]."),
    _s("V_MUL_VF", [VD, VA, FS], "VEC", "row[vd] = row[va] * fs."),
    _s("V_MAX_VF", [VD, VA, FS], "VEC", "row[vd] = max(row[va], fs)  (ReLU: fs = f0 = 0.0)."),
    _s("V_EXP_V", [VD, VA], "VEC", "row[vd] = exp(row[va]).", lat=7),
    _s("V_RECI_V", [VD, VA], "VEC", "row[vd] = 1 / row[va].", lat=2),
    _s("V_RED_SUM", [_fd(), VA], "VRED", "fd = fd + sum(row[va]) (fp32; accumulates: zero fd first).", lat=4),
    _s("V_RED_MAX", [_fd(), VA], "VRED", "fd = max(fd, max(row[va])) (accumulates: initialise fd first).",
       lat=5),
    # ---- matrix ------------------------------------------------------------------------
    _s("M_MM", [_g("rm", "MSRAM address: tile row base + column offset"), _g("rv", "VSRAM address of BLEN rows")],
       "MM", "ACC[BLEN x BLEN] += V[BLEN x MLEN] @ M[MLEN x BLEN].",
       "V = the BLEN consecutive VSRAM rows starting at rv. M = MSRAM rows rm/MLEN .. +MLEN-1, "
       "columns rm%MLEN .. +BLEN-1 (rm must be a multiple of BLEN). Accumulates in fp32.",
       occ=lambda hw: hw.mm_occupancy, lat=lambda hw: hw.mm_occupancy),
    _s("M_TMM", [_g("rm", "MSRAM address of BLEN rows (multiple of MLEN)"), _g("rv", "VSRAM address of BLEN rows")],
       "MM", "ACC[BLEN x BLEN] += V[BLEN x MLEN] @ M[BLEN x MLEN]^T.",
       "M = the BLEN MSRAM rows starting at rm (each MLEN long). Computes dot products of V rows with M rows "
       "(e.g. Q @ K^T with K rows in MSRAM).",
       occ=lambda hw: hw.mm_occupancy, lat=lambda hw: hw.mm_occupancy),
    _s("M_MV", [_g("rm", "MSRAM address of an MLEN x MLEN tile (multiple of MLEN)"), _g("rv", "VSRAM row")],
       "MV", "MVACC[MLEN] += row[rv] @ M[MLEN x MLEN].",
       occ=lambda hw: hw.mv_occupancy, lat=lambda hw: hw.mv_occupancy),
    _s("M_TMV", [_g("rm", "MSRAM address of an MLEN x MLEN tile (multiple of MLEN)"), _g("rv", "VSRAM row")],
       "MV", "MVACC[MLEN] += row[rv] @ M[MLEN x MLEN]^T  (MVACC[j] += dot(row, M row j)).",
       occ=lambda hw: hw.mv_occupancy, lat=lambda hw: hw.mv_occupancy),
    _s("M_MM_WO", [_g("rd", "VSRAM base"), _imm("imm", 0, 1 << 20, "added to rd")], "WO",
       "Write ACC to VSRAM (rounded to bf16) and clear it: row i of the block goes to address rd+imm + i*VLEN.",
       "The address must be a multiple of BLEN; the block lands in columns (addr % VLEN) .. +BLEN-1 of "
       "BLEN consecutive rows. Waits for the last M_MM/M_TMM to finish."),
    _s("M_MV_WO", [_g("rd", "VSRAM base"), _imm("imm", 0, 1 << 20, "added to rd")], "WO",
       "Write MVACC to the VSRAM row at rd+imm (rounded to bf16) and clear it."),
    # ---- DMA (HBM <-> SRAM) ---------------------------------------------------------------
    _s("H_PREFETCH_V", [_g("rv", "VSRAM destination"), _g("roff", "HBM offset"), Operand("ak", Reg("a")),
                        RSTRIDE, NROWS], "DMAV",
       "Copy nrows rows of VLEN elements HBM -> VSRAM rows starting at rv.",
       "Row r comes from HBM[ak + roff + r*S], S = STRIDE if rstride else VLEN (STRIDE=0 broadcasts one row). "
       "Occupancy ceil(2*nrows*VLEN / HBM bytes per cycle); the table shows nrows = V_PREFETCH_ROWS. "
       "Non-blocking: the rows are pending until the data arrives; the first instruction that reads them waits.",
       occ=_vdma, lat=lambda hw: hw.hbm_latency + _vdma(hw)),
    _s("H_STORE_V", [_g("rv", "VSRAM source"), _g("roff", "HBM offset"), Operand("ak", Reg("a")), RSTRIDE, NROWS],
       "DMAV", "Copy nrows VSRAM rows starting at rv -> HBM (same addressing as H_PREFETCH_V).",
       "Rows are written in order (with overlapping rows the last one wins). Non-blocking; waits for the rows' "
       "producers. Later writers of those rows wait until the store has read them.",
       occ=_vdma, lat=lambda hw: hw.hbm_latency + _vdma(hw)),
    _s("H_PREFETCH_M", [_g("rm", "MSRAM destination (multiple of MLEN)"), _g("roff", "HBM offset"),
                        Operand("ak", Reg("a")), RSTRIDE], "DMAM",
       "Copy one MLEN x MLEN tile HBM -> MSRAM rows starting at rm.",
       "Row r comes from HBM[ak + roff + r*S], S = STRIDE if rstride else MLEN. Non-blocking like H_PREFETCH_V.",
       occ=_mdma, lat=lambda hw: hw.hbm_latency + _mdma(hw)),
)


def _symbols(hw: NPUConfig | None) -> dict[str, int | float]:
    hw = hw or NPUConfig()
    return {
        "MLEN": hw.MLEN, "VLEN": hw.VLEN, "BLEN": hw.BLEN, "HLEN": hw.HLEN,
        "V_PREFETCH_ROWS": hw.v_prefetch_rows, "VSRAM_SIZE": hw.vsram_size, "MSRAM_SIZE": hw.msram_size,
        "TILE": hw.MLEN * hw.MLEN,
    }


def _finalize(parsed, hw, rep) -> None:
    """Pair hardware loops (bracket-style), record body PCs, and lint counter writes."""
    hw = hw or NPUConfig()
    stack: list = []
    for pi in parsed:
        mn = pi.spec.mnemonic
        if mn == "C_LOOP_START":
            reg = pi.values[0]
            if reg == 0:
                rep.error(pi.src, "E101", "gp0 is hardwired to zero and cannot be a loop counter",
                          pi.operand_cols[0], len(pi.operand_texts[0]))
            if any(s.values[0] == reg for s in stack):
                rep.error(pi.src, "E101", f"loop counter gp{reg} is already used by an enclosing loop",
                          pi.operand_cols[0], len(pi.operand_texts[0]),
                          hint="each nesting level needs its own counter register")
            stack.append(pi)
        elif mn == "C_LOOP_END":
            if not stack:
                rep.error(pi.src, "E102", "C_LOOP_END without a matching C_LOOP_START", 1, 10)
                pi.hidden = [0]
                continue
            start = stack.pop()
            if start.values[0] != pi.values[0]:
                rep.error(pi.src, "E102", f"C_LOOP_END gp{pi.values[0]} closes the loop opened with "
                          f"gp{start.values[0]} at line {start.src.line}", pi.operand_cols[0],
                          len(pi.operand_texts[0]))
            if start.pc + 1 == pi.pc:
                rep.warning(pi.src, "W102", "empty hardware loop body")
            pi.hidden = [start.pc + 1]
            reg = pi.values[0]
            for body in parsed[start.pc + 1 : pi.pc]:
                ops = body.spec.operands
                if ops and isinstance(ops[0].kind, Reg) and ops[0].kind.write and ops[0].kind.file == "gp" \
                        and body.values and body.values[0] == reg and body.spec.mnemonic not in (
                            "C_LOOP_START", "C_LOOP_END"):
                    rep.warning(body.src, "W101", f"loop body writes gp{reg}, the counter of the loop at line "
                                f"{start.src.line}", body.operand_cols[0], len(body.operand_texts[0]),
                                hint="the hardware decrements the counter itself; keep your own index "
                                "in another register")
    for s in stack:
        rep.error(s.src, "E103", f"C_LOOP_START gp{s.values[0]} has no matching C_LOOP_END", 1, 12)


def _for_config(spec: InstrSpec, hw: NPUConfig) -> InstrSpec:
    """Bind config-dependent operand ranges (DMA row counts) into the table."""
    if not any(o.name == "nrows" for o in spec.operands):
        return spec
    ops = tuple(dataclasses.replace(o, kind=Imm(1, hw.v_prefetch_rows)) if o.name == "nrows" else o
                for o in spec.operands)
    return dataclasses.replace(spec, operands=ops)


@functools.lru_cache(maxsize=32)
def _make_isa(hw_json: str) -> ISA:
    hw = NPUConfig.model_validate_json(hw_json)
    return ISA(
        name="NPU",
        register_files=(GP, FP, AR),
        instructions=tuple(_for_config(s, hw) for s in INSTRUCTIONS),
        classes=CLASSES,
        units=UNITS,
        comment_prefixes=(";", "#", "//"),
        has_labels=False,
        label_hint="the NPU has no branches: use hardware loops (C_LOOP_START / C_LOOP_END) and .rept",
        halt_mnemonic="C_HALT",
        max_program=hw.imem_size,
        finalize=_finalize,
        symbols=_symbols,
    )


def make_isa(hw: NPUConfig | None = None) -> ISA:
    """The NPU instruction set for hardware config ``hw`` (cached per config)."""
    return _make_isa((hw or NPUConfig()).model_dump_json())


NPU_ISA = make_isa()
