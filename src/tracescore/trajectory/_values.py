"""Lenient value handling: parse what producers write, keep what cannot be parsed, cut what is huge.

Producers write arguments and results as JSON strings, as structured OTLP values, or as plain
text (pydantic-ai writes strings as-is; OpenInference agno writes Python `str(result)`). Nothing
here raises on odd input: the worst case is the original text, kept as text.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from tracescore.model.span import AttrValue, SpanRecord
from tracescore.model.trajectory import Deferred

__all__ = [
    "JSON_STARTS",
    "PLAIN_SCAN",
    "as_int",
    "as_text",
    "clean_id",
    "json_safe",
    "load_document",
    "parse_json",
    "parse_later",
    "parse_lenient",
    "truncate",
]

# Only these first characters make a string worth a json.loads attempt: objects, arrays and
# JSON-encoded strings. Numbers and words stay text, so "42" stays the string "42".
JSON_STARTS = frozenset('{["')
# An escaped UTF-16 surrogate (\ud800-\udfff) decodes to a lone surrogate if unpaired.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def truncate(text: str, limit: int) -> str:
    """`text` cut to `limit` characters with a marker naming the original size."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…[truncated, {len(text)} chars]"


def clean_text(text: str) -> str:
    """Text that encodes as UTF-8: lone surrogates (from JSON escapes) become U+FFFD."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # UTF-16 with surrogatepass keeps valid pairs and turns lone halves into U+FFFD.
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def as_text(value: object) -> str | None:
    """A value as text: strings as they are, bytes decoded leniently, others None."""
    if isinstance(value, str):
        # ASCII needs no cleaning; checked here too because this runs for most attributes read.
        return value if value.isascii() else clean_text(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return None


def clean_id(value: object) -> str | None:
    """A call id without stray whitespace (the registry examples have `" call_VSPy..."`)."""
    # ASCII text (most ids) is as_text's own value: no call needed.
    text = value if value.__class__ is str and value.isascii() else as_text(value)
    if text is None:
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        return None
    text = text.strip()
    return text or None


def as_int(value: object) -> int | None:
    """An integer count, or None (bools are not counts)."""
    if value.__class__ is int:  # the common case, first (a bool's class is bool)
        return value
    # bool before int: bool subclasses int, and True is not a token count.
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def first_int(attrs: Mapping[str, AttrValue], *keys: str) -> int | None:
    """The first of `keys` holding an integer count (conventions rename token attributes)."""
    for key in keys:
        value = as_int(attrs.get(key))
        if value is not None:
            return value
    return None


def parse_json(value: object) -> Any:
    """Decoded JSON when `value` is a JSON string; structured values as they are; else None."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        stripped = value.strip()
        if not stripped or stripped[0] not in JSON_STARTS:
            return None
        try:
            return load_document(PLAIN_SCAN, stripped)
        except (ValueError, RecursionError):
            return None
    if isinstance(value, tuple):
        return list(value)
    return value


def parse_lenient(value: object, limit: int) -> Any:
    """Arguments or a result as JSON-safe data: parsed JSON, structured values, or the text.

    A string longer than `limit` is not parsed: it is cut with a marker, so one huge result
    cannot make the trajectory (or the JSON Lines output) unbounded.
    """
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        if len(value) > limit:
            return truncate(clean_text(value), limit)
        stripped = value.strip()
        if not stripped or stripped[0] not in JSON_STARTS:
            return clean_text(value)
        try:
            parsed = load_document(_SCAN, stripped)
        except (ValueError, RecursionError):
            return clean_text(value)
        # Fast path: a document within the limit has no longer string inside, and without
        # NaN (refused above) or escaped surrogates it is already JSON-safe. (A one-character
        # search is much cheaper than a two-character one, and most documents have no `\`.)
        if ("\\" in stripped and _SURROGATE_ESCAPE.search(stripped)) or (
            not stripped.isascii() and clean_text(stripped) is not stripped
        ):
            return json_safe(parsed, limit)
        return parsed
    return json_safe(value, limit)


def parse_later(value: object, limit: int) -> Any:
    """`parse_lenient(value, limit)`, computed when a consumer first reads it (text only).

    Tool arguments and results are JSON text most scorers never read; a `Deferred` in a
    `ToolCall` field parses it on first read, to exactly what parsing now would give. Other
    values are converted now: they are rare, and some (None) must stay visible to the builder.
    """
    if value.__class__ is str:  # (a str subclass, rare, is parsed now: the same value)
        return Deferred(parse_lenient, value, limit)
    return parse_lenient(value, limit)


def _no_constant(name: str) -> Any:
    raise ValueError(f"non-finite number {name} in JSON")


# NaN and Infinity are not JSON; a document holding them stays text. One decoder for all calls.
_DECODER = json.JSONDecoder(parse_constant=_no_constant)
# `json.loads` without options: messages and tool lists accept what Python's json accepts.
_PLAIN_DECODER = json.JSONDecoder()


# The decoders' own C scanners: `JSONDecoder.__init__` sets `scan_once`, which typeshed omits.
_Scanner = Callable[[str, int], tuple[Any, int]]
_SCAN: _Scanner = _DECODER.scan_once  # type: ignore[attr-defined]
PLAIN_SCAN: _Scanner = _PLAIN_DECODER.scan_once  # type: ignore[attr-defined]


def load_document(scan: _Scanner, stripped: str) -> Any:
    """The JSON document `stripped` (no surrounding whitespace), parsed by `scan`.

    `decoder.decode(text)` is `raw_decode` between two whitespace regex matches, and
    `raw_decode` calls the decoder's C scanner. With no whitespace to skip, calling the scanner
    directly parses the same way without two Python frames and two regex matches; the text is
    a document exactly when the scanner consumes all of it.
    """
    try:
        parsed, end = scan(stripped, 0)
    except StopIteration:
        raise ValueError("expecting a JSON value") from None
    if end != len(stripped):
        raise ValueError(f"extra data after the JSON document at {end}")
    return parsed


def json_safe(value: object, limit: int, _depth: int = 0) -> Any:
    """A copy that `json.dumps` accepts: bytes and non-finite floats become text, strings cut.

    Depth is capped because a kvlist or JSON document can nest arbitrarily deep.
    """
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, str):
        return truncate(clean_text(value), limit)
    if isinstance(value, bytes):
        return truncate(value.decode("utf-8", "replace"), limit)
    if _depth > 64:
        return truncate(repr(value), limit)
    if isinstance(value, dict):
        return {
            (k if isinstance(k, str) else str(k)): json_safe(v, limit, _depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [json_safe(v, limit, _depth + 1) for v in value]
    return truncate(repr(value), limit)


def attr(span: SpanRecord, key: str) -> AttrValue:
    """The raw attribute, or None."""
    return span.attributes.get(key)


def attr_text(span: SpanRecord, key: str) -> str | None:
    """The attribute as text (strings and bytes), or None."""
    return as_text(span.attributes.get(key))
