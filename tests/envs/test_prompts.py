"""The reset prompt carries what an agent needs (paper App. H structure)."""

from __future__ import annotations

from tests.envs.conftest import fake_env


def test_prompt_sections():
    env = fake_env(max_turns=7)
    obs, _ = env.reset(seed=0)
    for fragment in [
        "You are an expert assembly programmer for custom AI accelerators",
        "Phase 1 - correctness",
        "Phase 2 - performance",
        "write_kernel(source):",
        "view_output(rows?, output?)",
        "You have 7 tool calls",
        "evaluated as if you had submitted",
        "copy engine: 100 cycles per COPY",  # hardware summary
        "- X (input): MEM[0..31], shape [4x8]",  # memory layout
        "## Task: Copy (`copy`, level 1, Test)",
        "Formula: Y = X",
        "Configuration: C1 (R=4, C=8)",
        "- Y (output): shape [4x8]",
        "- one = 1.0",  # constants
        "|actual - expected| <= 0.012 + 0.01 * |expected|",
        "[isa] Instruction reference",  # docs included by default
        "COPYROW r copies one row.",
        "a test task (x and -- exercise sanitising)",
    ]:
        assert fragment in obs, fragment


def test_docs_can_be_left_to_read_docs():
    obs, _ = fake_env(docs_in_prompt=False).reset(seed=0)
    assert "COPYROW r copies one row." not in obs and "call read_docs()" in obs


def test_hw_overrides_reach_the_prompt():
    obs, _ = fake_env(hw={"copy_cycles": 77}).reset(seed=0)
    assert "77 cycles per COPY" in obs
