"""The CPU guide and reference: filled from the config, numbered timing rules, the ISA the assembler accepts,
a worked example that runs, and the README's hw table equal to the config's."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from kcgym.sims.cpu import ACCELERATOR
from kcgym.sims.cpu import assembler as A
from kcgym.sims.cpu.accelerator import simulate_images
from kcgym.sims.cpu.config import TENSOR_BASE, CPUConfig
from kcgym.sims.cpu.docs import scalar_pseudos
from kcgym.sims.guide import timing_rules
from kcgym.sims.hwconfig import fields_table
from kcgym.sims.rvv import isa as I

HW = ACCELERATOR.make_hw()
ROOT = Path(__file__).resolve().parents[3]


def section(hw: CPUConfig, sid: str) -> str:
    return next(d for d in ACCELERATOR.docs(hw) if d.id == sid).text


def test_timing_rules_are_numbered_in_order_and_filled_from_the_config():
    docs = ACCELERATOR.docs(HW)
    assert not re.search(r"\{\{\w+\}\}", "".join(d.text for d in docs))
    rules = timing_rules(docs)
    assert list(rules) == [f"CPU-T{i}" for i in range(1, len(rules) + 1)]
    other = ACCELERATOR.make_hw({"mem_latency": 77, "rob_entries": 96, "predictor": 0})
    changed = timing_rules(ACCELERATOR.docs(other))
    assert "adds 77 cycles" in changed["CPU-T2"] and "adds 77 cycles" not in rules["CPU-T2"]
    assert "C(i-96)" in changed["CPU-T3"] and "bimodal" in changed["CPU-T8"]


def test_the_reference_lists_exactly_what_the_assembler_accepts():
    ref = section(HW, "isa")
    listed = set(re.findall(r"^\| `([a-z0-9.]+)` \| `", ref, re.M))
    scalar = {s.mnemonic for s in I.INSTRUCTIONS if s.cls in A.SCALAR_CLASSES}
    assert scalar <= listed
    assert not any(m.startswith("v") for m in listed)
    for name in A.CSRS:
        assert f"| `{name}` |" in ref
        A.assemble(f"csrr a0, {name}", HW)
    operands = {"rd": "a0", "rs": "a1", "rt": "a2", "label": "1f", "imm": "5", "symbol": "1f", "csr": "mscratch",
                "uimm5": "3"}
    for p in scalar_pseudos():
        syntax = re.search(rf"^\| `{re.escape(p)}` \| `([^`]*)` \|", ref, re.M)
        assert syntax, p
        args = ", ".join(operands[o.strip()] for o in syntax.group(1).split(",") if o.strip())
        A.assemble(f"{p} {args}\n1: nop", HW)  # every listed pseudo-instruction assembles as written


def test_the_worked_example_computes_a_dot_product():
    text = section(HW, "worked-example")
    body = re.search(r"```asm\n(.*?)```", text, re.S).group(1)
    n = 10
    a, b = np.arange(1, n + 1, dtype=np.int32), np.arange(n, 0, -1, dtype=np.int32) * 3
    image = np.zeros(256, np.uint8)
    image[:40], image[64:104] = a.view(np.uint8), b.view(np.uint8)
    setup = f"li a0, {TENSOR_BASE}\nli a1, {TENSOR_BASE + 64}\nli a2, {n}\nli a3, {TENSOR_BASE + 128}\n"
    p = A.assemble(setup + body, HW)
    st = simulate_images(p, image[None], HW, 10_000)
    mem = np.asarray(st.mem[0])
    assert int(mem[HW.ram_bytes + 128 : HW.ram_bytes + 132].view(np.int32)[0]) == int(np.dot(a, b))


def test_the_readme_carries_the_config_table():
    assert fields_table(CPUConfig) in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_hardware_summary_follows_the_config():
    text = ACCELERATOR.hardware_summary(ACCELERATOR.make_hw({"rob_entries": 48, "predictor": 0}))
    assert "48-entry ROB" in text and "bimodal" in text
