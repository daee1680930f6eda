"""OTLP exporter: a bounded queue and background senders over gRPC or HTTP/protobuf, with retries.

`submit_*` never blocks: it serializes the request (or takes bytes as received), enqueues it and
returns False when the queue is full by items or bytes, so receivers answer with a retryable
status and the sending collector keeps the data. Senders merge queued requests of one signal by
concatenating their bytes (repeated protobuf fields concatenate), retry retryable failures with
exponential backoff and jitter (or the server's Retry-After / RetryInfo), and never retry
permanent ones. Every span is accounted for: `tracescore.spans.forwarded` on delivery, else
`tracescore.spans.dropped{reason}` and a log line.

Concurrency: `submit_*` and `has_capacity` may be called from any thread; everything else runs
on the event loop that called `start()`.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import random
import threading
import time
from dataclasses import dataclass

from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tracescore import semconv
from tracescore.config.serve import ExporterSettings
from tracescore.export.metrics import Telemetry
from tracescore.export.transport import Attempt, Transport, make_transport

__all__ = ["OtlpExporter", "count_items"]

log = logging.getLogger(__name__)

DEFAULT_MAX_QUEUE_BYTES = 64 * 1024 * 1024
# Merged requests stay below gRPC's default 4 MiB receive limit.
MAX_BATCH_BYTES = 2 * 1024 * 1024


@dataclass(slots=True)
class _Item:
    signal: str
    body: bytes
    count: int
    """Spans, log records or data points in the body."""


class OtlpExporter:
    """Sends traces, logs and metrics downstream; submit_* never block (False when full)."""

    def __init__(
        self,
        settings: ExporterSettings,
        telemetry: Telemetry | None = None,
        *,
        max_queue_bytes: int = DEFAULT_MAX_QUEUE_BYTES,
        senders: int = 4,
        transport: Transport | None = None,
    ) -> None:
        """Configure; nothing connects until `start()`.

        Args:
            settings: endpoint, protocol, headers, TLS, compression, timeout, queue, retry.
            telemetry: where export latency, failures, forwarded and dropped spans go.
            max_queue_bytes: bound on serialized bytes waiting (the item bound is
                `settings.queue_size`).
            senders: concurrent export calls; a retrying request does not stall the others.
            transport: override for the wire protocol (default from `settings.protocol`).
        """
        self.settings = settings
        self.telemetry = telemetry or Telemetry()
        self._max_items = settings.queue_size
        self._max_bytes = max_queue_bytes
        self._n_senders = senders
        self._transport = transport or make_transport(settings)
        self._queue: collections.deque[_Item] = collections.deque()
        self._bytes = 0
        self._in_flight = 0
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = 0
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._closing = False

    async def start(self) -> None:
        """Open the channel or session and start the background senders."""
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._update_idle()
        await self._transport.start()
        self._tasks = [asyncio.create_task(self._sender()) for _ in range(self._n_senders)]

    async def shutdown(self, timeout: float = 5.0) -> None:
        """Stop accepting, flush the queue within `timeout` seconds, close the transport.

        Requests still queued or in flight at the deadline are counted as dropped
        (`reason=shutdown`) and logged. Safe without `start()` and safe to call twice.
        """
        self._closing = True
        if self._tasks:
            try:
                await asyncio.wait_for(self._idle.wait(), timeout)
            except TimeoutError:
                log.warning("export: flush did not finish within %.1fs", timeout)
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            self._tasks = []
        with self._lock:
            left = list(self._queue)
            self._queue.clear()
            self._bytes = 0
        for item in left:
            self._drop(item, semconv.DROP_SHUTDOWN, "still queued at shutdown")
        self.telemetry.set_export_queue(0, 0)
        await self._transport.close()

    def has_capacity(self) -> bool:
        """False when the queue is full: the receivers should answer with a retryable status."""
        return (
            not self._closing
            and len(self._queue) < self._max_items
            and self._bytes < self._max_bytes
        )

    def submit_traces(
        self, request: ExportTraceServiceRequest | bytes, spans: int | None = None
    ) -> bool:
        """Enqueue; False when the queue is full (the caller answers with back-pressure).

        Args:
            request: a request, or its serialized bytes (forwarded untouched, never re-parsed
                when `spans` is given).
            spans: number of spans in it, counted from the request when omitted.
        """
        return self._submit("traces", request, spans)

    def submit_logs(
        self, request: ExportLogsServiceRequest | bytes, records: int | None = None
    ) -> bool:
        """Enqueue; False when the queue is full."""
        return self._submit("logs", request, records)

    def submit_metrics(
        self, request: ExportMetricsServiceRequest | bytes, points: int | None = None
    ) -> bool:
        """Enqueue; False when the queue is full."""
        return self._submit("metrics", request, points)

    # -- queue ----------------------------------------------------------------------------

    def _submit(self, signal: str, request: Message | bytes, count: int | None) -> bool:
        if self._closing:
            return False
        body = request if isinstance(request, bytes) else request.SerializeToString()
        if count is None:
            count = count_items(signal, request)
        if not body:
            return True  # an empty request carries nothing to deliver
        with self._lock:
            # A request larger than the whole byte budget still goes through an empty queue,
            # else it could never be sent at all.
            if len(self._queue) >= self._max_items or (
                self._queue and self._bytes + len(body) > self._max_bytes
            ):
                return False
            self._queue.append(_Item(signal, body, count))
            self._bytes += len(body)
            items, size = len(self._queue), self._bytes
        self.telemetry.set_export_queue(items, size)
        self._notify()
        return True

    def _notify(self) -> None:
        loop = self._loop
        if loop is None:
            return
        if threading.get_ident() == self._loop_thread:
            self._wake.set()
            self._update_idle()
        else:
            loop.call_soon_threadsafe(self._wake.set)
            loop.call_soon_threadsafe(self._update_idle)

    def _take(self) -> _Item | None:
        """Pop the oldest request merged with following ones of the same signal."""
        with self._lock:
            if not self._queue:
                return None
            first = self._queue.popleft()
            parts, count, size = [first.body], first.count, len(first.body)
            while self._queue:
                nxt = self._queue[0]
                if nxt.signal != first.signal or size + len(nxt.body) > MAX_BATCH_BYTES:
                    break
                self._queue.popleft()
                parts.append(nxt.body)
                count += nxt.count
                size += len(nxt.body)
            self._bytes -= size
            self._in_flight += 1
            items, queued = len(self._queue), self._bytes
        self.telemetry.set_export_queue(items, queued)
        return _Item(first.signal, b"".join(parts) if len(parts) > 1 else parts[0], count)

    def _update_idle(self) -> None:
        if not self._queue and self._in_flight == 0:
            self._idle.set()
        else:
            self._idle.clear()

    # -- senders --------------------------------------------------------------------------

    async def _sender(self) -> None:
        while True:
            item = self._take()
            if item is None:
                self._update_idle()
                self._wake.clear()
                await self._wake.wait()
                continue
            try:
                await self._deliver(item)
            except asyncio.CancelledError:
                self._drop(item, semconv.DROP_SHUTDOWN, "in flight at shutdown")
                raise
            finally:
                with self._lock:
                    self._in_flight -= 1
                self._update_idle()

    async def _deliver(self, item: _Item) -> None:
        retry = self.settings.retry
        body = await self._transport.prepare(item.body)
        started = time.monotonic()
        attempt_no = 0
        while True:
            t0 = time.monotonic()
            result = await self._transport.send(item.signal, body)
            self.telemetry.observe_export_latency(item.signal, time.monotonic() - t0)
            if result.ok:
                self._delivered(item, result)
                return
            self.telemetry.export_failure(item.signal, result.reason)
            if not result.retryable:
                self._drop(item, semconv.DROP_EXPORT_REJECTED, result.message)
                return
            delay = result.delay if result.delay is not None else self._backoff(attempt_no)
            elapsed = time.monotonic() - started
            if retry.max_elapsed_time and elapsed + delay > retry.max_elapsed_time:
                self._drop(item, semconv.DROP_EXPORT_RETRIES_EXHAUSTED, result.message)
                return
            log.info(
                "export: %s to %s failed (%s), retrying in %.2fs",
                item.signal,
                self.settings.endpoint,
                result.message,
                delay,
            )
            attempt_no += 1
            await asyncio.sleep(delay)

    def _backoff(self, attempt_no: int) -> float:
        retry = self.settings.retry
        base = min(retry.max_interval, retry.initial_interval * (2**attempt_no))
        # Randomization factor 0.5, as the collector's exporterhelper: senders that failed
        # together do not all come back at the same instant.
        return float(min(retry.max_interval, base * random.uniform(0.5, 1.5)))

    def _delivered(self, item: _Item, result: Attempt) -> None:
        if item.signal != "traces":
            if result.rejected:
                log.warning(
                    "export: %s: downstream rejected %d of %d items: %s",
                    item.signal,
                    result.rejected,
                    item.count,
                    result.message,
                )
            return
        rejected = min(result.rejected, item.count)
        self.telemetry.spans_forwarded(item.count - rejected)
        if rejected:
            self.telemetry.spans_dropped(semconv.DROP_EXPORT_PARTIAL, rejected)
            log.warning(
                "export: downstream rejected %d of %d spans: %s",
                rejected,
                item.count,
                result.message,
            )

    def _drop(self, item: _Item, reason: str, message: str) -> None:
        if item.signal == "traces":
            self.telemetry.spans_dropped(reason, item.count)
        log.warning(
            "export: dropped %s request with %d items to %s (%s): %s",
            item.signal,
            item.count,
            self.settings.endpoint,
            reason,
            message,
        )


def count_items(signal: str, request: Message | bytes) -> int:
    """Spans, log records or metric data points in a request (parsed when given bytes)."""
    if isinstance(request, bytes):
        cls = {
            "traces": ExportTraceServiceRequest,
            "logs": ExportLogsServiceRequest,
            "metrics": ExportMetricsServiceRequest,
        }[signal]
        parsed = cls()
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
