"""OTLP receivers of `tracescore serve`: gRPC (TraceService/Export) and HTTP (/v1/traces)."""

from tracescore.otlp.json import parse_json_request
from tracescore.receiver._common import (
    ConsumeResult,
    ServiceStatus,
    TraceConsumer,
    server_ssl_context,
)
from tracescore.receiver.otlp_grpc import GrpcReceiver
from tracescore.receiver.otlp_http import HttpReceiver

__all__ = [
    "ConsumeResult",
    "GrpcReceiver",
    "HttpReceiver",
    "ServiceStatus",
    "TraceConsumer",
    "parse_json_request",
    "server_ssl_context",
]
