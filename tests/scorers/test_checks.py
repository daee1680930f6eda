"""The 0/1 checks: Mastra's own checks tests (reference §5.4) under both semantics.

Mastra's thrown call (`state: output-error`) is status `error` here; its requested-but-not-
finished call (`state: call`) is `paused`. Mastra's `excludes`, `equals`, `matches` and
`similarity` checks are not part of tracescore's contract and are not covered.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from scorers._build import agent, call, calls, run, score
from tracescore.model import Score, Step

GW = "get_weather"


def _check(actual: tuple[Step, ...], output: str | None = "done", **config: Any) -> Score:
    return score(config, run(*actual, output=output))


CASES = [
    # called_tool
    pytest.param(calls(GW), {"type": "called_tool", "tool": GW}, 1, 1, id="called: present"),
    pytest.param(calls("search"), {"type": "called_tool", "tool": GW}, 0, 0, id="called: absent"),
    pytest.param(
        calls(GW, GW),
        {"type": "called_tool", "tool": GW, "times": 2},
        1,
        1,
        id="called twice, two required",
    ),
    pytest.param(
        calls(GW, GW),
        {"type": "called_tool", "tool": GW, "times": 3},
        0,
        0,
        id="called twice, three required",
    ),
    pytest.param(
        (call("save", status="error"),),
        {"type": "called_tool", "tool": "save"},
        1,
        0,
        id="called: a thrown call is only an attempt",
    ),
    pytest.param(
        (call("a", status="paused"),),
        {"type": "called_tool", "tool": "a"},
        1,
        0,
        id="called: a requested call that never ran is only an attempt",
    ),
    # did_not_call
    pytest.param(calls("search"), {"type": "did_not_call", "tool": GW}, 1, 1, id="not called"),
    pytest.param(calls(GW), {"type": "did_not_call", "tool": GW}, 0, 0, id="forbidden called"),
    pytest.param(
        (call(GW, status="error"),),
        {"type": "did_not_call", "tool": GW},
        0,
        0,
        id="a forbidden call that threw was still made",
    ),
    # tool_order
    pytest.param(
        calls("search", "summarize"),
        {"type": "tool_order", "tools": ["search", "summarize"]},
        1,
        1,
        id="order: exact",
    ),
    pytest.param(
        calls("search", "validate", "summarize"),
        {"type": "tool_order", "tools": ["search", "summarize"]},
        1,
        1,
        id="order: another call between",
    ),
    pytest.param(
        calls("summarize", "search"),
        {"type": "tool_order", "tools": ["search", "summarize"]},
        0,
        0,
        id="order: reversed",
    ),
    pytest.param(
        calls("search"),
        {"type": "tool_order", "tools": ["search", "summarize"]},
        0,
        0,
        id="order: the last one missing",
    ),
    pytest.param(
        (call("search"), call("save", status="error")),
        {"type": "tool_order", "tools": ["search", "save"]},
        1,
        0,
        id="order: the last call threw",
    ),
    pytest.param(
        calls("b", "a", "b"),
        {"type": "tool_order", "tools": ["a", "b"]},
        1,
        1,
        id="order: a subsequence after an early b",
    ),
    # max_tool_calls
    pytest.param(calls("a", "b"), {"type": "max_tool_calls", "max": 3}, 1, 1, id="max: under"),
    pytest.param(calls("a", "b"), {"type": "max_tool_calls", "max": 2}, 1, 1, id="max: equal"),
    pytest.param(calls("a", "b"), {"type": "max_tool_calls", "max": 1}, 0, 0, id="max: over"),
    pytest.param(
        (call("a"), call("b", status="error")),
        {"type": "max_tool_calls", "max": 1},
        0,
        0,
        id="max: a thrown call counts",
    ),
    pytest.param((), {"type": "max_tool_calls", "max": 0}, 1, 1, id="max zero, no calls"),
    # used_no_tools
    pytest.param((), {"type": "used_no_tools"}, 1, 1, id="no tools: none"),
    pytest.param(calls("a"), {"type": "used_no_tools"}, 0, 0, id="no tools: one call"),
    pytest.param(
        (call("a", status="error"),),
        {"type": "used_no_tools"},
        0,
        0,
        id="no tools: a thrown call is tool use",
    ),
    # no_tool_errors
    pytest.param(calls("a"), {"type": "no_tool_errors"}, 1, 1, id="errors: a clean call"),
    pytest.param((), {"type": "no_tool_errors"}, 1, 1, id="errors: no calls at all"),
    pytest.param(
        (call("a", status="error"),), {"type": "no_tool_errors"}, 0, 0, id="errors: thrown"
    ),
    pytest.param(
        (call("a"), call("b", status="error")),
        {"type": "no_tool_errors"},
        0,
        0,
        id="errors: one of two thrown",
    ),
    pytest.param(
        (call("a", status="paused"),),
        {"type": "no_tool_errors"},
        0,
        1,
        id="errors: a paused call is an error only to Mastra (its state call)",
    ),
    pytest.param(
        (call("a", result={"error": "Network timeout"}),),
        {"type": "no_tool_errors"},
        0,
        1,
        id="errors: a clean call whose result has an error field is an error only to Mastra",
    ),
]


@pytest.mark.parametrize(("actual", "config", "mastra", "default"), CASES)
def test_value(actual: tuple[Step, ...], config: dict[str, Any], mastra: int, default: int) -> None:
    assert _check(actual, compat="mastra", **config).value == mastra
    assert _check(actual, **config).value == default


@pytest.mark.parametrize(
    ("text", "output", "ignore_case", "value"),
    [
        pytest.param("sunny", "It is Sunny today", True, 1.0, id="case ignored by default"),
        pytest.param("rainy", "It is Sunny today", True, 0.0, id="absent"),
        pytest.param("Sunny", "it is sunny", False, 0.0, id="case kept when asked"),
        pytest.param("STRASSE", "die Straße", True, 1.0, id="casefold folds ß"),
    ],
)
def test_output_includes(text: str, output: str, ignore_case: bool, value: float) -> None:
    config = {"type": "output_includes", "text": text, "ignore_case": ignore_case}
    assert _check((), output=output, **config).value == value


def test_output_includes_without_a_recorded_output() -> None:
    default = _check((), output=None, type="output_includes", text="x")
    assert default.value is None
    assert default.error is None
    assert default.explanation == "the run's final output was not recorded"
    assert _check((), output=None, type="output_includes", text="x", compat="mastra").value == 0
    # Mastra lower-cases; it does not fold ß into ss.
    assert (
        _check((), output="Straße", type="output_includes", text="STRASSE", compat="mastra").value
        == 0
    )


def test_details_mirror_mastras_preprocess_results() -> None:
    d = _check(calls(GW, GW), type="called_tool", tool=GW, times=3).details
    assert (d["actual_count"], d["expected_times"]) == (2, 3)
    d = _check(
        (call("search"), call("save", status="error")),
        type="tool_order",
        tools=["search", "save"],
        compat="mastra",
    ).details
    assert d["actual_tools"] == ["search", "save"]
    d = _check((call("a"), call("b", status="error")), type="max_tool_calls", max=1).details
    assert (d["count"], d["max"]) == (2, 1)
    d = _check((call("a"), call("b", status="error")), type="no_tool_errors").details
    assert (d["error_count"], d["total_calls"], d["errored"]) == (1, 2, ["b"])
    d = _check((call("a", status="paused"),), type="no_tool_errors").details
    assert (d["error_count"], d["paused"]) == (0, ["a"])


def test_explanations() -> None:
    assert _check(calls(GW), type="did_not_call", tool=GW).explanation == (
        "'get_weather' was called 1 time(s) (statuses: ok)"
    )
    text = _check((call("save", status="error"),), type="called_tool", tool="save").explanation
    assert text == (
        "'save' was called 0 time(s); at least 1 expected; not counted (calls: clean): save (error)"
    )
    text = _check(
        calls("summarize", "search"), type="tool_order", tools=["search", "summarize"]
    ).explanation
    assert "'summarize' not called after search; calls: summarize, search" in text
    text = _check((call("a", status="paused"),), type="no_tool_errors").explanation
    assert text == "none of 1 tool call(s) failed; paused (not counted as errors): a"


def test_sub_agent_calls_count_only_when_included() -> None:
    actual = (agent("helper", call("delete_account")),)
    assert _check(actual, type="did_not_call", tool="delete_account").value == 1
    assert (
        _check(actual, type="did_not_call", tool="delete_account", include_subagents=True).value
        == 0
    )


@pytest.mark.parametrize(
    ("config", "message"),
    [
        pytest.param(
            {"type": "called_tool", "tool": "a", "times": 0},
            "greater than or equal to 1",
            id="times zero always passes",
        ),
        pytest.param({"type": "called_tool"}, "tool", id="no tool named"),
        pytest.param(
            {"type": "max_tool_calls", "max": -1},
            "greater than or equal to 0",
            id="a negative max always fails",
        ),
        pytest.param(
            {"type": "tool_order", "tools": []},
            "at least 1 item",
            id="an empty order always passes",
        ),
        pytest.param(
            {"type": "output_includes", "text": ""},
            "at least 1 character",
            id="an empty text is always included",
        ),
        pytest.param(
            {"type": "no_tool_errors", "calls": "clean"},
            "never see an errored call",
            id="no_tool_errors that looks only at clean calls",
        ),
        pytest.param({"type": "used_no_tools", "tool": "a"}, "Extra inputs", id="a stray key"),
    ],
)
def test_construction_errors(config: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        score(config, run())
