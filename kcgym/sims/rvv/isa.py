"""The RV32IM + RVV (Zve32x) instruction table: the single source of truth for this machine.

Every mnemonic the assembler accepts is one :class:`RVInstr` row: its operand *form* (how it
is written in GNU ``as`` syntax), the datapath class the simulator dispatches on, the
operation id inside that class, its width form and signedness, and a one-line summary. The
assembler, the encoder, the disassembler, the simulator's dispatch ids and the generated
instruction reference are all derived from :data:`INSTRUCTIONS`.
"""

from __future__ import annotations

from dataclasses import dataclass

# Datapath classes (the simulator's dispatch groups), in id order, with their counting category.
CLASSES = ("ALU", "MULDIV", "LOAD", "STORE", "BRANCH", "JUMP", "CSR", "VSET", "VLOAD", "VSTORE",
           "VARITH", "VRED", "VPERM", "VMASK", "VMOVE", "HALT")
CATEGORY = {"ALU": "scalar", "MULDIV": "scalar", "LOAD": "scalar_memory", "STORE": "scalar_memory",
            "BRANCH": "control", "JUMP": "control", "CSR": "scalar", "VSET": "vector_config",
            "VLOAD": "vector_memory", "VSTORE": "vector_memory", "VARITH": "vector", "VRED": "vector",
            "VPERM": "vector", "VMASK": "vector", "VMOVE": "vector", "HALT": "control"}
UNITS = ("SCALAR", "VECTOR", "EXT_MEMORY")

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


@dataclass(frozen=True)
class RVInstr:
    """One mnemonic. ``form`` names its operand syntax (see :data:`FORMS`)."""

    mnemonic: str
    form: str
    cls: str
    sub: int
    summary: str
    src: int = 0  # SRC field: SRC_V/X/I for arithmetic, MODE_* for memory
    w: int = 0  # W field: width form for arithmetic, EEW for memory
    sgn: int = 3  # bit 0: vs2 operand signed, bit 1: vs1/rs1 operand signed (widening/extension)
    group: str = ""  # reference-doc section


# Operand syntax of each form, as written in the reference (``[, v0.t]`` = optional mask).
FORMS = {
    "R": "rd, rs1, rs2", "I": "rd, rs1, imm12", "SH": "rd, rs1, shamt", "U": "rd, imm20",
    "LD": "rd, offset(rs1)", "ST": "rs2, offset(rs1)", "B": "rs1, rs2, label", "JAL": "rd, label",
    "JALR": "rd, offset(rs1)", "CSR": "rd, csr", "VSETVLI": "rd, rs1, eSEW, mLMUL[, ta|tu][, ma|mu]",
    "VSETIVLI": "rd, uimm5, eSEW, mLMUL[, ta|tu][, ma|mu]", "VSETVL": "rd, rs1, rs2",
    "VL": "vd, (rs1)[, v0.t]", "VLS": "vd, (rs1), rs2[, v0.t]", "VLX": "vd, (rs1), vs2[, v0.t]",
    "VS": "vs3, (rs1)[, v0.t]", "VSS": "vs3, (rs1), rs2[, v0.t]", "VSX": "vs3, (rs1), vs2[, v0.t]",
    "VV": "vd, vs2, vs1[, v0.t]", "VX": "vd, vs2, rs1[, v0.t]", "VI": "vd, vs2, simm5[, v0.t]",
    "VIU": "vd, vs2, uimm5[, v0.t]", "VVMA": "vd, vs1, vs2[, v0.t]", "VXMA": "vd, rs1, vs2[, v0.t]",
    "VVM": "vd, vs2, vs1, v0", "VXM": "vd, vs2, rs1, v0", "VIM": "vd, vs2, simm5, v0",
    "MVV": "vd, vs1", "MVX": "vd, rs1", "MVI": "vd, simm5", "V2": "vd, vs2[, v0.t]", "V0": "vd[, v0.t]",
    "XV": "rd, vs2", "VXS": "vd, rs1", "XM": "rd, vs2[, v0.t]", "MM": "vd, vs2, vs1", "NONE": "",
}


def _table() -> list[RVInstr]:
    t: list[RVInstr] = []

    def add(*a, **k) -> None:
        t.append(RVInstr(*a, **k))

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
        add(f"vle{eew}.v", "VL", "VLOAD", 0, f"unit-stride load of vl {eew}-bit elements", src=MODE_UNIT, w=eew,
            group=g)
        add(f"vlse{eew}.v", "VLS", "VLOAD", 0, f"strided load: element i from rs1 + i*rs2 (bytes), {eew}-bit",
            src=MODE_STRIDED, w=eew, group=g)
        for order in ("u", "o"):
            add(f"vl{order}xei{eew}.v", "VLX", "VLOAD", 0,
                f"indexed load: element i from rs1 + vs2[i] ({eew}-bit unsigned byte offsets); data width SEW",
                src=MODE_INDEXED, w=eew, group=g)
        add(f"vse{eew}.v", "VS", "VSTORE", 0, f"unit-stride store of vl {eew}-bit elements", src=MODE_UNIT, w=eew,
            group=g)
        add(f"vsse{eew}.v", "VSS", "VSTORE", 0, f"strided store: element i to rs1 + i*rs2, {eew}-bit",
            src=MODE_STRIDED, w=eew, group=g)
        for order in ("u", "o"):
            add(f"vs{order}xei{eew}.v", "VSX", "VSTORE", 0,
                f"indexed store: element i to rs1 + vs2[i] ({eew}-bit unsigned offsets); data width SEW",
                src=MODE_INDEXED, w=eew, group=g)

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


INSTRUCTIONS: tuple[RVInstr, ...] = tuple(_table())
BY_MNEMONIC: dict[str, RVInstr] = {i.mnemonic: i for i in INSTRUCTIONS}
OPCODE: dict[str, int] = {i.mnemonic: n for n, i in enumerate(INSTRUCTIONS)}
CLASS_ID: dict[str, int] = {c: i for i, c in enumerate(CLASSES)}
assert len(BY_MNEMONIC) == len(INSTRUCTIONS), "duplicate mnemonic in the RVV table"

# ABI names of the integer registers
ABI_NAMES = ("zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2", "a3", "a4", "a5",
             "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6")
XREGS: dict[str, int] = {f"x{i}": i for i in range(32)} | {n: i for i, n in enumerate(ABI_NAMES)} | {"fp": 8}
VREGS: dict[str, int] = {f"v{i}": i for i in range(32)}
