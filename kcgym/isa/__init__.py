"""The shared ISA framework: one instruction table per accelerator generates the assembler,
encoder, disassembler, simulator dispatch ids and the Markdown instruction reference."""

from kcgym.isa.assembler import assemble
from kcgym.isa.diagnostics import AssemblyError, Diagnostic
from kcgym.isa.disassembler import disassemble
from kcgym.isa.program import Program
from kcgym.isa.spec import ISA, Imm, InstrSpec, Operand, Reg

__all__ = ["ISA", "AssemblyError", "Diagnostic", "Imm", "InstrSpec", "Operand", "Program", "Reg",
           "assemble", "disassemble"]
