"""`gen_ai.evaluation.result` log events over OTLP logs, one per score."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from tracescore.model.span import AttrValue
from tracescore.scenarios import RunResult

__all__ = ["evaluation_logs"]


def evaluation_logs(
    results: Iterable[RunResult],
    resource: Mapping[str, AttrValue] | None = None,
    *,
    now_ns: int | None = None,
) -> ExportLogsServiceRequest:
    """One LogRecord per score, with the trace and span ids of the scored span."""
    raise NotImplementedError
