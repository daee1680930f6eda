"""Forward-first assembly: what is forwarded when, what is held, and that nothing is lost."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from assembler._harness import SHOP, Harness
from support.agent_spans import agent_run, framework_request, request, span_ids
from support.otlp_sink import attrs
from tracescore import semconv
from tracescore.errors import OverloadedError

WAIT = 2.0  # the default decision_wait


def _eval_keys(span: Span) -> set[str]:
    return {k for k in attrs(span.attributes) if k.startswith(("eval.", "tracescore."))}


def test_spans_go_out_at_once_and_the_agent_span_once_its_run_is_scored() -> None:
    h = Harness()
    run = agent_run(failing=["lookup_order"])
    h.send(run.children)
    assert span_ids(h.forwarded_spans()) == span_ids(run.children), "children are not held"
    h.now = 1.0
    h.send([run.agent])
    assert span_ids(h.forwarded_spans()) == span_ids(run.children), "the agent span is held"
    assert h.tick(1.0 + WAIT - 0.01) == 0
    assert h.tick(1.0 + WAIT) == 1
    out = h.forwarded_spans()
    assert span_ids(out) == span_ids(run.spans)
    agent = out[-1]
    got = attrs(agent.attributes)
    # The original attributes stay as they were, the scores come after them.
    assert list(got)[:4] == [kv.key for kv in run.agent.attributes]
    assert got["eval.called_tool.score"] == 1.0
    assert got["eval.called_tool.label"] == "pass"
    assert got["eval.no_tool_errors.score"] == 0.0
    assert got["eval.no_tool_errors.label"] == "fail"
    assert got[semconv.TRACESCORE_SCENARIO] == "shop"
    assert got[semconv.TRACESCORE_VERDICT] == "passed"
    assert str(got[semconv.TRACESCORE_DIGEST]).startswith("scenario-v1:")
    assert agent.span_id == run.agent.span_id
    assert agent.parent_span_id == b""
    # Everything but the added attributes is byte-for-byte the received span.
    stripped = Span()
    stripped.CopyFrom(agent)
    del stripped.attributes[len(run.agent.attributes) :]
    assert stripped.SerializeToString() == run.agent.SerializeToString()
    records = h.log_records()
    assert {attrs(r.attributes)[semconv.GEN_AI_EVALUATION_NAME] for r in records} == {
        "called_tool",
        "no_tool_errors",
    }
    assert {(r.trace_id, r.span_id) for r in records} == {(run.trace_id, run.agent.span_id)}


def test_forwarded_bytes_are_the_received_bytes_when_nothing_is_held() -> None:
    h = Harness()
    run = agent_run()
    req = request(run.children)
    h.send(req)
    assert h.forwarded == [(req.SerializeToString(), len(run.children))]


def test_the_agent_span_of_a_run_no_scenario_matches_is_not_held() -> None:
    h = Harness()
    run = agent_run(agent="billing_agent")
    h.send(run.spans)
    assert span_ids(h.forwarded_spans()) == span_ids(run.spans)
    h.tick(WAIT)
    assert h.log_records() == []
    assert all(not _eval_keys(s) for s in h.forwarded_spans())


def test_a_new_span_restarts_the_quiet_wait() -> None:
    h = Harness()
    run = agent_run()
    h.send([*run.children[:-1], run.agent])
    h.now = 1.5
    h.send(run.children[-1:])
    assert h.tick(WAIT + 0.1) == 0, "quiet is measured from the last span, not the agent span"
    assert h.tick(1.5 + WAIT) == 1


def test_spans_after_their_run_was_scored_are_forwarded_and_counted_late() -> None:
    h = Harness()
    run = agent_run()
    h.send([*run.children[:-1], run.agent])
    h.tick(WAIT)
    h.send(run.children[-1:])
    assert span_ids(h.forwarded_spans())[-1] == run.children[-1].span_id
    assert h.telemetry.value(semconv.METRIC_SPANS_LATE) == 1
    assert h.assembler.runs == 0, "a late span does not start a new buffer"


def test_a_run_whose_agent_span_never_arrives_is_scored_after_max_trace_age() -> None:
    h = Harness(max_trace_age="30s")
    run = agent_run()
    h.send(run.children)
    assert h.tick(29.9) == 0, "no agent span and no root: the run waits for max_trace_age"
    assert h.tick(30.0) == 1
    (ready,) = h.ready
    assert ready.reason == "max_age"
    assert ready.complete is False
    assert h.log_records() == [], "without its agent span the run matches no agent glob"
    h2 = Harness(
        "scenarios:\n  - name: any\n    scorers: [{type: no_tool_errors}]\n", max_trace_age="30s"
    )
    h2.send(run.children)
    h2.tick(30.0)
    (record,) = h2.log_records()
    assert attrs(record.attributes)[semconv.TRACESCORE_SCENARIO] == "any"


def test_spans_with_invalid_ids_are_rejected_named_and_not_forwarded() -> None:
    h = Harness()
    run = agent_run()
    bad = Span(trace_id=bytes(16), span_id=b"\x01" * 8, name="zero trace")
    short = Span(trace_id=b"\x02" * 16, span_id=b"\x03" * 4, name="short span id")
    result = h.send([bad, *run.children, short])
    assert (result.accepted, result.rejected) == (len(run.children), 2)
    assert "trace_id must be 16 non-zero bytes" in result.problems[0]
    assert "'zero trace'" in result.problems[0]
    assert "span_id must be 8 non-zero bytes, got '03030303'" in result.problems[1]
    assert span_ids(h.forwarded_spans()) == span_ids(run.children)
    assert h.telemetry.value(semconv.METRIC_SPANS_REJECTED) == 2
    assert h.telemetry.value(semconv.METRIC_SPANS_RECEIVED) == len(run.children)


@pytest.mark.parametrize(
    ("limit", "message"),
    [
        ({"max_runs": 1}, "assembly.max_runs"),
        ({"max_spans": 3}, "assembly.max_spans"),
        ({"max_bytes": 1000}, "assembly.max_bytes"),
    ],
)
def test_at_a_buffer_limit_new_requests_are_refused_instead_of_evicting(
    limit: dict[str, object], message: str
) -> None:
    h = Harness(**limit)
    run = agent_run()
    h.assembler.check_capacity()
    h.send(run.spans)
    with pytest.raises(OverloadedError, match=message):
        h.assembler.check_capacity()
    assert h.assembler.runs == 1, "nothing was evicted"
    h.tick(WAIT)
    h.assembler.check_capacity()  # recovered once the run was scored
    assert span_ids(h.forwarded_spans()) == span_ids(run.spans)


def test_a_full_export_queue_pushes_back_and_loses_nothing() -> None:
    h = Harness()
    first, second = agent_run(seed=1), agent_run(seed=2)
    h.send(first.spans)
    h.accepting = False
    queue_full = r"export queue full \(exporter.queue_size\).*or this process is behind"
    with pytest.raises(OverloadedError, match=queue_full):
        h.assembler.check_capacity()
    # A request accepted just before the queue filled, and a run scored meanwhile, wait.
    h.send(second.spans)
    h.tick(WAIT)
    assert h.assembler.buffered_bytes > 0
    with pytest.raises(OverloadedError):
        h.assembler.check_capacity()
    h.accepting = True
    h.assembler.check_capacity()  # flushes the outbox first
    out = span_ids(h.forwarded_spans())
    assert Counter(out) == Counter(span_ids(first.spans) + span_ids(second.spans))
    # Order is kept: the first run's children went out before anything of the second.
    assert out.index(first.children[0].span_id) < out.index(second.children[0].span_id)


def test_fanout_mode_forwards_nothing_and_emits_an_evaluate_span_per_run() -> None:
    h = Harness(SHOP + "mode: fanout\n")
    run = agent_run()
    h.send(run.spans)
    h.tick(WAIT)
    assert h.forwarded == []
    (body,) = h.fanout_out
    (rs,) = ExportTraceServiceRequest.FromString(body).resource_spans
    (span,) = rs.scope_spans[0].spans
    assert span.name == "evaluate shop_agent"
    (link,) = span.links  # its own trace, linked to the agent span
    assert (link.trace_id, link.span_id) == (run.trace_id, run.agent.span_id)
    assert attrs(span.attributes)["eval.called_tool.score"] == 1.0


def test_without_scenarios_every_request_is_forwarded_as_received() -> None:
    h = Harness("scenarios: []\n")
    run = agent_run()
    req = request(run.spans)
    h.send(req)
    assert h.forwarded == [(req.SerializeToString(), len(run.spans))]
    assert h.assembler.runs == 0


def test_a_duplicate_agent_span_is_forwarded_not_dropped() -> None:
    h = Harness()
    run = agent_run()
    h.send(run.spans)
    h.send([run.agent])  # a sender retry
    h.tick(WAIT)
    out = span_ids(h.forwarded_spans())
    assert Counter(out)[run.agent.span_id] == 2


def test_json_requests_are_forwarded_as_protobuf() -> None:
    h = Harness()
    run = agent_run()
    h.send(run.spans, raw=False)
    h.tick(WAIT)
    assert span_ids(h.forwarded_spans()) == span_ids(run.spans)


def test_a_request_needs_its_bytes_or_its_message() -> None:
    with pytest.raises(TypeError, match="a request or its bytes"):
        Harness().assembler.consume(None, None)


def test_drain_scores_everything_buffered_and_forwards_every_held_span() -> None:
    h = Harness()
    runs = [agent_run(seed=n) for n in range(5)]
    for run in runs:
        h.send(run.spans)
    assert h.assembler.drain() == 5
    out = h.forwarded_spans()
    assert Counter(span_ids(out)) == Counter(i for r in runs for i in span_ids(r.spans))
    scored = [s for s in out if _eval_keys(s)]
    assert {s.span_id for s in scored} == {r.agent.span_id for r in runs}
    assert h.assembler.runs == 0
    assert h.assembler.buffered_bytes == 0
    assert {r.reason for r in h.ready} == {"shutdown"}


def test_nested_agents_of_a_real_pydantic_ai_trace_are_both_scored() -> None:
    yaml = "scenarios:\n  - name: all\n    gates: [{type: max_tool_calls, max: 5}]\n"
    h = Harness(yaml)
    req = framework_request("pydantic_ai-subagent")
    all_spans = [s for rs in req.resource_spans for ss in rs.scope_spans for s in ss.spans]
    h.send(req)
    held = {s.name for s in all_spans} - {s.name for s in h.forwarded_spans()}
    assert held == {"invoke_agent support_agent", "invoke_agent billing_agent"}
    h.tick(WAIT)
    out = h.forwarded_spans()
    assert Counter(span_ids(out)) == Counter(span_ids(all_spans))
    scored = {s.name: attrs(s.attributes) for s in out if _eval_keys(s)}
    assert set(scored) == held
    assert all(a["eval.max_tool_calls.label"] == "pass" for a in scored.values())
    # The original parent link of the nested agent span is kept.
    billing = next(s for s in out if s.name == "invoke_agent billing_agent")
    original = next(s for s in all_spans if s.name == "invoke_agent billing_agent")
    assert billing.parent_span_id == original.parent_span_id


@settings(max_examples=40, deadline=None)
@given(
    n_runs=st.integers(1, 6),
    batch=st.integers(1, 9),
    seed=st.integers(0, 10_000),
    ticks=st.lists(st.floats(0.0, 5.0), max_size=6),
)
def test_every_accepted_span_is_forwarded_exactly_once(
    n_runs: int, batch: int, seed: int, ticks: list[float]
) -> None:
    import random

    rng = random.Random(seed)
    runs = [
        agent_run(agent=rng.choice(["shop_agent", "other"]), seed=seed + n) for n in range(n_runs)
    ]
    spans = [s for r in runs for s in r.spans]
    rng.shuffle(spans)
    h = Harness()
    times = sorted(ticks)
    for start in range(0, len(spans), batch):
        h.send(spans[start : start + batch])
        if times and rng.random() < 0.3:
            h.tick(times.pop(0))
            h.now = max(h.now, 0.0)
    h.assembler.drain()
    out = h.forwarded_spans()
    assert Counter(span_ids(out)) == Counter(span_ids(spans))
    matched = {r.agent.span_id for r in runs if r.agent.name == "invoke_agent shop_agent"}
    # A matched agent span scored before its children arrived still carries scores.
    assert {s.span_id for s in out if _eval_keys(s)} <= matched
