"""The metrics tracescore emits: scores, runs, tool calls, and the service's own health."""

from __future__ import annotations

from collections.abc import Mapping

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)

from tracescore.model.span import AttrValue
from tracescore.scenarios import RunResult

__all__ = ["Telemetry"]


class Telemetry:
    """In-memory cumulative instruments; thread-safe (one lock), cheap to update."""

    def record_run(self, result: RunResult) -> None:
        """Count a scored run, its scores (histogram) and its tool calls."""
        raise NotImplementedError

    def spans_received(self, n: int = 1) -> None:
        """Spans accepted by a receiver."""
        raise NotImplementedError

    def spans_rejected(self, n: int = 1) -> None:
        """Spans refused as malformed (counted in partial_success)."""
        raise NotImplementedError

    def spans_forwarded(self, n: int = 1) -> None:
        """Spans handed to the exporter."""
        raise NotImplementedError

    def spans_late(self, n: int = 1) -> None:
        """Spans that arrived after their run was scored (still forwarded)."""
        raise NotImplementedError

    def spans_dropped(self, reason: str, n: int = 1) -> None:
        """Spans accepted but not delivered, by reason (e.g. `export_rejected`)."""
        raise NotImplementedError

    def set_runs_buffered(self, n: int) -> None:
        """Gauge: runs held by the assembler."""
        raise NotImplementedError

    def set_bytes_buffered(self, n: int) -> None:
        """Gauge: bytes held by the assembler and export queue."""
        raise NotImplementedError

    def observe_scoring_latency(self, seconds: float) -> None:
        """Histogram: time from a run's decision to its scores."""
        raise NotImplementedError

    def observe_export_latency(self, signal: str, seconds: float) -> None:
        """Histogram: one export call's duration, by signal (traces, logs, metrics)."""
        raise NotImplementedError

    def export_failure(self, signal: str, reason: str) -> None:
        """Count one failed export attempt (retryable or permanent)."""
        raise NotImplementedError

    def render_prometheus(self) -> str:
        """Prometheus text exposition format 0.0.4 for `/metrics`."""
        raise NotImplementedError

    def to_otlp(
        self, resource: Mapping[str, AttrValue] | None = None
    ) -> ExportMetricsServiceRequest:
        """All instruments as OTLP metrics with cumulative temporality."""
        raise NotImplementedError
