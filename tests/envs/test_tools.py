"""Every tool, on the fake accelerator: what the agent reads and what goes into info."""

from __future__ import annotations

import pytest

from kcgym.envs.tools import TOOLS, openai_tools
from kcgym.evaluation import MAX_SOURCE_CHARS
from tests.envs import fake_accelerator as fa
from tests.envs.conftest import call


def test_registry_drives_the_openai_schema():
    tools = openai_tools()
    assert [t["function"]["name"] for t in tools] == list(TOOLS)
    assert set(TOOLS) == {
        "write_kernel",
        "assemble",
        "simulate",
        "view_output",
        "profile",
        "read_docs",
        "submit",
    }
    for t in tools:
        assert t["type"] == "function"
        fn = t["function"]
        assert set(fn) == {"name", "description", "parameters"}
        assert fn["parameters"]["type"] == "object" and fn["parameters"]["additionalProperties"] is False
        assert len(fn["description"]) > 40
    wk = next(t for t in tools if t["function"]["name"] == "write_kernel")
    assert wk["function"]["parameters"]["required"] == ["source"]
    assert openai_tools() is not tools and openai_tools() == tools  # fresh copies


def test_strict_schema_lists_every_property_and_nullable_optionals():
    for t in openai_tools(strict=True):
        p = t["function"]["parameters"]
        assert t["function"]["strict"] is True
        assert sorted(p["required"]) == sorted(p["properties"])
    vo = next(t for t in openai_tools(strict=True) if t["function"]["name"] == "view_output")
    assert vo["function"]["parameters"]["properties"]["rows"]["type"] == ["integer", "null"]


@pytest.mark.parametrize("tool", ["assemble", "simulate", "profile", "submit"])
def test_tools_needing_a_kernel_say_so(env, tool):
    obs, r, term, trunc, info = call(env, tool)
    assert "no kernel has been written yet" in obs and "write_kernel" in obs
    assert info["error"] and not term and r == 0.0


def test_write_kernel(env):
    obs, r, term, trunc, info = call(env, "write_kernel", source=fa.BASELINE_LIKE)
    assert "Saved kernel (4 lines" in obs and info["lines"] == 4 and info["error"] is None
    assert env.unwrapped.kernel == fa.BASELINE_LIKE
    obs, *_ = call(env, "write_kernel", source=fa.FAST)
    assert "replacing the previous version" in obs and env.kernel == fa.FAST


