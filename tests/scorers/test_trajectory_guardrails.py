"""`trajectory_guardrails`: Mastra's unified trajectory scorer and its guardrail primitives.

Mastra's nested expectations (an expected agent step with its own `children` config, §5.3
#33-40, #46-47) have no counterpart in the `steps: [{tool, args}]` contract; tracescore
expresses "look inside the sub-agents" with `include_subagents: true`, and the nested cases
below are mapped to that. Mastra's per-item overrides (#25, #28) map to the scorer's own
config, which is the only place tracescore takes expectations from.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from scorers._build import agent, call, calls, model, run, score
from tracescore.model import Score, Step

S2 = [{"tool": "search"}, {"tool": "summarize"}]


def _g(actual: tuple[Step, ...], duration_ms: float | None = None, **config: Any) -> Score:
    return score({"type": "trajectory_guardrails", **config}, run(*actual, duration_ms=duration_ms))


CASES = [
    # --- reference §4 ---
    pytest.param(
        calls("a", "b"),
        {"max_steps": 1},
        0.5,
        0.5,
        id="one call over a budget of one halves efficiency (redundancy check on, clean)",
    ),
    pytest.param(
        calls("A", "A", "A"),
        {"no_redundant_calls": True},
        0.6,
        0.6,
        id="two back-to-back repeats without arguments cost 0.2 each",
    ),
    pytest.param(
        (call("search", status="error"), call("lookup")),
        {},
        1.0,
        1.0,
        id="a failed call followed by another tool is no retry",
    ),
    pytest.param(
        (*[call("search", status="error")] * 3, call("search")),
        {},
        0.8,
        0.8,
        id="three failures then a success is one retry over the limit of two",
    ),
    pytest.param(
        calls("search", "extra"),
        {"steps": [{"tool": "search"}], "max_steps": 1},
        0.79,
        0.55 / 0.7,
        id="accuracy 1 and efficiency 0.5 weigh 0.4 to 0.3",
    ),
    pytest.param(
        calls("forbidden"),
        {"steps": [], "ordering": "strict"},
        0.0,
        0.0,
        id="expect nothing, strict, and a call was made",
    ),
    pytest.param(calls("a", "b"), {}, 1.0, 1.0, id="nothing configured"),
    # --- reference §5.3 unified scorer ---
    pytest.param(
        calls("search", "summarize"),
        {"steps": S2, "max_steps": 5, "no_redundant_calls": True},
        1.0,
        1.0,
        id="on path, within budget, no repeats",
    ),
    pytest.param(
        calls("search", "deleteAll"),
        {"blacklisted_tools": ["deleteAll"]},
        0.0,
        0.0,
        id="a blacklisted tool zeroes the score",
    ),
    pytest.param(
        calls("escalate", "admin"),
        {"blacklisted_sequences": [["escalate", "admin"]]},
        0.0,
        0.0,
        id="a blacklisted sequence zeroes the score",
    ),
    pytest.param(
        (call("search", {"q": "test"}), call("search", {"q": "test"})),
        {"no_redundant_calls": True},
        0.8,
        0.8,
        id="one redundant call costs 0.2",
    ),
    pytest.param(
        calls("a", "b", "c", "d"),
        {"max_steps": 2},
        0.5,
        0.5,
        id="twice the step budget zeroes the budget dimension",
    ),
    pytest.param(
        calls("fetch", "format"),
        {"steps": [{"tool": "fetch"}, {"tool": "format"}]},
        1.0,
        1.0,
        id="the scorer's own steps are the expectation",
    ),
    pytest.param(
        calls("search", "summarize"),
        {"steps": S2, "max_steps": 1, "weights": {"accuracy": 0.9, "efficiency": 0.1}},
        0.95,
        0.95,
        id="accuracy-heavy weights",
    ),
    pytest.param(
        calls("search", "summarize"),
        {"steps": S2, "max_steps": 1, "weights": {"accuracy": 0.1, "efficiency": 0.9}},
        0.55,
        0.55,
        id="efficiency-heavy weights",
    ),
    pytest.param(
        calls("search"),
        {"steps": S2, "max_steps": 5, "weights": {"accuracy": 0, "efficiency": 1}},
        1.0,
        1.0,
        id="a zero weight silences a dimension",
    ),
    # --- reference §5.6 guardrail primitives ---
    pytest.param(calls("a", "b"), {"max_steps": 5}, 1.0, 1.0, id="within the step budget"),
    pytest.param(
        calls("auth", "escalate", "admin"),
        {"blacklisted_sequences": [["escalate", "admin"]]},
        0.0,
        0.0,
        id="a blacklisted sequence inside a longer run",
    ),
    pytest.param(
        calls("escalate", "auth", "admin"),
        {"blacklisted_sequences": [["escalate", "admin"]]},
        1.0,
        1.0,
        id="a blacklisted sequence broken by another call is allowed",
    ),
    pytest.param((), {"max_retries_per_tool": 2}, 1.0, 1.0, id="no calls, no retries"),
]


@pytest.mark.parametrize(("actual", "config", "mastra", "default"), CASES)
def test_value(
    actual: tuple[Step, ...], config: dict[str, Any], mastra: float, default: float
) -> None:
    assert _g(actual, compat="mastra", **config).value == mastra
    assert _g(actual, **config).value == pytest.approx(default, abs=1e-12)


def test_mastra_reason_lines() -> None:
    result = _g(calls("search", "extra"), compat="mastra", steps=[{"tool": "search"}], max_steps=1)
    assert result.explanation == (
        "Score: 0.79\nAccuracy (1): 1/1 expected steps matched. extra: extra.\n"
        "Efficiency (0.5): over step budget (2 steps)."
    )
    assert _g(calls("a"), compat="mastra").explanation == "Score: 1"
    text = _g(calls("search", "summarize"), steps=S2, max_steps=5).explanation
    assert "Accuracy (1): 2/2 expected steps matched." in text
    assert "Efficiency (1): all budgets met, no redundant calls." in text
    assert "missing: summarize." in _g(calls("search"), steps=S2).explanation
    text = _g(calls("search", "deleteAll"), blacklisted_tools=["deleteAll"]).explanation
    assert text == "Score: 0\nBlacklist violation: forbidden tools used: deleteAll."
    text = _g(
        calls("a", "deleteAll", "escalate", "admin"),
        blacklisted_tools=["deleteAll"],
        blacklisted_sequences=[["escalate", "admin"]],
    ).explanation
    assert text.endswith("forbidden tools used: deleteAll. forbidden sequences: escalate → admin.")
    text = _g(calls("search", "search", "search"), max_steps=1).explanation
    assert "over step budget (3 steps). redundant calls: search, search." in text
    failures = (call("search", status="error"), call("search", status="error"), call("search"))
    text = _g(failures, max_retries_per_tool=1).explanation
    assert "Tool failures (0.8): 2 total retries. excessive retries: search." in text


def test_detail_lists() -> None:
    d = _g(calls("search", "deleteAll"), blacklisted_tools=["deleteAll"]).details
    assert d["blacklist"] == {
        "score": 0.0,
        "violated_tools": ["deleteAll"],
        "violated_sequences": [],
    }
    d = _g(
        calls("auth", "escalate", "admin", "deleteAll"),
        blacklisted_tools=["deleteAll"],
        blacklisted_sequences=[["escalate", "admin"]],
    ).details["blacklist"]
    assert (d["violated_tools"], d["violated_sequences"]) == (
        ["deleteAll"],
        [["escalate", "admin"]],
    )
    eff = _g(calls("a", "b", "c"), max_steps=2).details["efficiency"]
    assert (eff["over_step_budget"], eff["total_steps"]) == (True, 3)
    eff = _g((call("s", {"q": 1}), call("s", {"q": 1})), no_redundant_calls=True).details
    assert eff["efficiency"]["redundant_calls"] == [{"name": "s", "index": 1}]
    eff = _g((call("s", {"q": 1}), call("s", {"q": 2})), no_redundant_calls=True).details
    assert eff["efficiency"]["redundant_calls"] == []
    assert _g(calls("a"), max_steps=5, no_redundant_calls=False).details["dimensions"] == {
        "efficiency": 1.0
    }


@pytest.mark.parametrize(
    ("actual", "pattern"),
    [
        pytest.param(
            (call("search", status="error"), call("search")),
            {
                "tool": "search",
                "retry_count": 1,
                "eventually_succeeded": True,
                "fell_back_to_alternative": False,
                "alternative_tool": None,
            },
            id="a failure then a success is one retry that succeeded",
        ),
        pytest.param(
            (call("search", status="error"), call("search", status="error"), call("fallback")),
            {
                "tool": "search",
                "retry_count": 1,
                "eventually_succeeded": False,
                "fell_back_to_alternative": True,
                "alternative_tool": "fallback",
            },
            id="two failures then another tool is a fallback",
        ),
    ],
)
def test_retry_patterns(actual: tuple[Step, ...], pattern: dict[str, Any]) -> None:
    tf = _g(actual).details["tool_failures"]
    assert tf["patterns"] == [pattern]
    assert tf["excessive_retry_tools"] == []


def test_excessive_retries_are_named() -> None:
    actual = (*[call("search", status="error")] * 3, call("search"))
    tf = _g(actual).details["tool_failures"]
    assert (tf["excessive_retry_tools"], tf["total_retries"], tf["score"]) == (["search"], 3, 0.8)


# --- measurements: tokens and duration ------------------------------------------------------


def test_token_budget_over_every_model_call_at_any_depth() -> None:
    actual = (model(100, 50), agent("helper", model(200, 100)))
    result = _g(actual, max_total_tokens=300)
    eff = result.details["efficiency"]
    assert (eff["total_tokens"], eff["over_token_budget"]) == (450, True)
    assert result.value == pytest.approx(0.75)  # tokens 0.5, redundancy 1
    assert "over token budget (450 tokens)." in result.explanation


def test_duration_budget_uses_the_agent_span() -> None:
    result = _g(calls("a"), duration_ms=1200, max_duration_ms=1000, no_redundant_calls=False)
    eff = result.details["efficiency"]
    assert (eff["total_duration_ms"], eff["over_duration_budget"]) == (1200.0, True)
    assert result.value == pytest.approx(0.8)
    assert "over duration budget (1200ms)." in result.explanation


@pytest.mark.parametrize(
    ("actual", "why"),
    [
        pytest.param(calls("a"), "no model call was recorded", id="a tool-only run"),
        pytest.param(
            (model(10, 5), model(10, None)),
            "1 of 2 model calls lack",
            id="a model call without output tokens",
        ),
    ],
)
def test_token_budget_without_measurements_is_not_scorable(
    actual: tuple[Step, ...], why: str
) -> None:
    only = _g(actual, max_total_tokens=100, no_redundant_calls=False)
    assert only.value is None
    assert only.passed is None
    assert only.error is None
    assert only.explanation.startswith("Score: not scorable\nEfficiency: not scorable:")
    assert why in only.explanation
    assert why in only.details["not_scorable"][0]
    # With other dimensions on, the budget is left out of the mean instead.
    mixed = _g(actual, max_total_tokens=100, steps=[{"tool": "a"}])
    assert mixed.value is not None
    assert "not scorable: token budget" in mixed.explanation
    assert mixed.details["efficiency"]["score"] == 1.0  # the redundancy check alone


def test_duration_budget_without_a_recorded_duration_is_not_scorable() -> None:
    result = _g(calls("a"), max_duration_ms=1000, no_redundant_calls=False)
    assert result.value is None
    assert "the run's duration was not recorded" in result.explanation


def test_compat_mastra_throws_where_mastra_throws_and_that_is_an_error_score() -> None:
    result = _g(calls("a"), compat="mastra", max_total_tokens=100)
    assert result.value is None
    assert result.error is not None
    assert "cannot evaluate token budget" in result.error
    assert _g(calls("a"), compat="mastra", max_duration_ms=10).error is not None
    # Mastra sums the top-level durations when every step is timed.
    timed = (call("a", duration_ms=600), call("b", duration_ms=600))
    result = _g(timed, compat="mastra", max_duration_ms=1000, no_redundant_calls=False)
    assert result.value == 0.8


# --- which calls each dimension sees --------------------------------------------------------


def test_blacklist_and_budgets_see_errored_and_paused_calls_accuracy_does_not() -> None:
    assert _g((call("deleteAll", status="error"),), blacklisted_tools=["deleteAll"]).value == 0
    assert _g((call("a"), call("b", status="paused")), max_steps=1).value == 0.5
    acc = _g((call("search"), call("summarize", status="error")), steps=S2).details["accuracy"]
    assert acc["matched"] == 1


def test_a_paused_call_is_a_failure_only_under_mastra() -> None:
    actual = (call("approve", status="paused"), call("approve"))
    assert _g(actual).details["tool_failures"]["patterns"] == []
    assert len(_g(actual, compat="mastra").details["tool_failures"]["patterns"]) == 1


# --- sub-agents (Mastra's nested expectations) ------------------------------------------------


def test_sub_agent_steps_are_matched_when_included() -> None:
    nested = (agent("agent-run", call("tool-a"), call("tool-b")),)
    strict = [{"tool": "tool-a"}, {"tool": "tool-b"}]
    assert _g(nested, steps=strict, ordering="strict").details["accuracy"]["matched"] == 0
    inc = _g(nested, steps=strict, ordering="strict", include_subagents=True)
    assert inc.details["accuracy"]["matched"] == 2
    assert inc.value == 1.0
    swapped = (agent("agent-run", call("validate"), call("fetch")),)
    unordered = _g(
        swapped,
        steps=[{"tool": "fetch"}, {"tool": "validate"}],
        ordering="unordered",
        include_subagents=True,
    )
    assert unordered.details["accuracy"]["matched"] == 2
    partial = _g(
        (agent("agent-run", call("a")),),
        steps=[{"tool": "a"}, {"tool": "b"}, {"tool": "c"}],
        include_subagents=True,
    )
    assert partial.details["accuracy"]["missing"] == ["b", "c"]
    deep = (agent("workflow", agent("sub-agent", call("deep-tool"))),)
    assert _g(deep, steps=[{"tool": "deep-tool"}], include_subagents=True).value == 1.0
    two = (agent("agent", call("x")), agent("agent", call("y")))
    both = _g(two, steps=[{"tool": "x"}, {"tool": "y"}], include_subagents=True)
    assert both.details["accuracy"]["matched"] == 2


def test_a_blacklisted_tool_deep_in_a_sub_agent_zeroes_the_score_when_included() -> None:
    # Mastra dilutes a deep nested violation (its issue #23463); here it is a hard 0.
    deep = (call("plan"), agent("l1", agent("l2", call("dangerous-tool"))))
    assert _g(deep, blacklisted_tools=["dangerous-tool"]).value == 1.0
    hit = _g(deep, blacklisted_tools=["dangerous-tool"], include_subagents=True)
    assert hit.value == 0.0
    assert "Blacklist violation" in hit.explanation
    clean = _g(deep, blacklisted_tools=["other"], include_subagents=True)
    assert clean.value == 1.0


def test_default_weights_are_mastras() -> None:
    actual = calls("search", "x", "x")
    explicit = {"accuracy": 0.4, "efficiency": 0.3, "tool_failures": 0.2, "blacklist": 0.1}
    a = _g(actual, steps=S2, max_steps=2, blacklisted_tools=["z"])
    b = _g(actual, steps=S2, max_steps=2, blacklisted_tools=["z"], weights=explicit)
    assert a.value == b.value
    assert a.digest == b.digest


@pytest.mark.parametrize(
    ("config", "message"),
    [
        pytest.param({"max_steps": -1}, "greater than or equal to 0", id="a negative budget"),
        pytest.param(
            {"weights": {"accuracy": -0.1}}, "greater than or equal to 0", id="a negative weight"
        ),
        pytest.param({"blacklisted_sequences": [[]]}, "forbid nothing", id="an empty sequence"),
        pytest.param({"blacklisted_tools": "deleteAll"}, "tuple", id="a bare string blacklist"),
        pytest.param({"max_duration_ms": float("inf")}, "finite", id="an infinite duration"),
    ],
)
def test_construction_errors(config: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        score({"type": "trajectory_guardrails", **config}, run())
