"""A scored run's evaluation records and span attributes, written in one pass over its scores.

`serve` writes both for every run it scores (`RunScorer._emit`). Written apart
(`EvaluationLogs.add`, `encoded_score_attributes`), each read every score, found its pieces in
a memo of its own, packed the value and encoded the explanation. Here a score's pieces of both
are one memo read (per prefix, name, label, error type, agent, scenario and score digest), and
its value and explanation are encoded once. The bytes are exactly those of the two (tests
compare).
"""

from __future__ import annotations

from tracescore import semconv
from tracescore.export import log_records, wire
from tracescore.export.attributes import error_type, score_label
from tracescore.export.encoded_attributes import (
    SPAN_ATTRIBUTES,
    EncodedAttributes,
    encoded_score_attributes,
    run_tail,
    score_pieces,
)
from tracescore.export.events import EvaluationLogs
from tracescore.model.run_result import RunResult
from tracescore.model.span import AttrValue

__all__ = ["logged_score_attributes"]


class _Pieces:
    """What a score writes in its record and on its span but for its value and explanation:
    the record's template, the attribute keys, the value's framing and the label field, and
    both explanation framings by the explanation's UTF-8 length."""

    __slots__ = (
        "explanation_key",
        "head",
        "heads",
        "label_field",
        "label_key",
        "middle",
        "score_key",
        "size",
        "span",
        "tail",
        "value_head",
    )

    def __init__(self, prefix: str, template: log_records.TemplateKey) -> None:
        self.head, self.middle, self.tail, self.size = log_records.record_template(template)
        name, label = template[0], template[1]
        self.span = span = score_pieces(prefix, name)
        self.score_key, self.label_key = span.score_key, span.label_key
        self.explanation_key, self.value_head = span.explanation_key, span.value_head
        self.label_field = b"" if label is None else span.label_field(label)
        self.heads: dict[int, tuple[bytes, bytes]] = {}

    def explanation_heads(self, size: int) -> tuple[bytes, bytes]:
        """The record's and the span's explanation fields of `size` UTF-8 bytes, up to them."""
        heads = (log_records.explanation_head(size), self.span.explanation_head(size))
        return wire.remember(self.heads, size, heads, _HEADS_LIMIT)


def logged_score_attributes(
    logs: EvaluationLogs, result: RunResult, prefix: str = semconv.DEFAULT_SCORE_ATTRIBUTE_PREFIX
) -> EncodedAttributes:
    """`logs.add(result)`, and `encoded_score_attributes(result, prefix)` returned."""
    if not prefix:
        raise ValueError("score attribute prefix must not be empty")
    scenario = result.scenario
    if scenario is None or not result.sampled:  # not scored: no attributes
        logs.add(result)
        return encoded_score_attributes(result, prefix)
    trajectory = result.trajectory
    scores, agent = result.scores, trajectory.agent
    items: dict[str, AttrValue] = {}
    fields: list[bytes] = []
    records: list[bytes] = []
    parts: list[bytes] = []
    if scores:
        records, end = logs.target(trajectory)
        start = logs.stamp
        fixed = len(start) + len(end)
        known, pack, score_value = _PIECES, _pack_double, log_records.SCORE_VALUE
        frames = log_records.RECORD_HEADS
        # Calls are what a run pays most for here: the memo reads and `score_label` are inline.
        key: tuple[str, str, str | None, str | None, str | None, str, str]
        for score in scores:
            label = score.label
            if score.error is None:
                if label is None:
                    label = score_label(score)
                key = (prefix, score.name, label, None, agent, scenario, score.digest)
            else:
                label = semconv.LABEL_ERROR
                kind = error_type(score)
                key = (prefix, score.name, label, kind, agent, scenario, score.digest)
            piece = known.get(key)
            if piece is None:
                piece = wire.remember(known, key, _Pieces(prefix, key[1:]), _MEMO_LIMIT)
            value = score.value
            if value is None:
                logged = b""
            else:
                value = float(value)  # the attribute is always a double
                packed = pack(value)
                logged = score_value + packed
                items[piece.score_key] = value
                fields.append(piece.value_head + packed)
            if label is not None:
                items[piece.label_key] = label
                fields.append(piece.label_field)
            explanation = score.explanation
            items[piece.explanation_key] = explanation
            data = explanation.encode()
            heads = piece.heads.get(len(data))
            if heads is None:
                heads = piece.explanation_heads(len(data))
            fields += (heads[1], data)
            size = piece.size + fixed + len(logged) + len(heads[0]) + len(data)
            frame = frames.get(size)
            if frame is None:
                frame = log_records.record_head(size)
            parts += (
                frame,
                start,
                piece.head,
                logged,
                piece.middle,
                heads[0],
                data,
                piece.tail,
                end,
            )
    tail = run_tail(scenario, result.verdict, result.digest, trajectory.complete)
    items.update(tail[0])
    if len(items) != len(fields) - len(scores) + len(tail[0]):
        # Two scores of one name (a hand-built result; a config refuses it): the mapping
        # kept one key for both, so encode what it holds.
        attributes = EncodedAttributes(items)
        attributes.span_fields = wire.attribute_fields(SPAN_ATTRIBUTES, items)
    else:
        fields.append(tail[1])
        attributes = EncodedAttributes(items)
        attributes.span_fields = b"".join(fields)
    # The records go in last, all of them or none (a failing score leaves no half record).
    records += parts
    logs.records += len(scores)
    return attributes


_pack_double = wire.DOUBLE.pack
# Pieces per (prefix, name, label, error type, agent, scenario, digest): bounded, since agents
# and labels come from traffic.
_PIECES: dict[tuple[str, str, str | None, str | None, str | None, str | None, str], _Pieces] = {}
_MEMO_LIMIT = 4096
_HEADS_LIMIT = 64
