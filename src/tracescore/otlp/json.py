"""OTLP/JSON (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding) to SpanRecords.

Lenient where producers differ (int64 as string or number, enums as integers or names, ids as
hex or base64) and strict where data would be lost: a span without valid ids is rejected and
counted, never guessed.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Mapping
from typing import Any

from tracescore.errors import InputError
from tracescore.model.span import AttrValue, SpanEvent, SpanRecord, StatusCode
from tracescore.otlp.decode import DecodeResult, KeyFilter, normalize_id

__all__ = ["decode_any_value", "decode_json_request"]

_STATUS_NAMES = {
    "STATUS_CODE_UNSET": StatusCode.UNSET,
    "STATUS_CODE_OK": StatusCode.OK,
    "STATUS_CODE_ERROR": StatusCode.ERROR,
    "UNSET": StatusCode.UNSET,
    "OK": StatusCode.OK,
    "ERROR": StatusCode.ERROR,
}
_KIND_NAMES = {
    "SPAN_KIND_UNSPECIFIED": 0,
    "SPAN_KIND_INTERNAL": 1,
    "SPAN_KIND_SERVER": 2,
    "SPAN_KIND_CLIENT": 3,
    "SPAN_KIND_PRODUCER": 4,
    "SPAN_KIND_CONSUMER": 5,
}
_SPECIAL_DOUBLES = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def decode_json_request(
    body: object, source: str = "request", key_filter: KeyFilter = None
) -> DecodeResult:
    """Decode one ExportTraceServiceRequest given as parsed JSON.

    Raises InputError when the body is not an ExportTraceServiceRequest at all; a span that
    cannot be decoded is rejected and counted in the result instead.
    """
    if not isinstance(body, Mapping):
        raise InputError(f"{source}: expected a JSON object with resourceSpans, got {_kind(body)}")
    resource_spans = body.get("resourceSpans", [])
    if not isinstance(resource_spans, list):
        raise InputError(f"{source}: resourceSpans must be a list, got {_kind(resource_spans)}")
    result = DecodeResult()
    for r_index, rs in enumerate(resource_spans):
        where = f"{source}: resourceSpans[{r_index}]"
        if not isinstance(rs, Mapping):
            result.reject(f"{where}: expected an object, got {_kind(rs)}")
            continue
        resource_obj = rs.get("resource") or {}
        resource = (
            _attributes(resource_obj.get("attributes"), None)
            if isinstance(resource_obj, Mapping)
            else {}
        )
        scope_list = rs.get("scopeSpans", rs.get("instrumentationLibrarySpans", []))
        if not isinstance(scope_list, list):
            result.reject(f"{where}.scopeSpans: expected a list, got {_kind(scope_list)}")
            continue
        for s_index, ss in enumerate(scope_list):
            if not isinstance(ss, Mapping):
                result.reject(f"{where}.scopeSpans[{s_index}]: expected an object")
                continue
            scope_obj = ss.get("scope", ss.get("instrumentationLibrary")) or {}
            scope = scope_obj.get("name", "") if isinstance(scope_obj, Mapping) else ""
            spans = ss.get("spans", [])
            if not isinstance(spans, list):
                result.reject(f"{where}.scopeSpans[{s_index}].spans: expected a list")
                continue
            for p_index, span in enumerate(spans):
                span_where = f"{where}.scopeSpans[{s_index}].spans[{p_index}]"
                try:
                    result.spans.append(
                        _span(span, resource, str(scope or ""), key_filter, span_where)
                    )
                except (ValueError, TypeError) as exc:
                    result.reject(f"{span_where}: {exc}")
    return result


def _span(
    obj: object,
    resource: Mapping[str, AttrValue],
    scope: str,
    key_filter: KeyFilter,
    where: str,
) -> SpanRecord:
    if not isinstance(obj, Mapping):
        raise ValueError(f"expected a span object, got {_kind(obj)}")
    trace_id = normalize_id(obj.get("traceId"), 16, "traceId")
    span_id = normalize_id(obj.get("spanId"), 8, "spanId")
    parent_raw = obj.get("parentSpanId")
    parent = normalize_id(parent_raw, 8, "parentSpanId") if parent_raw else None
    status = obj.get("status") or {}
    if not isinstance(status, Mapping):
        raise ValueError(f"status must be an object, got {_kind(status)}")
    name = obj.get("name", "")
    return SpanRecord(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent,
        name=name if isinstance(name, str) else str(name),
        start_ns=_int(obj.get("startTimeUnixNano", 0), "startTimeUnixNano"),
        end_ns=_int(obj.get("endTimeUnixNano", 0), "endTimeUnixNano"),
        kind=_enum(obj.get("kind", 0), _KIND_NAMES, "kind"),
        status_code=_status(status.get("code", 0)),
        status_message=str(status.get("message", "") or ""),
        attributes=_attributes(obj.get("attributes"), key_filter),
        events=tuple(_event(e) for e in obj.get("events", []) or [] if isinstance(e, Mapping)),
        resource=resource,
        scope=scope,
    )


def _event(obj: Mapping[str, Any]) -> SpanEvent:
    return SpanEvent(
        name=str(obj.get("name", "")),
        time_ns=_int(obj.get("timeUnixNano", 0), "timeUnixNano"),
        attributes=_attributes(obj.get("attributes"), None),
    )


def _attributes(raw: object, key_filter: KeyFilter) -> dict[str, AttrValue]:
    out: dict[str, AttrValue] = {}
    if not isinstance(raw, list):
        return out
    for kv in raw:
        if not isinstance(kv, Mapping):
            continue
        key = kv.get("key")
        if not isinstance(key, str) or (key_filter is not None and not key_filter(key)):
            continue
        out[key] = decode_any_value(kv.get("value"))
    return out


def decode_any_value(value: object) -> AttrValue:
    """Decode an OTLP/JSON AnyValue; an unknown or empty value decodes to None."""
    if not isinstance(value, Mapping):
        return None
    if "stringValue" in value:
        return str(value["stringValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        return _int(value["intValue"], "intValue")
    if "doubleValue" in value:
        raw = value["doubleValue"]
        if isinstance(raw, str):
            return _SPECIAL_DOUBLES[raw] if raw in _SPECIAL_DOUBLES else float(raw)
        return float(raw)
    if "arrayValue" in value:
        arr = value["arrayValue"] or {}
        items = arr.get("values", []) if isinstance(arr, Mapping) else []
        return tuple(decode_any_value(v) for v in items or [])
    if "kvlistValue" in value:
        kvl = value["kvlistValue"] or {}
        return _attributes(kvl.get("values") if isinstance(kvl, Mapping) else None, None)
    if "bytesValue" in value:
        try:
            return base64.b64decode(str(value["bytesValue"]))
        except (binascii.Error, ValueError):
            return str(value["bytesValue"])
    return None


def _int(raw: object, what: str) -> int:
    # bool before int: bool subclasses int, and true is not a timestamp.
    if isinstance(raw, bool):
        raise ValueError(f"{what} must be an integer, got {raw!r}")
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float) and raw.is_integer():
        return int(raw)
    if isinstance(raw, str):
        try:
            return int(raw)
        except ValueError:
            pass
    raise ValueError(f"{what} must be an integer, got {raw!r}")


def _enum(raw: object, names: Mapping[str, int], what: str) -> int:
    if isinstance(raw, str) and raw in names:
        return names[raw]
    return _int(raw, what)


def _status(raw: object) -> StatusCode:
    code = _enum(raw, _STATUS_NAMES, "status.code")
    if code not in (0, 1, 2):
        raise ValueError(f"status.code must be 0, 1 or 2, got {raw!r}")
    return StatusCode(code)


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__
