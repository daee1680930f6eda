"""ScorerBase: digests, error scores, thresholds, labels, copies."""

from __future__ import annotations

import subprocess
import sys
from typing import Any, Literal

import pytest

from scorers._build import call, calls, run
from tracescore.config.scorers import SCORER_CLASSES, parse_scorer, scorer_types
from tracescore.model import AgentStep, ToolCall, Trajectory
from tracescore.scorers.base import Outcome, select_calls
from tracescore.scorers.tool_call_accuracy import ToolCallAccuracy

# One valid config per deterministic scorer type, and parameter changes that must each change
# the digest (every parameter that can change a score).
BASES: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {
    "tool_call_accuracy": (
        {"expected_tool": "a"},
        [
            {"expected_tool": "b"},
            {"strict_mode": True},
            {"compat": "mastra"},
            {"calls": "attempted"},
            {"include_subagents": True},
        ],
    ),
    "tool_calls": (
        {"expected_tools": ["a"]},
        [
            {"expected_tools": ["a", "b"]},
            {"arguments": {"a": {"x": 1}}},
            {"allow_additional": False},
            {"calls": "attempted"},
            {"include_subagents": True},
        ],
    ),
    "trajectory_accuracy": (
        {"steps": [{"tool": "a"}]},
        [
            {"steps": [{"tool": "a", "args": {"x": 1}}]},
            {"steps": []},
            {"ordering": "strict"},
            {"allow_repeated_steps": False},
            {"args_match": "exact"},
            {"compat": "mastra"},
            {"calls": "attempted"},
            {"include_subagents": True},
        ],
    ),
    "trajectory_guardrails": (
        {},
        [
            {"steps": []},
            {"max_steps": 3},
            {"no_redundant_calls": False},
            {"max_retries_per_tool": 3},
            {"blacklisted_tools": ["x"]},
            {"blacklisted_sequences": [["x", "y"]]},
            {"max_total_tokens": 10},
            {"max_duration_ms": 5.0},
            {"weights": {"accuracy": 1.0}},
            {"ordering": "strict"},
            {"compat": "mastra"},
        ],
    ),
    "called_tool": ({"tool": "a"}, [{"tool": "b"}, {"times": 2}, {"compat": "mastra"}]),
    "no_tool_errors": ({}, [{"compat": "mastra"}, {"include_subagents": True}]),
    "used_no_tools": ({}, [{"calls": "clean"}]),
    "tool_order": ({"tools": ["a", "b"]}, [{"tools": ["b", "a"]}]),
    "did_not_call": ({"tool": "a"}, [{"tool": "b"}]),
    "max_tool_calls": ({"max": 2}, [{"max": 3}]),
    "output_includes": ({"text": "x"}, [{"text": "y"}, {"ignore_case": False}]),
}


def _digest(type_: str, config: dict[str, Any]) -> str:
    return parse_scorer({"type": type_, **config}).digest()


def test_every_deterministic_scorer_has_a_digest_case() -> None:
    deterministic = {t for t, cls in scorer_types().items() if cls.deterministic}
    assert deterministic >= set(BASES)
    assert all(cls.deterministic for t, cls in scorer_types().items() if t in BASES)
    assert len(SCORER_CLASSES) >= len(BASES)


@pytest.mark.parametrize("type_", sorted(BASES))
def test_digest_is_stable_and_sensitive(type_: str) -> None:
    base, changes = BASES[type_]
    digest = _digest(type_, base)
    assert digest.startswith("scorer-v1:")
    assert len(digest) == len("scorer-v1:") + 64
    assert _digest(type_, dict(base)) == digest
    assert _digest(type_, {**base, "name": "renamed", "threshold": 0.5}) == digest
    seen = {digest}
    for change in changes:
        changed = _digest(type_, {**base, **change})
        assert changed not in seen, change
        seen.add(changed)


