"""Log records frame the explanation themselves; the bytes are those upb writes."""

from __future__ import annotations

import dataclasses

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord

from export.scored_runs import scored_run
from tracescore import semconv
from tracescore.export import events
from tracescore.otlp.proto import decode_any_value

# Around every boundary of the one-byte frames and of one- and two-byte varints, in ASCII and
# in multi-byte UTF-8 (lengths are bytes, not characters).
LENGTHS = sorted({*range(0, 300), *range(16300, 16450), 2_000_000 // 3, 2_097_151, 2_097_152})


@pytest.mark.parametrize("char", ["a", "é", "€", "😀"])
def test_explanation_frames_match_upb(char: str) -> None:
    for n in LENGTHS:
        text = char * (n // len(char.encode())) + "x" * (n % len(char.encode()))
        score = dataclasses.replace(scored_run().scores[0], explanation=text)
        record = events.encode_records((score,), "agent", "scenario", b"", b"")
        key = semconv.GEN_AI_EVALUATION_EXPLANATION
        attribute = KeyValue(key=key, value=AnyValue(string_value=text))
        want = LogRecord(attributes=[attribute]).SerializeToString()  # that field alone
        assert want in record, n


def test_requests_reserialize_identically_and_keep_explanations() -> None:
    run = scored_run()
    texts = ["", "short", "é" * 47, "x" * 92, "x" * 93, "x" * 94, "y" * 200, "z" * 20000]
    results = [
        dataclasses.replace(
            run,
            scores=tuple(dataclasses.replace(s, explanation=t) for s in run.scores),
        )
        for t in texts
    ]
    body = events.encode_evaluation_logs(results, now_ns=7)
    request = ExportLogsServiceRequest.FromString(body)
    assert request.SerializeToString() == body
    got = [
        decode_any_value(kv.value)
        for rl in request.resource_logs
        for sl in rl.scope_logs
        for r in sl.log_records
        for kv in r.attributes
        if kv.key == semconv.GEN_AI_EVALUATION_EXPLANATION
    ]
    assert got == [t for t in texts for _ in run.scores]
