"""One decoded span, independent of how it arrived (OTLP protobuf or OTLP JSON)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from enum import IntEnum
from typing import TypeAlias

from tracescore.model._record import record

__all__ = ["AttrValue", "SpanEvent", "SpanRecord", "StatusCode"]

# An OTLP AnyValue after decoding: bytes stay bytes, arrays become tuples, kvlists dicts.
AttrValue: TypeAlias = (
    str | bool | int | float | bytes | tuple["AttrValue", ...] | dict[str, "AttrValue"] | None
)


class StatusCode(IntEnum):
    """OTLP span status codes (the protobuf integers)."""

    UNSET = 0
    OK = 1
    ERROR = 2


@record
class SpanEvent:
    """A span event (an exception, a decision, ...)."""

    name: str
    time_ns: int = 0
    attributes: Mapping[str, AttrValue] = field(default_factory=dict)


@record
class SpanRecord:
    """A span as tracescore keeps it: hex ids, nanosecond times, decoded attributes.

    `attributes` may hold only the keys the trajectory builder reads (the receiver filters them
    to bound memory); `resource` holds the resource attributes of the span's resource.
    """

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    start_ns: int = 0
    end_ns: int = 0
    kind: int = 0
    status_code: StatusCode = StatusCode.UNSET
    status_message: str = ""
    attributes: Mapping[str, AttrValue] = field(default_factory=dict)
    events: tuple[SpanEvent, ...] = ()
    resource: Mapping[str, AttrValue] = field(default_factory=dict)
    scope: str = ""
