"""Every metric tracescore emits: name, kind, unit, description, attribute keys and buckets.

`Telemetry` (metrics.py) creates one OpenTelemetry SDK instrument per entry; names and attribute
keys come from `semconv`, and tests pin them. Counters and gauges are observable (tallied in
Python, read at collection); histograms are synchronous (see metrics.py for why).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from tracescore import semconv

__all__ = ["CAPPED_KEYS", "DURATION_BOUNDS", "SCORE_BOUNDS", "SPECS", "Kind", "Spec"]

Kind: TypeAlias = Literal["counter", "gauge", "histogram"]

# 0.0 gets its own bucket: a score of exactly 0 (a failed check) is common and telling.
SCORE_BOUNDS: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
DURATION_BOUNDS: tuple[float, ...] = (
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
)  # fmt: skip
# Attribute keys whose values come from traffic or config and so need a cap.
CAPPED_KEYS = frozenset(
    {
        semconv.GEN_AI_AGENT_NAME,
        semconv.GEN_AI_TOOL_NAME,
        semconv.GEN_AI_EVALUATION_NAME,
        semconv.TRACESCORE_SCENARIO,
        semconv.REASON,
        semconv.ERROR_TYPE,
    }
)


@dataclass(frozen=True, slots=True)
class Spec:
    """One metric as declared to the SDK."""

    name: str
    kind: Kind
    unit: str
    description: str
    keys: tuple[str, ...] = ()
    """Attribute keys, in the order series keys use them."""
    bounds: tuple[float, ...] = ()
    """Histogram bucket upper bounds (inclusive), ascending."""


_s = semconv
_SCORE_KEYS = (_s.GEN_AI_EVALUATION_NAME, _s.GEN_AI_AGENT_NAME, _s.TRACESCORE_SCENARIO)
SPECS: tuple[Spec, ...] = (
    Spec(_s.METRIC_EVALUATION_SCORE, "histogram", "1", "scores of scored runs, by scorer",
         _SCORE_KEYS, SCORE_BOUNDS),
    Spec(_s.METRIC_EVALUATION_RESULTS, "counter", "{score}",
         "scores of scored runs by result: passed, failed, error, unscorable, scored",
         (_s.GEN_AI_EVALUATION_NAME, _s.TRACESCORE_SCENARIO, _s.EVALUATION_RESULT)),
    Spec(_s.METRIC_EVALUATION_ERRORS, "counter", "{score}", "scores whose scorer failed",
         (*_SCORE_KEYS, _s.ERROR_TYPE)),
    Spec(_s.METRIC_RUNS, "counter", "{run}", "scored runs, by verdict",
         (_s.TRACESCORE_VERDICT, _s.TRACESCORE_SCENARIO, _s.GEN_AI_AGENT_NAME)),
    Spec(_s.METRIC_TOOL_CALLS, "counter", "{call}", "tool calls of scored runs",
         (_s.GEN_AI_TOOL_NAME, _s.TOOL_CALL_STATUS)),
    Spec(_s.METRIC_SPANS_RECEIVED, "counter", "{span}", "spans accepted by a receiver"),
    Spec(_s.METRIC_SPANS_REJECTED, "counter", "{span}", "spans refused as malformed"),
    Spec(_s.METRIC_REQUESTS_REFUSED, "counter", "{request}",
         "requests answered 503 / UNAVAILABLE (retry later), by the limit reached", (_s.REASON,)),
    Spec(_s.METRIC_SPANS_FORWARDED, "counter", "{span}",
         "spans delivered downstream (with fanout, the evaluate spans)"),
    Spec(_s.METRIC_SPANS_LATE, "counter", "{span}",
         "spans that arrived after their run was scored"),
    Spec(_s.METRIC_SPANS_DROPPED, "counter", "{span}",
         "spans accepted but never delivered, by reason", (_s.REASON,)),
    Spec(_s.METRIC_RUNS_BUFFERED, "gauge", "{run}", "runs held until they are scored"),
    Spec(_s.METRIC_BYTES_BUFFERED, "gauge", "By", "bytes held by the assembler"),
    Spec(_s.METRIC_EXPORT_QUEUE_ITEMS, "gauge", "{request}",
         "requests waiting in the export queue"),
    Spec(_s.METRIC_EXPORT_QUEUE_BYTES, "gauge", "By", "bytes waiting in the export queue"),
    Spec(_s.METRIC_SCORING_DURATION, "histogram", "s", "time to score one run", (),
         DURATION_BOUNDS),
    Spec(_s.METRIC_EXPORT_DURATION, "histogram", "s", "time of one export attempt",
         (_s.SIGNAL,), DURATION_BOUNDS),
    Spec(_s.METRIC_EXPORT_FAILURES, "counter", "{request}", "failed export attempts",
         (_s.SIGNAL, _s.REASON)),
    Spec(_s.METRIC_EXPORT_DROPPED, "counter", "{item}",
         "log records and metric points never delivered, by signal and reason",
         (_s.SIGNAL, _s.REASON)),
)  # fmt: skip
