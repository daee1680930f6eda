"""Protobuf spans to `SpanRecord`s, reading only the attribute keys that matter.

Touching an attribute on a upb message costs about 1 µs (reference/performance.md B.1b), most
of it creating the key string and the value wrapper, so the key test is memoized and values are
decoded only for kept keys. Resource attributes are decoded once per ResourceSpans and shared by
every record of that resource.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tracescore.model.span import AttrValue, SpanEvent, SpanRecord, StatusCode
from tracescore.otlp.proto import decode_any_value

__all__ = ["RECORD_OVERHEAD", "Extractor"]

# Bytes of one SpanRecord with its id strings, and of one kept attribute (key string, value
# object, dict slot) before its text; used only to bound memory (assembly.max_bytes). Measured
# with tracemalloc on bench/throughput.py's traces (1,373 B/span) and rounded up.
RECORD_OVERHEAD = 600
ATTRIBUTE_OVERHEAD = 140
_KEY_CACHE_LIMIT = 8192
_STATUS = {0: StatusCode.UNSET, 1: StatusCode.OK, 2: StatusCode.ERROR}


class Extractor:
    """Decodes spans for the assembler; `keep_key` decides which span attribute keys to keep."""

    def __init__(self, keep_key: Callable[[str], bool]) -> None:
        """Wrap the key test with a bounded memo (keys repeat across spans)."""
        self._keep_key = keep_key
        self._cache: dict[str, bool] = {}

    def keep(self, key: str) -> bool:
        """Whether span attribute `key` is kept (memoized up to a bound)."""
        kept = self._cache.get(key)
        if kept is None:
            kept = self._keep_key(key)
            if len(self._cache) < _KEY_CACHE_LIMIT:
                self._cache[key] = kept
        return kept

    def attributes(self, kvs: Iterable[KeyValue]) -> tuple[dict[str, AttrValue], int]:
        """The kept attributes and the bytes their values hold (strings and bytes)."""
        out: dict[str, AttrValue] = {}
        size = 0
        cache = self._cache
        for kv in kvs:
            key = kv.key
            kept = cache.get(key)
            if kept is None:
                kept = self.keep(key)
            if not kept:
                continue
            value = kv.value
            which = value.WhichOneof("value")
            decoded: AttrValue
            if which == "string_value":
                decoded = value.string_value
                size += len(decoded)
            elif which == "int_value":
                decoded = value.int_value
            else:
                decoded = decode_any_value(value)
                if isinstance(decoded, str | bytes):
                    size += len(decoded)
                elif decoded is not None and not isinstance(decoded, bool | int | float):
                    size += value.ByteSize()
            out[key] = decoded
        return out, size + ATTRIBUTE_OVERHEAD * len(out)

    @staticmethod
    def resource(kvs: Iterable[KeyValue]) -> dict[str, AttrValue]:
        """Every resource attribute (scenarios may match on any of them)."""
        return {kv.key: decode_any_value(kv.value) for kv in kvs}

    @staticmethod
    def record(
        span: Span,
        trace_id: str,
        attributes: dict[str, AttrValue],
        resource: dict[str, AttrValue],
        scope: str,
    ) -> SpanRecord:
        """A SpanRecord of `span` with the given (already filtered) attributes."""
        parent = span.parent_span_id
        status = span.status
        events: tuple[SpanEvent, ...] = ()
        if len(span.events):
            events = tuple(
                SpanEvent(e.name, e.time_unix_nano, _all_attributes(e.attributes))
                for e in span.events
            )
        return SpanRecord(
            trace_id,
            span.span_id.hex(),
            parent.hex() if len(parent) == 8 and parent != _ZERO8 else None,
            span.name,
            span.start_time_unix_nano,
            span.end_time_unix_nano,
            span.kind,
            _STATUS.get(status.code, StatusCode.UNSET),
            status.message,
            attributes,
            events,
            resource,
            scope,
        )


_ZERO8 = bytes(8)


def _all_attributes(kvs: Iterable[KeyValue]) -> dict[str, AttrValue]:
    return {kv.key: decode_any_value(kv.value) for kv in kvs}
