"""The NPU programming guide (kcgym/sims/npu/guide.md) must stay true to the implementation.

The guide goes into an agent's system prompt, so every claim that can be checked mechanically
is checked here: its sections, its config placeholders, its worked examples (they must
assemble, be correct and take the cycles the text says), the mnemonics it names and its
latency/occupancy table (both against the instruction table).
"""

from __future__ import annotations

import re
from importlib import resources

import pytest

from kcgym.evaluation import Evaluator
from kcgym.sims.npu import ACCELERATOR, NPUConfig
from kcgym.sims.npu.docs import npu_docs
from kcgym.sims.npu.isa import make_isa
from kcgym.tasks import TASKS

SECTION_IDS = [
    "overview",
    "memory-map",
    "registers-and-constants",
    "data-movement-dma",
    "matrix-unit",
    "timing-model",
    "hardware-loops",
    "tiling-a-matmul",
    "worked-example",
    "pitfalls",
    "debugging",
]
MNEMONIC = re.compile(r"\b[A-Z]_[A-Z][A-Z_]*\b")
ASM_BLOCK = re.compile(r"```asm\n(.*?)```", re.S)


def raw_guide() -> str:
    return resources.files("kcgym.sims.npu").joinpath("guide.md").read_text(encoding="utf-8")


def sections(hw: NPUConfig | None = None) -> dict[str, str]:
    return {d.id: d.text for d in npu_docs(hw or NPUConfig())}


def guide_text(hw: NPUConfig | None = None) -> str:
    return "\n".join(text for sid, text in sections(hw).items() if sid != "isa")


def test_sections_in_order_then_the_generated_reference():
    docs = npu_docs(NPUConfig())
    assert [d.id for d in docs] == [*SECTION_IDS, "isa"]
    for d in docs[:-1]:
        assert d.text.startswith(f"## {d.title}\n") and len(d.text.split()) > 80, d.id


def test_placeholders_are_all_substituted_and_text_is_ascii():
    raw = raw_guide()
    assert raw.isascii(), [c for c in raw if not c.isascii()][:10]
    assert "{{" in raw  # the guide does use config fields
    for hw in (NPUConfig(), NPUConfig(v_prefetch_rows=8, BLEN=8, mm_occupancy=16, hbm_latency=50)):
        text = guide_text(hw)
        assert not re.search(r"\{\{\w*\}\}", text), re.findall(r"\{\{\w*\}\}", text)
        assert text.isascii()


def test_guide_length_fits_a_prompt():
    # 5200: the numbered timing rules (NPU-T1..T7) and the generated assembly limits took the guide from
    # ~4,500 to ~4,900 words; the whole reset prompt stays well inside a 32k-token context.
    words = len(guide_text().split())
    assert 2000 <= words <= 5200, words


def _evaluate(src: str):
    task = TASKS["matmul"]
    hw = NPUConfig()
    ev = Evaluator(ACCELERATOR, task, task.config("NPU", 1), hw)
    return ev, ev.evaluate(src, ev.input_sets(0, 2), with_baseline=False)


def test_worked_example_assembles_and_is_correct():
    section = sections()["worked-example"]
    src = ASM_BLOCK.findall(section)[0]
    _, report = _evaluate(src)
    assert report.assembled, report.diagnostics_text
    assert not report.diagnostics, report.diagnostics_text  # no warnings either
    assert report.fault is None, report.fault
    assert report.correct and report.match_rate == 1.0


def test_worked_example_offsets_match_the_layout():
    task = TASKS["matmul"]
    layout = ACCELERATOR.layout(task, task.config("NPU", 1), NPUConfig())
    src = ASM_BLOCK.findall(sections()["worked-example"])[0]
    for name in ("X", "W", "Y"):
        assert re.search(rf"^\.equ {name}_HBM, {layout.region(name).offset}\b", src, re.M), name


def test_every_example_is_correct_and_takes_the_quoted_cycles():
    section = sections()["worked-example"]
    blocks = ASM_BLOCK.findall(section)
    quoted = re.findall(r"(kernel|baseline|version) runs in\s+(\d+)\s+cycles", section)
    assert [k for k, _ in quoted] == ["kernel", "baseline", "version"] and len(blocks) == 2
    ev = None
    for src, (_, cycles) in zip(blocks, [quoted[0], quoted[2]], strict=True):
        ev, report = _evaluate(src)
        assert report.correct, report.diagnostics_text or report.fault
        assert report.cycles == int(cycles)
    assert ev is not None and ev.baseline().cycles == int(quoted[1][1])


def test_every_mnemonic_named_in_the_guide_exists():
    raw = raw_guide()
    isa = make_isa(NPUConfig())
    own_symbols = set(re.findall(r"^\s*\.(?:equ|set)\s+([A-Za-z_][A-Za-z0-9_]*)", raw, re.M))
    allowed = set(isa.symbols(NPUConfig())) | own_symbols
    named = set(MNEMONIC.findall(raw)) - allowed
    unknown = sorted(named - set(isa.by_mnemonic))
    assert not unknown, f"the guide names instructions the ISA does not have: {unknown}"
    assert len(named) > 30  # the regex does find the mnemonics


def test_timing_table_matches_the_instruction_table():
    hw = NPUConfig()
    isa = make_isa(hw)
    text = sections(hw)["timing-model"]
    rows = re.findall(r"^\| ([^|]*[A-Z]_[A-Z][^|]*) \| (\w+) \| ([\d +]+) \| ([\d +]+) \|$", text, re.M)
    seen = set()
    for names, unit, occ, lat in rows:
        for m in set(MNEMONIC.findall(names)) - {"V_PREFETCH_ROWS"}:
            spec = isa.by_mnemonic[m]
            assert unit == spec.unit, m
            assert eval(occ) == spec.cost("occupancy", hw), m  # cells are sums like "100 + 8"
            assert eval(lat) == spec.cost("latency", hw), m
            seen.add(m)
    assert seen == set(isa.by_mnemonic), sorted(set(isa.by_mnemonic) - seen)


def _prefetch_rows_mentions(text: str) -> list[int]:
    return [int(v) for v in re.findall(r"V_PREFETCH_ROWS`? *\(?=\s*(\d+)", text)]


@pytest.mark.parametrize("rows", [8, 16])
def test_docs_follow_the_hardware_config(rows):
    default = npu_docs(NPUConfig())
    assert default == npu_docs(NPUConfig(**NPUConfig().model_dump()))
    assert default == npu_docs(ACCELERATOR.make_hw(None))
    base = _prefetch_rows_mentions(guide_text())
    assert base and set(base) == {4}
    text = guide_text(NPUConfig(v_prefetch_rows=rows))
    assert _prefetch_rows_mentions(text) == [rows] * len(base)
    occupancy = NPUConfig(v_prefetch_rows=rows).dma_cycles(rows * 64)
    assert f"| DMA | {occupancy} | 100 + {occupancy} |" in text
    assert text != guide_text()


def test_timing_model_holds_the_numbered_rules_with_config_numbers():
    from kcgym.sims.guide import timing_rules

    docs = ACCELERATOR.docs(NPUConfig())
    rules = timing_rules(docs)
    assert list(rules) == [f"NPU-T{i}" for i in range(1, len(rules) + 1)]
    timing = next(d for d in docs if d.id == "timing-model").text
    assert all(f"**{r}**" in timing for r in rules)
    text = timing_rules(ACCELERATOR.docs(NPUConfig(hbm_latency=50)))["NPU-T5"]
    assert "s + 2 * occupancy + 50" in text
