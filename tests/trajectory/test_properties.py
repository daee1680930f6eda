"""Property tests: any span forest, however broken, builds without error, deterministically."""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracescore.model import AgentStep, SpanEvent, SpanRecord, StatusCode, ToolCall
from tracescore.trajectory import BuildOptions, build_trajectories
from tracescore.trajectory._classify import classify, classify_every_convention

TRACES = ("0af7651916cd43dd8448eb211c80319c", "ffffffffffffffffffffffffffffffff")
IDS = [f"{i:016x}" for i in range(1, 13)] + [""]
NAMES = ["get_weather", "lookup", "final_result", "x"]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["\ud800", "{'a': 1}", '{"a": [1', "[1, 2]", '"q"', "null", " call_1 "]),
    st.binary(max_size=8),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=5), inner, max_size=3),
    ),
    max_leaves=8,
)


@st.composite
def message_json(draw: st.DrawFn) -> str:
    parts = draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "type": st.sampled_from(["tool_call", "tool_call_response", "text", "weird"]),
                    "id": st.sampled_from([None, "call_1", " call_2", "call_3"]),
                    "name": st.sampled_from([*NAMES, None]),
                    "arguments": values.map(_jsonable),
                    "response": st.sampled_from([None, "ok", {"denied": True}, {"isError": True}]),
                    "content": st.text(max_size=5),
                }
            ),
            max_size=4,
        )
    )
    role = draw(st.sampled_from(["assistant", "user", "tool", None]))
    return json.dumps([{"role": role, "parts": parts}])


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return 0
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    return value


known_attrs = st.fixed_dictionaries(
    {},
    optional={
        "gen_ai.operation.name": st.sampled_from(["execute_tool", "invoke_agent", "chat", "junk"]),
        "gen_ai.tool.name": st.one_of(st.sampled_from(NAMES), values),
        "gen_ai.tool.call.id": st.one_of(st.sampled_from(["call_1", "call_2 ", "call_3"]), values),
        "gen_ai.tool.call.arguments": values,
        "gen_ai.tool.call.result": values,
        "gen_ai.output.messages": st.one_of(message_json(), values),
        "gen_ai.input.messages": st.one_of(message_json(), values),
        "gen_ai.agent.name": values,
        "gen_ai.tool.definitions": values,
        "openinference.span.kind": st.sampled_from(["TOOL", "AGENT", "LLM", "CHAIN", "ODD"]),
        "tool.name": values,
        "input.value": values,
        "output.value": values,
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": values,
        "ai.operationId": st.sampled_from(["ai.toolCall", "ai.generateText.doGenerate", "ai.x"]),
        "ai.response.toolCalls": values,
        "traceloop.span.kind": st.sampled_from(["tool", "agent", "workflow", "odd"]),
        "traceloop.entity.input": values,
        "mastra.span.type": st.sampled_from(["TOOL_CALL", "AGENT_RUN", "MODEL_GENERATION"]),
        "pydantic_ai.tool.deferral.name": values,
        "pydantic_ai.all_messages": st.one_of(message_json(), values),
        "error.type": values,
        "gen_ai.usage.input_tokens": values,
    },
)

events = st.lists(
    st.builds(
        SpanEvent,
        st.sampled_from(["exception", "gen_ai.tool.call.decision", "other"]),
        st.integers(min_value=0, max_value=10),
        st.fixed_dictionaries(
            {},
            optional={
                "exception.type": values,
                "gen_ai.tool.call.decision.outcome": st.sampled_from(
                    ["deny", "require_approval", "allow"]
                ),
                "gen_ai.tool.call.id": values,
                "gen_ai.tool.name": values,
            },
        ),
    ),
    max_size=2,
).map(tuple)

spans_strategy = st.lists(
    st.builds(
        SpanRecord,
        trace_id=st.sampled_from(TRACES),
        span_id=st.sampled_from(IDS),
        parent_span_id=st.one_of(st.none(), st.sampled_from([*IDS[:-1], "00000000000000ff"])),
        name=st.sampled_from(
            [
                "execute_tool x",
                "invoke_agent a",
                "chat m",
                "ai.toolCall",
                "running tool",
                "",
                "handoff to b",
            ]
        ),
        start_ns=st.integers(min_value=0, max_value=50),
        end_ns=st.integers(min_value=0, max_value=50),
        kind=st.integers(min_value=-2, max_value=9),
        status_code=st.sampled_from(list(StatusCode)),
        attributes=known_attrs,
        events=events,
        scope=st.sampled_from(["", "pydantic-ai"]),
    ),
    max_size=25,
)


def _dump(
    spans: list[SpanRecord], options: BuildOptions | None = None
) -> tuple[list[str], list[str]]:
    result = build_trajectories(spans, options)
    lines = [
        json.dumps(t.to_dict(), allow_nan=False, ensure_ascii=False, sort_keys=True)
        for t in result.trajectories
    ]
    return lines, result.warnings


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spans_strategy, st.randoms(use_true_random=False))
def test_any_forest_builds_deterministically_into_valid_json(
    spans: list[SpanRecord], rnd: random.Random
) -> None:
    lines, warnings = _dump(spans)
    for line in lines:
        line.encode("utf-8")  # no lone surrogates reach the output
    shuffled = spans[:]
    rnd.shuffle(shuffled)
    assert _dump(shuffled) == (lines, warnings)
    trace_ids = {s.trace_id for s in spans}
    assert all(any(w.startswith(f"trace {t}: ") for t in trace_ids) for w in warnings)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spans_strategy)
def test_every_span_is_read_once_and_steps_point_at_real_spans(spans: list[SpanRecord]) -> None:
    result = build_trajectories(spans, BuildOptions(max_value_chars=32))
    known = {s.span_id for s in spans} | {f"missing-{i}" for i in range(len(spans))}
    per_trace: dict[str, list[str]] = {}
    for run in result.trajectories:
        for step in run.steps:
            assert step.span_id is None or step.span_id in known
            if isinstance(step, ToolCall) and step.span_id is not None:
                per_trace.setdefault(run.trace_id, []).append(step.span_id)
            if isinstance(step, AgentStep):
                assert step.span_id in known
        assert run.has_subagents is any(isinstance(s, AgentStep) for s in run.steps)
    for ids in per_trace.values():
        assert len(ids) == len(set(ids))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spans_strategy)
def test_marker_dispatch_equals_asking_every_reader(spans: list[SpanRecord]) -> None:
    options = BuildOptions()
    for record in spans:
        fast, full = classify(record, options), classify_every_convention(record, options)
        assert (fast is None) == (full is None)
        if fast is not None and full is not None:
            assert (fast.role, fast.convention, fast.tool_name, fast.agent_name) == (
                full.role,
                full.convention,
                full.tool_name,
                full.agent_name,
            )
            assert (fast.arguments, fast.result, fast.error, fast.requests) == (
                full.arguments,
                full.result,
                full.error,
                full.requests,
            )
