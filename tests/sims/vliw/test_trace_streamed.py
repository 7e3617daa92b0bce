"""The VLIW trace path streamed (``trace._streamed``): a long trace's plan made, sent and run a few parts at a time,
its first parts running while the rest are scheduled, with results bit for bit the interpreter's.

Streaming is forced on small programs here (every trace streams, each part sent on its own), on the rolled-loop
cases and generated loops of ``test_trace_rolled`` (the whole machine state; segments expanded into levelled
groups and left rolled) and on kernels (results), and a warm run of a streamed trace gives the same again.
"""

from __future__ import annotations

import pytest

from kcgym.evaluation import Evaluator
from kcgym.sims.vliw import rolled, trace
from kcgym.sims.vliw.accelerator import ACCELERATOR
from kcgym.sims.vliw.config import VLIWConfig
from kcgym.tasks import TASKS
from tests.sims.trace_contract import assert_same_results, recorded
from tests.sims.vliw.test_trace_rolled import CASES, _compare, generated_loop

HW = VLIWConfig()
MAX_STEPS = 50_000_000


@pytest.fixture
def streamed(monkeypatch):
    """Every trace streamed, a part a send, loops of any program rolled; ``sends``: the chunks of each send."""
    monkeypatch.setenv(trace.SIM_ENV, "trace")
    monkeypatch.setattr(trace, "ROLL_ABOVE", 0)
    monkeypatch.setattr(trace, "STREAM_MIN_OPS", 0)
    monkeypatch.setattr(trace, "STREAM_SEND_GROUPS", 1)
    sends = recorded(monkeypatch, trace._Feed, "__call__", lambda feed, chunks: len(chunks))
    trace._TRACES.clear()
    yield sends
    trace._TRACES.clear()


@pytest.fixture(params=["levelled", "rolled"])
def data_path(request, monkeypatch):
    """Rolled segments expanded into levelled groups, or unrolled on the device (as ``test_trace_rolled``)."""
    monkeypatch.setattr(rolled, "EXPAND_MIN_LANES", 1 if request.param == "levelled" else rolled.EXPAND_MAX_OPS + 1)
    if request.param == "rolled":
        monkeypatch.setattr(rolled, "EXPAND_BELOW", 0)
    return request.param


@pytest.mark.parametrize("case", list(CASES))
def test_rolled_loops_streamed_whole_state(streamed, data_path, case):
    tr = _compare(CASES[case][0])
    assert streamed, "the trace should have been streamed"
    if len(tr.rolls) >= 2:
        assert len(streamed) >= 3  # (a part before, between and after its segments: a send each)


@pytest.mark.parametrize("seed", range(8))
def test_generated_loops_streamed_whole_state(streamed, data_path, seed):
    _compare(generated_loop(seed), max_steps=700 if seed % 4 == 0 else 100_000)


@pytest.mark.parametrize("name,index", [("matmul", 1), ("softmax", 1), ("conv2d", 2), ("batch_matmul", 2),
                                        ("layernorm", 2), ("flash_attention", 2)])
def test_kernels_streamed(monkeypatch, streamed, name, index):
    task = TASKS[name]
    cfg = task.config("VLIW", index)
    program = ACCELERATOR.assemble(ACCELERATOR.compile(task, cfg, HW), HW)
    inputs = Evaluator(ACCELERATOR, task, cfg, HW).input_sets(0, 2)
    new = ACCELERATOR.run(program, task, cfg, HW, inputs, MAX_STEPS)
    assert streamed
    monkeypatch.setenv(trace.SIM_ENV, "oracle")
    old = ACCELERATOR.run(program, task, cfg, HW, inputs, MAX_STEPS)
    monkeypatch.setenv(trace.SIM_ENV, "trace")
    assert old[0].fault is None
    assert_same_results(new, old)
    sends = len(streamed)
    assert_same_results(ACCELERATOR.run(program, task, cfg, HW, inputs, MAX_STEPS), old)  # warm: the cached chunks
    assert len(streamed) == sends


def test_streamed_plan_is_the_plan(streamed):
    """A streamed trace's cached plan has the parts ``plan`` makes (so warm runs and the first non-finite
    line's lookup are those of a trace planned at once)."""
    tr = _compare(CASES["banks"][0])
    ((_, pl, chunks),) = trace._TRACES.values()
    assert len(streamed) >= 2 and sum(streamed) == len(chunks)
    assert len(pl.parts) <= len(streamed) <= len(pl.parts) + 1  # (a part a send, and the held groups' send)
    assert pl.segs and len(pl.segs) == len(tr.rolls)
