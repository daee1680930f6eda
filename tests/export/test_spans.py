"""Scores on spans: the held agent span annotated in place, or a fanout `evaluate` child span."""

from __future__ import annotations

import dataclasses

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from export.scored_runs import AGENT_SPAN, TRACE, scored_run
from tracescore.export.attributes import score_attributes
from tracescore.export.spans import annotate_span, fanout_request, fanout_span
from tracescore.otlp.proto import decode_any_value, decode_proto_request


def agent_span() -> Span:
    span = Span(
        trace_id=bytes.fromhex(TRACE), span_id=bytes.fromhex(AGENT_SPAN), name="invoke_agent bot"
    )
    span.attributes.add(key="gen_ai.agent.name").value.string_value = "support-bot"
    span.attributes.add(key="eval.tool_calls.score").value.double_value = 0.1  # scored upstream
    return span


def test_annotate_appends_score_attributes_and_replaces_stale_ones() -> None:
    span = agent_span()
    attrs = score_attributes(scored_run())
    annotate_span(span, attrs)
    keys = [kv.key for kv in span.attributes]
    assert len(keys) == len(set(keys)), "OTLP keys stay unique"
    got = {kv.key: decode_any_value(kv.value) for kv in span.attributes}
    assert got == {"gen_ai.agent.name": "support-bot", **attrs}
    assert keys[0] == "gen_ai.agent.name", "the span's own attributes keep their place"


def test_annotated_span_decodes_like_any_received_span() -> None:
    request = ExportTraceServiceRequest()
    span = agent_span()
    annotate_span(span, score_attributes(scored_run()))
    request.resource_spans.add().scope_spans.add().spans.append(span)
    (record,) = decode_proto_request(request.SerializeToString()).spans
    assert record.attributes["eval.tool_calls.score"] == 0.5
    assert record.attributes["tracescore.verdict"] == "scored"


def test_fanout_span_is_an_evaluator_in_its_own_trace_linked_to_the_agent_span() -> None:
    """Not a child: it starts seconds after the agent span ended, and as a child it stretched
    the agent trace's latency in viewers (Phoenix: ~25 ms became ~2 s)."""
    result = scored_run()
    attrs = score_attributes(result)
    span = fanout_span(result, attrs, start_ns=100, end_ns=200)
    assert span.name == "evaluate support-bot"
    assert len(span.trace_id) == 16
    assert span.trace_id.hex() != TRACE
    assert span.parent_span_id == b""
    (link,) = span.links
    assert (link.trace_id.hex(), link.span_id.hex()) == (TRACE, AGENT_SPAN)
    assert len(span.span_id) == 8
    assert span.kind == Span.SpanKind.SPAN_KIND_INTERNAL
    assert (span.start_time_unix_nano, span.end_time_unix_nano) == (100, 200)
    assert {kv.key: decode_any_value(kv.value) for kv in span.attributes} == {
        "openinference.span.kind": "EVALUATOR",
        "tracescore.evaluated.trace_id": TRACE,
        "tracescore.evaluated.span_id": AGENT_SPAN,
        **attrs,
    }


def test_a_run_scored_twice_gives_the_same_evaluate_span() -> None:
    result = scored_run()
    first, again = fanout_span(result, {}), fanout_span(result, {})
    assert (first.trace_id, first.span_id) == (again.trace_id, again.span_id)
    moved = dataclasses.replace(result.trajectory, trace_id="ab" * 16)
    other = fanout_span(dataclasses.replace(result, trajectory=moved), {})
    assert (other.trace_id, other.span_id) != (first.trace_id, first.span_id)


def test_fanout_request_keeps_each_agents_resource() -> None:
    a = scored_run()
    b = scored_run(
        trajectory=type(a.trajectory)(
            trace_id="11" * 16, span_id="22" * 8, agent=None, resource={"service.name": "other"}
        )
    )
    request = fanout_request([a, b, a], now_ns=5)
    services = [
        {kv.key: kv.value.string_value for kv in rs.resource.attributes}["service.name"]
        for rs in request.resource_spans
    ]
    assert services == ["support", "other"]
    names = [[s.name for s in rs.scope_spans[0].spans] for rs in request.resource_spans]
    assert names == [["evaluate support-bot", "evaluate support-bot"], ["evaluate"]]
    assert request.resource_spans[0].scope_spans[0].scope.name == "tracescore"
    shared = fanout_request([a, b], resource={"service.name": "tracescore"})
    assert len(shared.resource_spans) == 1


def test_fanout_request_skips_runs_that_were_not_scored() -> None:
    request = fanout_request([scored_run(), scored_run(scenario=None), scored_run(sampled=False)])
    spans = [s for rs in request.resource_spans for s in rs.scope_spans[0].spans]
    assert len(spans) == 1
    assert fanout_request([scored_run(scenario=None)]).resource_spans == []
