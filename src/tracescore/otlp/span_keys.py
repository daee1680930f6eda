"""Whether a serialized Span has an attribute with one of some keys, read off the wire.

The assembler appends score attributes to a held agent span's bytes unless the span already
has one of their keys (export/spans.py): this says which, key by key. Natively
(`_span_keys.c`) when the extension is built; `python_span_has_key` is its twin (tests compare
them), used where it is not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from tracescore.otlp.native import extension
from tracescore.otlp.wire import WireError, read_varint, skip_group

__all__ = ["NATIVE_SPAN_KEYS", "python_span_has_key", "span_has_key"]

_TAG_MAX = 0xFFFFFFFF  # upb refuses longer tags


def python_span_has_key(span_bytes: bytes, keys: Iterable[str]) -> bool | None:
    """Whether the Span message `span_bytes` has an attribute whose key is one of `keys`; None
    where the span is in a shape this does not read (malformed, a field number 0 or a tag over
    32 bits, attributes
    not length-delimited, a KeyValue whose key is repeated or not length-delimited, a key that
    is not a str). The pure-Python twin of the extension's `span_has_key`."""
    try:
        wanted = {key.encode() for key in keys}
    except (AttributeError, UnicodeEncodeError):
        return None
    pos, end = 0, len(span_bytes)
    try:
        while pos < end:
            tag, pos = read_varint(span_bytes, pos)
            number, kind = tag >> 3, tag & 7
            if number == 0 or tag > _TAG_MAX or (number == 9 and kind != 2):
                return None
            if kind == 2:
                length, pos = read_varint(span_bytes, pos)
                start, pos = pos, pos + length
                if pos > end:
                    return None
                if number == 9:
                    key = _key_of(span_bytes, start, pos)
                    if key is None:
                        return None
                    if key in wanted:
                        return True
            else:
                skipped = _skip_scalar(span_bytes, pos, end, number, kind)
                if skipped is None:
                    return None
                pos = skipped
            if pos > end:
                return None
    except WireError:
        return None
    return False


def _key_of(buf: bytes, pos: int, end: int) -> bytes | None:
    """The key of the KeyValue in buf[pos:end] (b"" without one), or None when it is repeated,
    not length-delimited or the KeyValue is malformed."""
    key: bytes | None = None
    while pos < end:
        tag, pos = read_varint(buf, pos)
        number, kind = tag >> 3, tag & 7
        if number == 0 or tag > _TAG_MAX:
            return None
        if kind == 2:
            length, pos = read_varint(buf, pos)
            if number == 1:
                if key is not None:
                    return None
                key = buf[pos : pos + length]
            pos += length
        elif number == 1:
            return None
        else:
            skipped = _skip_scalar(buf, pos, end, number, kind)
            if skipped is None:
                return None
            pos = skipped
        if pos > end:
            return None
    return b"" if key is None else key


def _skip_scalar(buf: bytes, pos: int, end: int, number: int, kind: int) -> int | None:
    """Where the field after a tag of wire type `kind` (not 2) ends; None for a wire type that
    is not read (4, an end of group with no start, or 6-7)."""
    if kind == 0:
        return read_varint(buf, pos)[1]
    if kind == 1 or kind == 5:
        return pos + (8 if kind == 1 else 4)
    if kind == 3:
        return skip_group(buf, pos, end, number)
    return None


_native = extension()
span_has_key: Callable[[bytes, Iterable[str]], bool | None] = (
    python_span_has_key if _native is None else _native.span_has_key
)
"""`python_span_has_key`, natively where the extension is built (keys: a dict or a tuple)."""
NATIVE_SPAN_KEYS = _native is not None
