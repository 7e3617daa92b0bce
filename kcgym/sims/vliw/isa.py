"""The VLIW instruction table (AIE-ML-flavoured mnemonics). Everything else is generated from it.

Each instruction's *unit* is the bundle slot it occupies (two LD, one each of ST, VEC, SCL,
MOV and CTL per bundle); its *class* is the simulator's dispatch group, and the sub-op id
(its index within the class) selects the operation inside the slot's handler. Latencies
that depend on the hardware config are functions of :class:`VLIWConfig`.

Operand names carry the register roles the timing model needs: a name ending in ``d``
(``xd``, ``cd``, ``rd``, ``pd``) is a pure destination; every other register operand is
read, and one marked ``write`` (a post-incremented pointer, VINS's ``xt``) is also written.
"""

from __future__ import annotations

import functools

from kcgym.isa.spec import ISA, Imm, InstrSpec, Operand, Reg, RegisterFile
from kcgym.sims.vliw.config import LANES, VECTOR_BYTES, VLIWConfig

R = RegisterFile("r", "r", 16, "scalar register (int32)", zero=0)
P = RegisterFile("p", "p", 8, "pointer register (byte address in DM)")
X = RegisterFile("x", "x", 12, "vector register (32 bf16 lanes)")
C = RegisterFile("c", "c", 8, "accumulator (32 fp32 lanes)")

CLASSES = ("NOP", "LD", "ST", "VEC", "SCL", "MOV", "CTL", "DMA")
UNITS = ("LD", "ST", "VEC", "SCL", "MOV", "CTL")
SLOTS = {"LD": 2, "ST": 1, "VEC": 1, "SCL": 1, "MOV": 1, "CTL": 1}
CATEGORY = {  # class -> category shown by profile()
    "NOP": "nop", "LD": "load", "ST": "store", "VEC": "vector", "SCL": "scalar", "MOV": "move",
    "CTL": "control", "DMA": "dma",
}
UNIT_OF_CLASS = {"NOP": "CTL", "LD": "LD", "ST": "ST", "VEC": "VEC", "SCL": "SCL", "MOV": "MOV", "CTL": "CTL",
                 "DMA": "CTL"}

INC = Operand("inc", Imm(-32768, 32767, align=VECTOR_BYTES), "post-increment added to the pointer, bytes")
TARGET = Operand("target", Imm(0, 4095), "a label (bundle index)")


def _reg(name: str, file: str, doc: str = "", write: bool | None = None) -> Operand:
    return Operand(name, Reg(file, write=name.endswith("d") if write is None else write), doc)


XD, XA, XB = _reg("xd", "x", "destination vector"), _reg("xa", "x"), _reg("xb", "x")
CD, CA = _reg("cd", "c", "destination accumulator"), _reg("ca", "c")
CACC = _reg("cacc", "c", "accumulator, read and written", write=True)
RD, RA, RB = _reg("rd", "r", "destination"), _reg("ra", "r"), _reg("rb", "r")
PD, PA = _reg("pd", "p", "destination pointer"), _reg("pa", "p")
PINC = _reg("pa", "p", "address; incremented by inc after the access", write=True)
LANE = _reg("rl", "r", "lane index 0..31")


def _imm(name: str, lo: int, hi: int, doc: str = "", align: int = 1) -> Operand:
    return Operand(name, Imm(lo, hi, align), doc)


def _s(mn, ops, cls, summary, sem="", lat=1):
    return InstrSpec(mn, tuple(ops), cls, UNIT_OF_CLASS[cls], 1, lat, summary, sem)


def _alu(hw: VLIWConfig) -> int:
    return hw.alu_latency


def _mul(hw: VLIWConfig) -> int:
    return hw.mul_latency


def _red(hw: VLIWConfig) -> int:
    return hw.reduce_latency


def _nonlin(hw: VLIWConfig) -> int:
    return hw.nonlinear_latency


def _ld(hw: VLIWConfig) -> int:
    return hw.load_latency


def _mov(hw: VLIWConfig) -> int:
    return hw.move_latency


def _dma(hw: VLIWConfig) -> int:
    return hw.dma_latency


BF16 = "The result is computed in fp32 and rounded to bf16 (round to nearest even)."
DMA_ROWS = ("Row i (0 <= i < rows) moves rowbytes bytes between EXT[re + i*rs] and DM[pm + i*rowbytes]: the DM "
            "side is contiguous, the EXT side strided (rs = rowbytes for one contiguous block). ")
