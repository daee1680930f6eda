"""One OTLP export attempt over gRPC or HTTP/protobuf: the transport a destination's settings
name (grpc_transport.py, http_transport.py), behind the `Transport` protocol (attempt.py).
"""

from __future__ import annotations

from tracescore.config.serve import SIGNALS, ExporterSettings
from tracescore.export.attempt import Attempt, Transport
from tracescore.export.grpc_transport import GrpcTransport, retry_info_delay
from tracescore.export.http_transport import HttpTransport

__all__ = [
    "SIGNALS",
    "Attempt",
    "GrpcTransport",
    "HttpTransport",
    "Transport",
    "make_transport",
    "retry_info_delay",
]


def make_transport(settings: ExporterSettings) -> Transport:
    """The transport named by `settings.protocol`."""
    if settings.protocol == "grpc":
        return GrpcTransport(settings)
    return HttpTransport(settings)
