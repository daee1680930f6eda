"""Score attributes for the scored agent span, and Python values to OTLP AnyValues."""

from __future__ import annotations

from collections.abc import Mapping

from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from tracescore.model.span import AttrValue
from tracescore.scenarios import RunResult

__all__ = ["key_values", "score_attributes", "to_any_value"]


def score_attributes(result: RunResult, prefix: str = "eval") -> dict[str, AttrValue]:
    """The attributes tracescore adds to a scored agent span (or its fanout span)."""
    raise NotImplementedError


def to_any_value(value: AttrValue) -> AnyValue:
    """Encode a decoded attribute value back into an OTLP AnyValue."""
    raise NotImplementedError


def key_values(attributes: Mapping[str, AttrValue]) -> list[KeyValue]:
    """Encode attributes as OTLP KeyValues, in the mapping's order."""
    raise NotImplementedError
