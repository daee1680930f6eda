"""Protobuf spans to `SpanRecord`s, reading only the attribute keys that matter.

Touching an attribute on a upb message costs about 1 µs (reference/performance.md B.1b), most
of it creating the key string and the value wrapper, so the key test is memoized and values are
decoded only for kept keys. Resource attributes are decoded once per ResourceSpans and shared by
every record of that resource.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tracescore.model.span import AttrValue, SpanRecord
from tracescore.otlp.proto import decode_any_value, span_record

__all__ = ["RECORD_OVERHEAD", "Extractor"]

# Bytes of one SpanRecord with its id strings, and of one kept attribute (key string, value
# object, dict slot) before its text; used only to bound memory (assembly.max_bytes). Measured
# with tracemalloc on bench/throughput.py's traces (1,373 B/span) and rounded up.
RECORD_OVERHEAD = 600
ATTRIBUTE_OVERHEAD = 140
_KEY_CACHE_LIMIT = 8192
_RESOURCE_CACHE_LIMIT = 256
_NAME_CACHE_LIMIT = 8192


class Extractor:
    """Decodes spans for the assembler; `keep_key` decides which span attribute keys to keep."""

    def __init__(self, keep_key: Callable[[str], bool]) -> None:
        """Wrap the key test with a bounded memo (keys repeat across spans)."""
        self._keep_key = keep_key
        self._cache: dict[str, bool] = {}
        self._resources: dict[bytes, dict[str, AttrValue]] = {}
        self._names: dict[str, str] = {}

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
        get = self._cache.get
        for kv in kvs:
            key = kv.key
            kept = get(key)
            if kept is None:
                kept = self.keep(key)
            if not kept:
                continue
            value = kv.value
            # Most kept values are non-empty strings: reading `string_value` first saves the
            # WhichOneof call for them (an empty string is also the default of every other
            # kind, so only then is the kind asked).
            text = value.string_value
            if text:
                out[key] = text
                size += len(text)
                continue
            which = value.WhichOneof("value")
            decoded: AttrValue
            if which == "int_value":
                decoded = value.int_value
            elif which == "string_value":
                decoded = ""
            else:
                decoded = decode_any_value(value)
                if isinstance(decoded, str | bytes):
                    size += len(decoded)
                elif decoded is not None and not isinstance(decoded, bool | int | float):
                    size += value.ByteSize()
            out[key] = decoded
        return out, size + ATTRIBUTE_OVERHEAD * len(out)

    def resource(self, resource: Resource) -> dict[str, AttrValue]:
        """Every resource attribute (scenarios may match on any of them), one dict per resource.

        SDKs send the same resource in every request, so the decoded dict is memoized by the
        resource's bytes (serializing is C work, decoding is Python work per attribute) and
        every record of that resource, across requests, shares one dict. Callers never mutate
        it.
        """
        raw = resource.SerializeToString()
        decoded = self._resources.get(raw)
        if decoded is None:
            decoded = {kv.key: decode_any_value(kv.value) for kv in resource.attributes}
            if len(self._resources) >= _RESOURCE_CACHE_LIMIT:
                self._resources.clear()
            self._resources[raw] = decoded
        return decoded

    def record(
        self,
        span: Span,
        trace_id: str,
        attributes: dict[str, AttrValue],
        resource: dict[str, AttrValue],
        scope: str,
    ) -> SpanRecord:
        """A SpanRecord of `span` with the given (already filtered) attributes."""
        # Span names repeat across every run ("chat gpt-4.1", "execute_tool search"): one
        # string object per distinct name instead of one per buffered span.
        name = span.name
        name = self._names.setdefault(name, name)
        if len(self._names) > _NAME_CACHE_LIMIT:
            self._names.clear()
        return span_record(span, trace_id, attributes, resource, scope, name)
