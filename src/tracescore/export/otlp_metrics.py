"""The OTLP metric exporter `serve` pushes its metrics with: the SDK's own, gRPC or HTTP.

`metric_exporter(endpoint, protocol, ...)` builds one from plain values (so any config section
that says where metrics go can wire it in one line); `metric_exporter_for(settings)` from the
`exporter` section. Either is wrapped in `CountingExporter`, which times each export, counts
failures (`tracescore.export.failures{signal="metrics"}`) and logs a failure once, at WARNING,
when exports start failing, not at every push.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Literal

import grpc
from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (
    OTLPMetricExporter as GrpcMetricExporter,
)
from opentelemetry.exporter.otlp.proto.http import Compression as HttpCompression
from opentelemetry.exporter.otlp.proto.http.metric_exporter import (
    OTLPMetricExporter as HttpMetricExporter,
)
from opentelemetry.sdk.metrics import (
    Counter,
    Histogram,
    ObservableCounter,
    ObservableGauge,
    ObservableUpDownCounter,
    UpDownCounter,
)
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    MetricExporter,
    MetricExportResult,
    MetricsData,
)

from tracescore import semconv
from tracescore.config.serve import ClientTlsSettings, ExporterSettings
from tracescore.export.destinations import refuse_signal
from tracescore.export.grpc_transport import grpc_credentials
from tracescore.export.metrics import Telemetry

__all__ = ["METRICS_PATH", "CountingExporter", "metric_exporter", "metric_exporter_for"]

log = logging.getLogger(__name__)

METRICS_PATH = "/v1/metrics"
_INSTRUMENTS = (
    Counter,
    UpDownCounter,
    Histogram,
    ObservableCounter,
    ObservableUpDownCounter,
    ObservableGauge,
)
_SIGNAL = "metrics"
# What the SDK's exporters say when the backend has no metrics endpoint: HTTP 404, 405 or 501
# ("... batch code: 405, reason: Method Not Allowed"), gRPC UNIMPLEMENTED.
_UNSUPPORTED = re.compile(r"code: (404|405|501)\b|UNIMPLEMENTED")


def metric_exporter(
    endpoint: str,
    protocol: Literal["grpc", "http/protobuf"] = "http/protobuf",
    *,
    headers: Mapping[str, str] | None = None,
    tls: ClientTlsSettings | None = None,
    compression: Literal["gzip", "none"] = "gzip",
    timeout_s: float = 10.0,
) -> MetricExporter:
    """The SDK's OTLP metric exporter for a base URL (`http://host:4318`; https:// is TLS).

    For http/protobuf, `/v1/metrics` is appended to the URL's path.
    """
    secure = endpoint.startswith("https://")
    if protocol == "grpc":
        return GrpcMetricExporter(
            endpoint=endpoint,
            insecure=not secure,
            credentials=grpc_credentials(tls) if secure else None,
            headers=dict(headers or {}),
            timeout=timeout_s,
            compression=grpc.Compression.Gzip if compression == "gzip" else None,
        )
    return HttpMetricExporter(
        endpoint=endpoint.rstrip("/") + METRICS_PATH,
        certificate_file=tls.ca_file if tls else None,
        client_key_file=tls.key_file if tls else None,
        client_certificate_file=tls.cert_file if tls else None,
        headers=dict(headers or {}),
        timeout=timeout_s,
        compression=HttpCompression.Gzip
        if compression == "gzip"
        else HttpCompression.NoCompression,
    )


def metric_exporter_for(settings: ExporterSettings) -> MetricExporter:
    """`metric_exporter` for the `exporter` section's endpoint."""
    return metric_exporter(
        settings.endpoint,
        settings.protocol,
        headers=settings.headers,
        tls=settings.tls,
        compression=settings.compression,
        timeout_s=settings.timeout,
    )


