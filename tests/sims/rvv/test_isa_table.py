"""The RVV instruction table in the shared schema: rows, forms, dispatch ids and the costs the machine reads."""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.isa import ISA, InstrSpec
from kcgym.sims.rvv import isa as I
from kcgym.sims.rvv import machine as M
from kcgym.sims.rvv.accelerator import simulate_images
from kcgym.sims.rvv.assembler import assemble
from kcgym.sims.rvv.config import RVVConfig


def test_rows_are_shared_schema_rows():
    assert isinstance(I.RVV_ISA, ISA)
    assert all(isinstance(s, InstrSpec) for s in I.INSTRUCTIONS)
    assert I.RVV_ISA.n_fields == I.N_FIELDS
    assert I.RVV_ISA.sub_ids == {s.mnemonic: s.sub for s in I.INSTRUCTIONS}  # the simulator's sub-op ids
    assert {s.mnemonic: n for n, s in enumerate(I.INSTRUCTIONS)} == I.OPCODE


@pytest.mark.parametrize("form", sorted(I.FORM_OPERANDS))
def test_form_operands_fill_distinct_fields(form):
    ops = I.FORM_OPERANDS[form]
    fields = [o.field for o in ops if o.kind not in (I.MEM, I.VMEM, I.JMEM, I.LABEL, I.CSR, I.VTYPE, I.MASK, I.V0)]
    assert len(fields) == len(set(fields)), form


def test_the_reference_syntax_comes_from_the_operands():
    assert I.FORMS["VV"] == "vd, vs2, vs1[, v0.t]"
    assert I.FORMS["VSETIVLI"] == "rd, uimm5, eSEW, mLMUL[, ta|tu][, ma|mu]"
    assert I.FORMS["LD"] == "rd, offset(rs1)"


HW = RVVConfig(mul_latency=5, div_cycles=9, load_use_latency=3)


@pytest.mark.parametrize(("line", "mnemonic"), [("mul t1, t0, t0", "mul"), ("div t1, t0, t0", "div"),
                                                 ("lw t1, -4(sp)", "lw"), ("add t1, t0, t0", "add")])
def test_the_machine_uses_the_tables_costs(line, mnemonic):
    """op, then a dependent addi: it issues at the op's issue cycle + its latency (and not before its occupancy)."""
    occ, lat = (I.cost_table(k, HW)[I.OPCODE[mnemonic]] for k in ("occupancy", "latency"))
    p = assemble(f"li t0, 3\n{line}\naddi t2, t1, 1\n", HW)
    st = simulate_images(p, np.zeros((1, 64), np.uint8), HW, 100)
    assert int(st.ctl[0, M.T_END]) == 1 + max(occ, lat) + 1
    assert lat == {"mul": HW.mul_latency, "div": HW.div_cycles, "lw": HW.load_use_latency, "add": 1}[mnemonic]
