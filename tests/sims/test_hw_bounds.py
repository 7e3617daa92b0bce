"""Every hw field of every machine is bounded: a hostile override is a clear error, never an allocation.

Runs over the registry, so a machine added later (its ``hw_model``) is covered without editing this file.
"""

from __future__ import annotations

import time

import gymnasium as gym
import pytest
from pydantic import ValidationError

from kcgym.eval.sweep import invalid_reason
from kcgym.limits import MAX_HW_CYCLES, MAX_MACHINE_STATE_BYTES
from kcgym.registry import ACCELERATORS, task_for
from kcgym.sims.hwconfig import HWConfig, bound_of, cycles_bound, fields, fields_table, hw_field, memory_bound
from kcgym.sims.rvv.config import DTCM_BASE, EXT_BASE, RVVConfig

CELLS = [(acc, name) for acc in ACCELERATORS for name in ACCELERATORS[acc].hw_model.model_fields]
HOSTILE = [10**400, 1 << 62, -1, -(1 << 40), float("nan"), float("inf"), 1.5, "abc", None, True, [64], "9" * 5000]


def test_every_field_of_every_machine_has_a_declared_bound_that_holds_its_default():
    for acc_name in ACCELERATORS:
        model = ACCELERATORS[acc_name].hw_model
        assert issubclass(model, HWConfig), acc_name
        for name, info in model.model_fields.items():
            bound = bound_of(model, name)
            assert bound is not None, f"{acc_name} hw field {name} was declared without a bound"
            assert bound.lo <= info.default <= bound.hi and bound.why, (acc_name, name)
        assert 0 < model().state_bytes() <= MAX_MACHINE_STATE_BYTES, acc_name


@pytest.mark.parametrize(("acc_name", "name"), CELLS)
def test_hostile_values_are_clear_errors_naming_the_field(acc_name, name):
    acc = ACCELERATORS[acc_name]
    lo, hi, why = bound_of(acc.hw_model, name)
    for value in [*HOSTILE, hi + 1, lo - 1]:
        with pytest.raises(ValueError) as e:
            acc.make_hw({name: value})
        text = str(e.value)
        assert text.startswith(f"invalid {acc_name} hw config: ") and name in text, (value, text)
        assert "Traceback" not in text and "pydantic" not in text and len(text) < 600, text
        if isinstance(value, int) and not isinstance(value, bool) and value > hi:
            assert f"{name} must be at most {hi:,} ({why})" in text
        if isinstance(value, int) and not isinstance(value, bool) and value < lo:
            assert f"{name} must be at least {lo}" in text


@pytest.mark.parametrize("acc_name", list(ACCELERATORS))
def test_the_pydantic_error_itself_names_the_field_the_bound_and_why(acc_name):
    model = ACCELERATORS[acc_name].hw_model
    name = next(iter(model.model_fields))
    lo, hi, why = bound_of(model, name)
    with pytest.raises(ValidationError) as e:
        model(**{name: hi * 1024})
    (err,) = e.value.errors()
    assert err["loc"] == (name,) and f"must be at most {hi:,} ({why})" in err["msg"]


def test_fields_each_within_bounds_can_still_exceed_the_state_budget():
    npu = ACCELERATORS["NPU"]
    budget = (r"simulated machine state is 264\.\d MiB \(MSRAM \(msram_tiles x MLEN x MLEN\) 256\.\d MiB, "
              r"VSRAM \(vsram_rows x VLEN\) 8\.\d MiB\); at most 64 MiB")
    with pytest.raises(ValueError, match=budget):
        npu.make_hw({"MLEN": 2048, "VLEN": 2048})
    with pytest.raises(ValueError, match=r"at most 64 MiB \(kcgym.limits.MAX_MACHINE_STATE_BYTES\)"):
        ACCELERATORS["RVV"].make_hw({"dtcm_bytes": MAX_MACHINE_STATE_BYTES, "itcm_bytes": 1024})
    npu.make_hw({"MLEN": 256, "VLEN": 256})  # a large but sane machine stays valid


def test_the_rvv_memories_stay_inside_their_address_windows():
    assert bound_of(RVVConfig, "dtcm_bytes").hi <= EXT_BASE - DTCM_BASE  # the budget is below the address map
    assert bound_of(RVVConfig, "itcm_bytes").hi == DTCM_BASE  # the ITCM ends where the DTCM begins
    with pytest.raises(ValueError, match="itcm_bytes must be at most 65,536 \\(the ITCM at 0x0 ends where the DTCM"):
        ACCELERATORS["RVV"].make_hw({"itcm_bytes": 1 << 17})


def test_the_rendered_table_shows_every_bound():
    for acc_name in ACCELERATORS:
        model = ACCELERATORS[acc_name].hw_model
        for row in fields(model):
            lo, hi, _ = bound_of(model, row["name"])
            assert row["constraints"].startswith(f"{lo:,}..{hi:,}"), (acc_name, row)


def test_a_sweep_records_a_too_large_point_as_invalid_with_the_reason():
    npu = ACCELERATORS["NPU"]
    task = task_for("NPU", "matmul")
    reason = invalid_reason(npu, task, task.config("NPU", 1), (("MLEN", 1 << 20), ("VLEN", 1 << 20)))
    assert reason is not None and reason.startswith("MLEN must be at most 4,096") and "VLEN must be at most" in reason


def test_gym_make_with_a_huge_machine_fails_at_once():
    start = time.perf_counter()
    with pytest.raises(ValueError, match="MLEN must be at most 4,096"):
        gym.make("KernelCraft-NPU-matmul", hw={"MLEN": 1 << 20, "VLEN": 1 << 20})
    with pytest.raises(ValueError, match="dtcm_bytes must be at most 67,108,864"):
        gym.make("KernelCraft-RVV-matmul", hw={"dtcm_bytes": 0x1FFF0000})
    assert time.perf_counter() - start < 5


class _Toy(HWConfig):
    """A machine config as a new machine would declare one (the mechanism is the base class's)."""

    words: int = hw_field(16, "a memory, in words", bound=memory_bound(4, what="word"))
    latency: int = hw_field(3, "a latency", bound=cycles_bound(0))
    plain: int = 5  # declared without hw_field: still bounded (DEFAULT_BOUND)
    mode: str = "gshare"  # not an integer: its type is its bound

    def state_parts(self) -> dict[str, int]:
        return {"memory (words)": 4 * self.words}


def test_a_new_config_gets_bounds_and_the_budget_from_the_base_class():
    assert _Toy().state_bytes() == 64 and _Toy(latency=0, mode="bimodal").latency == 0
    for bad, says in [({"latency": MAX_HW_CYCLES + 1}, "latency must be at most 4,096"),
                      ({"plain": -1}, "plain must be at least 0"),
                      ({"plain": MAX_MACHINE_STATE_BYTES + 1}, "plain must be at most"),
                      ({"words": MAX_MACHINE_STATE_BYTES // 4 + 1}, "words must be at most 16,777,216"),
                      ({"words": True}, "words takes an integer, got True")]:
        with pytest.raises(ValidationError, match=says):
            _Toy(**bad)
    assert bound_of(_Toy, "plain") is None and "0..4,096" in fields_table(_Toy)
    with pytest.raises(ValueError, match="outside its bound"):
        hw_field(0, "a latency that cannot be zero", bound=cycles_bound())
