"""Every metric tracescore emits: name, kind, unit, description, attribute keys and buckets.

`Telemetry` (metrics.py) creates these instruments and records into them; names and attribute
keys come from `semconv`, and tests pin them.
"""

from __future__ import annotations

from tracescore import semconv
from tracescore.export.instruments import Instrument

__all__ = ["CAPPED_KEYS", "DURATION_BOUNDS", "SCORE_BOUNDS", "instruments"]

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


def instruments() -> dict[str, Instrument]:
    """A fresh set of every instrument, by name, with no series recorded yet."""
    s = semconv
    score_keys = (s.GEN_AI_EVALUATION_NAME, s.GEN_AI_AGENT_NAME, s.TRACESCORE_SCENARIO)
    defs = (
        Instrument(s.METRIC_EVALUATION_SCORE, "histogram", "1", "scores of scored runs, by scorer",
                   score_keys, SCORE_BOUNDS),
        Instrument(s.METRIC_EVALUATION_ERRORS, "counter", "{score}",
                   "scores whose scorer failed", (*score_keys, s.ERROR_TYPE)),
        Instrument(s.METRIC_RUNS, "counter", "{run}", "scored runs, by verdict",
                   (s.TRACESCORE_VERDICT, s.TRACESCORE_SCENARIO, s.GEN_AI_AGENT_NAME)),
        Instrument(s.METRIC_TOOL_CALLS, "counter", "{call}", "tool calls of scored runs",
                   (s.GEN_AI_TOOL_NAME, s.TOOL_CALL_STATUS)),
        Instrument(s.METRIC_SPANS_RECEIVED, "counter", "{span}", "spans accepted by a receiver"),
        Instrument(s.METRIC_SPANS_REJECTED, "counter", "{span}", "spans refused as malformed"),
        Instrument(s.METRIC_SPANS_FORWARDED, "counter", "{span}",
                   "spans delivered downstream (with fanout, the evaluate spans)"),
        Instrument(s.METRIC_SPANS_LATE, "counter", "{span}",
                   "spans that arrived after their run was scored"),
        Instrument(s.METRIC_SPANS_DROPPED, "counter", "{span}",
                   "spans accepted but never delivered, by reason", (s.REASON,)),
        Instrument(s.METRIC_RUNS_BUFFERED, "gauge", "{run}", "runs held until they are scored"),
        Instrument(s.METRIC_BYTES_BUFFERED, "gauge", "By", "bytes held by the assembler"),
        Instrument(s.METRIC_EXPORT_QUEUE_ITEMS, "gauge", "{request}",
                   "requests waiting in the export queue"),
        Instrument(s.METRIC_EXPORT_QUEUE_BYTES, "gauge", "By", "bytes waiting in the export queue"),
        Instrument(s.METRIC_SCORING_DURATION, "histogram", "s", "time to score one run", (),
                   DURATION_BOUNDS),
        Instrument(s.METRIC_EXPORT_DURATION, "histogram", "s", "time of one export attempt",
                   (s.SIGNAL,), DURATION_BOUNDS),
        Instrument(s.METRIC_EXPORT_FAILURES, "counter", "{request}", "failed export attempts",
                   (s.SIGNAL, s.REASON)),
    )  # fmt: skip
    return {i.name: i for i in defs}
