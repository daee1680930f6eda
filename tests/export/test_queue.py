"""ExportQueue: bounded by requests and bytes, oldest first, merged per signal."""

from __future__ import annotations

import os

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tracescore.export.queue import ExportQueue


def traces(service: str, n: int = 1) -> bytes:
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    rs.resource.attributes.add(key="service.name").value.string_value = service
    for _ in range(n):
        rs.scope_spans.add().spans.add(trace_id=os.urandom(16), span_id=os.urandom(8))
    return req.SerializeToString()


def logs(name: str) -> bytes:
    req = ExportLogsServiceRequest()
    req.resource_logs.add().scope_logs.add().log_records.add(event_name=name)
    return req.SerializeToString()


def test_requests_of_one_signal_merge_across_other_signals() -> None:
    q = ExportQueue(max_items=100, max_bytes=1 << 20)
    assert q.put("traces", traces("a"), 1)
    assert q.put("logs", logs("x"), 1)
    assert q.put("traces", traces("b", 2), 2)
    assert q.put("logs", logs("y"), 1)

    first = q.take()
    assert first is not None
    assert (first.signal, first.count) == ("traces", 3)
    merged = ExportTraceServiceRequest.FromString(first.body)
    services = [rs.resource.attributes[0].value.string_value for rs in merged.resource_spans]
    assert services == ["a", "b"], "order within a signal is kept"
    second = q.take()
    assert second is not None
    assert (second.signal, second.count) == ("logs", 2)
    names = [
        r.event_name
        for rl in ExportLogsServiceRequest.FromString(second.body).resource_logs
        for sl in rl.scope_logs
        for r in sl.log_records
    ]
    assert names == ["x", "y"]
    assert q.take() is None
    assert (q.items, q.bytes, q.in_flight) == (0, 0, 2)
    assert not q.idle
    q.done()
    q.done()
    assert q.idle


def test_a_merge_stops_at_the_batch_byte_limit() -> None:
    body = traces("a")
    q = ExportQueue(max_items=100, max_bytes=1 << 20, max_batch_bytes=2 * len(body))
    for _ in range(5):
        q.put("traces", body, 1)
    counts = []
    while (batch := q.take()) is not None:
        counts.append(batch.count)
    assert counts == [2, 2, 1]


def test_limits_by_requests_and_by_bytes() -> None:
    q = ExportQueue(max_items=2, max_bytes=1 << 20)
    assert q.put("traces", b"x", 1)
    assert q.put("traces", b"x", 1)
    assert not q.put("traces", b"x", 1)
    assert not q.has_capacity()

    q = ExportQueue(max_items=100, max_bytes=10)
    assert q.put("traces", b"x" * 20, 1), "an oversized request enters an empty queue"
    assert not q.put("traces", b"x", 1)
    q.take()
    q.done()
    assert q.put("traces", b"x" * 6, 1)
    assert not q.put("traces", b"x" * 6, 1)
    assert q.put("traces", b"x" * 4, 1)


def test_drain_returns_everything_oldest_first() -> None:
    q = ExportQueue(max_items=100, max_bytes=1 << 20)
    q.put("logs", b"l1", 1)
    q.put("traces", b"t1", 1)
    q.put("logs", b"l2", 1)
    assert [b.body for b in q.drain()] == [b"l1", b"t1", b"l2"]
    assert (q.items, q.bytes) == (0, 0)
