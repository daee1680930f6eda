"""Scores show in a real Arize Phoenix the way Phoenix shows scores: as span annotations.

A real pydantic-ai agent exports through the OpenTelemetry SDK to `tracescore serve`, which
forwards to Phoenix and posts every score to Phoenix's annotation API; the test reads them back
through Phoenix's REST API. Slow (Phoenix takes 15-40 s to start), so one Phoenix serves the
module.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import ParseDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from e2e._process import ServeProcess, run_agent_client, sent_spans
from support.fake_openai_process import FakeOpenAI
from support.phoenix import Phoenix, free_port

pytestmark = pytest.mark.slow

Factory = Callable[..., FakeOpenAI]
AGENT = "shop-assistant"


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    with Phoenix(tmp_path_factory.mktemp("phoenix")) as running:
        yield running


def config(phoenix: Phoenix | str, judge: FakeOpenAI, *, mode: str, project: str) -> str:
    url = phoenix if isinstance(phoenix, str) else phoenix.url
    return f"""
receivers: {{grpc: null, http: {{endpoint: "127.0.0.1:0"}}}}
exporter: {{endpoint: "{url}", protocol: http/protobuf, compression: none}}
mode: {mode}
assembly: {{decision_wait: 300ms}}
annotations:
  phoenix:
    endpoint: "{url}"
    flush_interval: 200ms
    retry: {{initial_interval: 200ms, max_interval: 1s}}
judge: {{base_url: "{judge.base_url}", model: judge-model, judge_wait: 5s}}
scenarios:
  - name: shop
    match: {{agent: {AGENT}, attributes: {{openinference.project.name: {project}}}}}
    gates: [{{type: called_tool, tool: lookup_order, name: looked_up}}]
    scorers:
      - {{type: no_tool_errors, threshold: 1}}
      - {{type: llm_rubric, name: polite, criteria: The answer is polite.}}
