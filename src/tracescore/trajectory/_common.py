"""Span-level reads every convention shares: errors and exception events."""

from __future__ import annotations

from collections.abc import Mapping

from tracescore import semconv
from tracescore.model.span import AttrValue, SpanRecord, StatusCode
from tracescore.trajectory._values import as_text, clean_text

__all__ = ["ErrorInfo", "error_info", "indexed", "name_suffix"]

ErrorInfo = tuple[bool, str | None, str | None]
_NO_ERROR: ErrorInfo = (False, None, None)
_ERROR = StatusCode.ERROR  # a module constant: reading an enum member costs 4 times more


def error_info(span: SpanRecord) -> ErrorInfo:
    """(failed, error type, message) from status ERROR, `error.type` or an exception event.

    Texts come out encodable as UTF-8 (`clean_text`), like every text the GenAI reader returns.

    The status can only be ERROR here as a StatusCode: both the protobuf integer and the JSON
    enum name were normalised by the decoder. `error.type` alone marks an error (conventions.md
    §8 rule 3), and an exception event alone does too: some producers record the exception
    without setting the status.
    """
    attrs = span.attributes
    # Fast path, most spans: no status ERROR, no `error.type` and no event cannot be a failure.
    if not span.events and span.status_code != _ERROR and semconv.ERROR_TYPE not in attrs:
        return _NO_ERROR
    error_type = as_text(attrs.get(semconv.ERROR_TYPE)) or None
    message = clean_text(span.status_message) or as_text(attrs.get(semconv.ERROR_MESSAGE)) or None
    exception = None
    for event in span.events:
        if event.name == semconv.EXCEPTION_EVENT:
            exception = event
            break
    if exception is not None:
        error_type = error_type or as_text(exception.attributes.get(semconv.EXCEPTION_TYPE))
        message = message or as_text(exception.attributes.get(semconv.EXCEPTION_MESSAGE))
    failed = span.status_code == _ERROR or error_type is not None or exception is not None
    if not failed:
        return _NO_ERROR
    return True, error_type, message


def name_suffix(span_name: str, prefix: str) -> str | None:
    """`X` from a span named `{prefix} X` (encodable as UTF-8), else None."""
    if span_name.startswith(prefix + " "):
        rest = span_name[len(prefix) + 1 :].strip()
        return clean_text(rest) if rest else None
    return None


def indexed(attrs: Mapping[str, AttrValue], prefix: str) -> list[dict[str, AttrValue]]:
    """`prefix<i>.<rest>` keys regrouped as one dict of `<rest>` per index, in index order.

    Flattened conventions (OpenInference, OpenLLMetry's legacy chat spans) spell lists this way.
    """
    groups: dict[int, dict[str, AttrValue]] = {}
    for key, value in attrs.items():
        if not key.startswith(prefix):
            continue
        index, _, rest = key[len(prefix) :].partition(".")
        if not index.isdigit() or not rest:
            continue
        groups.setdefault(int(index), {})[rest] = value
    return [groups[i] for i in sorted(groups)]
