"""RVV words back to GNU ``as`` source: the inverse of the assembler, driven by the same table.

Each word prints as its mnemonic and its form's operands (:data:`isa.FORM_OPERANDS`), read
from the fields the table names. Branch and jump targets become labels ``.L<index>``, pseudo
instructions appear as what they expanded to (``li`` as ``lui`` + ``addi``), and a ``.data``
image as ``.byte`` lines, so ``assemble(disassemble(p))`` reproduces ``p.words`` and
``p.data`` exactly (source lines and label names are not kept).
"""

from __future__ import annotations

import numpy as np

from kcgym.isa.spec import Imm, Reg
from kcgym.sims.rvv import isa as I

BYTES_PER_LINE = 16  # of a .byte line of the data section
# opcodes whose F_IMM is an instruction index (branches, jal): their targets get labels
_TARGETED = {n for n, s in enumerate(I.INSTRUCTIONS) if any(o.kind == I.LABEL for o in s.operands)}


def _vtype(imm: int) -> str:
    sew = {c: s for s, c in I.SEW_CODE.items()}[(imm >> 3) & 7]
    lmul = {c: m for m, c in I.LMUL_CODE.items()}[imm & 3]
    return f"e{sew}, m{lmul}, {'ta' if imm >> 6 & 1 else 'tu'}, {'ma' if imm >> 7 & 1 else 'mu'}"


def _operand(o: I.RVOperand, row: np.ndarray) -> str | None:
    """The text of one operand (None: an absent optional mask)."""
    x = I.ABI_NAMES
    kind, v = o.kind, int(row[o.field])
    if isinstance(kind, Reg):
        return x[v] if kind.file == "x" else f"v{v}"
    if isinstance(kind, Imm):
        return str(v)
    rs1, imm, what = x[int(row[I.F_RS1])], int(row[I.F_IMM]), kind.what  # type: ignore[union-attr]
    if what in ("mem", "jmem"):
        return f"{imm}({rs1})"
    if what == "vmem":
        return f"({rs1})"
    if what == "label":
        return f".L{imm}"
    if what == "csr":
        return list(I.CSR_NAMES)[imm]
    if what == "vtype":
        return _vtype(imm)
    if what == "mask":
        return None if int(row[I.F_VM]) else "v0.t"
    return "v0"


def disassemble_word(row: np.ndarray) -> str:
    """One encoded word as ``mnemonic operands``."""
    spec = I.INSTRUCTIONS[int(row[I.F_OP])]
    ops = [t for o in spec.operands if (t := _operand(o, row)) is not None]  # type: ignore[arg-type]
    return f"{spec.mnemonic} {', '.join(ops)}".rstrip()


def disassemble(words: np.ndarray, data: bytes = b"") -> str:
    """The program ``words`` (int32[N, N_FIELDS]) and its ``.data`` image as source ``assemble`` accepts."""
    words = np.asarray(words, np.int32)
    targets = {int(r[I.F_IMM]) for r in words if int(r[I.F_OP]) in _TARGETED}
    out = [".text"]
    for pc, row in enumerate(words):
        if pc in targets:
            out.append(f".L{pc}:")
        out.append("    " + disassemble_word(row))
    if len(words) in targets:
        out.append(f".L{len(words)}:")
    if data:
        out.append(".data")
        out += [".byte " + ", ".join(str(b) for b in data[i : i + BYTES_PER_LINE])
                for i in range(0, len(data), BYTES_PER_LINE)]
    return "\n".join(out) + "\n"
