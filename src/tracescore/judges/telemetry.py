"""Counters of the judges' own work, as OpenTelemetry SDK instruments on the service's meter.

`JudgeCounters(meter)` creates them on `Telemetry.meter`, so they join `/metrics` and the OTLP
push; without a meter (offline scoring, tests of one client) they are counted but go nowhere.
Counts are tallied in plain Python and read by observable counters, as `Telemetry` does (see
export/metrics.py for the measurement); the two latency and token histograms are the SDK's.
Attributes are low-cardinality (model, outcome, error type, skip reason; never a trace id).
Judge errors exist at 0 for every known type from the start, so an alert can be written before
the first failure.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from opentelemetry.metrics import CallbackOptions, Meter, NoOpMeter, Observation

from tracescore import semconv

__all__ = ["DURATION_BUCKETS", "TOKEN_BUCKETS", "Attributes", "JudgeCounters"]

Attributes = tuple[tuple[str, str], ...]

# Bucket boundaries advised by the GenAI semantic conventions for these two histograms.
DURATION_BUCKETS: tuple[float, ...] = (
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
)  # fmt: skip
TOKEN_BUCKETS: tuple[float, ...] = tuple(float(4**i) for i in range(14))

_COUNTERS: dict[str, tuple[str, str]] = {
    semconv.METRIC_JUDGE_CALLS: ("{request}", "Judge requests sent, by model and outcome."),
    semconv.METRIC_JUDGE_ERRORS: ("{score}", "Judge scores that failed, by error type."),
    semconv.METRIC_JUDGE_RETRIES: ("{request}", "Judge requests retried, by reason."),
    semconv.METRIC_JUDGE_CACHE_HITS: ("{score}", "Judge answers served from the cache."),
    semconv.METRIC_JUDGE_SKIPPED: ("{score}", "Judge scores skipped on purpose, by reason."),
    semconv.METRIC_JUDGE_REDACTIONS: ("{match}", "Secrets redacted from judge prompts."),
    semconv.METRIC_JUDGE_WAIT_EXPIRED: (
        "{run}",
        "Held spans released at judge_wait without their judge scores.",
    ),
}


class JudgeCounters:
    """Thread-safe cumulative counters; one instance per runner, shared by its clients."""

    def __init__(self, meter: Meter | None = None) -> None:
        """Create the instruments on `meter` (None: counted, not exported)."""
        s = semconv
        meter = meter or NoOpMeter(s.SCOPE_NAME)
        self._lock = threading.Lock()
        self._counts: dict[str, dict[Attributes, int]] = {name: {} for name in _COUNTERS}
        for name in (
            s.METRIC_JUDGE_CACHE_HITS,
            s.METRIC_JUDGE_REDACTIONS,
            s.METRIC_JUDGE_WAIT_EXPIRED,
        ):
            self._counts[name][()] = 0
        for kind in s.JUDGE_ERROR_TYPES:
            self._counts[s.METRIC_JUDGE_ERRORS][((s.ERROR_TYPE, kind),)] = 0
        for reason in (s.JUDGE_SKIP_QUEUE_FULL, s.JUDGE_SKIP_BUDGET, s.JUDGE_SKIP_SHUTDOWN):
            self._counts[s.METRIC_JUDGE_SKIPPED][((s.REASON, reason),)] = 0
        self._queue_items = 0
        for name, (unit, description) in _COUNTERS.items():
            meter.create_observable_counter(name, [self._observer(name)], unit, description)
        meter.create_observable_gauge(
            s.METRIC_JUDGE_QUEUE_ITEMS, [self._observe_queue], "{run}", "Runs waiting for a judge."
        )
        self._duration = meter.create_histogram(
            s.METRIC_GEN_AI_CLIENT_OPERATION_DURATION,
            "s",
            "Duration of judge requests.",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )
        self._tokens = meter.create_histogram(
            s.METRIC_GEN_AI_CLIENT_TOKEN_USAGE,
            "{token}",
            "Tokens used by judge requests.",
            explicit_bucket_boundaries_advisory=TOKEN_BUCKETS,
        )

    def call(
        self,
        model: str,
        outcome: str,
        duration_s: float,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
    ) -> None:
        """One judge HTTP request: its outcome (`ok` or an error type), time and tokens."""
        s = semconv
        base = {s.GEN_AI_OPERATION_NAME: s.OP_CHAT, s.GEN_AI_REQUEST_MODEL: model}
        failed = {} if outcome == s.JUDGE_OUTCOME_OK else {s.ERROR_TYPE: outcome}
        self._add(
            s.METRIC_JUDGE_CALLS, ((s.GEN_AI_REQUEST_MODEL, model), (s.JUDGE_OUTCOME, outcome))
        )
        self._duration.record(duration_s, {**base, **failed})
        for kind, tokens in (
            (s.TOKEN_TYPE_INPUT, input_tokens),
            (s.TOKEN_TYPE_OUTPUT, output_tokens),
        ):
            if tokens is not None:
                self._tokens.record(tokens, {**base, s.GEN_AI_TOKEN_TYPE: kind})

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
        """Sum of a counter over series whose attributes include `attributes` (for tests)."""
        wanted = set(attributes.items())
        with self._lock:
            return sum(v for attrs, v in self._counts[name].items() if wanted <= set(attrs))

    def series(self) -> dict[str, dict[Attributes, int]]:
        """A copy of every counter's series and value (what the next collection reads)."""
        with self._lock:
            return {name: dict(series) for name, series in self._counts.items()}

    def _add(self, name: str, attrs: Attributes, n: int = 1) -> None:
        with self._lock:
            series = self._counts[name]
            series[attrs] = series.get(attrs, 0) + n

    def _observer(self, name: str) -> Callable[[CallbackOptions], Iterable[Observation]]:
        series = self._counts[name]

        def observe(options: CallbackOptions) -> list[Observation]:
            with self._lock:
                return [Observation(v, dict(k)) for k, v in series.items()]

        return observe

    def _observe_queue(self, options: CallbackOptions) -> list[Observation]:
        with self._lock:
            return [Observation(self._queue_items)]
