"""The export queue: serialized requests per signal, bounded by requests and bytes, thread-safe.

`take()` hands out the oldest request merged with the requests queued behind it for the same
signal: OTLP export requests are one repeated field, so their serialized bytes concatenate into
one valid request. That turns many small requests (a log request per scored run) into few
exports without parsing or copying messages.
"""

from __future__ import annotations

import collections
import itertools
import threading
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

__all__ = ["MAX_BATCH_BYTES", "Batch", "ExportQueue", "count_items"]

# Measured on loopback (4 senders): merging 20-span requests up to 512 KiB sends 6-10x more
# spans/s than one export per request; merging large requests into 2 MiB ones made gRPC slower
# (311k vs 566k spans/s). 1 MiB lets up to three forwarded 512-span requests (~320 KB each)
# share an export call (the exporter's linger), and stays far below gRPC's default 4 MiB
# receive limit.
MAX_BATCH_BYTES = 1024 * 1024
_REQUESTS: dict[str, type[Message]] = {
    "traces": ExportTraceServiceRequest,
    "logs": ExportLogsServiceRequest,
    "metrics": ExportMetricsServiceRequest,
}


@dataclass(slots=True)
class Batch:
    """One serialized request (possibly several merged) of one signal."""

    signal: str
    body: bytes
    count: int
    """Spans, log records or data points in the body."""
    seq: int = 0
    tokens: list[Any] = field(default_factory=list)
    """What storage wrote ahead for the requests in it: reported back once it settles."""


class ExportQueue:
    """Bounded FIFO per signal; `take` and `done` bracket one export in flight."""

    def __init__(self, max_items: int, max_bytes: int, max_batch_bytes: int = MAX_BATCH_BYTES):
        self.max_items = max_items
        self.max_bytes = max_bytes
        self.max_batch_bytes = max_batch_bytes
        self._queues: dict[str, collections.deque[Batch]] = {
            s: collections.deque() for s in _REQUESTS
        }
        self._seq = itertools.count()
        self._lock = threading.Lock()
        self.items = 0
        self.bytes = 0
        self.in_flight = 0

    @property
    def idle(self) -> bool:
        """Nothing queued and nothing in flight."""
        return self.items == 0 and self.in_flight == 0

    def has_capacity(self) -> bool:
        """Room for at least one more request."""
        return self.items < self.max_items and self.bytes < self.max_bytes

    def worth_sending(self) -> bool:
        """A whole batch's bytes wait (of all signals: an estimate that costs nothing), or the
        queue is full: waiting for more would only refuse requests."""
        return self.bytes >= self.max_batch_bytes or not self.has_capacity()

    def put(self, signal: str, body: bytes, count: int, token: Any = None) -> bool:
        """Enqueue; False when full by requests or bytes.

        A request larger than the whole byte budget still enters an empty queue, else it could
        never be sent at all.
        """
        with self._lock:
            if self.items >= self.max_items or (
                self.items and self.bytes + len(body) > self.max_bytes
            ):
                return False
            tokens = [] if token is None else [token]
            self._queues[signal].append(Batch(signal, body, count, next(self._seq), tokens))
            self.items += 1
            self.bytes += len(body)
            return True

    def take(self) -> Batch | None:
        """The oldest request merged with later ones of its signal, or None when empty."""
        with self._lock:
            heads = [q for q in self._queues.values() if q]
            if not heads:
                return None
            queue = min(heads, key=lambda q: q[0].seq)
            first = queue.popleft()
            parts, count, size = [first.body], first.count, len(first.body)
            tokens = first.tokens
            while queue and size + len(queue[0].body) <= self.max_batch_bytes:
                nxt = queue.popleft()
                parts.append(nxt.body)
                count += nxt.count
                size += len(nxt.body)
                if nxt.tokens:
                    tokens = tokens + nxt.tokens
            self.items -= len(parts)
            self.bytes -= size
            self.in_flight += 1
        body = parts[0] if len(parts) == 1 else b"".join(parts)
        return Batch(first.signal, body, count, first.seq, tokens)

    def done(self) -> None:
        """One taken batch is finished (delivered or dropped)."""
        with self._lock:
            self.in_flight -= 1

    def drain(self) -> list[Batch]:
        """Remove and return everything still queued."""
        with self._lock:
            left = sorted((b for q in self._queues.values() for b in q), key=lambda b: b.seq)
            for q in self._queues.values():
                q.clear()
            self.items = 0
            self.bytes = 0
        return left


def count_items(signal: str, request: Message | bytes) -> int:
    """Spans, log records or metric data points in a request (parsed when given bytes)."""
    if isinstance(request, bytes):
        parsed = _REQUESTS[signal]()
        parsed.ParseFromString(request)
        request = parsed
    if isinstance(request, ExportTraceServiceRequest):
        return sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)
    if isinstance(request, ExportLogsServiceRequest):
        return sum(len(sl.log_records) for rl in request.resource_logs for sl in rl.scope_logs)
    if isinstance(request, ExportMetricsServiceRequest):
        total = 0
        for rm in request.resource_metrics:
            for sm in rm.scope_metrics:
                for m in sm.metrics:
                    kind = m.WhichOneof("data")
                    total += len(getattr(m, kind).data_points) if kind else 0
        return total
    raise TypeError(f"not an OTLP export request: {type(request).__name__}")
