"""The bytes of `gen_ai.evaluation.result` log records, one per score (`events` frames them
into a request).

Everything but a score's value and explanation is the same from run to run, so each record is
written from a template kept per (name, label, error type, agent, scenario, digest) and
framings kept per length; the fields are those `events` documents, in field-number order, as
protobuf writes them.
"""

from __future__ import annotations

from typing import TypeAlias

from opentelemetry.proto.logs.v1.logs_pb2 import SeverityNumber

from tracescore import semconv
from tracescore.export import wire
from tracescore.export.attributes import error_type, score_label
from tracescore.model.score import Score
from tracescore.model.span import AttrValue

__all__ = [
    "ATTRIBUTES",
    "RECORD_HEADS",
    "SCORE_VALUE",
    "TemplateKey",
    "encode_records",
    "explanation_head",
    "record_head",
    "record_parts",
    "record_template",
]

TemplateKey: TypeAlias = tuple[str, str | None, str | None, str | None, str | None, str]
"""What a record's template is kept by: score name, label, error type, agent, scenario, digest."""

ATTRIBUTES = b"\x32"  # LogRecord.attributes = 6
_LOG_RECORDS = b"\x12"  # ScopeLogs.log_records = 2 (scope = 1)


def _severity(number: int, text: str) -> bytes:
    # LogRecord.severity_number = 2 (varint), severity_text = 3.
    return b"\x10" + wire.varint(number) + wire.len_field(b"\x1a", text.encode())


_INFO = _severity(SeverityNumber.SEVERITY_NUMBER_INFO, "INFO")
_WARN = _severity(SeverityNumber.SEVERITY_NUMBER_WARN, "WARN")
SCORE_VALUE = wire.double_head(ATTRIBUTES, semconv.GEN_AI_EVALUATION_SCORE_VALUE)
_EXPLANATION = semconv.GEN_AI_EVALUATION_EXPLANATION
_pack_double = wire.DOUBLE.pack


def encode_records(
    scores: tuple[Score, ...], agent: str | None, scenario: str | None, start: bytes, end: bytes
) -> bytes:
    """The framed records of one run's scores, one after the other (`start`: the timestamp;
    `end`: the ids, observed time and event name)."""
    return b"".join(record_parts(scores, agent, scenario, start, end))


def record_parts(
    scores: tuple[Score, ...], agent: str | None, scenario: str | None, start: bytes, end: bytes
) -> list[bytes]:
    """The framed records of `scores` as pieces to join: each record's fields in field-number
    order, as protobuf writes them, after its frame, whose length is the pieces' sum."""
    parts: list[bytes] = []
    fixed = len(start) + len(end)
    for score in scores:
        memo: TemplateKey
        if score.error is None:
            # `score_label` without the call for what every check scores: its own label.
            label = score.label if score.label is not None else score_label(score)
            memo = (score.name, label, None, agent, scenario, score.digest)
        else:
            memo = (
                score.name,
                semconv.LABEL_ERROR,
                error_type(score),
                agent,
                scenario,
                score.digest,
            )
        template = _TEMPLATES.get(memo)
        if template is None:
            template = record_template(memo)
        head, middle, tail, size = template
        value = score.value
        field = b"" if value is None else SCORE_VALUE + _pack_double(float(value))
        # An explanation rarely repeats, so a memo of whole fields would only miss; its framing
        # repeats with its length (kept here by length alone: the key and tag are fixed).
        explanation = score.explanation.encode()
        framing = _EXPLANATION_HEADS.get(len(explanation))
        if framing is None:
            framing = explanation_head(len(explanation))
        size += fixed + len(field) + len(framing) + len(explanation)
        # `len_field(_LOG_RECORDS, record)` with its head memoized by length (no calls).
        frame = RECORD_HEADS.get(size)
        if frame is None:
            frame = record_head(size)
        parts += (frame, start, head, field, middle, framing, explanation, tail, end)
    return parts


def record_head(size: int) -> bytes:
    """The frame of a record of `size` bytes (`len_field(_LOG_RECORDS, record)` up to it)."""
    return wire.remember(RECORD_HEADS, size, _LOG_RECORDS + wire.varint(size), _TEMPLATES_LIMIT)


def explanation_head(size: int) -> bytes:
    """The explanation field of `size` UTF-8 bytes up to them."""
    head = wire.string_head(ATTRIBUTES, _EXPLANATION, size)
    return wire.remember(_EXPLANATION_HEADS, size, head, _TEMPLATES_LIMIT)


def record_template(key: TemplateKey) -> tuple[bytes, bytes, bytes, int]:
    """What a record holds around its value and explanation, which alone vary per score, and
    its size; remembered per `key` (name, label, error type, agent, scenario, digest).

    The attributes are those `events` documents, in that order: before the value, the
    severity (a failed scorer is worth a warning; a low score is a result, not a problem), the
    event name and the evaluation name; between value and explanation, the label; after it,
    the error type, agent, scenario and digest.
    """
    template = _TEMPLATES.get(key)
    if template is not None:
        return template
    name, label, kind, agent, scenario, digest = key
    s = semconv
    head = (_WARN if kind is not None else _INFO) + wire.attribute_fields(
        ATTRIBUTES,
        {s.EVENT_NAME: s.GEN_AI_EVALUATION_RESULT_EVENT, s.GEN_AI_EVALUATION_NAME: name},
    )
    middle = {} if label is None else {s.GEN_AI_EVALUATION_SCORE_LABEL: label}
    tail: dict[str, AttrValue] = {}
    if kind is not None:
        tail[s.ERROR_TYPE] = kind
    if agent:
        tail[s.GEN_AI_AGENT_NAME] = agent
    if scenario is not None:
        tail[s.TRACESCORE_SCENARIO] = scenario
    tail[s.TRACESCORE_DIGEST] = digest
    middle_fields = wire.attribute_fields(ATTRIBUTES, middle)
    tail_fields = wire.attribute_fields(ATTRIBUTES, tail)
    template = (head, middle_fields, tail_fields, len(head) + len(middle_fields) + len(tail_fields))
    return wire.remember(_TEMPLATES, key, template, _TEMPLATES_LIMIT)


# Record templates by (name, label, error type, agent, scenario, digest): bounded, since
# agents and labels come from traffic.
_TEMPLATES: dict[TemplateKey, tuple[bytes, bytes, bytes, int]] = {}
_TEMPLATES_LIMIT = 4096
_EXPLANATION_HEADS: dict[int, bytes] = {}
RECORD_HEADS: dict[int, bytes] = {}
"""Record frames by record size (`record_head` fills it)."""
