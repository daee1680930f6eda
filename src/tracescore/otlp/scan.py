"""Spans out of OTLP protobuf bytes, decoding only the attribute keys somebody reads.

Reading an attribute of a parsed `Span` through upb costs about 1 µs (a `KeyValue` wrapper, its
key string, an `AnyValue` wrapper and its value; reference/performance.md B.1), and so does
decoding it by hand in Python: for a realistic agent span that was more than everything else the
service does with it. `scan_spans` therefore runs natively when the optional C extension
`_scan` was built (setup.py; `NATIVE` says so): it walks the wire format once and builds only
the kept attributes. The pure-Python twin (`otlp._python_scan`) gives the same answer (the
tests compare them on every fixture and on fuzzed input) and runs where no compiler was
available.

Neither is a validator: receivers parse requests with the full OTLP schema first, so malformed
requests were refused before; what the scanner cannot read raises ValueError.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from typing import Any, NamedTuple, TypeAlias

from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tracescore.model.span import AttrValue, SpanEvent, SpanRecord, StatusCode
from tracescore.otlp._python_scan import (
    KEY_CACHE_LIMIT,
    KEY_CACHE_MAX,
    LONG_TEXT,
    Kept,
    ScannedSpan,
    decode_any_value,
    python_scan_spans,
    value_size,
)
from tracescore.otlp._python_scan import decode_value_bytes as _decode_value_bytes
from tracescore.otlp.grouping import Grouped, group_records
from tracescore.otlp.native import extension

__all__ = [
    "ATTRIBUTE_OVERHEAD",
    "CACHE_BYTES_MAX",
    "NATIVE",
    "CandidateRule",
    "ScannedRecord",
    "ScannedSpan",
    "SpanReader",
    "decode_any_value",
    "python_scan_spans",
]

# Bytes of one kept attribute (its dict slot and value object; keys are shared) before its
# text, used to bound memory (assembly.max_bytes). Fitted with RECORD_OVERHEAD (assembler) to
# tracemalloc on bench/capacity.py's runs under two scorer mixes (41 and 94 attributes a run):
# 30 bytes; 140 had the estimate at 1.5-1.65x what the process held.
ATTRIBUTE_OVERHEAD = 32
# The caches fed by what clients send are bounded in bytes, not only in entries: keys (see
# KEY_CACHE_MAX) and span names over LONG_TEXT bytes are not cached, resources over
# _RESOURCE_CACHE_MAX bytes are decoded for each request, and the resources cached hold at
# most _RESOURCE_CACHE_BYTES (raw and decoded). So the three caches hold at most
# CACHE_BYTES_MAX, whatever clients send (tests/adversarial measure it).
_RESOURCE_CACHE_LIMIT = 256
_RESOURCE_CACHE_MAX = 64 * 1024
_RESOURCE_CACHE_BYTES = 8 * 1024 * 1024
_NAME_CACHE_LIMIT = 8192
# What one cached entry can hold at most, for `SpanReader.cache_bytes` (sys.getsizeof on
# CPython 3.11, rounded up): a key is a bytes of up to KEY_CACHE_MAX (289 bytes) with its
# decision, an interned str of as many characters (305) or a shorter tuple; a name is one str
# (305), key and value alike; each has a dict slot (at most ~50 bytes at the dict's fill).
_KEY_ENTRY_MAX = 650
_NAME_ENTRY_MAX = 360
# A cached resource's own entry (its raw bytes object and dict slot) beyond its raw length.
_RESOURCE_ENTRY = 120
CACHE_BYTES_MAX = (
    KEY_CACHE_LIMIT * _KEY_ENTRY_MAX
    + (_NAME_CACHE_LIMIT + 1) * _NAME_ENTRY_MAX
    + _RESOURCE_CACHE_BYTES
)
"""At most what the caches of one SpanReader hold between requests (~16 MiB), whatever
clients send: counted in `assembly.max_bytes` through `cache_bytes`."""
_ZERO8 = bytes(8)
_STATUS = {0: StatusCode.UNSET, 1: StatusCode.OK, 2: StatusCode.ERROR}
_MISS: Any = object()

# (rs, ss, span indices, trace_id, span_id, bytes the record holds, the record, whether it
#  may be an agent span by the reader's CandidateRule)
ScannedRecord: TypeAlias = tuple[int, int, int, bytes, bytes, int, SpanRecord, bool]


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
        keep_key: Callable[[str], bool | tuple[str, ...]] | None = None,
        candidates: CandidateRule | None = None,
    ) -> None:
        self._keep_key = keep_key
        self._candidates = candidates
        self._keys: dict[bytes, Kept] = {}
        self._resources: dict[bytes, dict[str, AttrValue]] = {}
        self._resource_held = 0  # raw and decoded bytes of the cached resources
        self._names: dict[str, str] = {}

    @property
    def cache_bytes(self) -> int:
        """Bytes the caches of what clients sent hold now (keys, span names, resources), at
        most CACHE_BYTES_MAX: for keys and names their count times what an entry can hold
        (both caches are filled by the native scanner; a count is all that is cheap to read
        on every request), for resources what they hold."""
        return (
            len(self._keys) * _KEY_ENTRY_MAX
            + len(self._names) * _NAME_ENTRY_MAX
            + self._resource_held
        )

    def _classify(self, raw: bytes) -> Kept:
        # Interned: a key the builder reads is then the very str it looks up (semconv's names
        # are interned where they are read), and a lookup ends at the pointer compare.
        key = sys.intern(raw.decode())
        if self._keep_key is None:
            return key
        kept = self._keep_key(key)
        if kept is True or kept is False:
            return key if kept else None
        return key, tuple(text.encode() for text in kept)

    def _slow_kv(self, raw: bytes) -> tuple[str | None, AttrValue, int]:
        """A KeyValue in an unusual shape, through upb: (kept key or None, value, bytes).

        A key kept only for some string values (see `keep_key`) keeps every value here: the
        scanners leave out only values in the usual encoding, which never come here."""
        kv = KeyValue.FromString(raw)
        key = kv.key.encode()
        kept = self._keys.get(key, _MISS)
        if kept is _MISS:
            kept = self._classify(key)
            if len(key) <= KEY_CACHE_MAX and len(self._keys) < KEY_CACHE_LIMIT:
                self._keys[key] = kept
        if kept is None:
            return None, None, 0
        value = decode_any_value(kv.value)
        text = kept if isinstance(kept, str) else kept[0]
        held = value_size(value, kv.value.ByteSize())
        return text, value, held + (len(key) if len(key) > LONG_TEXT else 0)

    def scan(self, body: bytes) -> list[ScannedSpan]:
        """Every span of `body` (an ExportTraceServiceRequest), in wire order."""
        out = _scan_spans(
            body, self._keys, self._classify, _decode_value_bytes, self._slow_kv, ATTRIBUTE_OVERHEAD
        )
        self._trim()
        return out

    def _trim(self) -> None:
        """Between calls (never during one: the native scan reads the dicts), empty a cache
        that is full, so keys a client floods it with give way to the usual ones again."""
        if len(self._keys) >= KEY_CACHE_LIMIT:
            self._keys.clear()
        if len(self._names) > _NAME_CACHE_LIMIT:
            self._names.clear()

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

    def checked_grouped(self, body: bytes) -> Grouped | None:
        """`grouped` of bytes nobody checked yet, or None where it cannot vouch that
        `otlp.proto.check_proto_request` accepts them (then the caller asks it, and scans
        again if they pass: `otlp.proto.check_and_group`). Natively the scan also makes the
        validator's checks where it reads the bytes anyway (tags, lengths, UTF-8 of strings,
        the parts it skips walked by the validator's own code); it leaves anything unusual
        (groups, long tags, nesting) to the validator. Checking the request beforehand walked
        it once more: ~2,100 instructions per span of the capacity stream, about half of that
        saved. Without the extension: always None. Raises nothing the scan raises: None."""
        if _scan_grouped is None:
            return None
        try:
            out: Grouped | None = self._native(_scan_grouped, body, check=True)
        except Exception:  # unreadable, or a callback failed: the validator decides first
            return None
        return out

    def _native(self, scan: Any, body: bytes, check: bool = False) -> Any:
        """`scan` (scan_records or scan_grouped) over `body` with this reader's settings."""
        out = scan(
            body, self._keys, self._classify, _decode_value_bytes, self._slow_kv,
            ATTRIBUTE_OVERHEAD, self._names, self._resources, self.resource, self._candidates,
            check,
        )  # fmt: skip
        self._trim()
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
        out = self.records_from(list(scanned))
        self._trim()
        return out

    def records_from(self, scanned: list[ScannedSpan]) -> list[ScannedRecord]:
        """`records` made in Python from scanned tuples (the twin of the native path)."""
        hex_ids: dict[bytes, str] = {}
        # This call's resources, cached or not (a resource too big for the cache is still
        # decoded once per request, as the native path does).
        resources: dict[bytes, dict[str, AttrValue]] = {}
        out: list[ScannedRecord] = []
        rule = self._candidates
        for span in scanned:
            trace_id = span[3]
            hex_id = hex_ids.get(trace_id)
            if hex_id is None:
                hex_id = hex_ids[trace_id] = trace_id.hex()
            resource = resources.get(span[15])
            if resource is None:
                resource = resources[span[15]] = self.resource(span[15])
            record = self.record(span, hex_id, resource)
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
            if len(raw) > _RESOURCE_CACHE_MAX:
                return decoded
            # Bounded by what it holds decoded: up to ~12x its raw bytes (two-byte keys and
            # values: 12 raw bytes an attribute, ~140 of str objects and dict slot).
            held = len(raw) + _RESOURCE_ENTRY + _decoded_size(decoded)
            if (
                len(self._resources) >= _RESOURCE_CACHE_LIMIT
                or self._resource_held + held > _RESOURCE_CACHE_BYTES
            ):
                self._resources.clear()
                self._resource_held = 0
            self._resources[raw] = decoded
            self._resource_held += held
        return decoded

    def record(
        self, span: ScannedSpan, trace_id: str, resource: dict[str, AttrValue]
    ) -> SpanRecord:
        """The SpanRecord of a scanned span under its decoded `resource`."""
        _, _, _, _, span_id, parent, name, kind, start, end, code, message, attributes = span[:13]
        # Span names repeat across every run ("chat gpt-4.1", "execute_tool search"): one
        # string object per distinct name instead of one per buffered span.
        if len(name) <= LONG_TEXT:
            name = self._names.setdefault(name, name)
        raw_events = span[14]
        events = tuple(_event(raw) for raw in raw_events) if raw_events else ()
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


def _decoded_size(decoded: dict[str, AttrValue]) -> int:
    """Bytes a decoded resource holds: its dict, keys and values (containers as their size)."""
    return sys.getsizeof(decoded) + sum(
        sys.getsizeof(key) + sys.getsizeof(value) for key, value in decoded.items()
    )


def _event(raw: bytes) -> SpanEvent:
    event = Span.Event.FromString(raw)
    attributes = {kv.key: decode_any_value(kv.value) for kv in event.attributes}
    return SpanEvent(event.name, event.time_unix_nano, attributes)


_scan_spans: Callable[..., list[ScannedSpan]] = python_scan_spans
_scan_records: Callable[..., list[ScannedRecord]] | None = None
_scan_grouped: Callable[..., Grouped] | None = None
_scan = extension()
NATIVE = _scan is not None
if _scan is not None:
    _scan_spans, _scan_records = _scan.scan_spans, _scan.scan_records
    _scan_grouped = _scan.scan_grouped
    # Records are made without running __init__: the extension checks every field is a slot.
    _scan.bind(
        SpanRecord,
        tuple(f.name for f in dataclasses.fields(SpanRecord)),
        (StatusCode.UNSET, StatusCode.OK, StatusCode.ERROR),
        _event,
    )
