"""Lenient parsing and truncation of arguments, results, input and output."""

from __future__ import annotations

import json

import pytest

from tracescore.trajectory import BuildOptions, build_trajectories
from tracescore.trajectory._values import clean_id, parse_lenient, truncate
from trajectory.spans import agent, tool


@pytest.mark.parametrize(
    ("raw", "parsed"),
    [
        ('{"a": [1, 2]}', {"a": [1, 2]}),
        ({"a": (1, 2)}, {"a": [1, 2]}),  # a structured OTLP kvlist / array value
        ('"quoted"', "quoted"),  # a JSON-encoded string (Microsoft Agent Framework results)
        ("{'order_id': 'A-42'}", "{'order_id': 'A-42'}"),  # Python repr stays text
        ('{"broken": ', '{"broken": '),
        ("42", "42"),  # a bare number stays the text the tool returned
        ("plain text", "plain text"),
        (b"\xffraw", "\ufffdraw"),
        (float("inf"), "inf"),
        (None, None),
    ],
)
def test_parse_lenient(raw: object, parsed: object) -> None:
    assert parse_lenient(raw, 1000) == parsed


def test_huge_values_are_cut_with_a_visible_marker_and_their_size() -> None:
    big = json.dumps({"rows": ["x" * 100] * 1000})
    spans = [agent(1, "a"), tool(2, 1, 5, "dump", **{"gen_ai.tool.call.result": big})]
    (only,) = (
        build_trajectories(spans, BuildOptions(max_value_chars=64)).trajectories[0].tool_calls()
    )
    assert only.result == big[:64] + f"…[truncated, {len(big)} chars]"


def test_long_strings_inside_structured_values_are_cut_too() -> None:
    assert parse_lenient({"k": "y" * 50}, 20) == {"k": "y" * 20 + "…[truncated, 50 chars]"}


def test_truncate_leaves_short_text_alone() -> None:
    assert truncate("short", 5) == "short"


@pytest.mark.parametrize(
    ("raw", "clean"), [(" call_1\n", "call_1"), ("   ", None), (7, "7"), (True, None)]
)
def test_clean_id(raw: object, clean: str | None) -> None:
    assert clean_id(raw) == clean


def test_options_refuse_a_limit_that_would_hide_everything() -> None:
    with pytest.raises(ValueError, match="max_value_chars must be at least 16, got 3"):
        BuildOptions(max_value_chars=3)
