"""The CPU's assembler: the RVV core's GNU-``as`` assembler restricted to RV32IM + Zicsr.

One assembler for both RISC-V machines (:mod:`kcgym.sims.rvv.assembler`): the CPU accepts the same
syntax, directives and scalar mnemonics, rejects every vector instruction with a clear error (the CPU
has no vector unit) and reads the Zicsr counters (``cycle``, ``instret``, their machine-mode aliases and
high halves) instead of the vector CSRs.
"""

from __future__ import annotations

import dataclasses

from kcgym.isa.preprocess import SourceLine
from kcgym.sims.cpu.config import CPUConfig
from kcgym.sims.rvv import isa as I
from kcgym.sims.rvv.assembler import RVVProgram, _Asm

# readable CSRs: name -> what the machine returns (see machine.csr_value)
CSR_CYCLE, CSR_INSTRET, CSR_ZERO = range(3)
CSRS: dict[str, int] = {
    "cycle": CSR_CYCLE, "time": CSR_CYCLE, "mcycle": CSR_CYCLE, "instret": CSR_INSTRET, "minstret": CSR_INSTRET,
    "cycleh": CSR_ZERO, "timeh": CSR_ZERO, "mcycleh": CSR_ZERO, "instreth": CSR_ZERO, "minstreth": CSR_ZERO,
    "mhartid": CSR_ZERO,
}
CSR_NAMES = tuple(CSRS)
# Zicsr read pseudo-instructions: mnemonic -> the CSR it reads
COUNTER_PSEUDOS = {"rdcycle": "cycle", "rdtime": "time", "rdinstret": "instret", "rdcycleh": "cycleh",
                   "rdtimeh": "timeh", "rdinstreth": "instreth"}
SCALAR_CLASSES = frozenset({"ALU", "MULDIV", "LOAD", "STORE", "BRANCH", "JUMP", "CSR"})
NO_VECTOR_HINT = "this core is RV32IM + Zicsr: write the loop with scalar loads, stores and arithmetic"


class _CPUAsm(_Asm):
    def emit(self, sl: SourceLine, mnemonic: str, ops: list[tuple[str, int]], mcol: int) -> None:
        if I.BY_MNEMONIC[mnemonic].cls not in SCALAR_CLASSES:
            self.err(sl, "E024", f"'{mnemonic}' is a vector instruction: the CPU has no vector unit", mcol,
                     len(mnemonic), hint=NO_VECTOR_HINT)
            return
        super().emit(sl, mnemonic, ops, mcol)

    def instruction(self, sl: SourceLine, low: str, word: str, ops: list[tuple[str, int]], col: int) -> None:
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
