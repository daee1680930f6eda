"""The per-span classification interface shared by every convention reader.

A convention module exposes a `Convention`: the attribute keys (and key prefixes) it reads, and
`read(span, options)` returning a `SpanView` when it recognises the span, else None. The builder
never looks at attributes itself; it only combines views. A span several conventions describe
is read once: the first view (in convention priority order) decides the role, later views of the
same role only fill fields the first left empty.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, Final, Literal, TypeAlias

from tracescore import semconv
from tracescore.model import record
from tracescore.model.span import SpanRecord
from tracescore.trajectory._options import BuildOptions
from tracescore.trajectory._values import clean_text

__all__ = [
    "MISSING",
    "MODEL_RAW_INPUTS",
    "MODEL_VALUES_LEN",
    "TOOL_CALL_ID",
    "Convention",
    "LazyResponses",
    "LazyText",
    "ModelInput",
    "ModelValues",
    "RequestValues",
    "Response",
    "Role",
    "SpanView",
    "ToolRequest",
    "ToolValues",
    "clean_view",
    "merge_views",
    "request_values",
    "tool_values",
]

Role: TypeAlias = Literal["agent", "tool", "model", "handoff", "other"]
"""`handoff`: control passed to another agent; the view's `agent_name` is the agent taking
over, `tool_name` and `call_id` the model's call that asked for it (joined like a tool's)."""


class _Missing:
    """Marks "not recorded", as opposed to a recorded null arguments or result."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()


@record
class ToolRequest:
    """A tool call a model asked for (a `tool_call` part or its equivalent)."""

    name: str
    call_id: str | None
    arguments: Any = MISSING


@record
class Response:
    """What came back to the model for one call id: a result, or a denial."""

    result: Any
    denied: bool = False
    is_error: bool = False


# Parsing a chat span's input messages is the most expensive read (the whole history on every
# call), and it is only needed for requests that have no execution span. So it is deferred.
LazyResponses: TypeAlias = Callable[[], dict[str, Response]]
LazyText: TypeAlias = Callable[[], str | None]


@dataclass(slots=True)
class SpanView:
    """What one convention understood of one span. None means "this convention does not say".

    The fields tool and model spans set come first, so their readers build views by position
    (one per span; keyword construction costs three times more): `SpanView("tool", convention,
    tool_name, call_id, error, error_type, error_message)`, and for a model span the same with
    those five None, then `model, input_tokens, output_tokens, output`.
    """

    role: Role
    convention: str
    # tool execution
    tool_name: str | None = None
    call_id: str | None = None
    error: bool | None = None
    error_type: str | None = None
    error_message: str | None = None
    # model call
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    # agent, model (the answer), and for `other` spans hints used when the trace root is the run
    output: str | None = None
    agent_name: str | None = None
    input: str | LazyText | None = None
    tools: tuple[str, ...] | None = None
    # tool execution
    arguments: Any = MISSING
    result: Any = MISSING
    pause_reason: str | None = None
    output_tool: bool | None = None
    # model call
    requests: tuple[ToolRequest, ...] | None = None
    responses: LazyResponses | None = None
    output_tool_names: tuple[str, ...] | None = None
    warnings: tuple[str, ...] = ()


ToolValues: TypeAlias = tuple[
    str | None, str | None, bool | None, str | None, str | None, Any, Any, str | None
]
"""What a tool call is made of, as a tool view holds it: tool name, call id, error, error type,
error message, arguments, result, pause reason. The flat-run fast path reads a GenAI execution
into these instead of a view (a tuple costs a twentieth of a 23-slot `SpanView`)."""

TOOL_CALL_ID: Final = 1
"""The call id's place in `ToolValues`."""

RequestValues: TypeAlias = tuple[str, str | None, Any]
"""What a `ToolRequest` is made of: tool name, call id, arguments. The flat-run fast path
reads requests into these and joins them (a tuple costs an eighth of a `ToolRequest`)."""


def request_values(requests: tuple[ToolRequest, ...]) -> tuple[RequestValues, ...]:
    """The `RequestValues` of `requests`."""
    return tuple((r.name, r.call_id, r.arguments) for r in requests)


ModelValues: TypeAlias = tuple[
    str | None,
    int | None,
    int | None,
    str | None,
    tuple[RequestValues, ...] | None,
    tuple[str, ...] | None,
    object,
]
"""What an inference span says of its call, as a GenAI model view holds it: model, input and
output tokens, output (the answer), requests (as their values), tools, and the raw input
messages (None: not recorded) behind its lazy `input` and `responses`. The flat-run fast path
reads GenAI model spans into these (a tuple costs a twentieth of a view) and makes a view of the
few it needs."""

