"""Put scores on spans: annotate the forwarded agent span, or build a fanout child span.

Both work on OTLP protobuf directly, never through SDK span objects (about 5x the cost of the
whole scoring pipeline, reference/performance.md). The held agent span stays serialized: its
score attributes are appended to its bytes (`annotate_span_bytes`). Messages are filled in
place: a finished Span appended to a repeated field would be copied once more; the attributes
of a span are merged in as bytes (`wire`) in one call.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Mapping

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, Span

from tracescore import __version__, semconv
from tracescore.export import wire
from tracescore.export.attributes import add_attributes, score_attributes
from tracescore.export.encoded_attributes import SPAN_ATTRIBUTES, EncodedAttributes
from tracescore.model.run_result import RunResult
from tracescore.model.span import AttrValue
from tracescore.otlp.span_keys import NATIVE_SPAN_KEYS, span_has_key

__all__ = [
    "FanoutSpans",
    "annotate_span",
    "annotate_span_bytes",
    "fanout_request",
    "fanout_span",
    "resource_key",
]


def annotate_span(span: Span, attributes: Mapping[str, AttrValue]) -> None:
    """Add the score attributes to a held agent span before it is forwarded.

    OTLP keys must be unique within a span, so a key the span already has (say a run scored by
    an upstream tracescore too) is replaced rather than duplicated.
    """
    if not attributes:
        return
    if any(kv.key in attributes for kv in span.attributes):
        kept = [kv for kv in span.attributes if kv.key not in attributes]
        del span.attributes[:]
        span.attributes.extend(kept)
    _append_attributes(span, attributes)


def annotate_span_bytes(span_bytes: bytes, attributes: Mapping[str, AttrValue]) -> bytes:
    """`annotate_span` on a serialized Span: the bytes of the annotated span.

    A repeated field may be continued anywhere on the wire (the parser appends every occurrence
    in order), so the attributes encoded as `Span.attributes` fields after the span's bytes give
    its own attributes followed by these, without parsing and re-serializing the span. Only a
    key the span may already have takes the message path, which replaces it.
    """
    if not attributes:
        return span_bytes
    if _may_have_a_key(span_bytes, attributes):
        span = Span.FromString(span_bytes)
        annotate_span(span, attributes)
        return span.SerializeToString()
    if type(attributes) is EncodedAttributes:  # what `serve` scores: encoded while built
        return span_bytes + attributes.span_fields
    return span_bytes + wire.attribute_fields(SPAN_ATTRIBUTES, attributes)


def _may_have_a_key(span_bytes: bytes, attributes: Mapping[str, AttrValue]) -> bool:
    """False when none of the keys of `attributes` is an attribute key of the span; True when
    one is, or may be (a span in a shape `span_has_key` does not read: the byte search says).

    Natively the span's keys are read off the wire (`_span_keys.c`: a few hundred instructions
    a held span, where the search cost ~8.6k). Without the extension the search goes first
    (a key the span has is somewhere in its bytes), and only a hit is read key by key, so both
    paths answer alike.
    """
    if not NATIVE_SPAN_KEYS and not _occurs(span_bytes, tuple(attributes)):
        return False
    keys = attributes if type(attributes) in _KEY_CONTAINERS else tuple(attributes)
    known = span_has_key(span_bytes, keys)
    return _occurs(span_bytes, tuple(attributes)) if known is None else known


def _occurs(span_bytes: bytes, keys: tuple[str, ...]) -> bool:
    """False when none of `keys` occurs in the span's bytes; True when one may be its key.

    Every encoding of a key the span has holds the key's UTF-8 bytes, so a key whose bytes do
    not occur anywhere in the span is surely not one of its keys (a hit inside a value is only
    a needless slow path). Score keys share a few first segments (`eval.`, `tracescore.`):
    those are searched first, whole keys only when their segment occurs.
    """
    groups = _KEY_GROUPS.get(keys)
    if groups is None:
        groups = _group_keys(keys)
    # `find`, not `in`: bytes' `in` first tries its operand as an int, and the TypeError it
    # raises and clears for a bytes operand cost more than the search (~1.8k instructions).
    find = span_bytes.find
    for segment, encoded_keys in groups:
        if find(segment) >= 0 and any(find(key) >= 0 for key in encoded_keys):
            return True
    return False


# Keys by first segment, per tuple of score keys (a handful per configuration).
_KEY_GROUPS: dict[tuple[str, ...], tuple[tuple[bytes, tuple[bytes, ...]], ...]] = {}
_KEY_GROUPS_LIMIT = 256
# What span_has_key reads as they are (a dict's keys, EncodedAttributes among them).
_KEY_CONTAINERS = (dict, EncodedAttributes, tuple)


def _group_keys(keys: tuple[str, ...]) -> tuple[tuple[bytes, tuple[bytes, ...]], ...]:
    by_segment: dict[bytes, list[bytes]] = {}
    for key in keys:
        encoded = key.encode()
        segment, dot, _ = encoded.partition(b".")  # a prefix of the key: in it if it is in
        by_segment.setdefault(segment + dot, []).append(encoded)
    groups = tuple((segment, tuple(group)) for segment, group in by_segment.items())
    if len(_KEY_GROUPS) >= _KEY_GROUPS_LIMIT:
        _KEY_GROUPS.clear()
    _KEY_GROUPS[keys] = groups
    return groups


def fanout_span(
    result: RunResult,
    attributes: Mapping[str, AttrValue],
    *,
    span_id: bytes | None = None,
    start_ns: int | None = None,
    end_ns: int | None = None,
) -> Span:
    """A new `evaluate {agent}` span in a trace of its own, linked to the scored agent span.

    Args:
        result: the scored run; its trajectory gives the trace id and the parent span id.
        attributes: the score attributes (see `score_attributes`).
        span_id: 8 bytes; by default derived from the agent span's ids.
        start_ns: when scoring started; defaults to `end_ns`.
        end_ns: when scoring finished; defaults to now.
    """
    span = Span()
    _fill_fanout(span, result, attributes, end_ns, start_ns, span_id)
    return span


def fanout_request(
    results: Iterable[RunResult],
    prefix: str = semconv.DEFAULT_SCORE_ATTRIBUTE_PREFIX,
    *,
    resource: Mapping[str, AttrValue] | None = None,
    now_ns: int | None = None,
) -> ExportTraceServiceRequest:
    """One request carrying the fanout span of every scored run, ready for `OtlpExporter`.

    Each span keeps the resource of the agent it scores (unless `resource` is given), so a
    backend showing one service's traces shows its evaluation spans too. A run that was not
    scored (no score attributes) gets no span.
    """
    batch = FanoutSpans(prefix, resource=resource, now_ns=now_ns)
    for result in results:
        batch.add(result)
    return batch.request


class FanoutSpans:
    """`fanout_request` a run at a time: `add` writes a run's span at once, so a batch keeps
    the request, not the runs."""

    def __init__(
        self,
        prefix: str = semconv.DEFAULT_SCORE_ATTRIBUTE_PREFIX,
        *,
        resource: Mapping[str, AttrValue] | None = None,
        now_ns: int | None = None,
    ) -> None:
        """Args: as `fanout_request`'s."""
        self.request = ExportTraceServiceRequest()
        self.spans = 0
        self._prefix = prefix
        self._resource = resource
        self._now_ns = now_ns
        self._by_resource: dict[str, ResourceSpans] = {}

    def add(self, result: RunResult) -> None:
        """Add the fanout span of one run (none when it has no score attributes)."""
        attributes = score_attributes(result, self._prefix)
        if not attributes:
            return
        res = result.trajectory.resource if self._resource is None else self._resource
        key = resource_key(res)
        rs = self._by_resource.get(key)
        if rs is None:
            rs = self._by_resource[key] = self.request.resource_spans.add()
            add_attributes(rs.resource.attributes, res)
            scope = rs.scope_spans.add().scope
            scope.name = semconv.SCOPE_NAME
            scope.version = __version__
        _fill_fanout(rs.scope_spans[0].spans.add(), result, attributes, self._now_ns)
        self.spans += 1


