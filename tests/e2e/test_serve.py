"""End to end: a real pydantic-ai agent and SDK exporter → `tracescore serve` → a real OTLP sink.

Both receiving protocols (the SDK's gRPC and HTTP exporters), both export protocols, both
modes. Assertions are on exact attribute names, value types and values, and on span ids and
parent ids, as a backend would see them.
"""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from e2e._process import ServeProcess, run_agent_client, sent_spans
from support.otlp_sink import OtlpSink, attrs
from tracescore import semconv

pytestmark = pytest.mark.slow

CONFIG = """
scenarios:
  - name: shop
    match: {{agent: shop-assistant}}
    gates:
      - {{type: max_tool_calls, max: 5}}
    scorers:
      - {{type: no_tool_errors, threshold: 1.0}}
receivers: {{grpc: {{endpoint: "127.0.0.1:0"}}, http: {{endpoint: "127.0.0.1:0"}}}}
exporter:
  endpoint: "{endpoint}"
  protocol: {protocol}
  retry: {{initial_interval: 100ms, max_interval: 500ms}}
mode: {mode}
assembly: {{decision_wait: 300ms}}
service: {{metrics_interval: 300ms, shutdown_grace_period: 5s}}
"""

PROTOCOLS = [("grpc", "grpc"), ("http", "http/protobuf")]
SCORES = {  # per user prompt: score name -> (value, label)
    "Where is my order 42?": {"max_tool_calls": (1.0, "pass"), "no_tool_errors": (1.0, "pass")},
    "Please buy the blue mug.": {"max_tool_calls": (1.0, "pass"), "no_tool_errors": (0.0, "fail")},
}
VERDICTS = {"Where is my order 42?": "passed", "Please buy the blue mug.": "scored"}


def _types(span: Span) -> dict[str, str | None]:
    return {kv.key: kv.value.WhichOneof("value") for kv in span.attributes}


def _prompt(agent: Span) -> str:
    messages = str(attrs(agent.attributes).get("pydantic_ai.all_messages", ""))
    return next(p for p in SCORES if p in messages)


def _check_scores(span_attrs: dict[str, object], types: dict[str, str | None], prompt: str) -> None:
    for name, (value, label) in SCORES[prompt].items():
        assert span_attrs[f"eval.{name}.score"] == value
        assert types[f"eval.{name}.score"] == "double_value"
        assert span_attrs[f"eval.{name}.label"] == label
        assert isinstance(span_attrs[f"eval.{name}.explanation"], str)
        assert span_attrs[f"eval.{name}.explanation"]
    assert span_attrs[semconv.TRACESCORE_SCENARIO] == "shop"
    assert span_attrs[semconv.TRACESCORE_VERDICT] == VERDICTS[prompt]
    assert str(span_attrs[semconv.TRACESCORE_DIGEST]).startswith("scenario-v1:")
    assert types[semconv.TRACESCORE_COMPLETE] == "bool_value"
    assert span_attrs[semconv.TRACESCORE_COMPLETE] is True


@contextmanager
def _run(
    tmp_path: Path, receive: str, export: str, mode: Literal["forward", "fanout"]
) -> Iterator[tuple[OtlpSink, list[Span], ServeProcess]]:
    with OtlpSink("grpc" if export == "grpc" else "http") as sink:
        config = CONFIG.format(endpoint=sink.endpoint, protocol=export, mode=mode)
        with ServeProcess(config, tmp_path) as serve:
            sent_file = tmp_path / "sent.json"
            run_agent_client(receive, f"127.0.0.1:{serve.ports[receive]}", sent_file)
            yield sink, sent_spans(sent_file), serve


@pytest.mark.parametrize(("receive", "export"), PROTOCOLS)
def test_forward_mode(tmp_path: Path, receive: str, export: str) -> None:
    with _run(tmp_path, receive, export, "forward") as (sink, sent, serve):
        sink.wait_for(lambda: len(sink.spans()) == len(sent))
        sink.wait_for(lambda: len(sink.log_records()) == 4)
        got = {s.span.span_id: s.span for s in sink.spans()}
        assert len(got) == len(sent), "every span arrives exactly once"
        agents = [s for s in sent if s.name == "invoke_agent shop-assistant"]
        assert len(agents) == 2
        for original in sent:
            forwarded = got[original.span_id]
            assert forwarded.trace_id == original.trace_id
            assert forwarded.parent_span_id == original.parent_span_id
            if original not in agents:
                assert forwarded.SerializeToString() == original.SerializeToString()
        for original in agents:
            forwarded = got[original.span_id]
            n = len(original.attributes)
            assert list(forwarded.attributes)[:n] == list(original.attributes)
            _check_scores(attrs(forwarded.attributes), _types(forwarded), _prompt(original))
        by_span = {a.span_id: _prompt(a) for a in agents}
        for resource, record in sink.log_records():
            event = attrs(record.attributes)
            assert record.event_name == semconv.GEN_AI_EVALUATION_RESULT_EVENT
            assert record.span_id in by_span
            assert record.trace_id == got[record.span_id].trace_id
            name = event[semconv.GEN_AI_EVALUATION_NAME]
            value, label = SCORES[by_span[record.span_id]][str(name)]
            assert event[semconv.GEN_AI_EVALUATION_SCORE_VALUE] == value
            assert event[semconv.GEN_AI_EVALUATION_SCORE_LABEL] == label
            assert event[semconv.GEN_AI_EVALUATION_EXPLANATION]
            assert event[semconv.TRACESCORE_SCENARIO] == "shop"
            assert str(event[semconv.TRACESCORE_DIGEST]).startswith("scorer-v1:")
            assert resource["service.name"] == "shop"
        sink.wait_for(
            lambda: (
                {
                    semconv.METRIC_EVALUATION_SCORE,
                    semconv.METRIC_RUNS,
                    semconv.METRIC_TOOL_CALLS,
                    semconv.METRIC_SPANS_RECEIVED,
                    semconv.METRIC_SPANS_FORWARDED,
                }
                <= sink.metric_names()
            )
        )
        with urllib.request.urlopen(f"http://127.0.0.1:{serve.ports['http']}/metrics") as resp:
            text = resp.read().decode()
        runs = [line for line in text.splitlines() if line.startswith("tracescore_runs_total{")]
        assert any('tracescore_verdict="passed"' in line for line in runs)
        assert any('tracescore_verdict="scored"' in line for line in runs)
        assert serve.stop()[0] == 0


@pytest.mark.parametrize(("receive", "export"), PROTOCOLS)
def test_fanout_mode(tmp_path: Path, receive: str, export: str) -> None:
    with _run(tmp_path, receive, export, "fanout") as (sink, sent, serve):
        sink.wait_for(lambda: len(sink.spans()) == 2)
        sink.wait_for(lambda: len(sink.log_records()) == 4)
        agents = {s.span_id: s for s in sent if s.name == "invoke_agent shop-assistant"}
        sent_ids = {s.span_id for s in sent}
        for received in sink.spans():
            span = received.span
            assert span.span_id not in sent_ids, "fanout forwards none of the original spans"
            assert span.name == "evaluate shop-assistant"
            assert received.scope == semconv.SCOPE_NAME
            (link,) = span.links  # a trace of its own, linked to the agent span it scores
            agent = agents[link.span_id]
            assert link.trace_id == agent.trace_id != span.trace_id
            _check_scores(attrs(span.attributes), _types(span), _prompt(agent))
        assert {s.span.links[0].span_id for s in sink.spans()} == set(agents)
        assert serve.stop()[0] == 0
