"""`gen_ai.evaluation.result` log events over OTLP logs, one per score.

Each LogRecord points at the scored span through its trace and span ids, which is how the GenAI
conventions "parent" an event (reference/conventions.md §1.6). The event name is set twice: in
the LogRecord `event_name` field (OTLP 1.5+) and as the `event.name` attribute, which is all
older receivers and collectors look at.

Attributes: `gen_ai.evaluation.name`; `gen_ai.evaluation.score.value` (double) only when the
scorer produced a value; `gen_ai.evaluation.score.label` (`pass`, `fail`, the scorer's label,
`error` or `skipped`); `gen_ai.evaluation.explanation`; `error.type` when the scorer failed;
`gen_ai.agent.name` when known; `tracescore.scenario`; and `tracescore.digest`, which on an event
is the digest of the one scorer config that produced this score (the span carries the
scenario's digest).

The request is written as bytes (`wire`): everything but the values is the same for every
record and is encoded once; `evaluation_logs` parses those bytes for callers that want the
message.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from tracescore import __version__, semconv
from tracescore.export import wire
from tracescore.export.log_records import encode_records, record_parts
from tracescore.export.spans import resource_key
from tracescore.model.run_result import RunResult
from tracescore.model.span import AttrValue
from tracescore.model.trajectory import Trajectory

__all__ = ["EvaluationLogs", "encode_evaluation_logs", "encode_records", "evaluation_logs"]


def evaluation_logs(
    results: Iterable[RunResult],
    resource: Mapping[str, AttrValue] | None = None,
    *,
    now_ns: int | None = None,
) -> ExportLogsServiceRequest:
    """`encode_evaluation_logs` as a message (see there)."""
    return ExportLogsServiceRequest.FromString(
        encode_evaluation_logs(results, resource, now_ns=now_ns)
    )


def encode_evaluation_logs(
    results: Iterable[RunResult],
    resource: Mapping[str, AttrValue] | None = None,
    *,
    now_ns: int | None = None,
) -> bytes:
    """One LogRecord per score, with the trace and span ids of the scored span.

    Args:
        results: scored runs; a run without scores adds nothing.
        resource: resource attributes for every record. By default each record keeps the
            resource of the agent it scores, so log backends filtering by `service.name` find
            the evaluations of that service.
        now_ns: the records' timestamp (default: now).

    Returns:
        A serialized ExportLogsServiceRequest grouped by resource, under the `tracescore`
        instrumentation scope.
    """
    batch = EvaluationLogs(resource, now_ns=now_ns)
    for result in results:
        batch.add(result)
    return batch.encode()


class EvaluationLogs:
    """`encode_evaluation_logs` a run at a time: `add` encodes a run's records at once, so a
    batch keeps bytes, not runs (a tick's trajectories kept alive until the batch was sent
    were most of what the garbage collector scanned)."""

    def __init__(
        self, resource: Mapping[str, AttrValue] | None = None, *, now_ns: int | None = None
    ) -> None:
        """Args: as `encode_evaluation_logs`'s."""
        self._resource = resource
        now = time.time_ns() if now_ns is None else now_ns
        self.stamp = stamp = wire.fixed64_field(_TIME, now)  # what every record starts with
        observed = _OBSERVED_TIME + stamp[1:] if stamp else b""  # the same fixed64, tagged
        self._record_tail = observed + _EVENT_NAME  # what ends every record, after the ids
        # Grouping key -> the resource field and the pieces of that resource's framed records.
        self._groups: dict[str, tuple[bytes, list[bytes]]] = {}
        self.records = 0

    def add(self, result: RunResult) -> None:
        """Encode the records of one run's scores (none for a run without scores)."""
        if not result.scores:
            return
        trajectory = result.trajectory
        records, end = self.target(trajectory)
        # The records' pieces, joined once for the whole request by `encode`: a join and a
        # concatenation per record cost about a third of writing it. Extended only once the
        # run's records are all written, so that a failing score leaves no half record.
        records.extend(
            record_parts(result.scores, trajectory.agent, result.scenario, self.stamp, end)
        )
        self.records += len(result.scores)

    def target(self, trajectory: Trajectory) -> tuple[list[bytes], bytes]:
        """Where the records of a run go (the pieces of its resource's records) and what ends
        each of them (the run's ids, the observed time and the event name); a record starts
        with `stamp`. Whoever extends the pieces counts the records in `records`."""
        res = trajectory.resource if self._resource is None else self._resource
        known = _RESOURCES.get(id(res))  # `_resource(res)`'s memo, read without the call
        if known is not None and known[0] is res:
            group_key, resource_field = known[1], known[2]
        else:
            group_key, resource_field = _resource(res)
        group = self._groups.get(group_key)
        if group is None:
            group = self._groups[group_key] = (resource_field, [])
        # The fields after the attributes are the same for every record of the run.
        trace_id = bytes.fromhex(trajectory.trace_id)
        if len(trace_id) == 16:  # as OTLP ids are: the frame is known
            end = _TRACE_ID_16 + trace_id
        else:
            end = wire.len_field(_TRACE_ID, trace_id)
        if trajectory.span_id:
            span_id = bytes.fromhex(trajectory.span_id)
            end += _SPAN_ID_8 + span_id if len(span_id) == 8 else wire.len_field(_SPAN_ID, span_id)
        return group[1], end + self._record_tail

    def encode(self) -> bytes:
        """The serialized ExportLogsServiceRequest of every record added."""
        # The request is joined once, its lengths computed rather than measured on nested
        # copies: framing a run's records by concatenation cost half as much as writing them.
        request: list[bytes] = []
        for resource_field, records in self._groups.values():
            scope_size = len(_SCOPE) + sum(map(len, records))
            scope_head = _SCOPE_LOGS + wire.varint(scope_size)
            size = len(resource_field) + len(scope_head) + scope_size
            request += (_RESOURCE_LOGS, wire.varint(size), resource_field, scope_head, _SCOPE)
            request += records
        return b"".join(request)


