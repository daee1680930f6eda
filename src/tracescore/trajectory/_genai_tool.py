"""OTel GenAI `execute_tool` spans: one tool execution, with its status (see `_genai`)."""

from __future__ import annotations

from tracescore import semconv
from tracescore.model.span import SpanRecord, StatusCode
from tracescore.model.trajectory import Deferred
from tracescore.trajectory._common import error_info, name_suffix
from tracescore.trajectory._messages import (
    ERROR_RESULT_NEEDLES,
    may_be_error_result,
    response_flags,
)
from tracescore.trajectory._options import BuildOptions
from tracescore.trajectory._values import as_text, clean_id, parse_later, parse_lenient
from tracescore.trajectory._views import MISSING, SpanView, ToolValues

__all__ = ["read_tool", "tool_execution"]

# Names bound here: one lookup fewer each per span read (a tool execution is the commonest span).
_ERROR = StatusCode.ERROR
_ERROR_TYPE = semconv.ERROR_TYPE
_TOOL_NAME = semconv.GEN_AI_TOOL_NAME
_CALL_ID = semconv.GEN_AI_TOOL_CALL_ID
_ARGUMENTS = semconv.GEN_AI_TOOL_CALL_ARGUMENTS
_RESULT = semconv.GEN_AI_TOOL_CALL_RESULT
_ESCAPE_NEEDLE, _ERROR_NEEDLE = ERROR_RESULT_NEEDLES


def read_tool(span: SpanRecord, options: BuildOptions, convention: str) -> SpanView:
    """An `execute_tool` span: one execution, with its status."""
    name, call_id, failed, error_type, message, arguments, result, _ = tool_execution(span, options)
    view = SpanView("tool", convention, name, call_id, failed, error_type, message)
    view.arguments = arguments
    view.result = result
    return view


def tool_execution(span: SpanRecord, options: BuildOptions) -> ToolValues:
    """What an `execute_tool` span says of its call: `read_tool`'s view, as `ToolValues` (the
    flat-run fast path builds the step from these, without a view)."""
    attrs = span.attributes
    limit = options.max_value_chars
    # `error_info`'s own first test, inlined (most spans did not fail: a call fewer for them).
    if span.events or span.status_code == _ERROR or _ERROR_TYPE in attrs:
        failed, error_type, message = error_info(span)
    else:
        failed = False
        error_type = message = None
    name = attrs.get(_TOOL_NAME)
    if name.__class__ is not str or not name.isascii():  # ASCII text is read as it is
        name = as_text(name)
    if not name:
        name = name_suffix(span.name, semconv.OP_EXECUTE_TOOL)
    call_id = attrs.get(_CALL_ID)
    if call_id.__class__ is str and call_id.isascii():  # `clean_id`'s own value: a call fewer
        call_id = call_id.strip() or None
    else:
        call_id = clean_id(call_id)
    # Arguments and results are parsed when first read (most scorers never read them); the
    # result is parsed now only when it may be an MCP CallToolResult with isError, which makes
    # a failed call even when the span is not. Text, the common case, is wrapped here
    # (`parse_later` and `may_be_error_result` inlined: calls fewer per span).
    arguments = result = MISSING
    raw = attrs.get(_ARGUMENTS, MISSING)
    if raw.__class__ is str:
        arguments = Deferred(parse_lenient, raw, limit)
    elif raw is not MISSING:
        arguments = parse_later(raw, limit)
    raw = attrs.get(_RESULT, MISSING)
    if raw.__class__ is str and (failed or not (_ESCAPE_NEEDLE in raw or _ERROR_NEEDLE in raw)):
        result = Deferred(parse_lenient, raw, limit)
    elif raw is not MISSING:
        if failed or (isinstance(raw, str) and not may_be_error_result(raw)):
            result = parse_later(raw, limit)
        else:
            result = parse_lenient(raw, limit)
            if isinstance(result, dict) and response_flags(result)[1]:
                failed = True
                error_type = semconv.MCP_TOOL_ERROR
    return (name, call_id, failed, error_type, message, arguments, result, None)
