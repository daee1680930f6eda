"""Broken span trees are repaired, never fatal, and every repair is a counted warning."""

from __future__ import annotations

import json
from dataclasses import replace

from tracescore.model import SpanRecord
from tracescore.trajectory import build_trajectories
from trajectory.spans import TRACE, agent, sid, span, tool


def _warnings(spans: list[SpanRecord]) -> list[str]:
    result = build_trajectories(spans)
    assert all(w.startswith(f"trace {TRACE}: ") for w in result.warnings)
    return result.warnings


def test_duplicate_span_ids_keep_the_richer_copy_whatever_the_order() -> None:
    rich = tool(2, 1, 5, "x", **{"gen_ai.tool.call.result": "r"})
    poor = tool(2, 1, 5, "x")
    for order in ([agent(1, "a"), rich, poor], [agent(1, "a"), poor, rich]):
        result = build_trajectories(order)
        (only,) = result.trajectories[0].tool_calls()
        assert only.result == "r"
        assert result.warnings == [
            f"trace {TRACE}: 1 spans with a duplicate span id (one copy kept) (e.g. {sid(2)})"
        ]


def test_a_span_without_an_id_is_kept_with_a_synthetic_one() -> None:
    nameless = replace(tool(2, 1, 5, "x"), span_id="")
    result = build_trajectories([agent(1, "a"), nameless])
    assert [c.span_id for c in result.trajectories[0].tool_calls()] == ["missing-0"]
    assert "spans without a span id" in result.warnings[0]


def test_parent_cycle_is_cut_at_its_earliest_span() -> None:
    first = span(
        1,
        "invoke_agent a",
        3,
        0,
        100,
        {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a"},
    )
    spans = [first, tool(2, 1, 5, "x"), span(3, "loop", 2, 6, 7)]
    result = build_trajectories(spans)
    (run,) = result.trajectories
    assert (run.span_id, run.complete) == (sid(1), False)
    assert [c.name for c in run.tool_calls()] == ["x"]
    assert any("parent cycles (cut)" in w for w in result.warnings)


def test_self_parent_is_a_cycle() -> None:
    assert any("parent cycles" in w for w in _warnings([span(1, "a", 1)]))


def test_a_parent_that_never_arrived_makes_the_run_incomplete() -> None:
    spans = [agent(1, "a", parent=99), tool(2, 1, 5, "x")]
    result = build_trajectories(spans)
    assert result.trajectories[0].complete is False
    assert result.warnings == [
        f"trace {TRACE}: 1 spans whose parent never arrived (e.g. {sid(1)} -> {sid(99)})"
    ]


def test_clock_skew_and_unknown_kinds_are_noted_not_fatal() -> None:
    spans = [agent(1, "a", start=10), replace(tool(2, 1, 5, "x"), kind=42)]
    warnings = _warnings(spans)
    assert any("clock skew" in w and "5.000 ms" in w for w in warnings)
    assert any("unknown span kind" in w for w in warnings)
    (run,) = build_trajectories(spans).trajectories
    assert [c.name for c in run.tool_calls()] == ["x"]


def test_attribute_values_of_every_otlp_type_are_read_or_ignored() -> None:
    odd = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": ("not", "a", "string"),
        "gen_ai.tool.call.id": 7,
        "gen_ai.tool.call.arguments": {"nested": {"list": (1, 2.5, True, None, b"\xff")}},
        "gen_ai.tool.call.result": b"\xff\xfebytes",
        "error.type": float("nan"),
    }
    result = build_trajectories([agent(1, "a"), span(2, "execute_tool x", 1, 5, 6, odd)])
    (only,) = result.trajectories[0].tool_calls()
    assert (only.name, only.call_id) == ("x", "7")
    assert only.arguments == {"nested": {"list": [1, 2.5, True, None, "\ufffd"]}}
    assert only.result == "\ufffd\ufffdbytes"
    json.dumps(result.trajectories[0].to_dict(), allow_nan=False).encode("utf-8")


def test_invalid_utf8_and_lone_surrogates_come_out_as_replacement_characters() -> None:
    args = json.dumps({"city": "Par\udcffis"})  # what a JSON \udcff escape decodes to
    spans = [
        agent(1, "a"),
        tool(
            2,
            1,
            5,
            "x",
            **{"gen_ai.tool.call.arguments": args, "gen_ai.tool.call.result": "ok\ud800"},
        ),
    ]
    (only,) = build_trajectories(spans).trajectories[0].tool_calls()
    assert (only.arguments, only.result) == ({"city": "Par\ufffdis"}, "ok\ufffd")


def test_ten_thousand_spans_in_one_trace() -> None:
    spans = [agent(1, "a", None, 0, 20_000)]
    spans += [tool(i, 1, i, f"t{i % 5}") for i in range(2, 10_001)]
    result = build_trajectories(spans)
    (run,) = result.trajectories
    assert len(run.tool_calls()) == 9_999
    assert result.warnings == []


def test_a_ten_thousand_deep_chain_does_not_recurse() -> None:
    spans = [agent(1, "a", None, 0, 20_000)]
    spans += [span(i, f"s{i}", i - 1, i, 20_000 - i) for i in range(2, 10_001)]
    spans.append(tool(10_001, 10_000, 10_000, "deep"))
    (run,) = build_trajectories(spans).trajectories
    assert [c.name for c in run.tool_calls()] == ["deep"]


def test_agents_nested_deeper_than_the_limit_fold_into_their_parent() -> None:
    spans = [agent(i, f"a{i}", i - 1 if i > 1 else None, i, 1000 - i) for i in range(1, 41)]
    result = build_trajectories(spans)
    assert len(result.trajectories) == 32
    assert any("nested deeper than 32" in w and "8 agent spans" in w for w in result.warnings)
