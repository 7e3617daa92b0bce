"""Action parsing: every accepted shape, and a precise error for every kind of garbage."""

from __future__ import annotations

import json
import string

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kcgym.envs.actions import InvalidAction, parse_action
from kcgym.envs.tools import TOOLS
from tests.envs.conftest import call, fake_env

# -- accepted shapes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "action",
    [
        {"name": "write_kernel", "arguments": {"source": "COPY"}},
        {"name": "write_kernel", "arguments": '{"source": "COPY"}'},
        {"name": "write_kernel", "arguments": {"source": "COPY"}, "id": "c1"},
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "write_kernel", "arguments": '{"source": "COPY"}'},
        },
        {"type": "function_call", "name": "write_kernel", "arguments": '{"source": "COPY"}', "call_id": "c1"},
        json.dumps({"name": "write_kernel", "arguments": {"source": "COPY"}, "id": "c1"}),
        json.dumps(
            {"type": "function", "function": {"name": "write_kernel", "arguments": {"source": "COPY"}}}
        ),
    ],
)
def test_accepted_shapes(action):
    c = parse_action(action)
    assert c.name == "write_kernel"
    assert c.arguments == {"source": "COPY"}
    assert c.call_id in (None, "c1")


def test_call_id_is_read_from_every_shape():
    assert parse_action({"name": "submit", "id": "a"}).call_id == "a"
    assert parse_action({"name": "submit", "call_id": "b", "type": "function_call"}).call_id == "b"
    assert parse_action({"id": "c", "function": {"name": "submit"}}).call_id == "c"


@pytest.mark.parametrize("arguments", [None, "", "  ", {}, "{}"])
def test_no_arguments_forms(arguments):
    assert parse_action({"name": "simulate", "arguments": arguments}).arguments == {}


def test_optional_arguments_get_defaults_and_accept_null():
    c = parse_action({"name": "view_output", "arguments": {"rows": None, "output": None}})
    assert c.arguments == {"rows": 8, "output": None}
    assert parse_action({"name": "view_output", "arguments": {"rows": 3.0}}).arguments["rows"] == 3


def test_openai_sdk_object_is_accepted():
    from openai.types.chat import ChatCompletionMessageToolCall

    tc = ChatCompletionMessageToolCall(
        id="call_9", type="function", function={"name": "read_docs", "arguments": '{"query": "copy"}'}
    )
    c = parse_action(tc)
    assert (c.name, c.arguments, c.call_id) == ("read_docs", {"section": None, "query": "copy"}, "call_9")


# -- garbage -------------------------------------------------------------------------------------


def _error(action) -> InvalidAction:
    with pytest.raises(InvalidAction) as ei:
        parse_action(action)
    return ei.value


@pytest.mark.parametrize(
    ("action", "fragment"),
    [
        ("", "empty action"),
        ("   \n", "empty action"),
        ("simulate", "not valid JSON"),
        ('{"name": "simulate"', "not valid JSON"),
        ("[1, 2]", "list of 2"),
        ([{"name": "simulate"}], "exactly one tool call"),
        ("42", "must be a JSON object, got int"),
        (42, "got int"),
        (None, "got NoneType"),
        (3.5, "got float"),
        ({"arguments": {}}, "no 'name'"),
        ({"name": ""}, "non-empty string"),
        ({"name": 7}, "non-empty string"),
        ({"name": "simulate", "args": {}}, "did you mean 'arguments'"),
        ({"name": "simulate", "id": 5}, "'id' must be a string"),
        ({"name": "simulate", "type": "code"}, "type must be 'function'"),
        ({"type": "function", "function": "simulate"}, "'function' must be an object"),
        ({"type": "function", "function": {"name": "simulate", "argz": {}}}, "unexpected key 'argz'"),
        ({"type": "tool", "function": {"name": "simulate"}}, "type must be 'function'"),
        ({"name": "simulate", "arguments": "{bad json"}, "arguments of simulate is not valid JSON"),
        ({"name": "simulate", "arguments": "[1]"}, "must be a JSON object, got array"),
        ({"name": "simulate", "arguments": 3}, "must be a JSON object, got integer"),
        ("[" * 100_000 + "]" * 100_000, "not valid JSON"),
    ],
)
def test_malformed_actions(action, fragment):
    assert fragment in _error(action).message


