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

Messages are filled in place (`records.add()`, then set fields): constructing a LogRecord and
appending it would copy it again, and upb field access is the cost that matters here.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.logs.v1.logs_pb2 import ResourceLogs, SeverityNumber

from tracescore import __version__, semconv
from tracescore.export.attributes import add_attributes, error_type, score_label
from tracescore.export.spans import resource_key
from tracescore.model.score import Score
from tracescore.model.span import AttrValue
from tracescore.scenarios import RunResult

__all__ = ["evaluation_attributes", "evaluation_logs"]


def evaluation_attributes(result: RunResult, score: Score) -> dict[str, AttrValue]:
    """The attributes of one `gen_ai.evaluation.result` event."""
    out: dict[str, AttrValue] = {
        semconv.EVENT_NAME: semconv.GEN_AI_EVALUATION_RESULT_EVENT,
        semconv.GEN_AI_EVALUATION_NAME: score.name,
    }
    if score.value is not None:
        out[semconv.GEN_AI_EVALUATION_SCORE_VALUE] = float(score.value)
    label = score_label(score)
    if label is not None:
        out[semconv.GEN_AI_EVALUATION_SCORE_LABEL] = label
    out[semconv.GEN_AI_EVALUATION_EXPLANATION] = score.explanation
    kind = error_type(score)
    if kind is not None:
        out[semconv.ERROR_TYPE] = kind
    if result.trajectory.agent:
        out[semconv.GEN_AI_AGENT_NAME] = result.trajectory.agent
    if result.scenario is not None:
        out[semconv.TRACESCORE_SCENARIO] = result.scenario
    out[semconv.TRACESCORE_DIGEST] = score.digest
    return out


def evaluation_logs(
    results: Iterable[RunResult],
    resource: Mapping[str, AttrValue] | None = None,
    *,
    now_ns: int | None = None,
) -> ExportLogsServiceRequest:
    """One LogRecord per score, with the trace and span ids of the scored span.

    Args:
        results: scored runs; a run without scores adds nothing.
        resource: resource attributes for every record. By default each record keeps the
            resource of the agent it scores, so log backends filtering by `service.name` find
            the evaluations of that service.
        now_ns: the records' timestamp (default: now).

    Returns:
        A request grouped by resource, under the `tracescore` instrumentation scope.
    """
    now = time.time_ns() if now_ns is None else now_ns
    request = ExportLogsServiceRequest()
    by_resource: dict[str, ResourceLogs] = {}
    # Runs of one service share one resource mapping (the assembler memoizes them): its
    # grouping key is computed once per mapping, not once per run.
    keys: dict[int, str] = {}
    for result in results:
        if not result.scores:
            continue
        res = result.trajectory.resource if resource is None else resource
        key = keys.get(id(res))
        if key is None:
            key = keys[id(res)] = resource_key(res)
        rl = by_resource.get(key)
        if rl is None:
            rl = by_resource[key] = request.resource_logs.add()
            add_attributes(rl.resource.attributes, res)
            scope = rl.scope_logs.add().scope
            scope.name = semconv.SCOPE_NAME
            scope.version = __version__
        records = rl.scope_logs[0].log_records
        trajectory = result.trajectory
        trace_id = bytes.fromhex(trajectory.trace_id)
        span_id = bytes.fromhex(trajectory.span_id) if trajectory.span_id else b""
        agent = trajectory.agent
        scenario = result.scenario
        for score in result.scores:
            failed = score.error is not None
            record = records.add()
            record.time_unix_nano = now
            record.observed_time_unix_nano = now
            # A failed scorer is worth a warning; a low score is a result, not a problem.
            if failed:
                record.severity_number = SeverityNumber.SEVERITY_NUMBER_WARN
                record.severity_text = "WARN"
            else:
                record.severity_number = SeverityNumber.SEVERITY_NUMBER_INFO
                record.severity_text = "INFO"
            record.event_name = semconv.GEN_AI_EVALUATION_RESULT_EVENT
            record.trace_id = trace_id
            if span_id:
                record.span_id = span_id
            _fill_attributes(record.attributes, score, agent, scenario)
    return request


def _fill_attributes(target: Any, score: Score, agent: str | None, scenario: str | None) -> None:
    """`evaluation_attributes` written straight into the record, in the same order.

    Every value but the score is a string, so the generic encoder's type dispatch and the
    intermediate dict are skipped: this runs once per score on the ingest thread.
    """
    _put(target, semconv.EVENT_NAME, semconv.GEN_AI_EVALUATION_RESULT_EVENT)
    _put(target, semconv.GEN_AI_EVALUATION_NAME, score.name)
    if score.value is not None:
        kv = target.add()
        kv.key = semconv.GEN_AI_EVALUATION_SCORE_VALUE
        kv.value.double_value = float(score.value)
    label = score_label(score)
    if label is not None:
        _put(target, semconv.GEN_AI_EVALUATION_SCORE_LABEL, label)
    _put(target, semconv.GEN_AI_EVALUATION_EXPLANATION, score.explanation)
    kind = error_type(score)
    if kind is not None:
        _put(target, semconv.ERROR_TYPE, kind)
    if agent:
        _put(target, semconv.GEN_AI_AGENT_NAME, agent)
    if scenario is not None:
        _put(target, semconv.TRACESCORE_SCENARIO, scenario)
    _put(target, semconv.TRACESCORE_DIGEST, score.digest)


def _put(target: Any, key: str, value: str) -> None:
    kv = target.add()
    kv.key = key
    kv.value.string_value = value
