"""Spans out of OTLP protobuf bytes, decoding only the attribute keys somebody reads.

Reading an attribute of a parsed `Span` through upb costs about 1 µs (a `KeyValue` wrapper, its
key string, an `AnyValue` wrapper and its value; reference/performance.md B.1), and so does
decoding it by hand in Python: for a realistic agent span that was more than everything else the
service does with it. `scan_spans` therefore runs natively when the optional C extension
`_scan` was built (setup.py; `NATIVE` says so): it walks the wire format once and builds only
the kept attributes. The pure-Python twin below gives the same answer (the tests compare them
on every fixture and on fuzzed input) and runs where no compiler was available.

Neither is a validator: receivers parse requests with the full OTLP schema first, so malformed
requests were refused before; what the scanner cannot read raises ValueError.
"""

from __future__ import annotations

import dataclasses
import struct
import sys
from collections.abc import Callable
from typing import Any, NamedTuple, TypeAlias

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tracescore.model.span import AttrValue, SpanEvent, SpanRecord, StatusCode
from tracescore.otlp.grouping import Grouped, group_records
from tracescore.otlp.wire import read_varint

__all__ = [
    "ATTRIBUTE_OVERHEAD",
    "NATIVE",
    "CandidateRule",
    "ScannedRecord",
    "ScannedSpan",
    "SpanReader",
    "decode_any_value",
    "python_scan_spans",
]

# Bytes of one kept attribute (key string, value object, dict slot) before its text, used to
# bound memory (assembly.max_bytes); measured with tracemalloc and rounded up.
ATTRIBUTE_OVERHEAD = 140
_RESOURCE_CACHE_LIMIT = 256
_NAME_CACHE_LIMIT = 8192
_KEY_CACHE_LIMIT = 8192  # the same bound as KEY_CACHE_LIMIT in _scan.c
_ZERO8 = bytes(8)
_STATUS = {0: StatusCode.UNSET, 1: StatusCode.OK, 2: StatusCode.ERROR}
_DOUBLE = struct.Struct("<d")
_MISS: Any = object()

# (rs, ss, span indices, trace_id, span_id, parent_span_id, name, kind, start, end,
#  status code, status message, kept attributes, their bytes, raw events, raw resource, scope)
ScannedSpan: TypeAlias = tuple[
    int, int, int, bytes, bytes, bytes, str, int, int, int, int, str,
    dict[str, AttrValue], int, tuple[bytes, ...], bytes, str,
]  # fmt: skip
# (rs, ss, span indices, trace_id, span_id, bytes the record holds, the record, whether it
#  may be an agent span by the reader's CandidateRule)
ScannedRecord: TypeAlias = tuple[int, int, int, bytes, bytes, int, SpanRecord, bool]
Classify: TypeAlias = Callable[[bytes], str | None]
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


def _decode_value_bytes(raw: bytes) -> AttrValue:
    return decode_any_value(AnyValue.FromString(raw))


def value_size(value: AttrValue, encoded: int) -> int:
    """Bytes a decoded value holds, for memory bounds (the scanners agree on this rule)."""
    if isinstance(value, str | bytes):
        return len(value)
    if value is None or isinstance(value, bool | int | float):
        return 0
    return encoded


class CandidateRule(NamedTuple):
    """Spans that may be agent spans, told apart while scanning: the assembler asks its slower
    question (`AssemblerHooks.agent_name`) only of these.

    A span is a candidate when attribute `attribute` equals `value`, or its name starts with
    `name_prefix`, or it carries any of `keys`. A tuple, as the native scanner reads it.
    """

    attribute: str
    value: str
    name_prefix: str
    keys: tuple[str, ...]

    def matches(self, record: SpanRecord) -> bool:
        """Whether `record` is a candidate (the twin of the native test)."""
        attrs = record.attributes
        return (
            attrs.get(self.attribute, _MISS) == self.value
            or record.name.startswith(self.name_prefix)
            or any(key in attrs for key in self.keys)
        )