def test_unknown_tool_suggests_close_and_paper_names():
    e = _error({"name": "simulte"})
    assert "unknown tool 'simulte'" in e.message and "did you mean 'simulate'" in e.message
    assert "write_kernel(source)" in e.message  # lists what exists
    assert "did you mean 'write_kernel'" in _error({"name": "write_code"}).message
    assert "did you mean 'simulate'" in _error({"name": "run_evaluation"}).message
    assert "did you mean 'read_docs'" in _error({"name": "grep_docs"}).message


def test_argument_errors_are_all_reported_with_the_call_id():
    e = _error({"name": "view_output", "arguments": {"rows": "8", "outptu": "Y", "extra": 1}, "id": "x"})
    assert e.call_id == "x" and e.tool == "view_output"
    assert "'rows' must be an integer, got string" in e.message
    assert "unexpected argument 'outptu' (did you mean 'output'?)" in e.message
    assert "unexpected argument 'extra'" in e.message


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({}, "missing required argument 'source'"),
        ({"source": None}, "missing required argument 'source'"),
        ({"source": 5}, "'source' must be a string, got integer"),
        ({"source": ["COPY"]}, "got array"),
        ({"source": "COPY", "lang": "asm"}, "unexpected argument 'lang'"),
    ],
)
def test_write_kernel_argument_errors(arguments, fragment):
    assert fragment in _error({"name": "write_kernel", "arguments": arguments}).message


@pytest.mark.parametrize(
    ("rows", "fragment"),
    [(0, "must be in 1..64, got 0"), (65, "got 65"), (True, "got boolean"), (2.5, "got number")],
)
def test_integer_argument_checks(rows, fragment):
    assert fragment in _error({"name": "view_output", "arguments": {"rows": rows}}).message


def test_no_argument_tool_rejects_arguments():
    assert "it takes no arguments" in _error({"name": "simulate", "arguments": {"fast": True}}).message


# -- in the env: garbage is an ordinary, wasted turn -----------------------------------------------


def test_garbage_is_an_ordinary_step():
    env = fake_env(max_turns=50)
    env.reset(seed=1)
    env.action_space.seed(0)
    for i in range(1, 6):
        obs, r, term, trunc, info = env.step(env.action_space.sample())
        assert obs in env.observation_space
        assert obs.startswith("Error: invalid tool call:")
        assert (r, term, trunc) == (0.0, False, False)
        assert info["turn"] == i and info["error"] and info["tool"] is None


def test_invalid_call_info_echoes_id_and_tool():
    env = fake_env()
    env.reset(seed=0)
    obs, r, term, trunc, info = env.step({"name": "view_output", "arguments": {"rows": -1}, "id": "abc"})
    assert info["tool"] == "view_output" and info["tool_call_id"] == "abc"
    assert "must be in 1..64" in info["error"] and "must be in 1..64" in obs
    assert info["turns_left"] == env.max_turns - 1


def test_invalid_call_counts_as_invalid_in_tool_counts():
    env = fake_env(max_turns=2)
    env.reset(seed=0)
    env.step("nonsense")
    *_, info = call(env, "simulate")  # no kernel: a valid call that fails
    assert info["episode"]["tool_counts"] == {"invalid": 1, "simulate": 1}


_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3),
    max_leaves=6,
)
_NAMES = st.sampled_from([*TOOLS, "x", ""]) | st.text(max_size=6)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(),
        st.text(alphabet=string.printable),
        st.binary(),
        _JSONISH,
        st.fixed_dictionaries({"name": _NAMES}, optional={"arguments": _JSONISH, "id": _JSONISH}),
        st.fixed_dictionaries(
            {"function": st.fixed_dictionaries({"name": _NAMES}, optional={"arguments": _JSONISH})}
        ),
    )
)
def test_parse_never_raises_anything_but_invalid_action(action):
    try:
        c = parse_action(action)
    except InvalidAction as e:
        assert e.message
    else:
        assert c.name in TOOLS


def test_sampled_actions_are_long_and_still_handled():
    env = fake_env(max_turns=5)
    env.reset(seed=0)
    env.action_space.seed(3)
    a = env.action_space.sample()
    assert isinstance(a, str) and len(a) > 1000
    obs, *_ = env.step(a)
    assert len(obs) < 2000  # the error quotes an excerpt, not the whole action
    assert np.all([c in string.printable for c in obs])