DMA_SEM = ("pm must be a multiple of 64; re, rs and rowbytes even; rows*rowbytes <= DMA_MAX_BYTES. "
           "Asynchronous: the bundle does not wait. The in-engine (DMAI, DMAIT) and out-engine (DMAO, DMAOT) "
           "each start their DMAs in issue order; a DMA completes DMA_LATENCY + ceil(bytes / "
           "DMA_BYTES_PER_CYCLE) cycles after it starts, but frees its engine after the transfer part alone, so "
           "back-to-back DMAs overlap their latency (guide rule VLIW-T5). Every line a DMA in writes becomes "
           "readable when the whole DMA completes: a VLD of any of them stalls until then (VLIW-T6); a VST or "
           "DMA in into lines a DMA out is reading stalls until that DMA out completes (VLIW-T8).")

MMUL_SEM = ("xa is read as a 4x8 row-major block A (A[i, k] = lane 8*i + k), xb as an 8x4 row-major block B "
            "(B[k, j] = lane 4*k + j), cacc as a 4x8 row-major fp32 tile (lane 8*i + j). P = A @ B with exact "
            "products summed in fp32; P[i, j] is added to lane 8*i + 4*h + j of cacc, the other 16 lanes are kept. "
            "128 multiply-accumulates per bundle. Two VMMULs (h = 0 with the B block of output columns n..n+3, "
            "h = 1 with n+4..n+7) accumulate one 4x8 output tile, which VCONV rounds to a 4x8 row-major bf16 "
            "vector. cacc is read and written: chains into one accumulator wait MUL_LATENCY cycles each; keep "
            "several tiles in flight. DMAIT / DMAOT build and write back these blocked layouts.")
TILED_SEM = ("Tiled DMA: the EXT region of rows x rowbytes bytes (row i at EXT[re + i*rs]) is stored in DM as "
             "vertical strips of tbytes bytes width, strip after strip, each strip row-major: DM[pm + j*rows*tbytes "
             "+ i*tbytes + b] = EXT[re + i*rs + j*tbytes + b] (0 <= j < rowbytes / tbytes, 0 <= b < tbytes). "
             "rowbytes must be a multiple of tbytes; tbytes even. With rows = 4, tbytes = 16 a 4 x K panel of X "
             "becomes K/8 consecutive 4x8 A blocks; with tbytes = 8 a K x 8 strip of W becomes two K x 4 strips "
             "(consecutive 8x4 B blocks). ")

