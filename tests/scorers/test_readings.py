"""A scorer reads no optional part of a run (`Reading`) it does not name in `readings()`.

`serve` leaves the attributes behind a part that no configured scorer reads undecoded, so a
scorer that read one it did not name would score live runs differently from offline ones. Every
deterministic scorer is scored here on every fixture run twice: built from all attributes, and
from the attributes left once its unnamed parts are dropped; the scores must be the same. Two
controls show the corpus would catch a scorer that lied about arguments or model usage.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from functools import cache
from typing import Any

import pytest

from tracescore.config.scorers import parse_scorer, scorer_types
from tracescore.model import READINGS, Reading, SpanRecord, ToolCall, Trajectory
from tracescore.scorers.base import ScorerBase
from tracescore.trajectory import attribute_filter, build_trajectories, value_kept
from trajectory.corpora import bench_spans, fixture_span_files


def _without(spans: Iterable[SpanRecord], unread: Iterable[Reading]) -> list[SpanRecord]:
    """The spans as a receiver keeps them when nothing reads the parts `unread`."""
    keep = attribute_filter((), unread)
    return [
        dataclasses.replace(
            s, attributes={k: v for k, v in s.attributes.items() if value_kept(keep(k), v)}
        )
        for s in spans
    ]


def _runs(spans: list[SpanRecord]) -> list[Trajectory]:
    return build_trajectories(spans).trajectories


@cache
def _corpus() -> tuple[list[SpanRecord], ...]:
    return (*fixture_span_files(), bench_spans(3))


@cache
def _pairs(unread: frozenset[Reading]) -> list[tuple[Trajectory, Trajectory]]:
    """Each fixture run built from every attribute and without the parts `unread`."""
    pairs: list[tuple[Trajectory, Trajectory]] = []
    for spans in _corpus():
        full, trimmed = _runs(spans), _runs(_without(spans, unread))
        assert [t.span_id for t in full] == [t.span_id for t in trimmed]
        pairs += zip(full, trimmed, strict=True)
    return pairs


def _calls() -> list[ToolCall]:
    return [c for full, _ in _pairs(frozenset()) for c in full.tool_calls()]


def _tool(n: int) -> str:
    names = list(dict.fromkeys(c.name for c in _calls()))
    return names[n % len(names)]


def _samples() -> dict[str, list[dict[str, Any]]]:
    """Configs of every deterministic scorer, naming tools the fixtures call."""
    first, second = _tool(0), _tool(1)
    # A call whose arguments only its tool span recorded (no model request repeats them), so
    # the controls below see them go when tool arguments are left undecoded.
    with_args = next(
        a
        for full, trimmed in _pairs(frozenset({"tool_arguments"}))
        for a, b in zip(full.tool_calls(), trimmed.tool_calls(), strict=True)
        if isinstance(a.arguments, dict) and a.arguments and b.arguments != a.arguments
    )
    steps = [{"tool": with_args.name, "args": with_args.arguments}]
    return {
        "called_tool": [{"tool": first}, {"tool": second, "compat": "mastra", "times": 2}],
        "tool_order": [{"tools": [first, second]}],
        "did_not_call": [{"tool": first}],
        "used_no_tools": [{}],
        "max_tool_calls": [{"max": 2}, {"max": 1, "include_subagents": True}],
        "no_tool_errors": [{}, {"compat": "mastra"}],
        "output_includes": [{"text": "the"}],
        "tool_call_accuracy": [{"expected_tool": first}],
        "tool_calls": [
            {"expected_tools": [first]},
            {
                "expected_tools": [with_args.name],
                "arguments": {with_args.name: [with_args.arguments]},
            },
        ],
        "trajectory_accuracy": [{"steps": steps}, {"steps": steps, "compat": "mastra"}],
        "trajectory_guardrails": [{"max_total_tokens": 10, "max_steps": 3}],
    }


def _differences(scorer: ScorerBase, unread: frozenset[Reading]) -> list[str]:
    """Runs the scorer scores differently once the parts `unread` are dropped."""
    found = []
    for full, trimmed in _pairs(unread):
        a, b = scorer.score(full), scorer.score(trimmed)
        if (a.value, a.label, a.passed, a.explanation) != (
            b.value,
            b.label,
            b.passed,
            b.explanation,
        ):
            found.append(f"{full.trace_id}: {a.explanation!r} != {b.explanation!r}")
    return found


def test_every_deterministic_scorer_has_samples() -> None:
    deterministic = {t for t, cls in scorer_types().items() if cls.deterministic}
    assert set(_samples()) == deterministic


@pytest.mark.parametrize("type_", sorted(_samples()))
def test_a_scorer_scores_the_same_without_the_parts_it_does_not_read(type_: str) -> None:
    for config in _samples()[type_]:
        scorer = parse_scorer({"type": type_, **config})
        unread = READINGS - scorer.readings()
        assert not _differences(scorer, unread), config


def test_tool_name_and_status_scorers_read_no_optional_part() -> None:
    # What makes `serve` lean for the common gates: pinned so that a change is deliberate.
    narrow = {
        "called_tool",
        "tool_order",
        "did_not_call",
        "used_no_tools",
        "max_tool_calls",
        "no_tool_errors",
        "output_includes",
        "tool_call_accuracy",
    }
    for type_ in narrow:
        for config in _samples()[type_]:
            scorer = parse_scorer({"type": type_, **config})
            # Under Mastra's rule an `error` in a call's result fails it.
            mastra_errors = type_ == "no_tool_errors" and config.get("compat") == "mastra"
            assert scorer.readings() == ({"tool_results"} if mastra_errors else set()), type_
    names_only, with_args = (
        parse_scorer({"type": "tool_calls", **c}) for c in _samples()["tool_calls"]
    )
    assert names_only.readings() == frozenset()
    assert with_args.readings() == {"tool_arguments"}


def test_results_left_undecoded_are_gone_but_statuses_stay() -> None:
    # The corpus has tool results a receiver leaves out when nothing reads them; the calls keep
    # their statuses, since a result that may fail its call (MCP isError) is still decoded.
    unread = frozenset({"tool_results"})
    pairs = [
        (a, b)
        for full, trimmed in _pairs(unread)
        for a, b in zip(
            full.tool_calls(include_subagents=True),
            trimmed.tool_calls(include_subagents=True),
            strict=True,
        )
    ]
    assert any(a.result is not None and b.result is None for a, b in pairs)
    assert [a.status for a, _ in pairs] == [b.status for _, b in pairs]
    assert any(a.status == "error" for a, _ in pairs)


@pytest.mark.parametrize(
    ("type_", "part"),
    [
        ("trajectory_accuracy", "tool_arguments"),
        ("tool_calls", "tool_arguments"),
        ("trajectory_guardrails", "model_usage"),
    ],
)
def test_the_corpus_catches_a_scorer_reading_a_part_it_left_out(type_: str, part: Reading) -> None:
    # Controls: scorers that do read the part score some fixture run differently without it,
    # so the test above would catch a scorer that read a part without naming it.
    scorer = parse_scorer({"type": type_, **_samples()[type_][-1]})
    assert part in scorer.readings()
    assert _differences(scorer, frozenset({part}))