class SpanReader:
    """Scans requests and turns scanned spans into SpanRecords; one per decoding context.

    `keep_key` decides which span attribute keys are decoded (None keeps all); the decision is
    memoized per raw key, and resources and span names are shared across requests. `candidates`
    flags the records that may be agent spans (without it, every record is flagged).
    """

    def __init__(
        self,
        keep_key: Callable[[str], bool] | None = None,
        candidates: CandidateRule | None = None,
    ) -> None:
        self._keep_key = keep_key
        self._candidates = candidates
        self._keys: dict[bytes, str | None] = {}
        self._resources: dict[bytes, dict[str, AttrValue]] = {}
        self._names: dict[str, str] = {}

    def _classify(self, raw: bytes) -> str | None:
        # Interned: a key the builder reads is then the very str it looks up (semconv's names
        # are interned where they are read), and a lookup ends at the pointer compare.
        key = sys.intern(raw.decode())
        return key if self._keep_key is None or self._keep_key(key) else None

    def _slow_kv(self, raw: bytes) -> tuple[str | None, AttrValue, int]:
        """A KeyValue in an unusual shape, through upb: (kept key or None, value, bytes)."""
        kv = KeyValue.FromString(raw)
        key = kv.key.encode()
        kept = self._keys.get(key, _MISS)
        if kept is _MISS:
            kept = self._classify(key)
            if len(self._keys) < _KEY_CACHE_LIMIT:
                self._keys[key] = kept
        if kept is None:
            return None, None, 0
        value = decode_any_value(kv.value)
        return kept, value, value_size(value, kv.value.ByteSize())

    def scan(self, body: bytes) -> list[ScannedSpan]:
        """Every span of `body` (an ExportTraceServiceRequest), in wire order."""
        return _scan_spans(
            body, self._keys, self._classify, _decode_value_bytes, self._slow_kv, ATTRIBUTE_OVERHEAD
        )

    def records(self, body: bytes) -> list[ScannedRecord]:
        """Every span of `body` with its SpanRecord (ids unchecked: callers check them).

        Natively the records are built in C along with the scan (a SpanRecord built in Python
        cost more than scanning its span); the pure-Python path builds the same ones.
        """
        if _scan_records is None:
            return self.python_records(body)
        out: list[ScannedRecord] = self._native(_scan_records, body)
        return out

    def grouped(self, body: bytes) -> Grouped:
        """The records of `body` grouped by trace, and its spans with invalid ids (see
        `otlp.grouping`); natively built along with the scan, like `records`."""
        if _scan_grouped is None:
            return self.python_grouped(body)
        out: Grouped = self._native(_scan_grouped, body)
        return out

    def _native(self, scan: Any, body: bytes) -> Any:
        """`scan` (scan_records or scan_grouped) over `body` with this reader's settings."""
        out = scan(
            body, self._keys, self._classify, _decode_value_bytes, self._slow_kv,
            ATTRIBUTE_OVERHEAD, self._names, self._resources, self.resource, self._candidates,
        )  # fmt: skip
        if len(self._names) > _NAME_CACHE_LIMIT:
            self._names.clear()
        return out

    def python_grouped(self, body: bytes) -> Grouped:
        """`grouped` made from `python_records`: the native path's twin."""
        return group_records(self.python_records(body))

    def python_records(self, body: bytes) -> list[ScannedRecord]:
        """`records` made by the pure-Python scanner and builder: the native path's twin."""
        scanned = python_scan_spans(
            body, self._keys, self._classify, _decode_value_bytes, self._slow_kv,
            ATTRIBUTE_OVERHEAD,
        )  # fmt: skip
        return self.records_from(list(scanned))

    def records_from(self, scanned: list[ScannedSpan]) -> list[ScannedRecord]:
        """`records` made in Python from scanned tuples (the twin of the native path)."""
        hex_ids: dict[bytes, str] = {}
        out: list[ScannedRecord] = []
        rule = self._candidates
        for span in scanned:
            trace_id = span[3]
            hex_id = hex_ids.get(trace_id)
            if hex_id is None:
                hex_id = hex_ids[trace_id] = trace_id.hex()
            record = self.record(span, hex_id)
            candidate = rule is None or rule.matches(record)
            out.append((span[0], span[1], span[2], trace_id, span[4], span[13], record, candidate))
        return out

    def resource(self, raw: bytes) -> dict[str, AttrValue]:
        """Every resource attribute (scenarios match on any), one shared dict per resource.

        SDKs send the same resource in every request, so the decoded dict is memoized by its
        bytes and shared by every record of that resource, across requests. Callers never
        mutate it.
        """
        decoded = self._resources.get(raw)
        if decoded is None:
            resource = Resource.FromString(raw)
            decoded = {kv.key: decode_any_value(kv.value) for kv in resource.attributes}
            if len(self._resources) >= _RESOURCE_CACHE_LIMIT:
                self._resources.clear()
            self._resources[raw] = decoded
        return decoded

    def record(self, span: ScannedSpan, trace_id: str) -> SpanRecord:
        """The SpanRecord of a scanned span."""
        _, _, _, _, span_id, parent, name, kind, start, end, code, message, attributes = span[:13]
        # Span names repeat across every run ("chat gpt-4.1", "execute_tool search"): one
        # string object per distinct name instead of one per buffered span.
        name = self._names.setdefault(name, name)
        if len(self._names) > _NAME_CACHE_LIMIT:
            self._names.clear()
        raw_events = span[14]
        events = tuple(_event(raw) for raw in raw_events) if raw_events else ()
        resource = self._resources.get(span[15])
        if resource is None:
            resource = self.resource(span[15])
        return SpanRecord(
            trace_id,
            span_id.hex(),
            parent.hex() if len(parent) == 8 and parent != _ZERO8 else None,
            name,
            start,
            end,
            kind,
            _STATUS.get(code, StatusCode.UNSET),
            message,
            attributes,
            events,
            resource,
            span[16],
        )


