"""`tool_call_accuracy`: Mastra's own test list (reference §5.2) under both semantics."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from scorers._build import call, calls, run, score
from tracescore.model import Score, Step

W, S, C = "weather-tool", "search-tool", "calendar-tool"


def _tca(actual: tuple[Step, ...], **config: Any) -> Score:
    return score({"type": "tool_call_accuracy", **config}, run(*actual))


CASES = [
    pytest.param(calls(W), {"expected_tool": W}, 1.0, 1.0, id="the expected tool was called"),
    pytest.param(
        calls("calculator-tool"), {"expected_tool": W}, 0.0, 0.0, id="another tool was called"
    ),
    pytest.param((), {"expected_tool": W}, 0.0, 0.0, id="no tool was called"),
    pytest.param(
        calls(S, W, C), {"expected_tool": W}, 1.0, 1.0, id="called among others, not strict"
    ),
    pytest.param(
        calls(S, W, C),
        {"expected_tool": W, "strict_mode": True},
        0.0,
        0.0,
        id="called among others, strict",
    ),
    pytest.param(
        calls(W), {"expected_tool": W, "strict_mode": True}, 1.0, 1.0, id="the only call, strict"
    ),
    pytest.param(
        calls(W, W),
        {"expected_tool": W, "strict_mode": True},
        0.0,
        0.0,
        id="called twice, strict",
    ),
    pytest.param(
        (call(W, status="paused"),),
        {"expected_tool": W},
        1.0,
        0.0,
        id="requested but never executed (Mastra state call) counts only as an attempt",
    ),
    pytest.param(
        (call(W, status="error"),),
        {"expected_tool": W},
        1.0,
        0.0,
        id="a thrown call counts only as an attempt",
    ),
    pytest.param(
        calls(S, W),
        {"expected_tool_order": [S, W], "strict_mode": True},
        1.0,
        1.0,
        id="strict order, exact sequence",
    ),
    pytest.param(
        calls(W, S),
        {"expected_tool_order": [S, W], "strict_mode": True},
        0.0,
        0.0,
        id="strict order, reversed",
    ),
    pytest.param(
        calls(S, C, W),
        {"expected_tool_order": [S, W]},
        1.0,
        1.0,
        id="relaxed order, another call between",
    ),
    pytest.param(
        calls(W, C, S), {"expected_tool_order": [S, W]}, 0.0, 0.0, id="relaxed order, reversed"
    ),
    pytest.param(
        calls(S, W),
        {"expected_tool_order": [S, W, C]},
        0.0,
        0.0,
        id="relaxed order, the last expected tool missing",
    ),
    pytest.param(
        calls(S, "log-tool", W),
        {"expected_tool_order": [S, W], "strict_mode": True},
        0.0,
        0.0,
        id="strict order, another call between",
    ),
    pytest.param(
        calls("b", "a", "b"),
        {"expected_tool_order": ["a", "b"]},
        0.0,
        1.0,
        id="relaxed order where the first b comes before a: Mastra compares first occurrences",
    ),
    pytest.param(
        calls("a", "a"),
        {"expected_tool_order": ["a", "a"]},
        0.0,
        1.0,
        id="an order naming a tool twice can only pass as a subsequence",
    ),
    pytest.param(
        (call(W), call("other", status="error")),
        {"expected_tool": W, "strict_mode": True},
        0.0,
        1.0,
        id="strict single tool beside an errored call, which only Mastra counts",
    ),
]


@pytest.mark.parametrize(("actual", "config", "mastra", "default"), CASES)
def test_value(
    actual: tuple[Step, ...], config: dict[str, Any], mastra: float, default: float
) -> None:
    assert _tca(actual, compat="mastra", **config).value == mastra
    assert _tca(actual, **config).value == default


def test_details_follow_mastras_preprocess_result() -> None:
    d = _tca(calls(W), expected_tool=W).details
    assert (d["correct_tool_called"], d["correct_order_called"], d["has_tool_calls"]) == (
        True,
        None,
        True,
    )
    assert _tca((), expected_tool=W).details["has_tool_calls"] is False
    d = _tca(calls(S, W), expected_tool_order=[S, W], strict_mode=True).details
    assert (d["correct_order_called"], d["correct_tool_called"]) == (True, False)


def test_compat_mastra_scores_a_run_that_stopped_after_its_calls() -> None:
    # Mastra's run output is every assistant message, those carrying tool invocations too: a
    # run paused for an approval, ended in an error or silent after its calls is scored.
    config = {"type": "tool_call_accuracy", "expected_tool": W, "compat": "mastra"}
    for status in ("ok", "error", "paused"):
        result = score(config, run(call(W, status=status), output=None))
        assert (result.value, result.error) == (1.0, None)


def test_compat_mastra_refuses_a_run_without_input_or_any_assistant_message() -> None:
    for trajectory in (run(call(W), input=None), run(output=None), run(output="")):
        mastra = score(
            {"type": "tool_call_accuracy", "expected_tool": W, "compat": "mastra"}, trajectory
        )
        assert mastra.value is None
        assert "input and output messages cannot be null or empty" in (mastra.error or "")
        default = score({"type": "tool_call_accuracy", "expected_tool": W}, trajectory)
        assert default.value == (1.0 if trajectory.steps else 0.0)


def test_explanations() -> None:
    assert _tca(calls(S, W), expected_tool=W).explanation == (
        f"expected tool '{W}' was called; calls: {S}, {W}"
    )
    text = _tca((call(W, status="error"), call(S)), expected_tool=W).explanation
    assert (
        text == f"expected tool '{W}' was not called; calls: {S}; "
        f"not counted (calls: clean): {W} (error)"
    )
    assert (
        "expected exactly one call"
        in _tca(calls(S, W), expected_tool=W, strict_mode=True).explanation
    )
    text = _tca(calls(W, S), expected_tool_order=[S, W]).explanation
    assert text.startswith(f"expected order {S} -> {W} (in order, others between) not followed")


@pytest.mark.parametrize(
    ("config", "message"),
    [
        pytest.param({}, "needs expected_tool or expected_tool_order", id="nothing to check"),
        pytest.param(
            {"expected_tool": W, "expected_tool_order": [W]}, "not both", id="both at once"
        ),
        pytest.param({"expected_tool_order": []}, "empty order checks nothing", id="empty order"),
        pytest.param({"expected_tool": ""}, "at least 1 character", id="an empty tool name"),
        pytest.param({"expected_tool": W, "compat": "agno"}, "compat", id="an unknown compat"),
        pytest.param({"expected_tool": W, "strict": True}, "Extra inputs", id="a misspelt key"),
    ],
)
def test_construction_errors(config: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        score({"type": "tool_call_accuracy", **config}, run())