def test_write_kernel_rejects_empty_and_huge(env):
    obs, *_, info = call(env, "write_kernel", source="  \n")
    assert "empty" in info["error"] and env.kernel is None
    obs, *_, info = call(env, "write_kernel", source="NOP\n" * (MAX_SOURCE_CHARS // 4 + 1))
    assert "limit" in info["error"] and env.kernel is None


def test_assemble_ok_with_warnings(env):
    call(env, "write_kernel", source=fa.WARNS)
    obs, *_, info = call(env, "assemble")
    assert obs.startswith("OK: 2 instructions, 1 warning(s).")
    assert "warning[W001]" in obs and info["assembled"] and info["static_instructions"] == 2


def test_assemble_reports_every_error(env):
    call(env, "write_kernel", source=fa.SYNTAX)
    obs, *_, info = call(env, "assemble")
    assert "Assembly FAILED with 2 error(s)" in obs
    assert "kernel.s:1:1: error[E001]" in obs and "did you mean COPY?" in obs
    assert "kernel.s:2:1: error[E002]" in obs
    assert info["assembled"] is False and info["errors"] == 2


def test_simulate_correct(env):
    call(env, "write_kernel", source=fa.FAST)
    obs, r, term, trunc, info = call(env, "simulate")
    assert "Result: CORRECT (match rate 100.00%)" in obs
    assert (
        "Cycles: 100" in obs and "160 cycles -> speedup 1.600x" in obs and "Roofline lower bound: 50" in obs
    )
    assert info["correct"] and info["assembled"] and info["match_rate"] == 1.0
    assert (info["cycles"], info["baseline_cycles"], info["roofline_cycles"]) == (100, 160, 50)
    assert info["speedup"] == pytest.approx(1.6) and "fault" not in info and not info["below_roofline"]
    assert (r, term, trunc) == (0.0, False, False)  # terminal reward mode


def test_simulate_incorrect_points_to_view_output(env):
    call(env, "write_kernel", source=fa.WRONG)
    obs, *_, info = call(env, "simulate")
    assert "Result: INCORRECT (match rate 0.00%" in obs and "view_output" in obs
    assert "Y [4x8]: 0/32 elements match" in obs and "first mismatch at [0, 0]" in obs
    assert "Tolerance:" in obs
    assert info["correct"] is False and "speedup" not in info and info["error"] is None


def test_simulate_partial_reports_nonfinite_line(env):
    call(env, "write_kernel", source=fa.PARTIAL)
    obs, *_, info = call(env, "simulate")
    assert "match rate 96.87%" in obs  # 31/32 rounded down
    assert "First NaN/Inf was produced at line 2: NAN 1" in obs
    assert info["first_nonfinite_line"] == 2 and info["match_rate"] == pytest.approx(31 / 32)


def test_simulate_fault_is_rendered_with_line(env):
    call(env, "write_kernel", source=fa.FAULTY)
    obs, *_, info = call(env, "simulate")
    assert "runtime fault OOB_MEM at line 2" in obs and "OOB" in obs
    assert info["fault"]["name"] == "OOB_MEM" and info["fault"]["line"] == 2 and not info["correct"]


def test_simulate_infinite_loop_is_a_fault_not_a_hang(env):
    call(env, "write_kernel", source=fa.HANGS)
    obs, *_, info = call(env, "simulate")
    assert info["fault"]["name"] == "STEP_BUDGET"


def test_simulate_syntax_error(env):
    call(env, "write_kernel", source=fa.SYNTAX)
    obs, *_, info = call(env, "simulate")
    assert "Assembly FAILED with 2 error(s)" in obs and info["assembled"] is False
    assert info["error_class"] == "syntax"


def test_simulate_flags_below_roofline(env):
    call(env, "write_kernel", source=fa.EXPLOIT)
    obs, *_, info = call(env, "simulate")
    assert "SUSPICIOUS" in obs and "roofline" in obs
    assert info["below_roofline"] and info["visible_score"] == 0.0


def test_view_output_needs_a_simulation(env):
    call(env, "write_kernel", source=fa.FAST)
    obs, *_, info = call(env, "view_output")
    assert "call simulate first" in obs and info["error"]


def test_view_output_shows_bad_rows_first(env):
    call(env, "write_kernel", source=fa.PARTIAL)
    call(env, "simulate")
    obs, *_, info = call(env, "view_output", rows=2)
    assert "31/32 elements match" in obs and "1 of 4 rows have mismatches (rows 1)" in obs
    assert [r["row"] for r in info["rows"]] == [1, 0]
    assert info["rows"][0]["n_nonfinite"] == 1 and info["bad_rows"] == 1


def test_view_output_unknown_output_and_stale_note(env):
    call(env, "write_kernel", source=fa.WRONG)
    call(env, "simulate")
    obs, *_, info = call(env, "view_output", output="Z")
    assert "Unknown output 'Z'" in obs and "Y" in obs
    call(env, "write_kernel", source=fa.FAST)
    obs, *_, info = call(env, "view_output", output="Y")
    assert "before the latest write_kernel" in obs and info["stale"]


def test_view_output_of_unassembled_kernel(env):
    call(env, "write_kernel", source=fa.SYNTAX)
    call(env, "simulate")
    obs, *_, info = call(env, "view_output")
    assert "did not assemble" in obs and info["error"]


def test_profile(env):
    call(env, "write_kernel", source="SLOW 20\nCOPYROW 0\nCOPYROW 1\nCOPYROW 2\nCOPYROW 3\n")
    obs, *_, info = call(env, "profile")
    assert "Dynamic operations by category (5 operations)" in obs and "Unit utilisation" in obs
    assert info["counts"] == {"copy": 4, "other": 1}
    assert info["unit_busy"] == {"COPY": 160, "SCALAR": 20}
    assert info["utilisation"]["COPY"] == pytest.approx(160 / 180)
    assert info["cycles"] == 180 and info["roofline_cycles"] == 50


def test_profile_then_view_output_share_the_run(env):
    call(env, "write_kernel", source=fa.WRONG)
    call(env, "profile")
    obs, *_, info = call(env, "view_output")
    assert info["error"] is None and "0/32 elements match" in obs


def test_read_docs_index_section_query(env):
    obs, *_, info = call(env, "read_docs")
    assert "guide" in obs and "Instruction reference" in obs and info["error"] is None
    obs, *_, info = call(env, "read_docs", section="isa")
    assert "COPYROW r copies one row." in obs
    obs, *_, info = call(env, "read_docs", section="ISA")  # case-insensitive
    assert info["error"] is None
    obs, *_, info = call(env, "read_docs", section="guid")
    assert "Did you mean 'guide'" in obs and info["error"]
    obs, *_, info = call(env, "read_docs", query="copyrow")
    assert "[isa]" in obs and ">" in obs and info["matches"] >= 2
    obs, *_, info = call(env, "read_docs", query="write it")
    assert "[guide]" in obs and "->" in obs  # unicode arrow sanitised
    obs, *_, info = call(env, "read_docs", query="argmax")
    assert obs.startswith("No matches for 'argmax'") and info["matches"] == 0
    obs, *_, info = call(env, "read_docs", query="rows copy")  # all words on one line
    assert info["matches"] >= 1
    obs, *_, info = call(env, "read_docs", section="guide", query="copyrow")
    assert info["matches"] == 0


def test_submit_ends_the_episode(env):
    call(env, "write_kernel", source=fa.FAST)
    obs, r, term, trunc, info = call(env, "submit")
    assert term and not trunc
    assert "Final evaluation on 3 hidden input sets" in obs and "Final score: 2.212" in obs
    assert info["correct"] and info["episode"]["success"] and info["episode"]["submitted"]
    assert r == pytest.approx(1 + 3 * 0.6780719 / 1.6780719)  # sol reward: log(1.6) / log(3.2) of the headroom


def test_tool_output_is_bounded(env):
    from kcgym.sims.base import DocSection

    env._docs = [DocSection(id="big", title="Big", text="line of text\n" * 100_000)]
    obs, *_ = call(env, "read_docs", section="big")
    assert len(obs) < 70_000 and "[truncated" in obs and obs.endswith("left]")


def test_internal_errors_become_observations(env, monkeypatch):
    """A bug in the simulator must not crash a long run: the step reports it and the episode goes on."""

    def broken(*args, **kwargs):
        raise RuntimeError("simulated simulator bug")

    monkeypatch.setattr(env.evaluator, "evaluate", broken)
    call(env, "write_kernel", source="COPY")
    obs, reward, term, trunc, info = call(env, "simulate")
    assert "internal error in simulate: RuntimeError: simulated simulator bug" in obs
    assert info["internal_error"] == "RuntimeError: simulated simulator bug"
    assert reward == 0 and not term and not trunc
    obs, *_ = call(env, "assemble")
    assert "Error" not in obs.split("\n")[0]
