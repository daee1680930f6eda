"""`tool_calls`: Agno's own ToolCallScorer tests (reference §5.1), on hand-built trajectories.

Agno's `RunOutput.tools` entries map to tool calls: `tool_call_error=True` is status `error`,
`requires_confirmation` never resumed is `paused`, a call refused by `tool_call_limit` (no
execution at all) is `paused` with reason `no_execution`. A Team's members are sub-agents.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from scorers._build import agent, call, calls, run, score
from tracescore.model import Score, Step


def _tc(actual: tuple[Step, ...], **config: Any) -> Score:
    return score({"type": "tool_calls", **config}, run(*actual, output="done"))


CASES = [
    pytest.param(
        (call("delete_file"),),
        {"expected_tools": ["delete_file"]},
        1.0,
        True,
        id="an approved human-in-the-loop call ran cleanly",
    ),
    pytest.param(
        (call("delete_file", status="error"),),
        {"expected_tools": ["delete_file"]},
        0.0,
        False,
        id="a rejected human-in-the-loop call is an errored call",
    ),
    pytest.param(
        (call("search"),),
        {"expected_tools": ["search"]},
        1.0,
        True,
        id="a call with no recorded error is clean",
    ),
    pytest.param(
        (call("search", status="paused", pause_reason="no_execution"),),
        {"expected_tools": ["search"]},
        0.0,
        False,
        id="a call refused by the tool-call limit never executed",
    ),
    pytest.param(
        (call("search", status="error"),),
        {"expected_tools": ["search"]},
        0.0,
        False,
        id="an errored call satisfies nothing",
    ),
    pytest.param(
        (call("search", {"query": "agno", "limit": 5}),),
        {"arguments": {"search": {"query": "agno"}}},
        1.0,
        True,
        id="a spec that is a subset of the arguments",
    ),
    pytest.param(
        (call("search", {"query": "agno", "limit": 5}),),
        {"arguments": {"search": {"query": "other"}}},
        0.0,
        False,
        id="a spec value that differs",
    ),
    pytest.param(
        (call("search", {"limit": "5"}),),
        {"arguments": {"search": {"limit": 5}}},
        0.0,
        False,
        id="no type coercion from a string",
    ),
    pytest.param(
        (call("search", {"query": "agno"}, status="error"),),
        {"arguments": {"search": {"query": "agno"}}},
        0.0,
        False,
        id="matching arguments on an errored call",
    ),
    pytest.param((), {"expected_tools": ["search"]}, 0.0, False, id="a run with no tools"),
    pytest.param(
        (call("search", {"query": "agno"}),),
        {"expected_tools": ["search", "summarize"], "arguments": {"search": {"query": "agno"}}},
        2 / 3,
        False,
        id="value is the fraction of checks: a name and a spec of three",
    ),
    pytest.param(
        calls("search", "summarize"),
        {"expected_tools": ["search", "search"]},
        1.0,
        True,
        id="a name expected twice is one check",
    ),
    pytest.param(
        calls("search", "summarize"),
        {"expected_tools": ["search"], "allow_additional": False},
        1.0,
        False,
        id="an additional clean call fails passed, not value",
    ),
    pytest.param(
        calls("search", "summarize"),
        {"expected_tools": ["search"]},
        1.0,
        True,
        id="additional calls are allowed by default",
    ),
    pytest.param(
        (call("search"),),
        {"expected_tools": ["search"]},
        1.0,
        True,
        id="whatever the run's input asks for, only the config is checked",
    ),
    pytest.param(
        (call("delegate_task_to_member"), agent("member", call("multiply"))),
        {"expected_tools": ["multiply"]},
        0.0,
        False,
        id="a member's call is not the leader's",
    ),
    pytest.param(
        (agent("sub-team", agent("member", call("multiply"))),),
        {"expected_tools": ["multiply"]},
        0.0,
        False,
        id="a nested member's call is not the leader's",
    ),
    pytest.param(
        (call("search", {"query": "agno"}),),
        {"arguments": {"search": {"query": "agno"}}, "allow_additional": False},
        1.0,
        True,
        id="a tool named only in arguments is allowed in strict mode",
    ),
    pytest.param(
        (call("search", {"query": "agno"}), call("summarize")),
        {"arguments": {"search": {"query": "agno"}}, "allow_additional": False},
        1.0,
        False,
        id="another clean tool fails strict mode",
    ),
    pytest.param(
        (call("delete_file", status="paused", pause_reason="approval_required"),),
        {"expected_tools": ["delete_file"]},
        0.0,
        False,
        id="a call still waiting for approval",
    ),
    pytest.param(
        (call("a"), call("b", status="error")),
        {"expected_tools": ["a"], "allow_additional": False},
        1.0,
        True,
        id="an errored call to an unexpected tool is not additional",
    ),
    pytest.param(
        (call("charge", {"cents": 500}),),
        {"arguments": {"charge": [{"cents": 500}, {"cents": -5}]}},
        0.5,
        False,
        id="each spec of a list is its own check",
    ),
    pytest.param(
        (call("search", {}),),
        {"arguments": {"search": {}}},
        1.0,
        True,
        id="an empty spec needs one clean call of the tool",
    ),
    pytest.param(
        (call("toggle", {"on": 1}),),
        {"arguments": {"toggle": {"on": True}}},
        0.0,
        False,
        id="true does not match 1 (Agno's Python == would say it does)",
    ),
]


@pytest.mark.parametrize(("actual", "config", "value", "passed"), CASES)
def test_value_and_passed(
    actual: tuple[Step, ...], config: dict[str, Any], value: float, passed: bool
) -> None:
    result = _tc(actual, **config)
    assert result.value == pytest.approx(value)
    assert result.passed is passed


def test_reasons_name_what_failed() -> None:
    assert _tc((), expected_tools=["search"]).details["reason"] == (
        "run has no tool executions; expected tool 'search' has no clean execution"
    )
    text = _tc(calls("search", "summarize"), expected_tools=["search"], allow_additional=False)
    assert "additional tool calls not allowed: ['summarize']" in text.explanation
    member = _tc((call("delegate"), agent("member", call("multiply"))), expected_tools=["multiply"])
    assert "member tool executions were not inspected" in member.explanation
    assert _tc(calls("search"), expected_tools=["search"]).details["reason"] is None
    assert _tc(calls("search"), expected_tools=["search"]).explanation == (
        "1/1 checks satisfied; satisfied: search"
    )


def test_members_count_when_sub_agents_are_included() -> None:
    actual = (call("delegate_task_to_member"), agent("member", call("multiply")))
    result = _tc(actual, expected_tools=["multiply"], include_subagents=True)
    assert result.value == 1.0
    assert result.passed is True
    assert result.details["reason"] is None


def test_attempted_policy_counts_errored_calls_and_says_so() -> None:
    result = _tc((call("charge", status="error"),), expected_tools=["charge"], calls="attempted")
    assert result.value == 1.0
    result = _tc((), expected_tools=["charge"], calls="attempted")
    assert "expected tool 'charge' has no attempted execution" in result.explanation


def test_threshold_overrides_passed() -> None:
    result = _tc(calls("search"), expected_tools=["search", "summarize"], threshold=0.5)
    assert (result.value, result.passed, result.label) == (0.5, True, "pass")


def test_duplicates_and_single_specs_are_normalised() -> None:
    a = score(
        {"type": "tool_calls", "expected_tools": ["a", "b", "a"], "arguments": {"a": {"x": 1}}},
        run(),
    )
    b = score(
        {"type": "tool_calls", "expected_tools": ["a", "b"], "arguments": {"a": [{"x": 1}]}}, run()
    )
    assert a.digest == b.digest


@pytest.mark.parametrize(
    ("config", "message"),
    [
        pytest.param({"expected_tools": "search"}, "bare string 'search'", id="a bare string"),
        pytest.param({"expected_tools": []}, "with neither there is no check", id="nothing"),
        pytest.param({}, "with neither there is no check", id="no keys at all"),
        pytest.param(
            {"expected_tools": ["search"], "arguments": {"search": []}},
            "argument specs for 'search' are empty",
            id="an empty spec list, even with expected tools",
        ),
        pytest.param(
            {"expected_tools": ["a"], "arguments": {"search": "q"}},
            "a mapping or a list of mappings, got str",
            id="a spec that is not a mapping",
        ),
    ],
)
def test_construction_errors(config: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        score({"type": "tool_calls", **config}, run())