def _event(raw: bytes) -> SpanEvent:
    event = Span.Event.FromString(raw)
    attributes = {kv.key: decode_any_value(kv.value) for kv in event.attributes}
    return SpanEvent(event.name, event.time_unix_nano, attributes)


# -- the pure-Python scanner ------------------------------------------------------------------


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
    value = _decode_value_bytes(raw[start:])
    return value, value_size(value, end - start)


def python_scan_spans(
    body: bytes,
    keys: dict[bytes, str | None],
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
                        if len(keys) < _KEY_CACHE_LIMIT:
                            keys[key_raw] = kept
                    if kept is None:
                        continue
                    if value_at >= len(raw):
                        attributes[kept] = None
                        continue
                    length, at = read_varint(raw, value_at + 1)
                    if at + length != len(raw):
                        key, value, held = slow_kv(raw)
                        if key is not None:
                            attributes[key] = value
                            size += held
                        continue
                    attributes[kept], held = _value(raw, at)
                    size += held
                status = span.status
                out.append(
                    (
                        i, j, k, span.trace_id, span.span_id, span.parent_span_id, span.name,
                        span.kind, span.start_time_unix_nano, span.end_time_unix_nano,
                        status.code, status.message, attributes,
                        size + overhead * len(attributes), tuple(span.events), resource, scope,
                    )
                )  # fmt: skip
    return out


_scan_spans: Callable[..., list[ScannedSpan]]
_scan_records: Callable[..., list[ScannedRecord]] | None
_scan_grouped: Callable[..., Grouped] | None
try:
    # mypy knows the module only where it was built: the ignore is unused there.
    from tracescore.otlp import _scan  # type: ignore[attr-defined,unused-ignore]

    NATIVE = True
except ImportError:  # built without a C compiler
    _scan_spans, _scan_records, _scan_grouped = python_scan_spans, None, None
    NATIVE = False
else:
    _scan_spans, _scan_records = _scan.scan_spans, _scan.scan_records
    _scan_grouped = _scan.scan_grouped
    # Records are made without running __init__: the extension checks every field is a slot.
    _scan.bind(
        SpanRecord,
        tuple(f.name for f in dataclasses.fields(SpanRecord)),
        (StatusCode.UNSET, StatusCode.OK, StatusCode.ERROR),
        _event,
    )
