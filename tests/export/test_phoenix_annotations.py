"""What a scored run becomes as Phoenix span annotations, and the exporter's queue bound.

Delivery, retries and what Phoenix shows are tested against a real Phoenix (tests/viewers).
"""

from __future__ import annotations

import asyncio

from export.scored_runs import AGENT_SPAN, TRACE, scored_run
from tracescore import semconv
from tracescore.config import parse_config
from tracescore.config.annotations import PhoenixAnnotationSettings
from tracescore.export.metrics import Telemetry
from tracescore.export.phoenix import PhoenixAnnotations, span_annotations

KINDS = {("refunds", "tone"): "LLM", ("refunds", "tool_calls"): "CODE"}


def test_each_score_is_one_annotation_on_the_agent_span() -> None:
    annotations = {a["name"]: a for a in span_annotations(scored_run(), KINDS)}
    assert sorted(annotations) == ["args", "budget", "judge", "tone", "tool_calls"]
    tool_calls = annotations["tool_calls"]
    assert tool_calls == {
        "span_id": AGENT_SPAN,
        "name": "tool_calls",
        "annotator_kind": "CODE",
        "result": {"score": 0.5, "label": "fail", "explanation": "1 of 2 expected tools"},
        "metadata": {
            "scorer_type": "tool_calls",
            "scorer_digest": "scorer-v1:aa",
            "scenario": "refunds",
            "scenario_digest": "scenario-v1:ff",
            "passed": False,
            "trace_id": TRACE,
        },
        "identifier": "tracescore.refunds",
    }
    assert annotations["tone"]["annotator_kind"] == "LLM"
    assert annotations["judge"]["result"] == {
        "label": "error",
        "explanation": "TimeoutError: no answer",
    }
    assert annotations["args"]["result"]["score"] is None  # not scorable: no value, still shown


def test_a_full_queue_drops_and_counts_instead_of_growing() -> None:
    config = parse_config("scenarios: []\n")
    settings = PhoenixAnnotationSettings(endpoint="http://127.0.0.1:9", queue_size=7)
    telemetry = Telemetry()

    async def go() -> PhoenixAnnotations:
        exporter = PhoenixAnnotations(settings, config, telemetry)
        for _ in range(3):  # 5 annotations a run
            exporter.add(scored_run())
        return exporter

    exporter = asyncio.run(go())
    assert (exporter.pending, exporter.dropped) == (7, 8)
    dropped = telemetry.value(
        semconv.METRIC_EXPORT_FAILURES,
        {
            semconv.SIGNAL: semconv.SIGNAL_PHOENIX_ANNOTATIONS,
            semconv.REASON: semconv.ANNOTATIONS_DROPPED_QUEUE_FULL,
        },
    )
    assert dropped == 8
