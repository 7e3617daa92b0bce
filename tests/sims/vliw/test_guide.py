"""The VLIW programming guide: complete, filled in from the config, and its example runs."""

from __future__ import annotations

import re

from kcgym.evaluation import Evaluator
from kcgym.sims.vliw import ACCELERATOR
from kcgym.tasks import TASKS

HW = ACCELERATOR.make_hw()


def test_sections_are_filled_from_the_config_and_cover_the_essentials():
    docs = ACCELERATOR.docs(HW)
    ids = [d.id for d in docs]
    for needed in ("bundles-and-slot-rules", "memory", "timing", "numerics", "matrix-products", "isa"):
        assert needed in ids
    text = "\n".join(d.text for d in docs)
    assert "{{" not in text
    assert f"| VLD, VLDB | {HW.load_latency} |" in text
    for mnemonic in ("VMACL", "VRADD", "DMAI", "LOOPI", "VEXP2C", "VINVC"):
        assert f"### {mnemonic}" in text
    assert "E020" in text and "E021" in text


def test_guide_latencies_follow_an_overridden_config():
    hw = ACCELERATOR.make_hw({"load_latency": 9})
    timing = next(d for d in ACCELERATOR.docs(hw) if d.id == "timing").text
    assert "| VLD, VLDB | 9 |" in timing


def test_worked_example_kernels_are_correct_on_relu_c1():
    example = next(d for d in ACCELERATOR.docs(HW) if d.id.startswith("worked-example")).text
    naive = re.findall(r"```\n(.*?)```", example, re.S)[0]
    task = TASKS["relu"]
    ev = Evaluator(ACCELERATOR, task, task.config("VLIW", 1), HW)
    rep = ev.evaluate(naive, ev.input_sets(3, 1), with_baseline=False)
    assert rep.correct, rep.fault or rep.diagnostics_text
    block = re.findall(r"```\n(.*?)```", example, re.S)[1]
    assert ACCELERATOR.assemble(block, HW).length == 16


def test_matrix_unit_example_is_a_correct_matmul_c1_kernel():
    section = next(d for d in ACCELERATOR.docs(HW) if d.id == "matrix-products").text
    (kernel,) = re.findall(r"```\n(.*?)```", section, re.S)
    assert "VMMUL" in kernel and "DMAIT" in kernel and "DMAOT" in kernel
    task = TASKS["matmul"]
    ev = Evaluator(ACCELERATOR, task, task.config("VLIW", 1), HW)
    rep = ev.evaluate(kernel, ev.input_sets(3, 1), with_baseline=False)
    assert rep.correct, rep.fault or rep.diagnostics_text
    reference = "\n".join(d.text for d in ACCELERATOR.docs(HW))
    for mnemonic in ("VMMUL", "DMAIT", "DMAOT"):
        assert f"### {mnemonic}" in reference
    assert f"MACs / {HW.peak_macs_per_cycle}" in reference and "E115" in reference


def test_timing_section_holds_the_numbered_rules_with_config_numbers():
    from kcgym.sims.guide import timing_rules

    docs = ACCELERATOR.docs(HW)
    timing = next(d for d in docs if d.id == "timing").text
    rules = timing_rules(docs)
    assert list(rules) == [f"VLIW-T{i}" for i in range(1, len(rules) + 1)]
    assert all(f"**{r}**" in timing for r in rules)  # `kcgym docs VLIW --section timing` shows them all
    hw = ACCELERATOR.make_hw({"dma_latency": 77})
    assert "done = start + 77 + ceil(bytes" in timing_rules(ACCELERATOR.docs(hw))["VLIW-T5"]