INSTRUCTIONS = (
    _s("NOP", [], "NOP", "An empty bundle (one cycle).",
       "Empty slots of a bundle are NOPs implicitly; write NOP only for a bundle with nothing else in it."),
    # ---- loads (two per bundle) -------------------------------------------------------
    _s("VLD", [XD, PINC, INC], "LD", "xd = the 32 bf16 values at DM[pa]; then pa += inc.",
       "pa must be a multiple of 64 (one vector). Post-increment: the pointer's new value is visible to the "
       "next bundle (the latency column is the vector's).", lat=_ld),
    _s("VLDB", [XD, PINC, Operand("inc", Imm(-32768, 32767, align=2), "post-increment, bytes")], "LD",
       "Broadcast load: every lane of xd = the bf16 value at DM[pa]; then pa += inc.",
       "pa must be even (one bf16 element).", lat=_ld),
    # ---- store (one per bundle) -------------------------------------------------------
    _s("VST", [XA, PINC, INC], "ST", "DM[pa] = the 32 bf16 lanes of xa; then pa += inc.",
       "pa must be a multiple of 64. The data is in memory for the next bundle's loads."),
    # ---- vector (one per bundle) ------------------------------------------------------
    _s("VADD", [XD, XA, XB], "VEC", "xd = xa + xb (lane-wise).", BF16, lat=_alu),
    _s("VSUB", [XD, XA, XB], "VEC", "xd = xa - xb.", BF16, lat=_alu),
    _s("VMUL", [XD, XA, XB], "VEC", "xd = xa * xb.", BF16, lat=_mul),
    _s("VMAX", [XD, XA, XB], "VEC", "xd = max(xa, xb).", lat=_alu),
    _s("VMIN", [XD, XA, XB], "VEC", "xd = min(xa, xb).", lat=_alu),
    _s("VRMAX", [XD, XA], "VEC", "Every lane of xd = the largest lane of xa.", lat=_red),
    _s("VRADD", [XD, CA], "VEC", "Every lane of xd = the sum of the 32 fp32 lanes of ca, rounded to bf16.",
       "The sum is taken in fp32 (the accumulator's precision); only the result is rounded.", lat=_red),
    _s("VEXP2", [XD, XA], "VEC", "xd = 2 ** xa.", BF16 + " For e**x compute 2**(x * log2(e)).", lat=_nonlin),
    _s("VINV", [XD, XA], "VEC", "xd = 1 / xa.", BF16, lat=_nonlin),
    _s("VRSQRT", [XD, XA], "VEC", "xd = 1 / sqrt(xa).", BF16, lat=_nonlin),
    _s("VEXP2C", [XD, CA], "VEC", "xd = 2 ** ca (an fp32 accumulator argument).",
       BF16 + " The argument is not rounded to bf16 first: e**x as 2**(x*log2(e)) keeps its accuracy when "
       "x*log2(e) is formed in an accumulator (VMPY / VMAC with a split constant).", lat=_nonlin),
    _s("VINVC", [XD, CA], "VEC", "xd = 1 / ca (an fp32 accumulator argument).",
       BF16 + " E.g. a sigmoid 1 / (1 + e) with 1 + e formed exactly in an accumulator.", lat=_nonlin),
    _s("VMPY", [CD, XA, XB], "VEC", "cd = xa * xb (32 fp32 products; exact for bf16 inputs).", lat=_mul),
    _s("VMAC", [CACC, XA, XB], "VEC", "cacc = cacc + xa * xb (fp32 multiply-accumulate, 32 lanes).",
       "cacc is read and written: chains of VMAC into one accumulator wait for each other (latency "
       "MUL_LATENCY); alternate accumulators to keep the vector slot busy.", lat=_mul),
    _s("VMPYL", [CD, XA, XB, LANE], "VEC", "cd = xa * xb[rl] (lane rl of xb broadcast).", lat=_mul),
    _s("VMACL", [CACC, XA, XB, LANE], "VEC", "cacc = cacc + xa * xb[rl] (lane rl of xb broadcast).",
       "The building block of a matrix product: xa = 32 columns of one row of W, xb[rl] = one element of X.",
       lat=_mul),
    _s("VMMUL", [CACC, XA, XB, _imm("h", 0, 1, "which half of the 4x8 tile: 0 = columns 0-3, 1 = columns 4-7")],
       "VEC", "Block matrix multiply-accumulate: the 4x4 product of xa (a 4x8 bf16 block) and xb (an 8x4 bf16 "
       "block) is added to half h of cacc (a 4x8 fp32 tile).", MMUL_SEM, lat=_mul),
    # ---- scalar (one per bundle) -----------------------------------------------------------
    _s("MOVI", [RD, _imm("imm", -(1 << 28), (1 << 28) - 1)], "SCL", "rd = imm."),
    _s("ADD", [RD, RA, RB], "SCL", "rd = ra + rb (int32, wrapping)."),
    _s("ADDI", [RD, RA, _imm("imm", -(1 << 20), (1 << 20) - 1)], "SCL", "rd = ra + imm."),
    _s("SUB", [RD, RA, RB], "SCL", "rd = ra - rb."),
    _s("MUL", [RD, RA, RB], "SCL", "rd = ra * rb."),
    _s("SHLI", [RD, RA, _imm("imm", 0, 31)], "SCL", "rd = ra << imm."),
    _s("SHRI", [RD, RA, _imm("imm", 0, 31)], "SCL", "rd = ra >> imm (arithmetic)."),
    _s("ANDI", [RD, RA, _imm("imm", 0, (1 << 20) - 1)], "SCL", "rd = ra & imm."),
    _s("PMOVI", [PD, _imm("imm", 0, (1 << 20) - 1)], "SCL", "pd = imm (a DM byte address)."),
    _s("PMOV", [PD, RA], "SCL", "pd = ra."),
    _s("PADD", [PD, PA, RB], "SCL", "pd = pa + rb."),
    _s("PADDI", [PD, PA, _imm("imm", -(1 << 20), (1 << 20) - 1)], "SCL", "pd = pa + imm."),
    _s("MOVP", [RD, PA], "SCL", "rd = pa."),
    # ---- move (one per bundle) -------------------------------------------------------------
    _s("VCONV", [XD, CA], "MOV", "xd = ca rounded to bf16 (accumulator -> vector).", lat=_mov),
    _s("VUPS", [CD, XA], "MOV", "cd = xa as fp32 (vector -> accumulator, exact).", lat=_mov),
    _s("VMOV", [XD, XA], "MOV", "xd = xa."),
    _s("VBCST", [XD, Operand("value", Imm(-3.0e38, 3.0e38, is_float=True), "a float constant")], "MOV",
       "Every lane of xd = value rounded to bf16.", "E.g. VBCST x7, 1.4426950408889634 (log2 e)."),
    _s("VBCSTL", [XD, XA, LANE], "MOV", "Every lane of xd = lane rl of xa."),
    _s("VINS", [_reg("xt", "x", "target: lane rl replaced, the others kept", write=True), XA, LANE], "MOV",
       "Lane rl of xt = lane rl of xa; the other lanes of xt are kept.",
       "With VRADD (which writes the sum to every lane) this collects one result per lane."),
    _s("CZERO", [CD], "MOV", "cd = 0 (every lane)."),
    # ---- control (one per bundle) ----------------------------------------------------------------
    _s("HALT", [], "CTL", "Stop (also implied after the last bundle). The run ends when outstanding DMAs finish."),
    _s("J", [TARGET], "CTL", "Jump to target (taken: BRANCH_PENALTY extra cycles)."),
    _s("BEQZ", [RA, TARGET], "CTL", "If ra == 0, jump to target."),
    _s("BNEZ", [RA, TARGET], "CTL", "If ra != 0, jump to target."),
    _s("LOOP", [_reg("rc", "r", "iteration count"), Operand("end", TARGET.kind, "label after the body")], "CTL",
       "Zero-overhead loop: run the bundles from the next one up to (not including) label end, rc times.",
       "The count is read once, at LOOP. Returning from the last body bundle to the first is free. rc <= 0 "
       "skips the body (a taken branch). Loops nest up to LOOP_DEPTH deep; nested loops must end at different "
       "labels."),
    _s("LOOPI", [_imm("count", 0, 65535, "iteration count"), Operand("end", TARGET.kind, "label after the body")],
       "CTL", "Zero-overhead loop with an immediate count (as LOOP)."),
    _s("DMAI", [_reg("pm", "p", "DM destination"), _reg("re", "r", "EXT source, bytes"),
                _reg("rs", "r", "EXT row stride, bytes"), _imm("rows", 1, 4096), _imm("rowbytes", 2, 1 << 20, align=2)],
       "DMA", "DMA in: EXT -> DM, rows x rowbytes bytes.", DMA_ROWS + DMA_SEM, lat=_dma),
    _s("DMAO", [_reg("pm", "p", "DM source"), _reg("re", "r", "EXT destination, bytes"),
                _reg("rs", "r", "EXT row stride, bytes"), _imm("rows", 1, 4096), _imm("rowbytes", 2, 1 << 20, align=2)],
       "DMA", "DMA out: DM -> EXT, rows x rowbytes bytes.", DMA_ROWS + DMA_SEM, lat=_dma),
    _s("DMAIT", [_reg("pm", "p", "DM destination"), _reg("re", "r", "EXT source, bytes"),
                 _reg("rs", "r", "EXT row stride, bytes"), _imm("rows", 1, 4096), _imm("rowbytes", 2, 1 << 20, align=2),
                 _imm("tbytes", 2, 1 << 20, "strip width, bytes", align=2)],
       "DMA", "Tiled DMA in: EXT rows x rowbytes -> DM as strips tbytes wide (blocked layouts for VMMUL).",
       TILED_SEM + DMA_SEM, lat=_dma),
    _s("DMAOT", [_reg("pm", "p", "DM source"), _reg("re", "r", "EXT destination, bytes"),
                 _reg("rs", "r", "EXT row stride, bytes"), _imm("rows", 1, 4096), _imm("rowbytes", 2, 1 << 20, align=2),
                 _imm("tbytes", 2, 1 << 20, "strip width, bytes", align=2)],
       "DMA", "Tiled DMA out: DM strips tbytes wide -> EXT rows x rowbytes (the inverse of DMAIT).",
       TILED_SEM + DMA_SEM, lat=_dma),
)


