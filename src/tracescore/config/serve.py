"""Config sections of `tracescore serve`: receivers, exporter, assembly limits."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["AssemblySettings", "ExporterSettings", "ReceiversSettings"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class GrpcReceiver(_Frozen):
    """The OTLP/gRPC receiver."""

    endpoint: str = "0.0.0.0:4317"


class HttpReceiver(_Frozen):
    """The OTLP/HTTP receiver."""

    endpoint: str = "0.0.0.0:4318"


class ReceiversSettings(_Frozen):
    """Where spans come in; a receiver set to null is off."""

    grpc: GrpcReceiver | None = GrpcReceiver()
    http: HttpReceiver | None = HttpReceiver()


class ExporterSettings(_Frozen):
    """The downstream OTLP endpoint for traces, logs and metrics."""

    endpoint: str
    protocol: str = "grpc"


class AssemblySettings(_Frozen):
    """How spans are buffered into runs."""

    decision_wait: float = 2.0
    max_trace_age: float = 30.0
