"""The RV32IM + RVV (Zve32x) instruction table: the single source of truth for this machine.

Every mnemonic the assembler accepts is one :class:`RVInstr` row of the shared schema
(:class:`kcgym.isa.InstrSpec`): its operands (from its *form*, how it is written in GNU ``as``
syntax, each operand naming the encoded field it fills), the datapath class the simulator
dispatches on, the operation id inside that class, its width form and signedness, its base
costs and a one-line summary. The assembler's operand parsing, the disassembler, the
simulator's dispatch ids and costs and the generated instruction reference are all derived
from :data:`INSTRUCTIONS` (gathered in :data:`RVV_ISA`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kcgym.isa.spec import ISA, Imm, InstrSpec, Operand, Reg, RegisterFile
from kcgym.sims.rvv.config import RVVConfig

# Datapath classes (the simulator's dispatch groups), in id order, with their counting category.
CLASSES = ("ALU", "MULDIV", "LOAD", "STORE", "BRANCH", "JUMP", "CSR", "VSET", "VLOAD", "VSTORE",
           "VARITH", "VRED", "VPERM", "VMASK", "VMOVE", "HALT")
CATEGORY = {"ALU": "scalar", "MULDIV": "scalar", "LOAD": "scalar_memory", "STORE": "scalar_memory",
            "BRANCH": "control", "JUMP": "control", "CSR": "scalar", "VSET": "vector_config",
            "VLOAD": "vector_memory", "VSTORE": "vector_memory", "VARITH": "vector", "VRED": "vector",
            "VPERM": "vector", "VMASK": "vector", "VMOVE": "vector", "HALT": "control"}
UNITS = ("SCALAR", "VECTOR", "EXT_MEMORY")
VECTOR_CLASSES = ("VLOAD", "VSTORE", "VARITH", "VRED", "VPERM", "VMASK", "VMOVE")

# Operation ids shared by the scalar ALU and the vector elementwise datapath.
OPS = ("add", "sub", "rsub", "and", "or", "xor", "sll", "srl", "sra", "slt", "sltu", "min", "minu", "max",
       "maxu", "mul", "mulh", "mulhu", "mulhsu", "div", "divu", "rem", "remu", "macc", "nmsac", "madd",
       "nmsub", "sadd", "saddu", "ssub", "ssubu", "ssra", "ssrl", "nclip", "nclipu", "merge", "mv", "seq",
       "sne", "sle", "sleu", "sgt", "sgtu", "ext", "id", "lui", "auipc", "nsrl", "nsra")
OP = {name: i for i, name in enumerate(OPS)}
RED_OPS = ("sum", "max", "maxu", "min", "minu", "and", "or", "xor")
PERM_OPS = ("slideup", "slidedown", "slide1up", "slide1down", "gather")
MASK_OPS = ("mand", "mor", "mxor", "mnand", "mandn", "mnor", "mxnor", "cpop", "first")
MOVE_OPS = ("x_s", "s_x")
BRANCH_OPS = ("beq", "bne", "blt", "bge", "bltu", "bgeu")
LOAD_OPS = ("lb", "lh", "lw", "lbu", "lhu")
STORE_OPS = ("sb", "sh", "sw")
CSR_NAMES = {"vl": 0xC20, "vtype": 0xC21, "vlenb": 0xC22}

# Width forms of vector arithmetic (field W): which operands are 2*SEW wide.
W_SAME, W_WIDEN, W_WIDEN_W, W_NARROW, W_MASK, W_EXT2, W_EXT4, W_MERGE = range(8)
# Operand source of vector arithmetic (field SRC): vector, scalar register, immediate.
SRC_V, SRC_X, SRC_I = range(3)
# Memory addressing modes (field SRC of VLOAD/VSTORE).
MODE_UNIT, MODE_STRIDED, MODE_INDEXED = range(3)

# Encoded word fields
F_OP, F_CLS, F_SUB, F_RD, F_RS1, F_RS2, F_IMM, F_VM, F_SRC, F_W, F_SGN = range(11)
N_FIELDS = 11

# vtype immediate (vsetvli/vsetivli): bits 7 ma, 6 ta, 5..3 SEW code, 1..0 LMUL code
SEW_CODE = {8: 0, 16: 1, 32: 2}
LMUL_CODE = {1: 0, 2: 1, 4: 2, 8: 3}


@dataclass(frozen=True)
class Syntax:
    """Operand kinds RISC-V syntax needs beyond a register or an immediate (see :data:`FORM_OPERANDS`).

    ``mem`` ``offset(rs1)``; ``vmem`` ``(rs1)``; ``jmem`` ``offset(rs1)`` or a bare ``rs1``; ``label`` a code
    label (its instruction index); ``csr`` a CSR name; ``vtype`` the comma-separated vtype words; ``mask``
    the optional trailing ``v0.t``; ``v0`` the mandatory mask operand of vmerge.
    """

    what: str


MEM, VMEM, JMEM, LABEL, CSR, VTYPE, MASK, V0 = (Syntax(w) for w in ("mem", "vmem", "jmem", "label", "csr", "vtype",
                                                                    "mask", "v0"))


@dataclass(frozen=True)
class RVOperand(Operand):
    """An operand of a form: the encoded field it fills, how diagnostics name it, and its range hint."""

    field: int = F_IMM
    what: str = ""
    hint: str | None = None


def _x(name: str, field: int, what: str = "") -> RVOperand:
    return RVOperand(name, Reg("x", write=name == "rd"), field=field, what=what or name)


def _v(name: str, field: int, what: str = "") -> RVOperand:
    return RVOperand(name, Reg("v", write=name == "vd"), field=field, what=what or name)


def _imm(name: str, lo: int, hi: int, what: str, hint: str | None = None, field: int = F_IMM) -> RVOperand:
    return RVOperand(name, Imm(lo, hi), field=field, what=what, hint=hint)


def _syn(name: str, kind: Syntax) -> RVOperand:
    return RVOperand(name, kind)  # type: ignore[arg-type]  # Operand.kind: Reg | Imm in the generic framework


RD, RS1, RS2 = _x("rd", F_RD), _x("rs1", F_RS1), _x("rs2", F_RS2)
VD, VS2, VS1, VS3 = _v("vd", F_RD), _v("vs2", F_RS2), _v("vs1", F_RS1), _v("vs3", F_RD)
_M, _VM = _syn("v0.t", MASK), _syn("(rs1)", VMEM)
_VTYPE = _syn("eSEW, mLMUL[, ta|tu][, ma|mu]", VTYPE)
_SIMM5 = _imm("simm5", -16, 15, "the .vi immediate", ".vi immediates are 5-bit signed (-16..15): put the constant "
              "in a scalar register and use the .vx form")
_UIMM5 = _imm("uimm5", 0, 31, "the unsigned immediate", "this immediate is 5-bit unsigned (0..31); use the .vx form "
              "for more")

# The operands of each form, in written order: the assembler parses and the disassembler prints these.
FORM_OPERANDS: dict[str, tuple[RVOperand, ...]] = {
    "R": (RD, RS1, RS2),
    "I": (RD, RS1, _imm("imm12", -2048, 2047, "the immediate",
                        "12-bit signed immediates: build larger constants with li (lui + addi)")),
    "SH": (RD, RS1, _imm("shamt", 0, 31, "the shift amount")),
    "U": (RD, _imm("imm20", 0, 0xFFFFF, "the upper immediate",
                   "lui/auipc take the upper 20 bits (0..0xFFFFF); use li for a full constant")),
    "LD": (RD, _syn("offset(rs1)", MEM)), "ST": (RS2, _syn("offset(rs1)", MEM)),
    "B": (RS1, RS2, _syn("label", LABEL)), "JAL": (RD, _syn("label", LABEL)), "JALR": (RD, _syn("offset(rs1)", JMEM)),
    "CSR": (RD, _syn("csr", CSR)),
    "VSETVLI": (RD, RS1, _VTYPE),
    "VSETIVLI": (RD, _imm("uimm5", 0, 31, "the AVL", "vsetivli takes 0..31; use vsetvli for more", F_RS1), _VTYPE),
    "VSETVL": (RD, RS1, RS2),
    "VL": (VD, _VM, _M), "VLS": (VD, _VM, _x("rs2", F_RS2, "the stride"), _M),
    "VLX": (VD, _VM, _v("vs2", F_RS2, "the index vector"), _M),
    "VS": (VS3, _VM, _M), "VSS": (VS3, _VM, _x("rs2", F_RS2, "the stride"), _M),
    "VSX": (VS3, _VM, _v("vs2", F_RS2, "the index vector"), _M),
    "VV": (VD, VS2, VS1, _M), "VX": (VD, VS2, RS1, _M), "VI": (VD, VS2, _SIMM5, _M), "VIU": (VD, VS2, _UIMM5, _M),
    "VVMA": (VD, VS1, VS2, _M), "VXMA": (VD, RS1, VS2, _M),
    "VVM": (VD, VS2, VS1, _syn("v0", V0)), "VXM": (VD, VS2, RS1, _syn("v0", V0)),
    "VIM": (VD, VS2, _SIMM5, _syn("v0", V0)),
    "MVV": (VD, VS1), "MVX": (VD, RS1),
    "MVI": (VD, _imm("simm5", -16, 15, "the immediate",
                     "vmv.v.i takes -16..15; use vmv.v.x with a scalar register for more")),
    "V2": (VD, VS2, _M), "V0": (VD, _M), "XV": (RD, VS2), "VXS": (VD, RS1), "XM": (RD, VS2, _M),
    "MM": (VD, VS2, VS1), "NONE": (),
}


def _syntax(ops: tuple[RVOperand, ...]) -> str:
    fixed = ", ".join(o.name for o in ops if o.kind != MASK)
    return fixed + ("[, v0.t]" if any(o.kind == MASK for o in ops) else "")


# Operand syntax of each form, as written in the reference (``[, v0.t]`` = optional mask).
FORMS: dict[str, str] = {form: _syntax(ops) for form, ops in FORM_OPERANDS.items()}


def _costs(cls: str, sub: int) -> tuple[Any, Any]:
    """(occupancy, latency) as functions of the hardware config: the base costs the timing model uses.

    Scalar classes: cycles the in-order issue slot is busy, and cycles until a dependent instruction
    may issue (a load from the DTCM; external memory adds its transfer and latency). Vector classes:
    cycles per 128-bit chunk on the vector unit, and the latency after the last chunk (an external
    load adds the memory latency). Branch mispredictions, memory transfers and reductions' tree
    depth are added by the timing model (the guide's rules RVV-T*).
    """
    mul = OP["mul"] <= sub <= OP["mulhsu"] or OP["macc"] <= sub <= OP["nmsub"]
    div = OP["div"] <= sub <= OP["remu"]
    if cls == "MULDIV":
        return ((lambda hw: hw.div_cycles), (lambda hw: hw.div_cycles)) if div else (1, lambda hw: hw.mul_latency)
    if cls == "LOAD":
        return 1, lambda hw: hw.load_use_latency
    if cls == "JUMP":  # jal: 1 + penalty; jalr reads its target one cycle later
        return (lambda hw: 1 + hw.jump_penalty + sub), 1
    if cls == "VARITH":
        return ((lambda hw: hw.vdiv_cycles_per_chunk) if div else 1), ((lambda hw: hw.vmul_latency + 1) if mul else 1)
    if cls in ("VRED", "VMOVE", "VMASK"):
        return 1, 2
    return 1, 1


@dataclass(frozen=True)
class RVInstr(InstrSpec):
    """One mnemonic: the shared row plus RISC-V's encoding fields. ``form`` names its operand syntax."""

    form: str = "NONE"
    src: int = 0  # SRC field: SRC_V/X/I for arithmetic, MODE_* for memory
    w: int = 0  # W field: width form for arithmetic, EEW for memory
    sgn: int = 3  # bit 0: vs2 operand signed, bit 1: vs1/rs1 operand signed (widening/extension)
    group: str = ""  # reference-doc section


def _row(mnemonic: str, form: str, cls: str, sub: int, summary: str, **fields: Any) -> RVInstr:
    occupancy, latency = _costs(cls, sub)
    return RVInstr(mnemonic=mnemonic, operands=FORM_OPERANDS[form], cls=cls,
                   unit="VECTOR" if cls in VECTOR_CLASSES else "SCALAR", occupancy=occupancy, latency=latency,
                   summary=summary, sub=sub, form=form, **fields)


def _table() -> list[RVInstr]:
    t: list[RVInstr] = []

    def add(*a: Any, **k: Any) -> None:
        t.append(_row(*a, **k))

    g = "RV32I/M scalar"
    for m, op, s in (("add", "add", "rd = rs1 + rs2"), ("sub", "sub", "rd = rs1 - rs2"),
                     ("and", "and", "bitwise and"), ("or", "or", "bitwise or"), ("xor", "xor", "bitwise xor"),
                     ("sll", "sll", "shift left by rs2[4:0]"), ("srl", "srl", "logical shift right"),
                     ("sra", "sra", "arithmetic shift right"), ("slt", "slt", "rd = (rs1 < rs2) signed"),
                     ("sltu", "sltu", "rd = (rs1 < rs2) unsigned")):
        add(m, "R", "ALU", OP[op], s, src=SRC_V, group=g)
    for m, op, s in (("mul", "mul", "low 32 bits of rs1 * rs2"), ("mulh", "mulh", "high 32 bits, signed x signed"),
                     ("mulhu", "mulhu", "high 32 bits, unsigned x unsigned"),
                     ("mulhsu", "mulhsu", "high 32 bits, signed rs1 x unsigned rs2"),
                     ("div", "div", "signed divide, rounding toward zero (x/0 = -1)"),
                     ("divu", "divu", "unsigned divide (x/0 = 2^32-1)"), ("rem", "rem", "signed remainder (x%0 = x)"),
                     ("remu", "remu", "unsigned remainder")):
        add(m, "R", "MULDIV", OP[op], s, src=SRC_V, group=g)
    for m, op, s in (("addi", "add", "rd = rs1 + imm12"), ("andi", "and", "rd = rs1 & imm12"),
                     ("ori", "or", "rd = rs1 | imm12"), ("xori", "xor", "rd = rs1 ^ imm12"),
                     ("slti", "slt", "rd = (rs1 < imm12) signed"), ("sltiu", "sltu", "rd = (rs1 < imm12) unsigned")):
        add(m, "I", "ALU", OP[op], s, src=SRC_I, group=g)
    for m, op in (("slli", "sll"), ("srli", "srl"), ("srai", "sra")):
        add(m, "SH", "ALU", OP[op], f"{op} by a constant 0..31", src=SRC_I, group=g)
    add("lui", "U", "ALU", OP["lui"], "rd = imm20 << 12", src=SRC_I, group=g)
    add("auipc", "U", "ALU", OP["auipc"], "rd = pc + (imm20 << 12)", src=SRC_I, group=g)
    for i, (m, s) in enumerate((("lb", "load sign-extended byte"), ("lh", "load sign-extended halfword"),
                                ("lw", "load word"), ("lbu", "load zero-extended byte"),
                                ("lhu", "load zero-extended halfword"))):
        add(m, "LD", "LOAD", i, s, group=g)
    for i, (m, s) in enumerate((("sb", "store low byte"), ("sh", "store low halfword"), ("sw", "store word"))):
        add(m, "ST", "STORE", i, s, group=g)
    for i, (m, s) in enumerate((("beq", "=="), ("bne", "!="), ("blt", "< signed"), ("bge", ">= signed"),
                                ("bltu", "< unsigned"), ("bgeu", ">= unsigned"))):
        add(m, "B", "BRANCH", i, f"branch to label if rs1 {s} rs2", group=g)
    add("jal", "JAL", "JUMP", 0, "rd = pc + 4; jump to label", group=g)
    add("jalr", "JALR", "JUMP", 1, "rd = pc + 4; jump to (rs1 + offset) & ~1", group=g)
    add("csrr", "CSR", "CSR", 0, "read CSR vl, vtype or vlenb into rd", group=g)

    g = "RVV configuration"
    add("vsetvli", "VSETVLI", "VSET", 0, "vl = min(rs1, VLMAX) for the given SEW/LMUL (rs1 = x0: VLMAX)", group=g)
    add("vsetivli", "VSETIVLI", "VSET", 1, "vl = min(uimm5, VLMAX) for the given SEW/LMUL", group=g)
    add("vsetvl", "VSETVL", "VSET", 2, "like vsetvli, with vtype taken from rs2", group=g)

    g = "RVV loads and stores"
    for eew in (8, 16, 32):
        for cls, m, what, to, byte in (("VLOAD", "l", "load", "from", " byte"), ("VSTORE", "s", "store", "to", "")):
            form = "V" + m.upper()  # VL, VS (+ S strided, X indexed)
            add(f"v{m}e{eew}.v", form, cls, 0, f"unit-stride {what} of vl {eew}-bit elements", src=MODE_UNIT, w=eew,
                group=g)
            add(f"v{m}se{eew}.v", form + "S", cls, 0, f"strided {what}: element i {to} rs1 + i*rs2"
                f"{' (bytes)' if byte else ''}, {eew}-bit", src=MODE_STRIDED, w=eew, group=g)
            for order in ("u", "o"):
                add(f"v{m}{order}xei{eew}.v", form + "X", cls, 0, f"indexed {what}: element i {to} rs1 + vs2[i] "
                    f"({eew}-bit unsigned{byte} offsets); data width SEW", src=MODE_INDEXED, w=eew, group=g)

    g = "RVV integer arithmetic"
    forms = {"vv": ("VV", SRC_V), "vx": ("VX", SRC_X), "vi": ("VI", SRC_I)}

    def arith(base: str, op: str, kinds: str, summary: str, w: int = W_SAME, sgn: int = 3, grp: str = g,
              vi_form: str = "VI") -> None:
        for kind in kinds.split():
            form, src = forms[kind]
            if kind == "vi":
                form = vi_form
            add(f"{base}.{kind}", form, "VARITH", OP[op], summary, src=src, w=w, sgn=sgn, group=grp)

    arith("vadd", "add", "vv vx vi", "vd[i] = vs2[i] + op")
    arith("vsub", "sub", "vv vx", "vd[i] = vs2[i] - op")
    arith("vrsub", "rsub", "vx vi", "vd[i] = op - vs2[i]")
    arith("vand", "and", "vv vx vi", "bitwise and")
    arith("vor", "or", "vv vx vi", "bitwise or")
    arith("vxor", "xor", "vv vx vi", "bitwise xor")
    arith("vsll", "sll", "vv vx vi", "shift left by op mod SEW", vi_form="VIU")
    arith("vsrl", "srl", "vv vx vi", "logical shift right by op mod SEW", vi_form="VIU")
    arith("vsra", "sra", "vv vx vi", "arithmetic shift right by op mod SEW", vi_form="VIU")
    arith("vmin", "min", "vv vx", "signed minimum")
    arith("vminu", "minu", "vv vx", "unsigned minimum")
    arith("vmax", "max", "vv vx", "signed maximum")
    arith("vmaxu", "maxu", "vv vx", "unsigned maximum")
    arith("vmul", "mul", "vv vx", "low SEW bits of the product")
    arith("vmulh", "mulh", "vv vx", "high SEW bits, signed x signed")
    arith("vmulhu", "mulhu", "vv vx", "high SEW bits, unsigned x unsigned")
    arith("vmulhsu", "mulhsu", "vv vx", "high SEW bits, signed vs2 x unsigned op")
    arith("vdiv", "div", "vv vx", "signed divide (toward zero; x/0 = -1)")
    arith("vdivu", "divu", "vv vx", "unsigned divide (x/0 = all ones)")
    arith("vrem", "rem", "vv vx", "signed remainder (x%0 = x)")
    arith("vremu", "remu", "vv vx", "unsigned remainder")
    for base, op, s in (("vmacc", "macc", "vd[i] = vd[i] + op * vs2[i]"),
                        ("vnmsac", "nmsac", "vd[i] = vd[i] - op * vs2[i]"),
                        ("vmadd", "madd", "vd[i] = op * vd[i] + vs2[i]"),
                        ("vnmsub", "nmsub", "vd[i] = -(op * vd[i]) + vs2[i]")):
        add(f"{base}.vv", "VVMA", "VARITH", OP[op], s + " (op = vs1)", src=SRC_V, group=g)
        add(f"{base}.vx", "VXMA", "VARITH", OP[op], s + " (op = rs1)", src=SRC_X, group=g)
    for base, op in (("vmseq", "seq"), ("vmsne", "sne"), ("vmslt", "slt"), ("vmsltu", "sltu"), ("vmsle", "sle"),
                     ("vmsleu", "sleu"), ("vmsgt", "sgt"), ("vmsgtu", "sgtu")):
        kinds = {"seq": "vv vx vi", "sne": "vv vx vi", "slt": "vv vx", "sltu": "vv vx", "sle": "vv vx vi",
                 "sleu": "vv vx vi", "sgt": "vx vi", "sgtu": "vx vi"}[op]
        arith(base, op, kinds, f"mask bit i = vs2[i] {op[1:]} op", w=W_MASK, grp="RVV compares and masks")
    gm = "RVV compares and masks"
    add("vmerge.vvm", "VVM", "VARITH", OP["merge"], "vd[i] = v0.mask[i] ? vs1[i] : vs2[i]", src=SRC_V, w=W_MERGE,
        group=gm)
    add("vmerge.vxm", "VXM", "VARITH", OP["merge"], "vd[i] = v0.mask[i] ? rs1 : vs2[i]", src=SRC_X, w=W_MERGE,
        group=gm)
    add("vmerge.vim", "VIM", "VARITH", OP["merge"], "vd[i] = v0.mask[i] ? simm5 : vs2[i]", src=SRC_I, w=W_MERGE,
        group=gm)
    add("vmv.v.v", "MVV", "VARITH", OP["mv"], "vd[i] = vs1[i]", src=SRC_V, group=gm)
    add("vmv.v.x", "MVX", "VARITH", OP["mv"], "vd[i] = rs1", src=SRC_X, group=gm)
    add("vmv.v.i", "MVI", "VARITH", OP["mv"], "vd[i] = simm5", src=SRC_I, group=gm)
    add("vid.v", "V0", "VARITH", OP["id"], "vd[i] = i", src=SRC_V, group=gm)
    for i, m in enumerate(MASK_OPS[:7]):
        add(f"v{m}.mm", "MM", "VMASK", i, f"mask-register logical {m[1:]} of vs2 and vs1 (bits 0..vl-1)", group=gm)
    add("vcpop.m", "XM", "VMASK", MASK_OPS.index("cpop"), "rd = number of set mask bits in vs2 (i < vl)", group=gm)
    add("vfirst.m", "XM", "VMASK", MASK_OPS.index("first"), "rd = index of the first set mask bit, or -1",
        group=gm)

    g = "RVV fixed-point (saturating, rounding mode rnu)"
    arith("vsadd", "sadd", "vv vx vi", "signed saturating add", grp=g)
    arith("vsaddu", "saddu", "vv vx vi", "unsigned saturating add", grp=g)
    arith("vssub", "ssub", "vv vx", "signed saturating subtract", grp=g)
    arith("vssubu", "ssubu", "vv vx", "unsigned saturating subtract", grp=g)
    arith("vssra", "ssra", "vv vx vi", "arithmetic shift right with rounding (+ 2^(s-1))", grp=g, vi_form="VIU")
    arith("vssrl", "ssrl", "vv vx vi", "logical shift right with rounding", grp=g, vi_form="VIU")

    g = "RVV widening and narrowing"
    for base, op, sg, s in (("vwadd", "add", 3, "signed"), ("vwaddu", "add", 0, "unsigned"),
                            ("vwsub", "sub", 3, "signed"), ("vwsubu", "sub", 0, "unsigned")):
        arith(base, op, "vv vx", f"2*SEW result of vs2 {op} op, {s}", w=W_WIDEN, sgn=sg, grp=g)
        for kind, form, src in (("wv", "VV", SRC_V), ("wx", "VX", SRC_X)):
            add(f"{base}.{kind}", form, "VARITH", OP[op], f"2*SEW vs2 {op} SEW op ({s}), 2*SEW result",
                src=src, w=W_WIDEN_W, sgn=sg, group=g)
    arith("vwmul", "mul", "vv vx", "2*SEW product, signed x signed", w=W_WIDEN, sgn=3, grp=g)
    arith("vwmulu", "mul", "vv vx", "2*SEW product, unsigned x unsigned", w=W_WIDEN, sgn=0, grp=g)
    arith("vwmulsu", "mul", "vv vx", "2*SEW product, signed vs2 x unsigned op", w=W_WIDEN, sgn=1, grp=g)
    for base, sg, s in (("vwmacc", 3, "signed x signed"), ("vwmaccu", 0, "unsigned x unsigned"),
                        ("vwmaccsu", 2, "signed op x unsigned vs2"), ("vwmaccus", 1, "unsigned rs1 x signed vs2")):
        if base != "vwmaccus":
            add(f"{base}.vv", "VVMA", "VARITH", OP["macc"], f"vd (2*SEW) += vs1 * vs2, {s}", src=SRC_V, w=W_WIDEN,
                sgn=sg, group=g)
        add(f"{base}.vx", "VXMA", "VARITH", OP["macc"], f"vd (2*SEW) += rs1 * vs2, {s}", src=SRC_X, w=W_WIDEN,
            sgn=sg, group=g)
    for base, op, sg in (("vnsrl", "nsrl", 0), ("vnsra", "nsra", 1), ("vnclip", "nclip", 1),
                         ("vnclipu", "nclipu", 0)):
        for kind, form, src in (("wv", "VV", SRC_V), ("wx", "VX", SRC_X), ("wi", "VIU", SRC_I)):
            summary = {"nsrl": "narrow: SEW bits of (2*SEW vs2) >> op, logical",
                       "nsra": "narrow: SEW bits of (2*SEW vs2) >> op, arithmetic",
                       "nclip": "narrow with rounding shift and signed saturation",
                       "nclipu": "narrow with rounding shift and unsigned saturation"}[op]
            add(f"{base}.{kind}", form, "VARITH", OP[op], summary, src=src, w=W_NARROW, sgn=sg, group=g)
    for base, w, sg in (("vsext.vf2", W_EXT2, 1), ("vsext.vf4", W_EXT4, 1), ("vzext.vf2", W_EXT2, 0),
                        ("vzext.vf4", W_EXT4, 0)):
        add(base, "V2", "VARITH", OP["ext"], f"vd (SEW) = {'sign' if sg else 'zero'}-extended vs2 (SEW/{base[-1]})",
            src=SRC_V, w=w, sgn=sg, group=g)

    g = "RVV reductions"
    for i, op in enumerate(RED_OPS):
        add(f"vred{op}.vs", "VV", "VRED", i, f"vd[0] = {op}(vs1[0], vs2[i] for active i < vl)", group=g)
    add("vwredsum.vs", "VV", "VRED", 0, "vd[0] (2*SEW) = vs1[0] + sum of sign-extended vs2[i]", w=W_WIDEN, sgn=3,
        group=g)
    add("vwredsumu.vs", "VV", "VRED", 0, "vd[0] (2*SEW) = vs1[0] + sum of zero-extended vs2[i]", w=W_WIDEN, sgn=0,
        group=g)

    g = "RVV permutations and moves"
    add("vslideup.vx", "VX", "VPERM", 0, "vd[i+rs1] = vs2[i] (vd[0..rs1-1] unchanged)", src=SRC_X, group=g)
    add("vslideup.vi", "VIU", "VPERM", 0, "vd[i+uimm] = vs2[i]", src=SRC_I, group=g)
    add("vslidedown.vx", "VX", "VPERM", 1, "vd[i] = vs2[i+rs1] (0 past VLMAX)", src=SRC_X, group=g)
    add("vslidedown.vi", "VIU", "VPERM", 1, "vd[i] = vs2[i+uimm]", src=SRC_I, group=g)
    add("vslide1up.vx", "VX", "VPERM", 2, "vd[0] = rs1, vd[i] = vs2[i-1]", src=SRC_X, group=g)
    add("vslide1down.vx", "VX", "VPERM", 3, "vd[i] = vs2[i+1], vd[vl-1] = rs1", src=SRC_X, group=g)
    add("vrgather.vv", "VV", "VPERM", 4, "vd[i] = vs1[i] < VLMAX ? vs2[vs1[i]] : 0", src=SRC_V, group=g)
    add("vrgather.vx", "VX", "VPERM", 4, "vd[i] = rs1 < VLMAX ? vs2[rs1] : 0", src=SRC_X, group=g)
    add("vrgather.vi", "VIU", "VPERM", 4, "vd[i] = uimm < VLMAX ? vs2[uimm] : 0", src=SRC_I, group=g)
    add("vmv.x.s", "XV", "VMOVE", 0, "rd = sign-extended vs2[0] (waits for the vector unit)", group=g)
    add("vmv.s.x", "VXS", "VMOVE", 1, "vd[0] = rs1 (if vl > 0)", group=g)
    return t


# ABI names of the integer registers
ABI_NAMES = ("zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2", "a3", "a4", "a5",
             "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6")
XREGS: dict[str, int] = {f"x{i}": i for i in range(32)} | {n: i for i, n in enumerate(ABI_NAMES)} | {"fp": 8}
VREGS: dict[str, int] = {f"v{i}": i for i in range(32)}

INSTRUCTIONS: tuple[RVInstr, ...] = tuple(_table())
# The table in the shared schema. Its words are laid out by the forms' operand fields (``word_fields``), so
# programs go through :mod:`kcgym.sims.rvv.assembler` and :mod:`kcgym.sims.rvv.disasm`, not kcgym.isa's generic pair.
RVV_ISA = ISA(
    name="RVV",
    register_files=(RegisterFile("x", "x", 32, "integer register", zero=0), RegisterFile("v", "v", 32,
                                                                                         "vector register")),
    instructions=INSTRUCTIONS, classes=CLASSES, units=UNITS, comment_prefixes=("#",), has_labels=True,
    max_program=RVVConfig().itcm_instructions, word_fields=N_FIELDS,  # the assembler checks the configured ITCM
)
BY_MNEMONIC: dict[str, RVInstr] = RVV_ISA.by_mnemonic  # type: ignore[assignment]  # every row is an RVInstr
OPCODE: dict[str, int] = RVV_ISA.opcodes
CLASS_ID: dict[str, int] = RVV_ISA.class_ids
HALT_OPCODE = len(INSTRUCTIONS)  # the word the runner pads a program with (class HALT; no mnemonic)


def cost_table(which: str, hw: Any) -> list[int]:
    """Per-opcode 'occupancy' or 'latency' under ``hw``, plus the padding halt's (1): what the machine indexes."""
    return [*RVV_ISA.table(which, hw), 1]
