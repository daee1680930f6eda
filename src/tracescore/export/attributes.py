"""Score attributes for the scored agent span, and Python values to OTLP AnyValues.

What a score becomes on the span (`<prefix>` is `eval` unless configured):

- `<prefix>.<name>.score` (double): only when the scorer produced a value. A failed scorer
  never gets a score attribute, so dashboards averaging scores never count a failure as 0.
- `<prefix>.<name>.label` (string): the scorer's label (`pass` / `fail` unless the scorer says
  otherwise), `error` when the scorer failed, `skipped` when the run could not be scored.
  Absent only for a value without a threshold or pass rule (nothing to label).
- `<prefix>.<name>.explanation` (string): always; for a failure it says what failed.

Run-level: `tracescore.scenario`, `tracescore.verdict` and `tracescore.digest` when known, and
`tracescore.complete` (bool) so runs scored without their agent span can be told apart. A run
that was not scored (no scenario matched, or sampling left it out) gets no attributes at all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from tracescore import semconv
from tracescore.export import wire
from tracescore.model.run_result import RunResult
from tracescore.model.score import Score
from tracescore.model.span import AttrValue

__all__ = [
    "add_attributes",
    "error_type",
    "key_values",
    "run_attributes",
    "score_attributes",
    "score_label",
    "set_any_value",
    "to_any_value",
]

# A class name before the colon of "ValueError: bad input" (what ScorerBase.score writes).
_ERROR_CLASS = re.compile(r"([A-Za-z_][\w.]*)\s*:")


def score_label(score: Score) -> str | None:
    """The label a score is shown with: the scorer's own, else `error` or `skipped`."""
    if score.error is not None:
        return semconv.LABEL_ERROR
    if score.label is not None:
        return score.label
    if score.value is None:
        return semconv.LABEL_SKIPPED
    if score.passed is not None:
        return semconv.LABEL_PASS if score.passed else semconv.LABEL_FAIL
    return None


def error_type(score: Score) -> str | None:
    """A low-cardinality `error.type` for a failed score: the exception class, else `_OTHER`."""
    if score.error is None:
        return None
    match = _ERROR_CLASS.match(score.error)
    return match.group(1) if match else semconv.ERROR_TYPE_OTHER


def score_attributes(
    result: RunResult, prefix: str = semconv.DEFAULT_SCORE_ATTRIBUTE_PREFIX
) -> dict[str, AttrValue]:
    """The attributes tracescore adds to a scored agent span (or its fanout span).

    Args:
        result: the scored run.
        prefix: first part of each score attribute (`eval` -> `eval.<name>.score`).

    Returns:
        Attribute name to value, in a stable order (scores in scenario order, then run-level).
    """
    if not prefix:
        raise ValueError("score attribute prefix must not be empty")
    out: dict[str, AttrValue] = {}
    if result.scenario is None or not result.sampled:
        return out  # not scored: the span is forwarded as it came
    for score in result.scores:
        score_key, label_key, explanation_key = _score_keys(prefix, score.name)
        if score.value is not None:
            # float() also turns an int 1 into 1.0: the attribute is always a double.
            out[score_key] = float(score.value)
        label = score_label(score)
        if label is not None:
            out[label_key] = label
        out[explanation_key] = score.explanation
    out.update(
        run_attributes(result.scenario, result.verdict, result.digest, result.trajectory.complete)
    )
    return out


def run_attributes(
    scenario: str, verdict: str | None, digest: str | None, complete: bool
) -> dict[str, AttrValue]:
    """The run-level attributes of a scored run, which follow its scores."""
    out: dict[str, AttrValue] = {semconv.TRACESCORE_SCENARIO: scenario}
    if verdict is not None:
        out[semconv.TRACESCORE_VERDICT] = verdict
    if digest is not None:
        out[semconv.TRACESCORE_DIGEST] = digest
    out[semconv.TRACESCORE_COMPLETE] = complete
    return out


# The three attribute keys of a score name, built once: score names come from the config.
_KEYS: dict[tuple[str, str], tuple[str, str, str]] = {}
_KEYS_LIMIT = 4096


def _score_keys(prefix: str, name: str) -> tuple[str, str, str]:
    keys = _KEYS.get((prefix, name))
    if keys is None:
        keys = (
            semconv.score_attribute(prefix, name, semconv.SCORE_SUFFIX),
            semconv.score_attribute(prefix, name, semconv.LABEL_SUFFIX),
            semconv.score_attribute(prefix, name, semconv.EXPLANATION_SUFFIX),
        )
        if len(_KEYS) >= _KEYS_LIMIT:
            _KEYS.clear()
        _KEYS[(prefix, name)] = keys
    return keys


def set_any_value(target: AnyValue, value: AttrValue) -> None:
    """Write a decoded attribute value into an (empty) OTLP AnyValue, in place.

    The value is encoded by `wire.any_value` and parsed in one call: filling the message
    field by field costs one upb round trip per field.
    """
    target.MergeFromString(wire.any_value(value))
    target.SetInParent()  # None: present but empty, as the wire encoder writes it


def add_attributes(target: Any, attributes: Mapping[str, AttrValue]) -> None:
    """Append attributes to a repeated KeyValue field (span, resource, log record, point)."""
    for key, value in attributes.items():
        target.add().MergeFromString(wire.key_value(key, value))


def to_any_value(value: AttrValue) -> AnyValue:
    """Encode a decoded attribute value back into a new OTLP AnyValue (None -> empty)."""
    return AnyValue.FromString(wire.any_value(value))


def key_values(attributes: Mapping[str, AttrValue]) -> list[KeyValue]:
    """Encode attributes as new OTLP KeyValues, in the mapping's order."""
    return [KeyValue.FromString(wire.key_value(k, v)) for k, v in attributes.items()]
