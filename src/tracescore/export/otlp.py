"""OTLP exporter: a bounded queue and background senders over gRPC or HTTP/protobuf, with retries.

`submit_*` never blocks: it serializes the request (or takes bytes as received), enqueues it and
returns False when the queue is full by requests or bytes, so receivers answer with a retryable
status and the sending collector keeps the data. Senders take queued requests merged per signal
(see queue.py), retry retryable failures with exponential backoff and jitter (or the server's
Retry-After / RetryInfo), and never retry permanent ones. Every span is accounted for:
`tracescore.spans.forwarded` on delivery, else `tracescore.spans.dropped{reason}` and a log line.

Concurrency: `submit_*` and `has_capacity` may be called from any thread; everything else runs
on the event loop that called `start()`.
"""

from __future__ import annotations

import asyncio
import logging
import random
import threading
import time

from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tracescore import semconv
from tracescore.config.serve import ExporterSettings
from tracescore.export.metrics import Telemetry
from tracescore.export.queue import Batch, ExportQueue, count_items
from tracescore.export.transport import Attempt, Transport, make_transport

__all__ = ["OtlpExporter", "count_items"]

log = logging.getLogger(__name__)

DEFAULT_MAX_QUEUE_BYTES = 64 * 1024 * 1024


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
        self._queue = ExportQueue(settings.queue_size, max_queue_bytes)
        self._n_senders = senders
        self._transport = transport or make_transport(settings)
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
        for batch in self._queue.drain():
            self._drop(batch, semconv.DROP_SHUTDOWN, "still queued at shutdown")
        self.telemetry.set_export_queue(0, 0)
        await self._transport.close()

    def has_capacity(self) -> bool:
        """False when the queue is full: the receivers should answer with a retryable status."""
        return not self._closing and self._queue.has_capacity()

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
        if not body:
            return True  # an empty request carries nothing to deliver
        if count is None:
            count = count_items(signal, request)
        if not self._queue.put(signal, body, count):
            return False
        self.telemetry.set_export_queue(self._queue.items, self._queue.bytes)
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

    def _update_idle(self) -> None:
        if self._queue.idle:
            self._idle.set()
        else:
            self._idle.clear()

    # -- senders --------------------------------------------------------------------------

    async def _sender(self) -> None:
        while True:
            batch = self._queue.take()
            if batch is None:
                self._update_idle()
                self._wake.clear()
                await self._wake.wait()
                continue
            self.telemetry.set_export_queue(self._queue.items, self._queue.bytes)
            try:
                await self._deliver(batch)
            except asyncio.CancelledError:
                self._drop(batch, semconv.DROP_SHUTDOWN, "in flight at shutdown")
                raise
            finally:
                self._queue.done()
                self._update_idle()

    async def _deliver(self, item: Batch) -> None:
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

    def _delivered(self, item: Batch, result: Attempt) -> None:
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

    def _drop(self, item: Batch, reason: str, message: str) -> None:
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
