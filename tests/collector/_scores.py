"""What a backend sink received from the collector, grouped by run (trace id, hex)."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from support.otlp_sink import OtlpSink, attrs
from tracescore import semconv

__all__ = ["FAST", "evaluate_spans", "events_by_run", "span_ids_by_run"]

# Shorter waits than the files' production values, so a test takes seconds.
FAST: dict[str, Any] = {
    "assembly": {"decision_wait": "300ms"},
    "service": {"metrics_interval": "300ms", "shutdown_grace_period": "5s"},
}


def span_ids_by_run(sink: OtlpSink) -> dict[str, Counter[str]]:
    """Trace id -> how often each span id arrived (the agent's spans, not tracescore's)."""
    out: dict[str, Counter[str]] = defaultdict(Counter)
    for s in sink.spans():
        if s.scope != semconv.SCOPE_NAME:
            out[s.span.trace_id.hex()][s.span.span_id.hex()] += 1
    return dict(out)


def evaluate_spans(sink: OtlpSink) -> dict[str, list[Any]]:
    """Scored run's trace id -> tracescore's `evaluate` spans for it (parented or linked)."""
    out: dict[str, list[Any]] = defaultdict(list)
    for s in sink.spans():
        if s.scope == semconv.SCOPE_NAME and s.span.name.startswith(semconv.EVALUATE_SPAN_NAME):
            links = [link.trace_id for link in s.span.links]
            out[(links[0] if links else s.span.trace_id).hex()].append(s.span)
    return dict(out)


def events_by_run(sink: OtlpSink) -> dict[str, list[dict[str, Any]]]:
    """Trace id -> attributes of its `gen_ai.evaluation.result` events (plus `span_id`)."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for _resource, record in sink.log_records():
        a = attrs(record.attributes)
        if a.get(semconv.EVENT_NAME) == semconv.GEN_AI_EVALUATION_RESULT_EVENT:
            out[record.trace_id.hex()].append({**a, "span_id": record.span_id.hex()})
    return dict(out)
