"""Counters of the judges' own work, for `/metrics` and OTLP (read by `export.metrics`).

Coupling is one method: `collect()` returns cumulative points (`CounterPoint`, `GaugePoint`,
`HistogramPoint`) with their names from `semconv` and low-cardinality attributes (model,
outcome, error type, skip reason; never a trace id). The exporter renders them.
"""

from __future__ import annotations

import bisect
import math
import threading
from collections import Counter
from dataclasses import dataclass
from typing import TypeAlias

from tracescore import semconv

__all__ = [
    "DURATION_BUCKETS",
    "TOKEN_BUCKETS",
    "Attributes",
    "CounterPoint",
    "GaugePoint",
    "HistogramPoint",
    "JudgeCounters",
    "MetricPoint",
]

Attributes: TypeAlias = tuple[tuple[str, str], ...]

# Bucket boundaries advised by the GenAI semantic conventions for these two histograms.
DURATION_BUCKETS: tuple[float, ...] = (
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
)  # fmt: skip
TOKEN_BUCKETS: tuple[float, ...] = tuple(float(4**i) for i in range(14))


@dataclass(frozen=True, slots=True)
class CounterPoint:
    """A monotonic sum."""

    name: str
    unit: str
    description: str
    attributes: Attributes
    value: int


@dataclass(frozen=True, slots=True)
class GaugePoint:
    """A current value."""

    name: str
    unit: str
    description: str
    attributes: Attributes
    value: int


@dataclass(frozen=True, slots=True)
class HistogramPoint:
    """Explicit-bucket histogram; `bucket_counts` has one more entry than `bounds`."""

    name: str
    unit: str
    description: str
    attributes: Attributes
    count: int
    sum: float
    bounds: tuple[float, ...]
    bucket_counts: tuple[int, ...]
    min: float = math.inf
    max: float = -math.inf


MetricPoint: TypeAlias = CounterPoint | GaugePoint | HistogramPoint


class _Histogram:
    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.count = 0
        self.sum = 0.0
        self.min = math.inf
        self.max = -math.inf

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.count += 1
        self.sum += value
        self.min = min(self.min, value)
        self.max = max(self.max, value)


_DESCRIPTIONS: dict[str, tuple[str, str]] = {
    semconv.METRIC_JUDGE_CALLS: ("{request}", "Judge requests sent, by model and outcome."),
    semconv.METRIC_JUDGE_ERRORS: ("{score}", "Judge scores that failed, by error type."),
    semconv.METRIC_JUDGE_RETRIES: ("{request}", "Judge requests retried, by reason."),
    semconv.METRIC_JUDGE_CACHE_HITS: ("{score}", "Judge answers served from the cache."),
    semconv.METRIC_JUDGE_SKIPPED: ("{score}", "Judge scores skipped on purpose, by reason."),
    semconv.METRIC_JUDGE_REDACTIONS: ("{match}", "Secrets redacted from judge prompts."),
    semconv.METRIC_JUDGE_QUEUE_ITEMS: ("{run}", "Runs waiting for a judge."),
    semconv.METRIC_JUDGE_WAIT_EXPIRED: (
        "{run}",
        "Held spans released at judge_wait without their judge scores.",
    ),
    semconv.METRIC_GEN_AI_CLIENT_OPERATION_DURATION: ("s", "Duration of judge requests."),
    semconv.METRIC_GEN_AI_CLIENT_TOKEN_USAGE: ("{token}", "Tokens used by judge requests."),
}


