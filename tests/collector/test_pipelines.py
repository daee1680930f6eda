"""collector-config/fanout.yaml and inline.yaml run by the real collector, each with its
tracescore file under `tracescore serve`, an SDK-instrumented agent and a backend sink.

Everything the backend gets comes through the collector: tracescore's exporter points at the
collector's second receiver, never at the backend.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from collector._agent import SdkAgent
from collector._collector import CONFIGS, Collector, tracescore_config
from collector._scores import FAST, evaluate_spans, events_by_run, span_ids_by_run
from e2e._process import ServeProcess
from support.otlp_sink import OtlpSink, attrs, free_port
from tracescore import semconv

pytestmark = pytest.mark.slow

RUNS = 6
NAMES = {"max_tool_calls", "no_tool_errors"}


def _env(backend: OtlpSink, tracescore_grpc: int) -> tuple[dict[str, str], int, int]:
    agents, scores = free_port(), free_port()
    env = {
        "AGENT_OTLP_GRPC": f"127.0.0.1:{agents}",
        "AGENT_OTLP_HTTP": f"127.0.0.1:{free_port()}",
        "SCORES_OTLP_GRPC": f"127.0.0.1:{scores}",
        "TRACESCORE_OTLP": f"127.0.0.1:{tracescore_grpc}",
        "BACKEND_OTLP_HTTP": backend.endpoint,
    }
    return env, agents, scores


def _send_runs(agents: int) -> SdkAgent:
    agent = SdkAgent(f"127.0.0.1:{agents}")
    for _ in range(RUNS):
        agent.run()
    agent.shutdown()
    return agent


def _check_events(backend: OtlpSink, agent: SdkAgent) -> None:
    events = events_by_run(backend)
    assert set(events) == set(agent.sent())
    agent_spans = agent.agent_spans()
    for trace_id, records in events.items():
        assert sorted(r[semconv.GEN_AI_EVALUATION_NAME] for r in records) == sorted(NAMES)
        assert {r["span_id"] for r in records} == {agent_spans[trace_id]}
        (errors,) = [r for r in records if r[semconv.GEN_AI_EVALUATION_NAME] == "no_tool_errors"]
        failed = trace_id in agent.failing()
        assert errors[semconv.GEN_AI_EVALUATION_SCORE_VALUE] == (0.0 if failed else 1.0)


def test_fanout_sends_originals_to_the_backend_and_scores_back_through_the_collector(
    tmp_path: Path,
) -> None:
    ts_grpc = free_port()
    with OtlpSink("http") as backend:
        env, agents, scores = _env(backend, ts_grpc)
        config = tracescore_config("tracescore-fanout.yaml", ts_grpc, free_port(), scores, FAST)
        with Collector(CONFIGS / "fanout.yaml", env), ServeProcess(config, tmp_path) as serve:
            agent = _send_runs(agents)
            sent = agent.sent()
            backend.wait_for(
                lambda: (
                    len(events_by_run(backend)) == RUNS
                    and len(evaluate_spans(backend)) == RUNS
                    and {semconv.METRIC_RUNS, semconv.METRIC_EVALUATION_SCORE}
                    <= backend.metric_names()
                ),
                timeout=60,
            )
            code, _ = serve.stop()
            assert code == 0
        # The originals, each span exactly once and untouched by scoring.
        received = span_ids_by_run(backend)
        assert {t: set(c) for t, c in received.items()} == sent
        assert all(n == 1 for c in received.values() for n in c.values())
        for s in backend.spans():
            if s.scope != semconv.SCOPE_NAME:
                assert not any(k.startswith("eval.") for k in s.attributes)
        # One evaluate span per run, and one event per score on the agent span.
        assert {t: len(spans) for t, spans in evaluate_spans(backend).items()} == dict.fromkeys(
            sent, 1
        )
        for spans in evaluate_spans(backend).values():
            assert attrs(spans[0].attributes)[semconv.TRACESCORE_SCENARIO] == "any-agent"
        _check_events(backend, agent)


def test_inline_forwards_every_span_with_scores_on_the_agent_span(tmp_path: Path) -> None:
    ts_grpc = free_port()
    with OtlpSink("http") as backend:
        env, agents, scores = _env(backend, ts_grpc)
        config = tracescore_config("tracescore-inline.yaml", ts_grpc, free_port(), scores, FAST)
        with Collector(CONFIGS / "inline.yaml", env), ServeProcess(config, tmp_path) as serve:
            agent = _send_runs(agents)
            sent = agent.sent()
            backend.wait_for(
                lambda: (
                    {t: set(c) for t, c in span_ids_by_run(backend).items()} == sent
                    and len(events_by_run(backend)) == RUNS
                    and semconv.METRIC_RUNS in backend.metric_names()
                ),
                timeout=60,
            )
            code, _ = serve.stop()
            assert code == 0
        received = span_ids_by_run(backend)
        assert all(n == 1 for c in received.values() for n in c.values())
        assert evaluate_spans(backend) == {}  # inline annotates; it adds no spans
        agent_spans = set(agent.agent_spans().values())
        for s in backend.spans():
            scored = {k for k in s.attributes if k.startswith("eval.")}
            if s.span.span_id.hex() in agent_spans:
                failed = s.span.trace_id.hex() in agent.failing()
                assert s.attributes["eval.no_tool_errors.score"] == (0.0 if failed else 1.0)
                assert s.attributes[semconv.TRACESCORE_SCENARIO] == "any-agent"
                assert s.attributes[semconv.TRACESCORE_COMPLETE] is True
            else:
                assert scored == set()
        _check_events(backend, agent)