"""


def run_agents(
    tmp_path: Path, serve: ServeProcess, project: str, originals_to: Phoenix | None = None
) -> list[Any]:
    """The agent's runs, sent through the SDK's OTLP/HTTP exporter; their agent spans.

    In fanout mode tracescore forwards nothing: `originals_to` gets the agent's own spans, as
    the collector's other pipeline would send them.
    """
    out = tmp_path / "sent.json"
    run_agent_client("http", f"127.0.0.1:{serve.ports['http']}", out, project=project)
    if originals_to is not None:
        body = ParseDict(json.loads(out.read_text()), ExportTraceServiceRequest())
        post = urllib.request.Request(
            f"{originals_to.url}/v1/traces",
            data=body.SerializeToString(),
            headers={"Content-Type": "application/x-protobuf"},
        )
        with urllib.request.urlopen(post, timeout=10) as reply:
            assert reply.status == 200
    return [s for s in sent_spans(out) if s.name.startswith("invoke_agent")]


@pytest.mark.parametrize("mode", ["forward", "fanout"])
def test_every_score_is_an_annotation_on_the_agent_span(
    phoenix: Phoenix, fake_openai_factory: Factory, tmp_path: Path, mode: str
) -> None:
    judge = fake_openai_factory(
        {"steps": [], "exhausted": {"json": {"score": 0.9, "explanation": "polite enough"}}}
    )
    project = f"tracescore-{mode}"
    with ServeProcess(config(phoenix, judge, mode=mode, project=project), tmp_path) as serve:
        agents = run_agents(tmp_path, serve, project, phoenix if mode == "fanout" else None)
        span_ids = [span.span_id.hex() for span in agents]
        assert len(span_ids) == 2

        def all_there() -> list[Any] | None:
            got = phoenix.span_annotations(span_ids, project)
            return got if len(got) >= 2 * 3 else None

        annotations = phoenix.wait_for(all_there)
    by_span: dict[str, dict[str, Any]] = {}
    for annotation in annotations:
        by_span.setdefault(annotation["span_id"], {})[annotation["name"]] = annotation
    assert sorted(by_span) == sorted(span_ids)
    for names in by_span.values():
        assert sorted(names) == ["looked_up", "no_tool_errors", "polite"]
        looked_up = names["looked_up"]
        assert looked_up["annotator_kind"] == "CODE"
        assert looked_up["result"]["label"] in ("pass", "fail")
        assert looked_up["metadata"]["scenario"] == "shop"
        assert looked_up["metadata"]["scorer_digest"].startswith("scorer-v1:")
        assert looked_up["identifier"] == "tracescore.shop"
        polite = names["polite"]
        assert polite["annotator_kind"] == "LLM"
        assert polite["result"]["score"] == pytest.approx(0.9)
        assert polite["result"]["explanation"] == "polite enough"
    # The order lookup looked up its order; the purchase did not, and its first charge failed.
    scores = sorted(
        (n["looked_up"]["result"]["score"], n["no_tool_errors"]["result"]["score"])
        for n in by_span.values()
    )
    assert scores == [(0.0, 0.0), (1.0, 1.0)]


def test_the_fanout_evaluate_span_is_an_evaluator_outside_the_agent_trace(
    phoenix: Phoenix, fake_openai_factory: Factory, tmp_path: Path
) -> None:
    judge = fake_openai_factory(
        {"steps": [], "exhausted": {"json": {"score": 0.9, "explanation": "fine"}}}
    )
    project = "tracescore-evaluator"
    with ServeProcess(config(phoenix, judge, mode="fanout", project=project), tmp_path) as serve:
        agents = run_agents(tmp_path, serve, project, phoenix)
        agent_traces = {span.trace_id.hex() for span in agents}

        def stored() -> list[dict[str, Any]] | None:
            spans = phoenix.spans(project)
            evaluators = [s for s in spans if s["span_kind"] == "EVALUATOR"]
            agents = [s for s in spans if s["span_kind"] == "AGENT"]
            return spans if len(evaluators) >= 2 and len(agents) >= 2 else None

        spans = phoenix.wait_for(stored)
        found = [s for s in spans if s["span_kind"] == "EVALUATOR"]
    assert all(s["name"] == f"evaluate {AGENT}" for s in found)
    assert not {s["context"]["trace_id"] for s in found} & agent_traces
    assert sorted(s["attributes"]["tracescore.evaluated.trace_id"] for s in found) == sorted(
        agent_traces
    )
    # The agent traces hold only the agent's own spans: their latency is the agent's.
    in_agent_traces = [s for s in spans if s["context"]["trace_id"] in agent_traces]
    assert in_agent_traces
    assert all(s["span_kind"] != "EVALUATOR" for s in in_agent_traces)


def test_annotations_wait_for_a_phoenix_that_is_down_and_arrive_once_it_is_up(
    fake_openai_factory: Factory, tmp_path: Path
) -> None:
    judge = fake_openai_factory(
        {"steps": [], "exhausted": {"json": {"score": 0.9, "explanation": "fine"}}}
    )
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    project = "tracescore-late"
    with ServeProcess(config(url, judge, mode="forward", project=project), tmp_path) as serve:
        agents = run_agents(tmp_path, serve, project)
        span_ids = [span.span_id.hex() for span in agents]
        deadline = time.monotonic() + 60
        while not any("phoenix annotations to" in line for line in serve.lines):
            assert time.monotonic() < deadline, serve.stderr
            time.sleep(0.2)
        failures = [line for line in serve.lines if "phoenix annotations to" in line]
        assert len(failures) == 1, failures  # logged once per cause, not once per retry
        assert "retrying" in failures[0]
        with Phoenix(tmp_path / "late", port=port) as late:
            annotations = late.wait_for(
                lambda: (got := late.span_annotations(span_ids, project)) and len(got) >= 6 and got,
                120,
            )
            assert {a["span_id"] for a in annotations} == set(span_ids)
        assert any("phoenix annotations: delivering again" in line for line in serve.lines)