MODEL_RAW_INPUTS: Final = 6
"""The raw input messages' place in `ModelValues`."""
MODEL_VALUES_LEN: Final = 7
"""The length of `ModelValues`, which tells them from `ToolValues` (8)."""


def tool_values(view: SpanView) -> ToolValues:
    """The `ToolValues` of a tool (or handoff) view."""
    return (
        view.tool_name,
        view.call_id,
        view.error,
        view.error_type,
        view.error_message,
        view.arguments,
        view.result,
        view.pause_reason,
    )


_MERGED = tuple(
    f.name for f in fields(SpanView) if f.name not in ("role", "convention", "warnings")
)


class ModelInput:
    """A model call's recorded input messages, read only when asked: called, the responses by
    call id (a `LazyResponses`); `history()`, the calls since the last user message with their
    responses, for a run resumed after an approval (see `_steps`).

    `history()` first looks for a denial's text in the raw input (`needles`): most inputs hold
    none, and then are not parsed for it.
    """

    __slots__ = ("_calls", "_raw", "_rejections", "_responses")

    def __init__(
        self,
        raw: object,
        responses: Callable[[object], dict[str, Response]],
        calls: Callable[[object], tuple[tuple[ToolRequest, Response | None], ...]],
        options: BuildOptions,
    ) -> None:
        self._raw = raw
        self._responses = responses
        self._calls = calls
        # One is made per model span that recorded its input, and `history` is asked of the
        # run's first only: its needles are put together there.
        self._rejections = options.pause.rejection_texts

    def __call__(self) -> dict[str, Response]:
        return self._responses(self._raw)

    def history(self) -> tuple[tuple[ToolRequest, Response | None], ...]:
        """The calls since the last user message, each with its response (None: unanswered)."""
        raw = self._raw
        needles = (_DENIAL, _DENIED_KEY, *self._rejections)
        if isinstance(raw, str) and not any(needle in raw for needle in needles):
            return ()
        return self._calls(raw)


_DENIAL = semconv.RESPONSE_EXECUTION_DENIED
_DENIED_KEY = f'"{semconv.RESPONSE_DENIED}"'


def merge_views(views: list[SpanView]) -> SpanView | None:
    """One view per span: the first decisive view wins, later ones fill its gaps.

    `other` views never override a decisive role, but they can still lend hints (agent name,
    input, output) to an `other` winner.
    """
    if len(views) < 2:
        return views[0] if views else None
    decisive = [v for v in views if v.role != "other"]
    first = decisive[0] if decisive else views[0]
    same = [v for v in views if v.role == first.role and v is not first]
    for other in same:
        for name in _MERGED:
            mine = getattr(first, name)
            if mine is None or mine is MISSING:
                theirs = getattr(other, name)
                if theirs is not None and theirs is not MISSING:
                    setattr(first, name, theirs)
        first.warnings += other.warnings
    return first


_TEXT_FIELDS = ("agent_name", "output", "tool_name", "error_type", "error_message", "model")


def clean_view(view: SpanView) -> SpanView:
    """The view with every text field encodable as UTF-8.

    Readers take some names straight from span names and status messages, which a JSON
    decoder may have filled with lone surrogates; the output must never fail to encode.
    """
    # Fast path: the texts set (the `_TEXT_FIELDS`), joined, are ASCII, so none needs
    # cleaning (most views). Anything else, or a value that is not text, takes the
    # field-by-field path. Reading the six fields directly costs a third of an attrgetter.
    texts = (
        view.agent_name,
        view.output,
        view.tool_name,
        view.error_type,
        view.error_message,
        view.model,
    )
    try:
        ascii_only = "".join(filter(None, texts)).isascii()
    except TypeError:
        ascii_only = False
    if not ascii_only:
        _clean_text_fields(view)
    tools = view.tools
    if tools and not all(t.isascii() for t in tools):
        view.tools = tuple(clean_text(t) for t in tools)
    return view


def _clean_text_fields(view: SpanView) -> None:
    for name in _TEXT_FIELDS:
        value = getattr(view, name)
        if isinstance(value, str) and not value.isascii():
            setattr(view, name, clean_text(value))


@dataclass(frozen=True, slots=True)
class Convention:
    """One instrumentation convention: the attribute keys it reads and its span reader.

    `keys` and `prefixes` feed `needed_attribute`, so a receiver that decodes only those keys
    gives the reader everything it needs.
    """

    name: str
    keys: frozenset[str]
    prefixes: tuple[str, ...]
    read: Callable[[SpanRecord, BuildOptions], SpanView | None]
    extends: tuple[str, ...] = ()
    """Conventions this reader already applies itself (skipped when it recognised the span)."""
    clean: bool = False
    """True when every text the reader puts in a view is already encodable as UTF-8 (read
    through `as_text` or `clean_text`), so a view it alone wrote needs no `clean_view`."""
