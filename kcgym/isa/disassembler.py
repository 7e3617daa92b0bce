"""Words back to assembly text. ``assemble(disassemble(p))`` reproduces ``p.words``."""

from __future__ import annotations

import numpy as np

from kcgym.isa.spec import ISA, Imm, Reg


def disassemble(isa: ISA, words: np.ndarray) -> str:
    """One line per word; a VLIW bundle's non-NOP operations are joined with ``||`` (a NOP-only bundle: NOP)."""
    if isa.bundle_slots is not None:
        F, nop = isa.n_fields, isa.opcodes[isa.nop_mnemonic]
        out = []
        for row in np.asarray(words, dtype=np.int32):
            ops = [slot for slot in row.reshape(-1, F) if int(slot[0]) != nop]
            out.append(" || ".join(_lines(isa, np.array(ops)).splitlines()) if ops else isa.nop_mnemonic)
        return "\n".join(out) + ("\n" if out else "")
    return _lines(isa, words)


def _lines(isa: ISA, words: np.ndarray) -> str:
    by_opcode = list(isa.instructions)
    lines = []
    for row in np.asarray(words, dtype=np.int32):
        spec = by_opcode[int(row[0])]
        ops = []
        for i, op in enumerate(spec.operands):
            v = int(row[3 + i])
            if isinstance(op.kind, Reg):
                ops.append(f"{isa.files[op.kind.file].prefix}{v}")
            elif isinstance(op.kind, Imm) and op.kind.is_float:
                f = float(np.array(v, dtype=np.int32).view(np.float32))
                ops.append(repr(f))
            else:
                ops.append(str(v))
        lines.append(f"{spec.mnemonic} {', '.join(ops)}".rstrip())
    return "\n".join(lines) + ("\n" if lines else "")