class CountingExporter(MetricExporter):
    """An exporter that times and counts what `inner` does, and says when it starts failing."""

    def __init__(self, inner: MetricExporter, telemetry: Telemetry, endpoint: str) -> None:
        # Cumulative whatever OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE says (the reader
        # collects as its exporter prefers): the bulk histograms (export/histograms.py) are
        # cumulative, as `/metrics` is.
        cumulative: dict[type, AggregationTemporality] = dict.fromkeys(
            _INSTRUMENTS, AggregationTemporality.CUMULATIVE
        )
        super().__init__(
            preferred_temporality=cumulative,
            preferred_aggregation=inner._preferred_aggregation,
        )
        self._inner = inner
        self._telemetry = telemetry
        self._endpoint = endpoint
        self._failing: str | None = None
        """The cause last logged while exports fail; None while they work."""
        self._refused = False
        """The backend said it does not serve metrics: nothing more is sent to it."""

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: object
    ) -> MetricExportResult:
        if self._refused:
            points = _points(metrics_data)
            self._telemetry.export_dropped(_SIGNAL, semconv.DROP_EXPORT_UNSUPPORTED, points)
            return MetricExportResult.SUCCESS  # nothing to retry: the backend takes no metrics
        start = time.monotonic()
        reason = "failed"
        with _SDK_LOGS.capture() as said:
            try:
                result = self._inner.export(metrics_data, timeout_millis=timeout_millis, **kwargs)
            except Exception as exc:
                result, reason = MetricExportResult.FAILURE, "error"
                said.append(f"{type(exc).__name__}: {exc}")
        self._telemetry.observe_export_latency(_SIGNAL, time.monotonic() - start)
        if result is MetricExportResult.SUCCESS:
            if self._failing is not None:
                log.info("metrics export to %s works again", self._endpoint)
            self._failing = None
            return result
        self._telemetry.export_failure(_SIGNAL, reason)
        cause = said[-1] if said else "the exporter gave no reason"
        if _UNSUPPORTED.search(cause):
            self._refused = True
            self._telemetry.export_dropped(
                _SIGNAL, semconv.DROP_EXPORT_UNSUPPORTED, _points(metrics_data)
            )
            refuse_signal(_SIGNAL, self._endpoint, "unsupported", cause[:300])
            return MetricExportResult.SUCCESS
        if cause != self._failing:  # once per cause, not at every push
            log.warning(
                "metrics export to %s failed: %s (pushes go on every interval; the values are "
                "cumulative, so the next push that works carries everything)",
                self._endpoint,
                cause[:500],
            )
        self._failing = cause
        return result

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return self._inner.force_flush(timeout_millis)

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: object) -> None:
        self._inner.shutdown(timeout_millis=timeout_millis, **kwargs)


class _SdkLogCapture(logging.Filter):
    """Holds back what the SDK's OTLP exporters log during one of our exports.

    They log each failure and each retry (ERROR and WARNING) on every push; `CountingExporter`
    says it once per cause instead, with the SDK's own words. Records logged outside an export
    of ours (another thread, another exporter) pass untouched.
    """

    _LOGGERS = (
        "opentelemetry.exporter.otlp.common.http",
        "opentelemetry.exporter.otlp.proto.http.metric_exporter",
        "opentelemetry.exporter.otlp.proto.http._common",
        "opentelemetry.exporter.otlp.proto.grpc.exporter",
        "opentelemetry.exporter.otlp.proto.grpc.metric_exporter",
    )

    def __init__(self) -> None:
        super().__init__()
        self._local = threading.local()
        for name in self._LOGGERS:
            logging.getLogger(name).addFilter(self)

    def filter(self, record: logging.LogRecord) -> bool:
        said: list[str] | None = getattr(self._local, "said", None)
        if said is None:
            return True
        said.append(record.getMessage())
        return False

    @contextlib.contextmanager
    def capture(self) -> Iterator[list[str]]:
        said: list[str] = []
        self._local.said = said
        try:
            yield said
        finally:
            self._local.said = None


_SDK_LOGS = _SdkLogCapture()


def _points(metrics_data: MetricsData) -> int:
    return sum(
        len(metric.data.data_points)
        for resource in metrics_data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
    )
