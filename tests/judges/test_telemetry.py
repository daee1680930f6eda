"""Judge counters: names from semconv, low-cardinality attributes, cumulative points."""

from __future__ import annotations

from tracescore import semconv
from tracescore.judges.telemetry import (
    DURATION_BUCKETS,
    CounterPoint,
    GaugePoint,
    HistogramPoint,
    JudgeCounters,
)


def test_collect_returns_every_kind_of_point_with_semconv_names() -> None:
    counters = JudgeCounters()
    counters.call("m", "ok", 0.05, 100, 10)
    counters.call("m", "timeout", 5.0)
    counters.error("timeout")
    counters.retry("timeout")
    counters.cache_hit()
    counters.skipped("budget", 3)
    counters.redacted(2)
    counters.redacted(0)
    counters.set_queue_items(7)
    points = counters.collect()
    names = {p.name for p in points}
    assert names == {
        semconv.METRIC_JUDGE_CALLS,
        semconv.METRIC_JUDGE_ERRORS,
        semconv.METRIC_JUDGE_RETRIES,
        semconv.METRIC_JUDGE_CACHE_HITS,
        semconv.METRIC_JUDGE_SKIPPED,
        semconv.METRIC_JUDGE_REDACTIONS,
        semconv.METRIC_JUDGE_QUEUE_ITEMS,
        semconv.METRIC_GEN_AI_CLIENT_OPERATION_DURATION,
        semconv.METRIC_GEN_AI_CLIENT_TOKEN_USAGE,
    }
    for point in points:
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in point.attributes)
        assert list(point.attributes) == sorted(point.attributes)
    gauge = next(p for p in points if isinstance(p, GaugePoint))
    assert gauge.value == 7
    assert counters.value(semconv.METRIC_JUDGE_SKIPPED, reason="budget") == 3
    failed = next(
        p
        for p in points
        if isinstance(p, HistogramPoint)
        and p.name == semconv.METRIC_GEN_AI_CLIENT_OPERATION_DURATION
        and (semconv.ERROR_TYPE, "timeout") in p.attributes
    )
    assert (failed.count, failed.sum, failed.bounds) == (1, 5.0, DURATION_BUCKETS)
    assert failed.bucket_counts[DURATION_BUCKETS.index(5.12)] == 1
    calls = [
        p for p in points if isinstance(p, CounterPoint) and p.name == semconv.METRIC_JUDGE_CALLS
    ]
    assert sorted(dict(p.attributes)[semconv.JUDGE_OUTCOME] for p in calls) == ["ok", "timeout"]
