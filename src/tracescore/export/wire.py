"""OTLP protobuf bytes written directly: attribute lists and the fields tracescore emits.

Building OTLP messages through upb costs about 1 µs per attribute (every field access crosses
into C and back), while the bytes of a KeyValue are a few concatenations; and most of what
tracescore emits is constant (attribute keys, scopes, resources), so it is encoded once and
reused. The output is exactly what `SerializeToString` writes for the same message: fields in
field-number order, proto3 defaults left out, oneof members (AnyValue) always written
(tests/export/test_wire.py checks both against upb).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import TypeVar

from tracescore.model.span import AttrValue
from tracescore.otlp.wire import len_field, varint

__all__ = [
    "DOUBLE",
    "KEY_VALUE_TAG",
    "any_value",
    "attribute_fields",
    "double_field",
    "double_head",
    "fixed64_field",
    "key_value",
    "len_field",
    "long_string_field",
    "remember",
    "string_field",
    "string_head",
    "varint",
]

# A repeated KeyValue field is field 1 of Resource and KeyValueList; other messages give their
# own tag (Span.attributes: 9, LogRecord.attributes: 6).
KEY_VALUE_TAG = b"\x0a"

_U64 = (1 << 64) - 1
_BYTES = [bytes((i,)) for i in range(0x80)]
_CONTINUED = [bytes((i | 0x80,)) for i in range(0x80)]  # a varint byte with more to come
DOUBLE = struct.Struct("<d")
"""A double as protobuf writes it (little-endian IEEE 754)."""
_FIXED64 = struct.Struct("<Q")
# AnyValue fields: string_value 1, bool_value 2, int_value 3, double_value 4, array_value 5,
# kvlist_value 6, bytes_value 7. KeyValue: key 1, value 2.
_TRUE, _FALSE = b"\x10\x01", b"\x10\x00"
_INT, _DOUBLE_TAG, _ARRAY, _KVLIST, _BYTES_TAG = b"\x18", b"\x21", b"\x2a", b"\x32", b"\x3a"
_VALUE = b"\x12"
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def fixed64_field(tag: bytes, value: int) -> bytes:
    """A fixed64 field, left out at 0 as proto3 does."""
    return tag + _FIXED64.pack(value) if value else b""


def any_value(value: AttrValue) -> bytes:
    """The AnyValue message bytes of a decoded attribute value (None: empty, present)."""
    # bool before int: bool subclasses int, and True must stay a bool_value.
    if isinstance(value, str):
        return len_field(KEY_VALUE_TAG, value.encode())
    if isinstance(value, bool):
        return _TRUE if value else _FALSE
    if isinstance(value, int):
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise ValueError(f"attribute value {value} does not fit in a 64-bit int_value")
        return _INT + varint(value & _U64)
    if isinstance(value, float):
        return _DOUBLE_TAG + DOUBLE.pack(value)
    if isinstance(value, bytes):
        return len_field(_BYTES_TAG, value)
    if isinstance(value, tuple | list):
        # ArrayValue.values (field 1); an empty array is still an array, not "no value".
        return len_field(_ARRAY, b"".join([len_field(b"\x0a", any_value(v)) for v in value]))
    if isinstance(value, dict):
        return len_field(_KVLIST, attribute_fields(KEY_VALUE_TAG, value))
    if value is None:
        return b""
    raise TypeError(f"cannot encode attribute value of type {type(value).__name__}")


def key_value(key: str, value: AttrValue) -> bytes:
    """The KeyValue message bytes of one attribute."""
    field = _KEYS.get(key)
    if field is None:
        # An empty key is the proto3 default: left out.
        field = remember(_KEYS, key, len_field(KEY_VALUE_TAG, key.encode()) if key else b"")
    if type(value) is str:
        data = value.encode()
        if len(data) < _SHORT:  # most strings: both lengths in one precomputed frame
            return field + _SHORT_STRINGS[len(data)] + data
        return field + len_field(_VALUE, len_field(KEY_VALUE_TAG, data))
    return field + len_field(_VALUE, any_value(value))


def attribute_fields(tag: bytes, attributes: Mapping[str, AttrValue]) -> bytes:
    """A repeated KeyValue field holding `attributes` in order (`tag`: the field's tag).

    Strings and doubles take the memoized paths of `string_field` and `double_field`: names,
    labels, verdicts and digests repeat from run to run.
    """
    fields = []
    for key, value in attributes.items():
        if type(value) is str:
            field = string_field(tag, key, value)
        elif type(value) is float:
            field = double_field(tag, key, value)
        elif type(value) is bool:
            field = _memoized(tag, key, value)
        else:
            field = len_field(tag, key_value(key, value))
        fields.append(field)
    return b"".join(fields)


def string_field(tag: bytes, key: str, value: str) -> bytes:
    """One element of a repeated KeyValue field (`tag`) holding a string attribute.

    Short values are memoized whole: names, labels and digests repeat from run to run, and
    the memo is bounded for values from traffic. Long ones (most explanations) rarely repeat.
    """
    if len(value) > _MEMO_CHARS:
        return long_string_field(tag, key, value)
    return _memoized(tag, key, value)


def long_string_field(tag: bytes, key: str, value: str) -> bytes:
    """`string_field` for a value that rarely repeats (an explanation): only its framing,
    which depends on the length alone and repeats with it, is memoized, per length."""
    data = value.encode()
    head = _HEADS.get((tag, key, len(data)))
    if head is None:
        head = remember(_HEADS, (tag, key, len(data)), string_head(tag, key, len(data)))
    return head + data


def string_head(tag: bytes, key: str, size: int) -> bytes:
    """What `string_field(tag, key, value)` writes before the `size` UTF-8 bytes of `value`.

    It depends on the length alone (`long_string_field` keeps it per length).
    """
    value = b"\x0a" + varint(size)  # AnyValue.string_value
    value = _VALUE + varint(len(value) + size) + value  # KeyValue.value
    field = len_field(KEY_VALUE_TAG, key.encode()) if key else b""  # KeyValue.key
    return tag + varint(len(field) + len(value) + size) + field + value


def _memoized(tag: bytes, key: str, value: str | bool) -> bytes:
    # Strings and bools only: equal values of those encode alike, while 1 == 1.0 == True
    # encode as int, double and bool.
    field = _FIELDS.get((tag, key, value))
    if field is None:
        field = remember(_FIELDS, (tag, key, value), len_field(tag, key_value(key, value)))
    return field


def double_field(tag: bytes, key: str, value: float) -> bytes:
    """One element of a repeated KeyValue field (`tag`) holding a double attribute."""
    head = _DOUBLES.get((tag, key))
    if head is None:
        head = remember(_DOUBLES, (tag, key), double_head(tag, key))
    return head + DOUBLE.pack(value)


def double_head(tag: bytes, key: str) -> bytes:
    """`double_field` up to its 8 value bytes (`DOUBLE.pack(value)`), which alone vary."""
    return len_field(tag, key_value(key, 0.0))[:-8]


# KeyValue.value framing of a string below _SHORT bytes: both lengths fit in one byte
# (0x12 <n + 2> 0x0a <n>).
_SHORT = 0x7E
_SHORT_STRINGS = [bytes((0x12, n + 2, 0x0A, n)) for n in range(_SHORT)]
# Strings up to this many characters are memoized by `string_field`.
_MEMO_CHARS = 100
# Memos of encoded pieces; bounded, as keys and values may come from traffic.
_KEYS: dict[str, bytes] = {}
_FIELDS: dict[tuple[bytes, str, str | bool], bytes] = {}
_DOUBLES: dict[tuple[bytes, str], bytes] = {}
_HEADS: dict[tuple[bytes, str, int], bytes] = {}
_MEMO_LIMIT = 4096

_K = TypeVar("_K")
_V = TypeVar("_V")


def remember(memo: dict[_K, _V], key: _K, value: _V, limit: int = _MEMO_LIMIT) -> _V:
    """`memo[key] = value`, emptying `memo` first when it holds `limit` entries (memos of
    pieces encoded from traffic stay bounded); returns `value`."""
    if len(memo) >= limit:
        memo.clear()
    memo[key] = value
    return value
