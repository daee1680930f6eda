"""What one export attempt gives back, and what every transport provides.

Transports (grpc_transport.py, http_transport.py) send one serialized request of a signal and
classify the outcome as the OTLP spec says ("Failures"); the exporter (otlp.py) decides from an
`Attempt` whether to retry, drop or stop sending a signal to a backend that does not serve it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2 as logs_svc
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2 as metrics_svc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2 as trace_svc

__all__ = ["RESPONSES", "Attempt", "Transport", "partial_success"]

RESPONSES: dict[str, type[Message]] = {
    "traces": trace_svc.ExportTraceServiceResponse,
    "logs": logs_svc.ExportLogsServiceResponse,
    "metrics": metrics_svc.ExportMetricsServiceResponse,
}

_REJECTED_FIELD = {
    "traces": "rejected_spans",
    "logs": "rejected_log_records",
    "metrics": "rejected_data_points",
}


@dataclass(frozen=True, slots=True)
class Attempt:
    """The outcome of one export attempt."""

    ok: bool
    retryable: bool = False
    reason: str = ""
    """Low-cardinality failure class for metrics: `unavailable`, `http_503`, `dns`, `refused`,
    `tls`, `timeout`, `connection`..."""
    delay: float | None = None
    """Server-requested wait before retrying (Retry-After, RetryInfo), in seconds."""
    rejected: int = 0
    """Items the server refused in a partial success."""
    message: str = ""
    """What the server or the connection said, for logs."""
    cause: str = ""
    """Why it failed, for a person: `DNS lookup failed`, `connection refused`, `HTTP 503`..."""
    unsupported: bool = False
    """The server does not serve this signal at all (HTTP 404/405/501, gRPC UNIMPLEMENTED)."""


class Transport(Protocol):
    """Sends one serialized request of a signal; never raises for transport failures."""

    async def start(self) -> None: ...

    async def prepare(self, body: bytes) -> bytes:
        """The body as it goes on the wire (compressed once, however often it is retried)."""
        ...

    async def send(self, signal: str, body: bytes) -> Attempt: ...

    async def close(self) -> None: ...


def partial_success(signal: str, response: Message) -> Attempt:
    """A delivered request's Attempt, with the items a partial success refused."""
    partial = getattr(response, "partial_success", None)
    if partial is None:
        return Attempt(ok=True)
    rejected = int(getattr(partial, _REJECTED_FIELD[signal], 0))
    return Attempt(ok=True, rejected=rejected, message=str(partial.error_message))