def _symbols(hw: VLIWConfig | None) -> dict[str, int | float]:
    hw = hw or VLIWConfig()
    return {
        "LANES": LANES, "VBYTES": VECTOR_BYTES, "DM_BYTES": hw.dm_bytes, "BANK_BYTES": hw.bank_bytes,
        "DMA_MAX_BYTES": hw.dma_max_bytes, "LOG2E": 1.4426950408889634,
    }


def _finalize(parsed, hw, rep) -> None:
    """Static checks the table cannot express: loop bodies, nesting, DMA sizes."""
    hw = hw or VLIWConfig()
    n_bundles = max((pi.pc for pi in parsed), default=-1) + 1
    loops = []
    for pi in parsed:
        mn = pi.spec.mnemonic
        if mn in ("LOOP", "LOOPI"):
            end = int(pi.values[1])
            if end <= pi.pc + 1 or end > n_bundles:
                rep.error(pi.src, "E110", f"loop end label must follow the LOOP's bundle with at least one body "
                          f"bundle in between (LOOP is bundle {pi.pc}, end is bundle {end})",
                          pi.operand_cols[1], len(pi.operand_texts[1]), hint="put the label after the loop body")
                continue
            loops.append((pi.pc, end, pi))
        elif mn in ("J", "BEQZ", "BNEZ"):
            target = int(pi.values[-1])
            if target > n_bundles:
                rep.error(pi.src, "E111", f"branch target {target} is past the end of the program "
                          f"({n_bundles} bundles)", pi.operand_cols[-1], len(pi.operand_texts[-1]))
        elif mn in ("DMAI", "DMAO", "DMAIT", "DMAOT"):
            nbytes = int(pi.values[3]) * int(pi.values[4])
            if nbytes > hw.dma_max_bytes:
                rep.error(pi.src, "E112", f"{mn} moves rows*rowbytes = {nbytes} bytes; one DMA moves at most "
                          f"{hw.dma_max_bytes}", pi.operand_cols[3],
                          pi.operand_cols[4] + len(pi.operand_texts[4]) - pi.operand_cols[3],
                          hint="split it into several DMAs")
            if mn in ("DMAIT", "DMAOT") and int(pi.values[4]) % int(pi.values[5]):
                rep.error(pi.src, "E115", f"{mn} rowbytes = {int(pi.values[4])} is not a multiple of the strip width "
                          f"tbytes = {int(pi.values[5])}", pi.operand_cols[5], len(pi.operand_texts[5]),
                          hint="the region must split into whole strips (e.g. rowbytes 2*K with tbytes 16)")
    for s1, e1, p1 in loops:
        depth = 1
        for s2, e2, p2 in loops:
            if (s2, e2) == (s1, e1) and p2 is p1:
                continue
            inside = s1 < s2 < e1
            if inside and e2 > e1:
                rep.error(p2.src, "E113", f"loop at line {p2.src.line} starts inside the loop at line {p1.src.line} "
                          "but ends after it", p2.col, len(p2.spec.mnemonic), hint="loops must nest properly")
            elif inside and e2 == e1:
                rep.error(p2.src, "E113", f"nested loops end at the same label (outer loop at line {p1.src.line})",
                          p2.operand_cols[1], len(p2.operand_texts[1]),
                          hint="give the outer loop at least one bundle after the inner loop's end")
            if s2 < s1 < e2:
                depth += 1
        if depth > hw.loop_depth:
            rep.error(p1.src, "E114", f"loops nest {depth} deep here; the hardware holds {hw.loop_depth}",
                      p1.col, len(p1.spec.mnemonic))


@functools.lru_cache(maxsize=32)
def _make_isa(hw_json: str) -> ISA:
    hw = VLIWConfig.model_validate_json(hw_json)
    return ISA(
        name="VLIW",
        register_files=(R, P, X, C),
        instructions=INSTRUCTIONS,
        classes=CLASSES,
        units=UNITS,
        comment_prefixes=("//", "#"),
        has_labels=True,
        halt_mnemonic="HALT",
        max_program=hw.imem_bundles,
        finalize=_finalize,
        symbols=_symbols,
        bundle_slots=dict(SLOTS),
        nop_mnemonic="NOP",
    )


def make_isa(hw: VLIWConfig | None = None) -> ISA:
    """The VLIW instruction set for hardware config ``hw`` (cached per config)."""
    return _make_isa((hw or VLIWConfig()).model_dump_json())


VLIW_ISA = make_isa()
