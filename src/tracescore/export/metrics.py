"""The metrics tracescore emits, through the OpenTelemetry SDK: scores, runs, tool calls, and the
service's own health.

One `MeterProvider` per `Telemetry`, with a Prometheus reader (`render_prometheus`, for
`/metrics`) and, once `push_to` is called, a periodic reader with an OTLP metric exporter. The
instruments are declared in `catalog`.

Counters and gauges are tallied here in plain Python, under one lock, and read by the SDK
through observable instruments at each collection; the score and scoring-latency histograms
are aggregated in bulk (export/histograms.py) and added to what the SDK's readers collect; the
export latency histogram (a few values a second) is the SDK's own. Why: recording through
the SDK costs about 2.6 µs per counter `add` and 9-13 µs per histogram value, per reader.
Measured with `bench/metrics_cost.py` (CPU per scored run of 3 scores and 3 tool calls, one
scrape per 1,000 runs; medians of three runs of five rounds, side by side, on a shared
machine): every count and value through the SDK as it happens, 68-102 µs with the Prometheus
reader and 104-152 µs with the OTLP push too; counts tallied and read by observable counters
but values through the SDK histogram, 29-31 and 40-43 µs; as shipped, 9.6-12.0 and 9.5-16.5
µs; the hand-written recorder this replaced, 5.3-6.1 µs in Python, 3.6-4.1 µs with its C twin.

Every counter exists at 0 from start-up: those without attributes, `tracescore.spans.dropped`
for each known reason, and (judges/telemetry.py) judge errors for each known type, so alerts
can be written before the first loss. Cardinality is bounded: attribute values that come from
traffic (agent, tool and evaluation names, scenarios) are capped per key (`max_values` distinct
values each); later values are folded into `_other`. Trace ids never become attributes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping

from opentelemetry.metrics import CallbackOptions, Meter, Observation
from opentelemetry.sdk.metrics import AlwaysOffExemplarFilter, MeterProvider
from opentelemetry.sdk.metrics.export import MetricExporter
from opentelemetry.sdk.resources import Resource
from prometheus_client import CollectorRegistry, generate_latest

from tracescore import __version__, semconv
from tracescore.export.catalog import CAPPED_KEYS, DURATION_BOUNDS, SCORE_BOUNDS, SPECS, Spec
from tracescore.export.histograms import BulkHistograms, PrometheusReader, PushReader
from tracescore.export.run_metrics import Attrs, ScoredRuns, score_result
from tracescore.model.run_result import RunResult
from tracescore.scorers._calls import selector

__all__ = ["DURATION_BOUNDS", "SCORE_BOUNDS", "Attrs", "Telemetry", "score_result"]

_PENDING_LIMIT = 4096
_EVERY_CALL = selector("attempted", include_subagents=True)
# Histograms aggregated in bulk (export/histograms.py): recorded once or more per scored run.
_BULK = frozenset({semconv.METRIC_EVALUATION_SCORE, semconv.METRIC_SCORING_DURATION})


class Telemetry:
    """The service's metrics: a MeterProvider, its instruments, and the recording API."""

    def __init__(self, *, max_values: int = 100, resource: Mapping[str, str] | None = None) -> None:
        """Create every instrument; counters without attributes start at 0.

        Args:
            max_values: distinct values kept per capped attribute before folding to `_other`.
            resource: resource attributes; default `service.name=tracescore` and its version.
        """
        s = semconv
        self._lock = threading.Lock()
        self._max_values = max_values
        self._seen: dict[str, set[str]] = {k: set() for k in CAPPED_KEYS}
        self._specs = {spec.name: spec for spec in SPECS}
        # Counter and gauge values by series, read by the SDK at each collection.
        self._tallies: dict[str, dict[Attrs, float]] = {
            spec.name: {(): 0} if not spec.keys else {}
            for spec in SPECS
            if spec.kind != "histogram"
        }
        # Every known reason's series exists at 0 from start-up (a rate over it needs one).
        for metric, reasons in (
            (s.METRIC_SPANS_DROPPED, s.DROP_REASONS),
            (s.METRIC_REQUESTS_REFUSED, s.REFUSED_REASONS),
        ):
            for reason in reasons:
                self._seen[s.REASON].add(reason)
                self._tallies[metric][((s.REASON, reason),)] = 0
        bulk = [spec for spec in SPECS if spec.name in _BULK]
        self._bulk = BulkHistograms(bulk, self._lock, time.time_ns())
        self._registry = CollectorRegistry(auto_describe=False)
        # Scope labels and target_info off: the series carry only tracescore's own labels.
        prometheus = PrometheusReader(
            self._bulk,
            disable_target_info=True,
            scope_info_enabled=False,
            registry=self._registry,
        )
        attributes = dict(
            resource or {s.SERVICE_NAME: "tracescore", s.SERVICE_VERSION: __version__}
        )
        self.provider = MeterProvider(
            metric_readers=[prometheus],
            resource=Resource.create(attributes),
            # No exemplars: the score's own span is on its event; the trace-based filter
            # looked up the current span for every value (a tenth of recording one).
            exemplar_filter=AlwaysOffExemplarFilter(),
            shutdown_on_exit=False,
        )
        self.meter: Meter = self.provider.get_meter(s.SCOPE_NAME, __version__)
        """Where other components create their own instruments (see judges/telemetry.py)."""
        self._histograms = {}
        for spec in SPECS:
            if spec.kind == "counter":
                self.meter.create_observable_counter(
                    spec.name, [self._observer(spec)], spec.unit, spec.description
                )
            elif spec.kind == "gauge":
                self.meter.create_observable_gauge(
                    spec.name, [self._observer(spec)], spec.unit, spec.description
                )
            elif spec.name not in _BULK:
                self._histograms[spec.name] = self.meter.create_histogram(
                    spec.name,
                    spec.unit,
                    spec.description,
                    explicit_bucket_boundaries_advisory=spec.bounds,
                )
        self._scored = ScoredRuns(self._tallies, self._bulk, self._fold)
        self._scoring = self._bulk.point(s.METRIC_SCORING_DURATION, ())
        self._push: PushReader | None = None

    # -- scored runs ----------------------------------------------------------------------

    def record_run(self, result: RunResult) -> None:
        """Count a scored run, its scores by result, observe its scores, count its tool calls.

        Tool calls of sub-agents are counted with the run that contains them. A run that was not
        scored (no scenario matched, or sampling left it out) is not counted.
        """
        if result.scenario is None or not result.sampled:
            return
        calls = _EVERY_CALL(result.trajectory)  # sub-agents' calls too
        with self._lock:
            self._scored.record_run(result, calls)

    def record_scores(self, result: RunResult) -> None:
        """Count and observe scores that arrive after their run was counted (LLM judges)."""
        if result.scenario is None or not result.sampled:
            return
        with self._lock:
            self._scored.record_scores(result)

    def declare_evaluations(self, scenario: str, names: Iterable[str]) -> None:
        """Start a scenario's scores by result at 0, so `increase()` counts their first ones."""
        with self._lock:
            self._scored.declare(scenario, names)

    # -- the service's own ----------------------------------------------------------------

    def spans_received(self, n: int = 1) -> None:
        """Spans accepted by a receiver."""
        self._add(semconv.METRIC_SPANS_RECEIVED, n)

    def spans_rejected(self, n: int = 1) -> None:
        """Spans refused as malformed (counted in partial_success)."""
        self._add(semconv.METRIC_SPANS_REJECTED, n)

    def request_refused(self, reason: str) -> None:
        """A request answered with a retryable status at a limit (`semconv.REFUSED_*`)."""
        self._add(semconv.METRIC_REQUESTS_REFUSED, 1, {semconv.REASON: reason})

    def spans_forwarded(self, n: int = 1) -> None:
        """Spans delivered downstream (the exporter counts these on success)."""
        self._add(semconv.METRIC_SPANS_FORWARDED, n)

    def spans_late(self, n: int = 1) -> None:
        """Spans that arrived after their run was scored (still forwarded)."""
        self._add(semconv.METRIC_SPANS_LATE, n)

    def spans_dropped(self, reason: str, n: int = 1) -> None:
        """Spans accepted but not delivered, by reason (e.g. `export_rejected`)."""
        self._add(semconv.METRIC_SPANS_DROPPED, n, {semconv.REASON: reason})

    def set_runs_buffered(self, n: int) -> None:
        """Gauge: runs held by the assembler."""
        self._set(semconv.METRIC_RUNS_BUFFERED, n)

    def set_bytes_buffered(self, n: int) -> None:
        """Gauge: bytes held by the assembler."""
        self._set(semconv.METRIC_BYTES_BUFFERED, n)

    def set_export_queue(self, items: int, size: int) -> None:
        """Gauges: requests and bytes waiting in the export queue."""
        with self._lock:
            self._tallies[semconv.METRIC_EXPORT_QUEUE_ITEMS][()] = items
            self._tallies[semconv.METRIC_EXPORT_QUEUE_BYTES][()] = size

    def observe_scoring_latency(self, seconds: float, runs: int = 1) -> None:
        """Histogram: time to score one run, observed for `runs` runs (scored together)."""
        with self._lock:
            pending = self._scoring.pending
            pending += [seconds] * runs
            if len(pending) >= _PENDING_LIMIT:
                self._scoring.flush(DURATION_BOUNDS)

    def observe_export_latency(self, signal: str, seconds: float) -> None:
        """Histogram: one export attempt's duration, by signal (traces, logs, metrics)."""
        self._histograms[semconv.METRIC_EXPORT_DURATION].record(seconds, {semconv.SIGNAL: signal})

    def export_failure(self, signal: str, reason: str) -> None:
        """Count one failed export attempt (retryable or permanent)."""
        self._add(
            semconv.METRIC_EXPORT_FAILURES, 1, {semconv.SIGNAL: signal, semconv.REASON: reason}
        )

    def export_dropped(self, signal: str, reason: str, n: int) -> None:
        """Log records or metric points (`signal`) accepted for export but never delivered."""
        self._add(
            semconv.METRIC_EXPORT_DROPPED, n, {semconv.SIGNAL: signal, semconv.REASON: reason}
        )

    # -- reading and pushing --------------------------------------------------------------

    def value(self, name: str, attributes: Mapping[str, str] | None = None) -> float:
        """A counter's or gauge's current value (0 if never recorded), for checks and tests."""
        spec = self._specs[name]
        wanted = attributes or {}
        key = tuple((k, wanted[k]) for k in spec.keys if k in wanted)
        with self._lock:
            self._scored.settle()
            return self._tallies[name].get(key, 0)

    def render_prometheus(self) -> str:
        """Every metric in the Prometheus text exposition format 0.0.4, for `/metrics`."""
        return generate_latest(self._registry).decode()

    def push_to(self, exporter: MetricExporter, interval_s: float, timeout_s: float = 10.0) -> None:
        """Export every metric through `exporter` every `interval_s` seconds (and at shutdown).

        Call once, before traffic: the new reader sees histogram values recorded from then on.
        """
        if self._push is not None:
            raise RuntimeError("metrics are already pushed")
        self._push = PushReader(
            self._bulk,
            exporter,
            export_interval_millis=interval_s * 1000,
            export_timeout_millis=timeout_s * 1000,
        )
        self.provider.add_metric_reader(self._push)

    def push_now(self, timeout_s: float = 10.0) -> bool:
        """Collect and push at once (blocks); False when not pushing."""
        # The reader's own flush: MeterProvider.force_flush (SDK 1.45) skips readers added
        # with add_metric_reader.
        push = self._push
        return push is not None and push.force_flush(timeout_millis=timeout_s * 1000)

    def stop_push(self, timeout_s: float = 10.0) -> None:
        """Push the final values and stop pushing (blocks up to about `timeout_s`); `/metrics`
        and the recording API go on working. Safe without `push_to`, and twice."""
        push, self._push = self._push, None
        if push is not None:
            # Shut down, not removed from the provider: removing first would skip the final
            # collection that the reader's shutdown makes and exports.
            push.shutdown(timeout_millis=timeout_s * 1000)

    def shutdown(self) -> None:
        """Stop every reader (the push included, without a final export)."""
        self._push = None
        self.provider.shutdown()

    # -- helpers (call with the lock held where they touch state) --------------------------

    def _observer(self, spec: Spec) -> Callable[[CallbackOptions], Iterable[Observation]]:
        series = self._tallies[spec.name]

        def observe(options: CallbackOptions) -> list[Observation]:
            with self._lock:
                self._scored.settle()  # scored runs' counts wait until read (run_metrics.py)
                return [Observation(v, dict(k)) for k, v in series.items()]

        return observe

    def _fold(self, key: str, value: str | None) -> str | None:
        """The attribute value to record: None when absent, `_other` past the key's cap."""
        if not value:
            return None  # absent, not empty: a missing agent name is no label value
        seen = self._seen.get(key)
        if seen is None or value in seen:
            return value
        if len(seen) >= self._max_values:
            return semconv.OTHER_VALUE
        seen.add(value)
        return value

    def _add(self, name: str, n: float, attributes: Mapping[str, str] | None = None) -> None:
        if n < 0:
            raise ValueError(f"counter {name} cannot decrease, got {n!r}")
        spec = self._specs[name]
        with self._lock:
            raw = attributes or {}
            key = tuple((k, v) for k in spec.keys if (v := self._fold(k, raw.get(k))) is not None)
            series = self._tallies[name]
            series[key] = series.get(key, 0) + n

    def _set(self, name: str, value: float) -> None:
        with self._lock:
            self._tallies[name][()] = value
