"""Judges in `tracescore serve`: the span goes out with deterministic scores, judges follow.

A real pipeline (receivers, assembler, exporter) runs in a thread; spans arrive over gRPC, the
judge is the fake server process, and scores, events and metrics land in a real OTLP sink.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import pytest

from judges._helpers import MODEL, tool_answer
from support.agent_spans import agent_run, request
from support.fake_openai_process import FakeOpenAI
from support.otlp_sink import OtlpSink, attrs
from support.serve_thread import ServeThread
from tracescore import semconv
from tracescore.config import parse_config
from tracescore.config.environment import judge_key_problems
from tracescore.errors import ConfigError
from tracescore.pipeline import preflight

Factory = Callable[..., FakeOpenAI]


def config_text(sink: OtlpSink, server: FakeOpenAI, judge_extra: str = "") -> str:
    return f"""
judge: {{base_url: '{server.base_url}', model: {MODEL}, retry_backoff_s: 0.01{judge_extra}}}
scenarios:
  - name: shop
    match: {{agent: shop_agent}}
    gates: [{{type: called_tool, tool: get_weather}}]
    scorers: [{{type: llm_tool_call_accuracy}}]
receivers: {{grpc: {{endpoint: '127.0.0.1:0'}}, http: null}}
exporter: {{endpoint: '{sink.endpoint}'}}
"""


def send(serve: ServeThread, spans: Any) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{serve.grpc_port}") as channel:
        export = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export")
        export(request(spans).SerializeToString(), timeout=10)


def events(sink: OtlpSink) -> dict[str, dict[str, Any]]:
    return {
        attrs(r.attributes)[semconv.GEN_AI_EVALUATION_NAME]: attrs(r.attributes)
        for _, r in sink.log_records()
    }


def test_deterministic_scores_go_out_at_once_and_judge_scores_follow_as_events(
    fake_openai_factory: Factory,
) -> None:
    answer = tool_answer((1, "get_weather", True), (2, "lookup_order", False))
    server = fake_openai_factory([{"json": answer, "delay": 0.5}])
    run = agent_run()
    with OtlpSink() as sink:
        config = parse_config(config_text(sink, server) + "assembly: {decision_wait: 0.1}\n")
        with ServeThread(config) as serve:
            send(serve, run.spans)
            sink.wait_for(lambda: run.agent.span_id in {s.span.span_id for s in sink.spans()})
            agent = next(s for s in sink.spans() if s.span.span_id == run.agent.span_id)
            span_attrs = attrs(agent.span.attributes)
            assert span_attrs["eval.called_tool.score"] == 1.0
            assert not any("llm_tool_call_accuracy" in k for k in span_attrs)  # judge_wait 0
            sink.wait_for(lambda: "llm_tool_call_accuracy" in events(sink))
        judged = events(sink)["llm_tool_call_accuracy"]
        assert judged[semconv.GEN_AI_EVALUATION_SCORE_VALUE] == 0.5
        assert judged[semconv.TRACESCORE_SCENARIO] == "shop"
        record = next(
            r for _, r in sink.log_records()
            if attrs(r.attributes)[semconv.GEN_AI_EVALUATION_NAME] == "llm_tool_call_accuracy"
        )  # fmt: skip
        assert (record.trace_id, record.span_id) == (run.trace_id, run.agent.span_id)
        names = sink.metric_names()
        assert semconv.METRIC_JUDGE_CALLS in names
        assert semconv.METRIC_GEN_AI_CLIENT_TOKEN_USAGE in names
        assert semconv.METRIC_EVALUATION_SCORE in names
    text = serve.pipeline.metrics_text()
    assert 'tracescore_judge_calls_total{gen_ai_request_model="judge-model",' in text
    assert "gen_ai_client_operation_duration_seconds_bucket" in text


def test_shutdown_judges_what_is_still_queued(fake_openai_factory: Factory) -> None:
    server = fake_openai_factory([{"json": tool_answer((1, "get_weather", True),
                                                       (2, "lookup_order", True))}])  # fmt: skip
    run = agent_run()
    with OtlpSink() as sink:
        config = parse_config(config_text(sink, server) + "assembly: {decision_wait: 1h}\n")
        with ServeThread(config) as serve:
            send(serve, run.spans)
            sink.wait_for(lambda: len(sink.spans()) == len(run.children))
            serve.stop()  # SIGTERM: score the held run, judge it, flush
        assert events(sink)["llm_tool_call_accuracy"][semconv.GEN_AI_EVALUATION_SCORE_VALUE] == 1


def test_preflight_names_an_unset_judge_key(
    fake_openai_factory: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SERVE_JUDGE_KEY", raising=False)
    server = fake_openai_factory([])
    with OtlpSink() as sink:
        config = parse_config(config_text(sink, server, ", api_key_env: SERVE_JUDGE_KEY"))
        with pytest.raises(ConfigError, match=r"judge\.api_key_env: .* 'SERVE_JUDGE_KEY' is not"):
            preflight(config)
    assert judge_key_problems(config, {"SERVE_JUDGE_KEY": "k"}) == []
