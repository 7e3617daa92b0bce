"""The CPU's assembler: the RVV core's GNU-``as`` assembler restricted to RV32IM + Zicsr, plus machine mode.

One assembler for both RISC-V machines (:mod:`kcgym.sims.rvv.assembler`): the CPU accepts the same
syntax, directives and scalar mnemonics, rejects every vector instruction with a clear error (the CPU
has no vector unit), reads the Zicsr counters (``cycle``, ``instret``, their machine-mode aliases and
high halves) instead of the vector CSRs, and adds what machine-mode code needs: the Zicsr
read-modify-write instructions (:data:`SYSTEM`), their pseudo-instructions, ``mret``, and the machine
CSRs of :data:`STORED_CSRS` (trap handling and PMP). Their words use the RVV table's ``CSR`` class with
sub-ops 1..7 (``csrr`` is sub-op 0).
"""

from __future__ import annotations

import dataclasses

from kcgym.isa.preprocess import SourceLine
from kcgym.sims.cpu.config import CPUConfig
from kcgym.sims.rvv import isa as I
from kcgym.sims.rvv.assembler import RVVProgram, Slot, _Asm

# readable CSRs: name -> what the machine returns (see machine.csr_value)
CSR_CYCLE, CSR_INSTRET, CSR_ZERO = range(3)
CSRS: dict[str, int] = {
    "cycle": CSR_CYCLE, "time": CSR_CYCLE, "mcycle": CSR_CYCLE, "instret": CSR_INSTRET, "minstret": CSR_INSTRET,
    "cycleh": CSR_ZERO, "timeh": CSR_ZERO, "mcycleh": CSR_ZERO, "instreth": CSR_ZERO, "minstreth": CSR_ZERO,
    "mhartid": CSR_ZERO,
}
# machine-mode CSRs the machine stores (readable and writable), after the computed ones above
STORED_CSRS = ("mstatus", "mtvec", "mscratch", "mepc", "mcause", "mtval", *(f"pmpcfg{i}" for i in range(4)),
               *(f"pmpaddr{i}" for i in range(16)))
FIRST_STORED = 3
CSRS.update({name: FIRST_STORED + k for k, name in enumerate(STORED_CSRS)})
CSR_NAMES = tuple(CSRS)
STORED = {name: k for k, name in enumerate(STORED_CSRS)}  # name -> index into the machine's CSR array
# the Zicsr read-modify-write instructions and mret: mnemonic -> (sub-op of class CSR, operands, summary)
SUB_CSRR, SUB_CSRRW, SUB_CSRRS, SUB_CSRRC, SUB_CSRRWI, SUB_CSRRSI, SUB_CSRRCI, SUB_MRET = range(8)
SYSTEM: dict[str, tuple[int, str, str]] = {
    "csrrw": (SUB_CSRRW, "rd, csr, rs1", "rd = csr; csr = rs1"),
    "csrrs": (SUB_CSRRS, "rd, csr, rs1", "rd = csr; csr |= rs1 (no write if rs1 is x0)"),
    "csrrc": (SUB_CSRRC, "rd, csr, rs1", "rd = csr; csr &= ~rs1 (no write if rs1 is x0)"),
    "csrrwi": (SUB_CSRRWI, "rd, csr, uimm5", "rd = csr; csr = uimm5"),
    "csrrsi": (SUB_CSRRSI, "rd, csr, uimm5", "rd = csr; csr |= uimm5 (no write if 0)"),
    "csrrci": (SUB_CSRRCI, "rd, csr, uimm5", "rd = csr; csr &= ~uimm5 (no write if 0)"),
    "mret": (SUB_MRET, "", "return from a machine-mode trap: pc = mepc, privilege = mstatus.MPP"),
}
SYSTEM_PSEUDOS: dict[str, tuple[str, str]] = {  # pseudo -> (instruction, operands)
    "csrw": ("csrrw", "csr, rs"), "csrs": ("csrrs", "csr, rs"), "csrc": ("csrrc", "csr, rs"),
    "csrwi": ("csrrwi", "csr, uimm5"), "csrsi": ("csrrsi", "csr, uimm5"), "csrci": ("csrrci", "csr, uimm5"),
}
_CSRR = I.BY_MNEMONIC["csrr"]
# Zicsr read pseudo-instructions: mnemonic -> the CSR it reads
COUNTER_PSEUDOS = {"rdcycle": "cycle", "rdtime": "time", "rdinstret": "instret", "rdcycleh": "cycleh",
                   "rdtimeh": "timeh", "rdinstreth": "instreth"}
