"""The pure-Python twin of the native scanner (`_scan.scan_spans`), and the value rules both share.

`otlp.scan` uses it where the C extension was not built, and the tests compare the two on every
fixture and on fuzzed input. A slim request schema (span attributes, events and resource as raw
bytes) lets upb split the request; attributes are then decoded by hand for the usual shapes
(one-byte key lengths, scalar values) and through upb for the rest, keeping only the keys
`classify` keeps.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any, TypeAlias

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from tracescore.model.span import AttrValue
from tracescore.otlp.wire import read_varint

__all__ = [
    "KEY_CACHE_LIMIT",
    "KEY_CACHE_MAX",
    "LONG_TEXT",
    "Classify",
    "ScannedSpan",
    "SlowKeyValue",
    "decode_any_value",
    "decode_value_bytes",
    "long_text_size",
    "python_scan_spans",
    "value_size",
]

KEY_CACHE_LIMIT = 8192  # the same bounds as KEY_CACHE_LIMIT, KEY_CACHE_MAX, LONG_TEXT in _scan.h
# Keys longer than this (bytes) are classified at each use, never cached: a client sending
# distinct 1 MiB keys would otherwise make the cache hold gigabytes.
KEY_CACHE_MAX = 256
# A kept key, span name or status message longer than this (bytes) is a str of its own in each
# record: its length counts in the record's size, which assembly.max_bytes bounds.
LONG_TEXT = 256
_DOUBLE = struct.Struct("<d")
_MISS: Any = object()

# (rs, ss, span indices, trace_id, span_id, parent_span_id, name, kind, start, end,
#  status code, status message, kept attributes, their bytes, raw events, raw resource, scope)
ScannedSpan: TypeAlias = tuple[
    int, int, int, bytes, bytes, bytes, str, int, int, int, int, str,
    dict[str, AttrValue], int, tuple[bytes, ...], bytes, str,
]  # fmt: skip
Kept: TypeAlias = str | tuple[str, tuple[bytes, ...]] | None
"""What classify answers for a raw key: the key, None (not decoded), or the key and texts:
a string value in the usual encoding is decoded only when it holds one of them (or is not
ASCII), any other value always."""
Classify: TypeAlias = Callable[[bytes], Kept]
SlowKeyValue: TypeAlias = Callable[[bytes], tuple[str | None, AttrValue, int]]


def decode_any_value(value: AnyValue) -> AttrValue:
    """Decode a protobuf AnyValue into plain Python values."""
    which = value.WhichOneof("value")
    if which == "string_value":
        return value.string_value
    if which == "bool_value":
        return value.bool_value
    if which == "int_value":
        return value.int_value
    if which == "double_value":
        return value.double_value
    if which == "array_value":
        return tuple(decode_any_value(v) for v in value.array_value.values)
    if which == "kvlist_value":
        return {kv.key: decode_any_value(kv.value) for kv in value.kvlist_value.values}
    if which == "bytes_value":
        return value.bytes_value
    return None


def decode_value_bytes(raw: bytes) -> AttrValue:
    return decode_any_value(AnyValue.FromString(raw))


def value_size(value: AttrValue, encoded: int) -> int:
    """Bytes a decoded value holds, for memory bounds (the scanners agree on this rule)."""
    if isinstance(value, str | bytes):
        return len(value)
    if value is None or isinstance(value, bool | int | float):
        return 0
    return encoded


def long_text_size(text: str) -> int:
    """The bytes a record's own copy of `text` counts in its size: its UTF-8 length when
    that is over LONG_TEXT, else 0 (shorter ones are shared or small)."""
    if len(text) <= LONG_TEXT // 4:
        return 0
    n = len(text.encode())
    return n if n > LONG_TEXT else 0


def _slim_schema() -> Any:
    """A request class wire-compatible with ExportTraceServiceRequest whose span attributes
    and events are `repeated bytes` and whose resource is `bytes`: upb hands them over as
    they are, and fields left out stay unknown fields it skips."""
    f = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(
        name="tracescore/slim_trace.proto", package="tracescore.slim", syntax="proto3"
    )
    messages: dict[str, list[tuple[str, int, int, str | None]]] = {
        "Status": [("message", 2, f.TYPE_STRING, None), ("code", 3, f.TYPE_INT32, None)],
        "Span": [
            ("trace_id", 1, f.TYPE_BYTES, None),
            ("span_id", 2, f.TYPE_BYTES, None),
            ("parent_span_id", 4, f.TYPE_BYTES, None),
            ("name", 5, f.TYPE_STRING, None),
            ("kind", 6, f.TYPE_INT32, None),
            ("start_time_unix_nano", 7, f.TYPE_FIXED64, None),
            ("end_time_unix_nano", 8, f.TYPE_FIXED64, None),
            ("attributes", 9, f.TYPE_BYTES, "repeated"),
            ("events", 11, f.TYPE_BYTES, "repeated"),
            ("status", 15, f.TYPE_MESSAGE, "Status"),
        ],
        "Scope": [("name", 1, f.TYPE_STRING, None)],
        "ScopeSpans": [
            ("scope", 1, f.TYPE_MESSAGE, "Scope"),
            ("spans", 2, f.TYPE_MESSAGE, "*Span"),
        ],
        "ResourceSpans": [
            ("resource", 1, f.TYPE_BYTES, None),
            ("scope_spans", 2, f.TYPE_MESSAGE, "*ScopeSpans"),
        ],
        "Request": [("resource_spans", 1, f.TYPE_MESSAGE, "*ResourceSpans")],
    }
    for name, fields in messages.items():
        message = file.message_type.add(name=name)
        for field_name, number, kind, extra in fields:
            repeated = extra == "repeated" or (extra is not None and extra.startswith("*"))
            label = f.LABEL_REPEATED if repeated else f.LABEL_OPTIONAL
            spec = message.field.add(name=field_name, number=number, type=kind, label=label)
            if kind == f.TYPE_MESSAGE and extra is not None:
                spec.type_name = ".tracescore.slim." + extra.lstrip("*")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("tracescore.slim.Request"))


_SlimRequest: Any = _slim_schema()


def _value(raw: bytes, start: int) -> tuple[AttrValue, int]:
    """The AnyValue filling `raw[start:]` and its size: scalars by hand, the rest via upb."""
    end = len(raw)
    if start == end:
        return None, 0
    tag = raw[start]
    if tag == 0x0A:  # string_value
        n, at = read_varint(raw, start + 1)
        if at + n == end:
            try:
                text = raw[at:].decode()
            except UnicodeDecodeError:
                pass  # upb says what is wrong with it
            else:
                return text, len(text)
    elif tag == 0x18:  # int_value: a two's complement varint
        n, at = read_varint(raw, start + 1)
        if at == end:
            return (n - (1 << 64) if n >= 1 << 63 else n), 0
    elif tag == 0x21 and end - start == 9:  # double_value
        number: float = _DOUBLE.unpack_from(raw, start + 1)[0]
        return number, 0
    elif tag == 0x10:  # bool_value
        n, at = read_varint(raw, start + 1)
        if at == end:
            return bool(n), 0
    value = decode_value_bytes(raw[start:])
    return value, value_size(value, end - start)


def _left_out(raw: bytes, at: int, texts: tuple[bytes, ...]) -> bool:
    """Whether the AnyValue at `at` (filling `raw`) is a string in the usual encoding whose
    bytes are ASCII and hold none of `texts` (the native scanner's `left_out`)."""
    if raw[at : at + 1] != b"\x0a":
        return False
    try:
        length, start = read_varint(raw, at + 1)
    except ValueError:  # a truncated length: decoded (and refused) as usual
        return False
    if start + length != len(raw):
        return False
    text = raw[start:]
    return text.isascii() and not any(text.find(t) >= 0 for t in texts)


def python_scan_spans(
    body: bytes,
    keys: dict[bytes, Kept],
    classify: Classify,
    decode_value: Callable[[bytes], AttrValue],
    slow_kv: SlowKeyValue,
    overhead: int,
) -> list[ScannedSpan]:
    """The pure-Python twin of `_scan.scan_spans` (same arguments, same result)."""
    try:
        request = _SlimRequest.FromString(body)
    except Exception as exc:  # upb raises DecodeError, sometimes RuntimeError
        raise ValueError(f"malformed OTLP request: {exc}") from exc
    out: list[ScannedSpan] = []
    for i, rs in enumerate(request.resource_spans):
        resource = rs.resource
        for j, ss in enumerate(rs.scope_spans):
            scope = ss.scope.name
            for k, span in enumerate(ss.spans):
                attributes: dict[str, AttrValue] = {}
                size = 0
                for raw in span.attributes:
                    # KeyValue: 0x0A <key length> <key> 0x12 <value length> <AnyValue>; keys are
                    # short, so a one-byte key length is the fast path, anything else goes
                    # through upb.
                    n = raw[1] if len(raw) > 1 and raw[0] == 0x0A else 0x80
                    value_at = 2 + n
                    if n >= 0x80 or (value_at < len(raw) and raw[value_at] != 0x12):
                        key, value, held = slow_kv(raw)
                        if key is not None:
                            attributes[key] = value
                            size += held
                        continue
                    key_raw = raw[2:value_at]
                    kept = keys.get(key_raw, _MISS)
                    if kept is _MISS:
                        kept = classify(key_raw)
                        if len(key_raw) <= KEY_CACHE_MAX and len(keys) < KEY_CACHE_LIMIT:
                            keys[key_raw] = kept
                    if kept is None:
                        continue
                    texts: tuple[bytes, ...] | None = None
                    if not isinstance(kept, str):
                        kept, texts = kept
                    if value_at >= len(raw):
                        attributes[kept] = None
                        if len(key_raw) > LONG_TEXT:
                            size += len(key_raw)
                        continue
                    length, at = read_varint(raw, value_at + 1)
                    if at + length != len(raw):
                        key, value, held = slow_kv(raw)
                        if key is not None:
                            attributes[key] = value
                            size += held
                        continue
                    if texts is not None and _left_out(raw, at, texts):
                        continue
                    attributes[kept], held = _value(raw, at)
                    size += held
                    if len(key_raw) > LONG_TEXT:
                        size += len(key_raw)
                status = span.status
                size += long_text_size(span.name) + long_text_size(status.message)
                out.append(
                    (
                        i, j, k, span.trace_id, span.span_id, span.parent_span_id, span.name,
                        span.kind, span.start_time_unix_nano, span.end_time_unix_nano,
                        status.code, status.message, attributes,
                        size + overhead * len(attributes), tuple(span.events), resource, scope,
                    )
                )  # fmt: skip
    return out
