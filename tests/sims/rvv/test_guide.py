"""The RVV guide and reference: filled from the config, numbered timing rules, reference wording."""

from __future__ import annotations

import re

from kcgym.sims.guide import timing_rules
from kcgym.sims.rvv import ACCELERATOR

HW = ACCELERATOR.make_hw()


def test_timing_rules_are_numbered_in_order_and_filled_from_the_config():
    docs = ACCELERATOR.docs(HW)
    timing = next(d for d in docs if d.id == "timing-model").text
    assert not re.search(r"\{\{\w+\}\}", timing)
    rules = timing_rules(docs)
    assert list(rules) == [f"RVV-T{i}" for i in range(1, len(rules) + 1)]
    slow = ACCELERATOR.make_hw({"ext_latency": 33, "ext_bytes_per_cycle": 8})
    text = timing_rules(ACCELERATOR.docs(slow))["RVV-T7"]
    assert "ceil(bytes / 8)" in text and "ceil(bytes / 8)" not in rules["RVV-T7"]


def test_extension_instructions_name_their_source_width():
    ref = next(d for d in ACCELERATOR.docs(HW) if d.id == "isa").text
    for mnemonic, factor in (("vsext.vf2", 2), ("vsext.vf4", 4), ("vzext.vf2", 2), ("vzext.vf4", 4)):
        (row,) = [line for line in ref.splitlines() if line.startswith(f"| `{mnemonic}`")]
        assert f"(SEW/{factor})" in row