# Tags (field number << 3 | wire type) of opentelemetry/proto/logs/v1/logs.proto and
# collector/logs/v1/logs_service.proto.
_RESOURCE_LOGS = b"\x0a"  # ExportLogsServiceRequest.resource_logs = 1
_RESOURCE = b"\x0a"  # ResourceLogs.resource = 1
_SCOPE_LOGS = b"\x12"  # ResourceLogs.scope_logs = 2
_TIME = b"\x09"  # LogRecord.time_unix_nano = 1 (fixed64)
_TRACE_ID = b"\x4a"  # LogRecord.trace_id = 9
_SPAN_ID = b"\x52"  # LogRecord.span_id = 10
_OBSERVED_TIME = b"\x59"  # LogRecord.observed_time_unix_nano = 11 (fixed64)
_TRACE_ID_16 = _TRACE_ID + b"\x10"  # a 16-byte trace id's field up to its bytes
_SPAN_ID_8 = _SPAN_ID + b"\x08"  # an 8-byte span id's

# ScopeLogs.scope: InstrumentationScope{name = 1, version = 2}.
_SCOPE = wire.len_field(
    b"\x0a",
    wire.len_field(b"\x0a", semconv.SCOPE_NAME.encode())
    + wire.len_field(b"\x12", __version__.encode()),
)


# LogRecord.event_name = 12, after every other field a record holds (`log_records`).
_EVENT_NAME = wire.len_field(b"\x62", semconv.GEN_AI_EVALUATION_RESULT_EVENT.encode())


# Resource mappings seen lately, by identity, with their grouping key and encoded field: runs
# of one service share one mapping (the assembler memoizes them). The mapping is kept with its
# entry so that its id is not reused while the entry exists.
_RESOURCES: dict[int, tuple[Mapping[str, AttrValue], str, bytes]] = {}
_RESOURCES_LIMIT = 1024


def _resource(resource: Mapping[str, AttrValue]) -> tuple[str, bytes]:
    known = _RESOURCES.get(id(resource))
    if known is not None and known[0] is resource:
        return known[1], known[2]
    attributes = wire.attribute_fields(wire.KEY_VALUE_TAG, resource)
    # A resource without attributes is an empty message: protobuf leaves the field out.
    field = wire.len_field(_RESOURCE, attributes) if attributes else b""
    key = resource_key(resource)
    if len(_RESOURCES) >= _RESOURCES_LIMIT:
        _RESOURCES.clear()
    _RESOURCES[id(resource)] = (resource, key, field)
    return key, field