class JudgeCounters:
    """Thread-safe cumulative counters; one instance per runner, shared by its clients."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counters: Counter[tuple[str, Attributes]] = Counter()
        self._histograms: dict[tuple[str, Attributes], _Histogram] = {}
        self._queue_items = 0

    def call(
        self,
        model: str,
        outcome: str,
        duration_s: float,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
    ) -> None:
        """One judge HTTP request: its outcome (`ok` or an error type), time and tokens."""
        base: Attributes = (
            (semconv.GEN_AI_OPERATION_NAME, semconv.OP_CHAT),
            (semconv.GEN_AI_REQUEST_MODEL, model),
        )
        failed = () if outcome == semconv.JUDGE_OUTCOME_OK else ((semconv.ERROR_TYPE, outcome),)
        with self._lock:
            self._count(
                semconv.METRIC_JUDGE_CALLS,
                ((semconv.GEN_AI_REQUEST_MODEL, model), (semconv.JUDGE_OUTCOME, outcome)),
            )
            self._observe(
                semconv.METRIC_GEN_AI_CLIENT_OPERATION_DURATION,
                (*base, *failed),
                DURATION_BUCKETS,
                duration_s,
            )
            for kind, tokens in (
                (semconv.TOKEN_TYPE_INPUT, input_tokens),
                (semconv.TOKEN_TYPE_OUTPUT, output_tokens),
            ):
                if tokens is not None:
                    self._observe(
                        semconv.METRIC_GEN_AI_CLIENT_TOKEN_USAGE,
                        (*base, (semconv.GEN_AI_TOKEN_TYPE, kind)),
                        TOKEN_BUCKETS,
                        float(tokens),
                    )

    def error(self, error_type: str) -> None:
        """A judge score that failed for good."""
        self._add(semconv.METRIC_JUDGE_ERRORS, ((semconv.ERROR_TYPE, error_type),))

    def retry(self, reason: str) -> None:
        """A request about to be retried (`timeout`, `rate_limited`, `server_error`, ...)."""
        self._add(semconv.METRIC_JUDGE_RETRIES, ((semconv.REASON, reason),))

    def cache_hit(self) -> None:
        """A judge answer served from the cache (no request sent)."""
        self._add(semconv.METRIC_JUDGE_CACHE_HITS, ())

    def skipped(self, reason: str, n: int = 1) -> None:
        """Judge scores skipped on purpose (`queue_full`, `budget`, `shutdown`)."""
        self._add(semconv.METRIC_JUDGE_SKIPPED, ((semconv.REASON, reason),), n)

    def wait_expired(self, n: int = 1) -> None:
        """Runs whose span left at `judge_wait` before their judge scores were ready."""
        self._add(semconv.METRIC_JUDGE_WAIT_EXPIRED, (), n)

    def redacted(self, n: int) -> None:
        """Secrets replaced in a prompt."""
        if n:
            self._add(semconv.METRIC_JUDGE_REDACTIONS, (), n)

    def set_queue_items(self, n: int) -> None:
        """Runs waiting in the judge queue now."""
        with self._lock:
            self._queue_items = n

    def value(self, name: str, **attributes: str) -> int:
        """Sum of a counter over points whose attributes include `attributes` (for tests)."""
        wanted = set(attributes.items())
        with self._lock:
            return sum(
                v for (n, attrs), v in self._counters.items() if n == name and wanted <= set(attrs)
            )

    def collect(self) -> tuple[MetricPoint, ...]:
        """Every point, cumulative since start, sorted by name then attributes."""
        points: list[MetricPoint] = []
        with self._lock:
            for (name, attrs), value in sorted(self._counters.items()):
                unit, description = _DESCRIPTIONS[name]
                points.append(CounterPoint(name, unit, description, attrs, value))
            for (name, attrs), hist in sorted(self._histograms.items(), key=lambda kv: kv[0]):
                unit, description = _DESCRIPTIONS[name]
                points.append(
                    HistogramPoint(
                        name, unit, description, attrs, hist.count, hist.sum, hist.bounds,
                        tuple(hist.counts), hist.min, hist.max,
                    )
                )  # fmt: skip
            unit, description = _DESCRIPTIONS[semconv.METRIC_JUDGE_QUEUE_ITEMS]
            points.append(
                GaugePoint(
                    semconv.METRIC_JUDGE_QUEUE_ITEMS, unit, description, (), self._queue_items
                )
            )
        return tuple(points)

    def _add(self, name: str, attrs: Attributes, n: int = 1) -> None:
        with self._lock:
            self._count(name, attrs, n)

    def _count(self, name: str, attrs: Attributes, n: int = 1) -> None:
        self._counters[(name, tuple(sorted(attrs)))] += n

    def _observe(
        self, name: str, attrs: Attributes, bounds: tuple[float, ...], value: float
    ) -> None:
        key = (name, tuple(sorted(attrs)))
        hist = self._histograms.get(key)
        if hist is None:
            hist = self._histograms[key] = _Histogram(bounds)
        hist.observe(value)
