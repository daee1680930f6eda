"""A run's score attributes with their `Span.attributes` bytes, written in the same pass.

`serve` puts every scored run's attributes on its held agent span (`annotate_span_bytes`),
which encoded them one by one through the generic `wire.attribute_fields`: a dozen memo
lookups keyed by fresh tuples per run. Here the attributes are built as `score_attributes`
builds them, and each is encoded from pieces kept per score name (keys, the value's framing,
whole label fields) and per run-level combination (scenario, verdict, digest, complete), so
the span only has the explanations left to frame. The bytes are exactly those of
`wire.attribute_fields(Span.attributes, score_attributes(result, prefix))` (tests compare).
`serve` writes them with the run's evaluation records, from the same pieces (`scored_output`).
"""

from __future__ import annotations

from typing import NoReturn

from tracescore import semconv
from tracescore.export import wire
from tracescore.export.attributes import run_attributes, score_label
from tracescore.model.run_result import RunResult
from tracescore.model.span import AttrValue

__all__ = [
    "SPAN_ATTRIBUTES",
    "EncodedAttributes",
    "ScorePieces",
    "encoded_score_attributes",
    "run_tail",
    "score_pieces",
]

SPAN_ATTRIBUTES = b"\x4a"  # Span.attributes = 9 (opentelemetry/proto/trace/v1/trace.proto)


class EncodedAttributes(dict[str, AttrValue]):
    """Attributes and `span_fields`, their `Span.attributes` fields in order; read-only, so
    that the bytes cannot fall out of step with the items.

    A dict rather than a Mapping of one: the assembler tests and reads it per run, and a
    Mapping's `__len__` and `__iter__` are Python calls.
    """

    __slots__ = ("span_fields",)
    span_fields: bytes

    def _read_only(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("encoded attributes are read-only")

    __setitem__ = __delitem__ = __ior__ = _read_only
    clear = pop = popitem = setdefault = update = _read_only


def _encoded(items: dict[str, AttrValue], span_fields: bytes) -> EncodedAttributes:
    attributes = EncodedAttributes(items)  # copied by dict's own merge, not `__setitem__`
    attributes.span_fields = span_fields
    return attributes


class ScorePieces:
    """What a score named `name` writes under `prefix`, but for its value and explanation."""

    __slots__ = (
        "explanation_key",
        "heads",
        "label_key",
        "labels",
        "score_key",
        "value_head",
    )

    def __init__(self, prefix: str, name: str) -> None:
        s = semconv
        self.score_key = s.score_attribute(prefix, name, s.SCORE_SUFFIX)
        self.label_key = s.score_attribute(prefix, name, s.LABEL_SUFFIX)
        self.explanation_key = s.score_attribute(prefix, name, s.EXPLANATION_SUFFIX)
        self.value_head = wire.double_head(SPAN_ATTRIBUTES, self.score_key)
        # Whole label fields by label: `pass`, `fail`, `error`, `skipped` and the scorers'
        # own labels (bounded below, since a scorer's label may come from a judge).
        self.labels: dict[str, bytes] = {}
        # The explanation field up to its UTF-8 bytes, by their number: explanations rarely
        # repeat, their framing does.
        self.heads: dict[int, bytes] = {}

    def label_field(self, label: str) -> bytes:
        field = wire.string_field(SPAN_ATTRIBUTES, self.label_key, label)
        return wire.remember(self.labels, label, field, _LABELS_LIMIT)

    def explanation_head(self, size: int) -> bytes:
        head = wire.string_head(SPAN_ATTRIBUTES, self.explanation_key, size)
        return wire.remember(self.heads, size, head, _LABELS_LIMIT)


def encoded_score_attributes(
    result: RunResult, prefix: str = semconv.DEFAULT_SCORE_ATTRIBUTE_PREFIX
) -> EncodedAttributes:
    """`score_attributes(result, prefix)` with its `Span.attributes` fields (see the module)."""
    if not prefix:
        raise ValueError("score attribute prefix must not be empty")
    items: dict[str, AttrValue] = {}
    if result.scenario is None or not result.sampled:
        return _encoded(items, b"")  # not scored: the span is forwarded as it came
    fields: list[bytes] = []
    pieces = _PIECES
    pack = _pack_double
    # Calls are what a run pays most for here: the memo reads and `score_label` are inline.
    for score in result.scores:
        piece = pieces.get((prefix, score.name))
        if piece is None:
            piece = wire.remember(
                pieces, (prefix, score.name), ScorePieces(prefix, score.name), _MEMO_LIMIT
            )
        value = score.value
        if value is not None:
            value = float(value)  # the attribute is always a double
            items[piece.score_key] = value
            fields.append(piece.value_head + pack(value))
        label = score.label
        if label is None or score.error is not None:
            label = score_label(score)
        if label is not None:
            items[piece.label_key] = label
            field = piece.labels.get(label)
            fields.append(piece.label_field(label) if field is None else field)
        explanation = score.explanation
        items[piece.explanation_key] = explanation
        data = explanation.encode()
        head = piece.heads.get(len(data))
        fields.append((piece.explanation_head(len(data)) if head is None else head) + data)
    tail = run_tail(result.scenario, result.verdict, result.digest, result.trajectory.complete)
    items.update(tail[0])
    fields.append(tail[1])
    if len(items) != len(fields) - 1 + len(tail[0]):
        # Two scores of one name (a hand-built result; a config refuses it): the mapping
        # kept one key for both, so encode what it holds.
        return _encoded(items, wire.attribute_fields(SPAN_ATTRIBUTES, items))
    attributes = EncodedAttributes(items)  # `_encoded`, inline
    attributes.span_fields = b"".join(fields)
    return attributes


def score_pieces(prefix: str, name: str) -> ScorePieces:
    """The pieces of a score named `name` under `prefix`, remembered."""
    piece = _PIECES.get((prefix, name))
    if piece is None:
        piece = wire.remember(_PIECES, (prefix, name), ScorePieces(prefix, name), _MEMO_LIMIT)
    return piece


def run_tail(
    scenario: str, verdict: str | None, digest: str | None, complete: bool
) -> tuple[dict[str, AttrValue], bytes]:
    """The run-level attributes that follow the scores, and their fields; remembered."""
    run = (scenario, verdict, digest, complete)
    tail = _RUNS.get(run)
    if tail is None:
        items = run_attributes(scenario, verdict, digest, complete)
        tail = (items, wire.attribute_fields(SPAN_ATTRIBUTES, items))
        wire.remember(_RUNS, run, tail, _MEMO_LIMIT)
    return tail


_pack_double = wire.DOUBLE.pack
# Pieces per (prefix, score name) and run-level fields per (scenario, verdict, digest,
# complete): a handful per configuration; bounded all the same, as are the labels and the
# explanation lengths per name.
_PIECES: dict[tuple[str, str], ScorePieces] = {}
_RUNS: dict[tuple[str, str | None, str | None, bool], tuple[dict[str, AttrValue], bytes]] = {}
_MEMO_LIMIT = 1024
_LABELS_LIMIT = 64