def resource_key(resource: Mapping[str, AttrValue]) -> str:
    """A grouping key for resources with equal attributes (values may be unhashable)."""
    return repr(sorted(resource.items()))


def _fill_fanout(
    span: Span,
    result: RunResult,
    attributes: Mapping[str, AttrValue],
    end_ns: int | None,
    start_ns: int | None = None,
    span_id: bytes | None = None,
) -> None:
    """The `evaluate` span in a trace of its own, linked to the agent span it scores.

    As a child of the agent span it started when scoring did, seconds after the agent span
    ended (decision_wait), and stretched the agent trace's latency in every viewer from the
    agent's own to that wait. A link keeps the relation without touching the agent's trace.
    Its ids are derived from the agent span's, so a run scored twice (after a restart) gives
    the same evaluate span, which viewers can tell is one.
    """
    trajectory = result.trajectory
    end = time.time_ns() if end_ns is None else end_ns
    derived = hashlib.sha256(
        f"{semconv.EVALUATE_SPAN_NAME}:{trajectory.trace_id}:{trajectory.span_id}".encode()
    ).digest()
    span.trace_id = derived[:16]
    span.span_id = span_id if span_id is not None else derived[16:24]
    link = span.links.add()
    link.trace_id = bytes.fromhex(trajectory.trace_id)
    if trajectory.span_id:
        link.span_id = bytes.fromhex(trajectory.span_id)
    span.name = (
        f"{semconv.EVALUATE_SPAN_NAME} {trajectory.agent}"
        if trajectory.agent
        else semconv.EVALUATE_SPAN_NAME
    )
    span.kind = Span.SpanKind.SPAN_KIND_INTERNAL
    span.start_time_unix_nano = end if start_ns is None else start_ns
    span.end_time_unix_nano = end
    _append_attributes(
        span,
        {
            semconv.OI_SPAN_KIND: semconv.OI_SPAN_KIND_EVALUATOR,
            semconv.EVALUATED_TRACE_ID: trajectory.trace_id,
            semconv.EVALUATED_SPAN_ID: trajectory.span_id or "",
            **attributes,
        },
    )


def _append_attributes(span: Span, attributes: Mapping[str, AttrValue]) -> None:
    # Parsing the encoded attributes appends them in one call (a repeated field merges by
    # appending), instead of one upb round trip per field.
    span.MergeFromString(wire.attribute_fields(SPAN_ATTRIBUTES, attributes))
