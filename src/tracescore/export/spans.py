"""Put scores on spans: annotate the forwarded agent span, or build a fanout child span."""

from __future__ import annotations

from collections.abc import Mapping

from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tracescore.model.span import AttrValue
from tracescore.scenarios import RunResult

__all__ = ["annotate_span", "fanout_span"]


def annotate_span(span: Span, attributes: Mapping[str, AttrValue]) -> None:
    """Append the score attributes to a held agent span before it is forwarded."""
    raise NotImplementedError


def fanout_span(
    result: RunResult,
    attributes: Mapping[str, AttrValue],
    *,
    span_id: bytes | None = None,
    now_ns: int | None = None,
) -> Span:
    """A new `evaluate {agent}` span, child of the scored agent span in the same trace."""
    raise NotImplementedError
