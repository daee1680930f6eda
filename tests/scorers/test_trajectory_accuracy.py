"""`trajectory_accuracy`: Mastra's compareTrajectories cases under both semantics.

Each case gives Mastra 1.10.2's value (`compat: mastra`) and tracescore's default value; they
differ only where the module docstring says they should (optimal alignment, argument subset
and key order, clean calls only, exact fractions).

Not applicable, because tracescore steps are tool calls matched by name and arguments only:
Mastra's `toolResult` / `success` / `stepType` / `mcpServer` constraints (§5.3 #15, §5.6 data
and ExpectedStep blocks). The nearest equivalents are kept: a model call named like the tool
is not a tool step (#16), model calls between tool calls are not steps (#19).
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from scorers._build import agent, call, calls, model, run, score
from tracescore.model import Score, Step


def _steps(*specs: str | tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"tool": s} if isinstance(s, str) else {"tool": s[0], "args": s[1]} for s in specs]


def _acc(steps: list[dict[str, Any]], actual: tuple[Step, ...], **opts: Any) -> Score:
    return score({"type": "trajectory_accuracy", "steps": steps, **opts}, run(*actual))


S2 = _steps("search", "summarize")
S3 = _steps("search", "summarize", "format")

CASES = [
    # --- reference §4: verified edge cases ---
    pytest.param(
        _steps("X", "A", "B"),
        calls("A", "B", "X"),
        {},
        0.33,
        2 / 3,
        id="relaxed: an early expected step matched late blocks the greedy scan only",
    ),
    pytest.param(
        _steps("A", "B"),
        calls("X", "A", "B"),
        {"ordering": "strict"},
        0.0,
        0.0,
        id="strict: one extra leading call shifts every position",
    ),
    pytest.param(
        _steps("A", "B"),
        calls("A", "B", "C", "D"),
        {"ordering": "strict"},
        0.5,
        0.5,
        id="strict: two extra trailing calls cost half of one",
    ),
    pytest.param(
        _steps(("A", {"q": 1})),
        (call("A", {"q": 1, "limit": 5}),),
        {},
        0.0,
        1.0,
        id="args: an extra actual key fails exact JSON but passes the subset rule",
    ),
    pytest.param(
        _steps(("A", {"b": 2, "a": 1})),
        (call("A", {"a": 1, "b": 2}),),
        {},
        0.0,
        1.0,
        id="args: the same keys in another order fail only JSON text comparison",
    ),
    pytest.param(
        _steps(("A", {"a": 1})),
        (call("A", {"a": 1.0}),),
        {},
        1.0,
        1.0,
        id="args: 1 and 1.0 are the same number",
    ),
    pytest.param(
        _steps("A"),
        (call("A", {"a": 2}),),
        {},
        1.0,
        1.0,
        id="a step without args matches on the name alone",
    ),
    pytest.param(
        _steps("A", "A"),
        calls("A"),
        {},
        0.5,
        0.5,
        id="relaxed: a tool expected twice and called once",
    ),
    pytest.param(
        _steps("A", "A"),
        calls("A"),
        {"ordering": "unordered"},
        0.5,
        0.5,
        id="unordered: a tool expected twice and called once",
    ),
    pytest.param([], (), {}, 1.0, 1.0, id="expect nothing and nothing was called"),
    pytest.param([], calls("search"), {}, 0.0, 0.0, id="expect nothing and one call was made"),
    # --- reference §5.3 accuracy scorer, expected [search, summarize] ---
    pytest.param(S2, calls("search", "summarize"), {}, 1.0, 1.0, id="relaxed: exact match"),
    pytest.param(
        S2,
        calls("search", "validate", "summarize"),
        {},
        1.0,
        1.0,
        id="relaxed: an extra call between costs nothing",
    ),
    pytest.param(S2, calls("search"), {}, 0.5, 0.5, id="relaxed: the second step missing"),
    pytest.param(S2, calls("translate", "format"), {}, 0.0, 0.0, id="relaxed: nothing matches"),
    pytest.param(S2, calls("summarize", "search"), {}, 0.5, 0.5, id="relaxed: reversed"),
    pytest.param(
        S2,
        calls("search", "search", "summarize"),
        {},
        1.0,
        1.0,
        id="relaxed: a repeated tool is allowed by default",
    ),
    pytest.param(
        S2,
        calls("search", "search", "summarize"),
        {"allow_repeated_steps": False},
        0.9,
        0.9,
        id="relaxed: a repeated tool costs 0.1 when repeats are not allowed",
    ),
    pytest.param(
        S2,
        calls("search", "summarize"),
        {"ordering": "strict"},
        1.0,
        1.0,
        id="strict: exact match",
    ),
    pytest.param(
        S2,
        calls("search", "summarize", "format"),
        {"ordering": "strict"},
        0.75,
        0.75,
        id="strict: one extra trailing call costs a quarter",
    ),
    pytest.param(
        S2, calls("summarize", "search"), {"ordering": "strict"}, 0.0, 0.0, id="strict: reversed"
    ),
    pytest.param(
        S2, calls("search"), {"ordering": "strict"}, 0.5, 0.5, id="strict: the second missing"
    ),
    pytest.param(
        _steps(("search", {"query": "test"}), ("summarize", {"maxLength": 100})),
        (call("search", {"query": "test"}), call("summarize", {"maxLength": 100})),
        {},
        1.0,
        1.0,
        id="args on every step, all equal",
    ),
    pytest.param(
        _steps(("search", {"query": "test"})),
        (call("search", {"query": "different"}),),
        {},
        0.0,
        0.0,
        id="args differ in value",
    ),
    pytest.param(
        _steps("gpt4"),
        (model(10, 5, name="gpt4"),),
        {},
        0.0,
        0.0,
        id="a model call named like the expected tool is not a tool call",
    ),
    pytest.param(S2, (), {}, 0.0, 0.0, id="no calls at all"),
    pytest.param(
        _steps("search"),
        (model(10, 5, name="plan"), call("search"), model(10, 5, name="synthesize")),
        {},
        1.0,
        1.0,
        id="model calls between tool calls are not steps",
    ),
    # --- reference §5.6 compareTrajectories ---
    pytest.param(
        S2, calls("translate"), {}, 0.0, 0.0, id="one unrelated call against two expected"
    ),
    pytest.param(
        S3,
        calls("search"),
        {"ordering": "strict"},
        0.33,
        1 / 3,
        id="strict: one of three matched",
    ),
    pytest.param(
        S2,
        calls("search", "search", "summarize"),
        {"ordering": "strict", "allow_repeated_steps": False},
        0.15,
        0.15,
        id="strict: a shifted repeat loses a step, pays for the extra call and the repeat",
    ),
    pytest.param(
        _steps(("search", {"q": 1}), ("summarize", {"n": 2})),
        (call("search", {"q": 1}), call("summarize", {"n": 3})),
        {"ordering": "strict"},
        0.5,
        0.5,
        id="strict: the second step's args differ",
    ),
    pytest.param(
        S2,
        calls("summarize", "search"),
        {"ordering": "unordered"},
        1.0,
        1.0,
        id="unordered: swapped",
    ),
    pytest.param(
        S2, calls("search"), {"ordering": "unordered"}, 0.5, 0.5, id="unordered: one missing"
    ),
    pytest.param(
        S2,
        calls("search", "extra", "summarize"),
        {"ordering": "unordered"},
        1.0,
        1.0,
        id="unordered: an extra call costs nothing",
    ),
    # --- where only the default's optimal matching helps ---
    pytest.param(
        _steps("search", ("search", {"q": "x"})),
        (call("search", {"q": "x"}), call("search", {"q": "y"})),
        {"ordering": "unordered", "args_match": "subset"},
        0.5,
        1.0,
        id="unordered: first fit strands the specific step, a maximum matching does not",
    ),
]


@pytest.mark.parametrize(("steps", "actual", "opts", "mastra", "default"), CASES)
def test_value(
    steps: list[dict[str, Any]],
    actual: tuple[Step, ...],
    opts: dict[str, Any],
    mastra: float,
    default: float,
) -> None:
    assert _acc(steps, actual, compat="mastra", **opts).value == mastra
    assert _acc(steps, actual, **opts).value == pytest.approx(default, abs=1e-12)


def test_a_full_match_reports_empty_lists() -> None:
    d = _acc(S2, calls("search", "summarize")).details
    assert (d["score"], d["matched"], d["total_expected"], d["total_actual"]) == (1.0, 2, 2, 2)
    assert d["missing"] == d["extra"] == d["out_of_order"] == d["repeated"] == []
    assert d["expected_step_names"] == d["actual_step_names"] == ["search", "summarize"]


@pytest.mark.parametrize("compat", ["mastra", "tracescore"])
def test_reports_missing_extra_out_of_order_and_repeated(compat: str) -> None:
    assert _acc(S2, calls("search"), compat=compat).details["missing"] == ["summarize"]
    d = _acc(S2, calls("search", "validate", "summarize"), compat=compat).details
    assert d["extra"] == ["validate"]
    d = _acc(S2, calls("translate"), compat=compat).details
    assert (d["missing"], d["extra"]) == (["search", "summarize"], ["translate"])
    assert (
        "summarize" in _acc(S2, calls("summarize", "search"), compat=compat).details["out_of_order"]
    )
    d = _acc(S2, calls("summarize", "search"), ordering="strict", compat=compat).details
    assert set(d["out_of_order"]) == {"search", "summarize"}
    assert _acc(S2, calls("search", "search", "summarize"), compat=compat).details["repeated"] == [
        "search"
    ]
    d = _acc(S3, calls("search"), ordering="strict", compat=compat).details
    assert (d["matched"], d["missing"]) == (1, ["summarize", "format"])
    assert (
        _acc(S2, calls("summarize", "search"), ordering="unordered").details["out_of_order"] == []
    )


def test_a_tool_expected_twice_and_called_once_is_missing_not_out_of_order_by_default() -> None:
    # Mastra says "out of order" for the second A; the call is simply missing.
    assert _acc(_steps("A", "A"), calls("A"), compat="mastra").details["out_of_order"] == ["A"]
    d = _acc(_steps("A", "A"), calls("A")).details
    assert (d["missing"], d["out_of_order"]) == (["A"], [])


def test_explanation_says_what_matched_and_what_did_not() -> None:
    text = _acc(S3, calls("summarize", "search", "lookup")).explanation
    assert text.startswith("relaxed ordering: 1/3 expected steps matched.")
    assert "missing: summarize, format." in text
    assert "extra: lookup." in text
    assert "out of order: summarize." in text


def test_args_match_exact_requires_every_argument() -> None:
    steps = _steps(("A", {"q": 1}))
    assert _acc(steps, (call("A", {"q": 1, "limit": 5}),), args_match="exact").value == 0.0
    assert _acc(steps, (call("A", {"q": 1.0}),), args_match="exact").value == 1.0
    assert _acc(steps, (call("A", {"q": True}),), args_match="exact").value == 0.0


@pytest.mark.parametrize(
    ("status", "default", "attempted"),
    [
        pytest.param("error", 0.5, 1.0, id="an errored call satisfies a step only when attempted"),
        pytest.param("paused", 0.5, 1.0, id="a paused call satisfies a step only when attempted"),
    ],
)
def test_call_policy(status: str, default: float, attempted: float) -> None:
    actual = (call("search"), call("summarize", status=status))  # type: ignore[arg-type]
    assert _acc(S2, actual).value == default
    assert _acc(S2, actual, calls="attempted").value == attempted
    assert _acc(S2, actual, compat="mastra").value == attempted
    assert "summarize (" + status + ")" in _acc(S2, actual).explanation


def test_compat_mastra_can_still_be_told_to_count_clean_calls_only() -> None:
    actual = (call("search"), call("summarize", status="error"))
    assert _acc(S2, actual, compat="mastra", calls="clean").value == 0.5


def test_sub_agent_calls_count_only_when_included() -> None:
    actual = (call("search"), agent("writer", call("summarize")))
    assert _acc(S2, actual).value == 0.5
    assert _acc(S2, actual, include_subagents=True).value == 1.0


def test_expect_nothing_explains_itself() -> None:
    assert _acc([], ()).explanation == "expected no tool calls and none were counted"
    assert _acc([], calls("a", "b")).explanation == "expected no tool calls; counted: a, b"


@pytest.mark.parametrize(
    ("config", "message"),
    [
        pytest.param({}, "steps", id="no expectation at all is refused"),
        pytest.param({"steps": [{"tool": ""}]}, "at least 1 character", id="an empty tool name"),
        pytest.param({"steps": [{"name": "a"}]}, "tool", id="a step without a tool"),
        pytest.param({"steps": [], "ordering": "loose"}, "ordering", id="an unknown ordering"),
    ],
)
def test_construction_errors(config: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        score({"type": "trajectory_accuracy", **config}, run())