def test_digest_is_the_same_in_another_process() -> None:
    code = (
        "from tracescore.config.scorers import parse_scorer;"
        "print(parse_scorer({'type': 'tool_call_accuracy', 'expected_tool': 'a'}).digest())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == _digest("tool_call_accuracy", {"expected_tool": "a"})


def test_digest_of_compat_mastra_does_not_depend_on_spelling_out_its_call_policy() -> None:
    implied = _digest("called_tool", {"tool": "a", "compat": "mastra"})
    spelled = _digest("called_tool", {"tool": "a", "compat": "mastra", "calls": "attempted"})
    assert implied == spelled


def test_digest_is_computed_once_per_scorer() -> None:
    scorer = parse_scorer({"type": "called_tool", "tool": "a"})
    first = scorer.digest()
    object.__setattr__(scorer, "model_dump", None)  # any recomputation would now fail
    assert scorer.score(run(call("a"))).digest == first


def test_a_changed_copy_is_a_new_validated_scorer() -> None:
    scorer = parse_scorer({"type": "trajectory_accuracy", "steps": [{"tool": "a"}]})
    copy = scorer.model_copy(update={"steps": [{"tool": "b"}]})
    assert copy.digest() != scorer.digest()
    assert copy.score(run(call("b"))).value == 1.0
    assert scorer.model_copy().digest() == scorer.digest()


class _Broken(ToolCallAccuracy):
    type: Literal["tool_call_accuracy"] = "tool_call_accuracy"

    def evaluate(self, trajectory: Trajectory) -> Outcome:
        raise RuntimeError("boom")


def test_a_scorer_that_raises_gives_an_error_score_not_zero() -> None:
    result = _Broken(expected_tool="a").score(run(call("a")))
    assert (result.value, result.passed, result.label) == (None, None, None)
    assert result.error == "RuntimeError: boom"
    assert result.explanation == "scorer failed: RuntimeError: boom"
    assert result.digest == _Broken(expected_tool="a").digest()


def test_a_scorer_error_from_compat_mastra_is_an_error_score() -> None:
    scorer = parse_scorer(
        {"type": "trajectory_guardrails", "max_total_tokens": 10, "compat": "mastra"}
    )
    result = scorer.score(run(call("a")))
    assert result.value is None
    assert (result.error or "").startswith("ScorerError: cannot evaluate token budget")


@pytest.mark.parametrize(
    ("threshold", "value", "passed"),
    [
        pytest.param(0.5, 0.5, True, id="a bare number is a minimum, inclusive"),
        pytest.param(0.51, 0.5, False, id="just under the minimum"),
        pytest.param({"max": 0.5}, 0.5, True, id="a maximum, inclusive"),
        pytest.param({"max": 0.49}, 0.5, False, id="just over the maximum"),
        pytest.param({"min": 0.5, "max": 0.5}, 0.5, True, id="a one-point range"),
    ],
)
def test_threshold_decides_passed(threshold: Any, value: float, passed: bool) -> None:
    scorer = parse_scorer(
        {"type": "tool_calls", "expected_tools": ["a", "b"], "threshold": threshold}
    )
    result = scorer.score(run(call("a")))
    assert result.value == value
    assert result.passed is passed
    assert result.label == ("pass" if passed else "fail")


def test_without_a_threshold_the_scorers_own_passed_or_a_perfect_value_decides() -> None:
    strict = parse_scorer(
        {"type": "tool_calls", "expected_tools": ["a"], "allow_additional": False}
    )
    assert strict.score(run(*calls("a", "b"))).passed is False  # value 1, passed false
    partial = parse_scorer({"type": "trajectory_accuracy", "steps": [{"tool": "a"}, {"tool": "b"}]})
    assert partial.score(run(call("a"))).passed is False
    assert partial.score(run(*calls("a", "b"))).passed is True


def test_a_not_scorable_run_has_no_verdict_even_with_a_threshold() -> None:
    scorer = parse_scorer({"type": "output_includes", "text": "x", "threshold": 0.5})
    result = scorer.score(run(output=None))
    assert (result.value, result.passed, result.label, result.error) == (None, None, None, None)


def test_select_calls_answers_for_the_run_asked_about() -> None:
    # The calls of the last run are remembered; asking about another run, another policy or
    # sub-agents must not get the remembered answer.
    ok, failed, paused = (
        ToolCall("a"),
        ToolCall("b", status="error"),
        ToolCall("c", status="paused"),
    )
    inner = ToolCall("d")
    first = Trajectory(
        trace_id="ab" * 16, span_id=None, steps=(ok, failed, AgentStep("s", steps=(inner,)))
    )
    second = Trajectory(trace_id="ab" * 16, span_id=None, steps=(paused, ok))
    for _ in range(2):
        assert select_calls(first, "attempted") == (ok, failed)
        assert select_calls(first, "clean") == (ok,)
        assert select_calls(first, "attempted", include_subagents=True) == (ok, failed, inner)
        assert select_calls(first, "clean", include_subagents=True) == (ok, inner)
        assert select_calls(second, "clean") == (ok,)
        assert select_calls(second, "attempted", include_subagents=True) == (paused, ok)
