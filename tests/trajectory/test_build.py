"""Agent runs: which spans form a run, nested agents, handoffs, traces without an agent span."""

from __future__ import annotations

import json
import random

from tracescore.model import AgentStep
from tracescore.trajectory import BuildOptions, build_trajectories
from trajectory.corpora import bench_spans, fixture_span_files
from trajectory.spans import TRACE, agent, assistant, call, chat, span, text, tool, user


def test_nested_agent_is_its_own_run_and_one_step_of_its_parent() -> None:
    spans = [
        agent(1, "boss", None, 0, 100),
        chat(2, 1, 0, [assistant(call("c1", "plan"))]),
        tool(3, 1, 5, "plan", "c1"),
        agent(4, "helper", 1, 10, 50),
        tool(5, 4, 20, "search"),
        chat(6, 1, 60, [assistant(text("done"))]),
    ]
    runs = {t.agent: t for t in build_trajectories(spans).trajectories}
    assert set(runs) == {"boss", "helper"}
    boss, helper = runs["boss"], runs["helper"]
    assert [c.name for c in helper.tool_calls()] == ["search"]
    assert [c.name for c in boss.tool_calls()] == ["plan"]
    assert [c.name for c in boss.tool_calls(include_subagents=True)] == ["plan", "search"]
    (sub,) = [s for s in boss.steps if isinstance(s, AgentStep)]
    assert (sub.name, sub.span_id, len(sub.steps)) == ("helper", "0000000000000004", 1)
    assert [s.kind for s in boss.steps] == ["model_call", "tool_call", "agent", "model_call"]


def test_handoffs_between_sibling_agents_keep_their_order() -> None:
    spans = [
        span(1, "workflow", None, 0, 100),
        agent(3, "triage", 1, 0, 10),
        agent(2, "billing", 1, 20, 30),
        agent(4, "closer", 1, 40, 50),
    ]
    result = build_trajectories(spans)
    assert [t.agent for t in result.trajectories] == ["triage", "billing", "closer"]


def test_without_an_agent_span_the_trace_root_is_the_run() -> None:
    spans = [
        span(1, "handler", None, 0, 100),
        chat(2, 1, 0, [assistant(call("c1", "x"))]),
        tool(3, 1, 5, "x", "c1"),
    ]
    (run,) = build_trajectories(spans).trajectories
    assert (run.span_id, run.agent, [c.name for c in run.tool_calls()]) == (
        "0000000000000001",
        None,
        ["x"],
    )


def test_a_lone_tool_span_is_a_run_with_one_call() -> None:
    (run,) = build_trajectories([tool(1, None, 0, "x")]).trajectories  # type: ignore[arg-type]
    assert [c.span_id for c in run.tool_calls()] == ["0000000000000001"]


def test_several_traces_come_out_ordered_by_start_then_trace_id() -> None:
    late = "ffffffffffffffffffffffffffffffff"
    spans = [
        span(
            1, "invoke_agent b", None, 50, 60, {"gen_ai.operation.name": "invoke_agent"}, trace=late
        ),
        span(2, "invoke_agent a", None, 0, 10, {"gen_ai.operation.name": "invoke_agent"}),
    ]
    assert [t.trace_id for t in build_trajectories(spans).trajectories] == [TRACE, late]


def test_output_tool_is_not_a_function_tool() -> None:
    attrs = {
        "gen_ai.tool.definitions": json.dumps(
            [{"type": "function", "name": "x"}, {"type": "function", "name": "final_result"}]
        )
    }
    spans = [
        agent(1, "a"),
        chat(2, 1, 0, [assistant(call("c1", "x"), call("c2", "final_result", answer=1))], **attrs),
        tool(3, 1, 5, "x", "c1"),
        tool(4, 1, 6, "final_result", "c2"),
    ]
    (run,) = build_trajectories(spans).trajectories
    assert [c.name for c in run.tool_calls()] == ["x"]
    assert run.available_tools == ("x",)
    (kept,) = build_trajectories(spans, BuildOptions(include_output_tools=True)).trajectories
    assert [c.name for c in kept.tool_calls()] == ["x", "final_result"]


def test_agent_span_messages_are_a_fallback_when_chat_spans_recorded_none() -> None:
    root = span(
        1,
        "invoke_agent a",
        None,
        0,
        100,
        {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.input.messages": json.dumps([user("hi")]),
            "gen_ai.output.messages": json.dumps(
                [assistant(call("c1", "x")), assistant(text("bye"))]
            ),
        },
    )
    bare_chat = span(2, "chat m", 1, 0, 2, {"gen_ai.operation.name": "chat"})
    (run,) = build_trajectories([root, bare_chat]).trajectories
    assert [(c.name, c.status) for c in run.tool_calls()] == [("x", "paused")]
    assert (run.input, run.output) == ("hi", "bye")


def test_the_result_does_not_depend_on_arrival_order() -> None:
    spans = [
        agent(1, "boss", None, 0, 100),
        chat(2, 1, 0, [assistant(call("c1", "a"), call("c2", "b"))]),
        tool(3, 1, 5, "a", "c1"),
        agent(4, "helper", 1, 10, 50),
        tool(5, 4, 20, "c"),
        tool(6, 4, 20, "c"),
    ]
    expected = [t.to_dict() for t in build_trajectories(spans).trajectories]
    rng = random.Random(7)
    for _ in range(20):
        shuffled = spans[:]
        rng.shuffle(shuffled)
        assert [t.to_dict() for t in build_trajectories(shuffled).trajectories] == expected


def test_agent_attributes_and_resource_are_kept_for_scenario_matching() -> None:
    (run,) = build_trajectories([agent(1, "a")]).trajectories
    assert run.attributes["gen_ai.agent.name"] == "a"


def test_a_trace_the_caller_grouped_builds_as_any_other_and_is_only_read() -> None:
    # The service hands each trace's own list of spans with its id (`trace_id=`): the builder
    # must give what it gives ungrouped spans, and leave the list as it was.
    for spans in [*fixture_span_files(), bench_spans(20)]:
        for trace_id in sorted({s.trace_id for s in spans}):
            trace = [s for s in spans if s.trace_id == trace_id]
            random.Random(trace_id).shuffle(trace)
            held = list(trace)
            assert build_trajectories(trace, trace_id=trace_id) == build_trajectories(held)
            assert trace == held
            assert all(a is b for a, b in zip(trace, held, strict=True))
    assert build_trajectories([], trace_id=TRACE) == build_trajectories([])


def test_every_built_run_says_whether_it_has_sub_agents() -> None:
    # Scorers and metrics read the builder's flag instead of walking the steps for one.
    runs = [
        t
        for spans in [*fixture_span_files(), bench_spans(20)]
        for t in build_trajectories(spans).trajectories
    ]
    assert any(t.has_subagents for t in runs)
    assert not all(t.has_subagents for t in runs)
    for t in runs:
        assert t.has_subagents is any(isinstance(s, AgentStep) for s in t.steps)