SCALAR_CLASSES = frozenset({"ALU", "MULDIV", "LOAD", "STORE", "BRANCH", "JUMP", "CSR"})
NO_VECTOR_HINT = "this core is RV32IM + Zicsr: write the loop with scalar loads, stores and arithmetic"


class _CPUAsm(_Asm):
    def system(self, sl: SourceLine, mnemonic: str, ops: list[tuple[str, int]], col: int) -> None:
        """A Zicsr read-modify-write or mret: a slot of the csrr row, its sub-op and operands checked in pass 2."""
        syntax = SYSTEM[mnemonic][1]
        n = len(syntax.split(",")) if syntax else 0
        if len(ops) != n:
            self.err(sl, "E002", f"{mnemonic} takes {n} operand(s), got {len(ops)}", col, len(mnemonic),
                     hint=f"syntax: {mnemonic} {syntax}".strip())
            return
        self.slots.append(Slot(_CSRR, sl, [(mnemonic, col), *ops], col, None))

    def encode_slot(self, idx: int, s: Slot) -> list[int]:
        if s.spec is not _CSRR or not s.ops or s.ops[0][0] not in SYSTEM:
            return super().encode_slot(idx, s)
        mnemonic, ops = s.ops[0][0], s.ops[1:]
        f = [0] * I.N_FIELDS
        f[I.F_OP], f[I.F_CLS], f[I.F_VM] = I.OPCODE["csrr"], I.CLASS_ID["CSR"], 1
        f[I.F_SUB] = SYSTEM[mnemonic][0]
        if mnemonic == "mret":
            return f
        f[I.F_RD] = self.xreg(s.src, ops[0], "rd")
        f[I.F_IMM] = self.csr(s.src, ops[1])
        if mnemonic.endswith("i"):
            f[I.F_RS1] = self.imm(s.src, ops[2], 0, 31, "the immediate", 4 * idx, "CSR immediates are 0..31")
        else:
            f[I.F_RS1] = self.xreg(s.src, ops[2], "rs1")
        return f

    def emit(self, sl: SourceLine, mnemonic: str, ops: list[tuple[str, int]], mcol: int) -> None:
        if I.BY_MNEMONIC[mnemonic].cls not in SCALAR_CLASSES:
            self.err(sl, "E024", f"'{mnemonic}' is a vector instruction: the CPU has no vector unit", mcol,
                     len(mnemonic), hint=NO_VECTOR_HINT)
            return
        super().emit(sl, mnemonic, ops, mcol)

    def instruction(self, sl: SourceLine, low: str, word: str, ops: list[tuple[str, int]], col: int) -> None:
        if low in SYSTEM:
            self.system(sl, low, ops, col)
            return
        if low in SYSTEM_PSEUDOS:
            real, syntax = SYSTEM_PSEUDOS[low]
            if len(ops) != 2:
                self.err(sl, "E002", f"{low} takes 2 operands, got {len(ops)}", col, len(low),
                         hint=f"syntax: {low} {syntax}")
                return
            self.system(sl, real, [("x0", col), *ops], col)
            return
        if low in COUNTER_PSEUDOS:
            if len(ops) != 1:
                self.err(sl, "E002", f"{low} takes 1 operand, got {len(ops)}", col, len(low), hint=f"syntax: {low} rd")
                return
            self.emit(sl, "csrr", [ops[0], (COUNTER_PSEUDOS[low], col)], col)
            return
        super().instruction(sl, low, word, ops, col)

    def csr(self, sl: SourceLine, op: tuple[str, int]) -> int:
        name = op[0].strip().lower()
        if name not in CSRS:
            hint = "readable CSRs: " + ", ".join(CSR_NAMES)
            if name in I.CSR_NAMES:
                hint = f"'{name}' is a vector CSR and the CPU has no vector unit; " + hint
            self.err(sl, "E018", f"unsupported CSR '{op[0]}'", op[1], len(op[0]), hint=hint)
            return 0
        return CSRS[name]


def assemble(source: str, hw: CPUConfig | None = None) -> RVVProgram:
    """Assemble RV32IM + Zicsr source for the CPU; raises :class:`AssemblyError` with every error."""
    program = _CPUAsm(source, (hw or CPUConfig()).assembler_config()).run()
    return dataclasses.replace(program, isa_name="CPU")
