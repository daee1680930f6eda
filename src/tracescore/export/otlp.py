"""OTLP exporter: bounded queue, background sender over gRPC or HTTP/protobuf, retries."""

from __future__ import annotations

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tracescore.config.serve import ExporterSettings
from tracescore.export.metrics import Telemetry

__all__ = ["OtlpExporter"]


class OtlpExporter:
    """Sends traces, logs and metrics downstream; submit_* never block (False when full)."""

    def __init__(self, settings: ExporterSettings, telemetry: Telemetry | None = None) -> None:
        self.settings = settings
        self.telemetry = telemetry

    async def start(self) -> None:
        """Open the channel or session and start the background sender."""
        raise NotImplementedError

    async def shutdown(self, timeout: float = 5.0) -> None:
        """Stop accepting, flush the queue within `timeout` seconds, close the transport."""
        raise NotImplementedError

    def has_capacity(self) -> bool:
        """False when the queue is full: the receivers should answer with a retryable status."""
        raise NotImplementedError

    def submit_traces(self, request: ExportTraceServiceRequest) -> bool:
        """Enqueue; False when the queue is full (the caller answers with back-pressure)."""
        raise NotImplementedError

    def submit_logs(self, request: ExportLogsServiceRequest) -> bool:
        """Enqueue; False when the queue is full."""
        raise NotImplementedError

    def submit_metrics(self, request: ExportMetricsServiceRequest) -> bool:
        """Enqueue; False when the queue is full."""
        raise NotImplementedError
