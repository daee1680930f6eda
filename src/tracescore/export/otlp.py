"""OTLP exporter: a bounded queue and background senders over gRPC or HTTP/protobuf, with retries.

`submit_*` never blocks: it serializes the request (or takes bytes as received), enqueues it and
returns False when the queue is full by requests or bytes, so receivers answer with a retryable
status and the sending collector keeps the data. Senders take queued requests merged per signal
(see queue.py), retry retryable failures by the project's retry policy (tracescore.retry: backoff
with jitter, or the server's Retry-After / RetryInfo), and never retry permanent ones. Every span
is accounted for: `tracescore.spans.forwarded` on delivery, else `tracescore.spans.dropped{reason}`
(log records and metric points: `tracescore.export.dropped{signal,reason}`).

Each signal goes where `exporter.<signal>` says (by default all three to `exporter.endpoint`,
over one connection); a backend that does not serve a signal, and failures, are dealt with
once per cause (delivery.py, health.py).

Concurrency: `submit_*` and `has_capacity` may be called from any thread; everything else runs
on the event loop that called `start()`. What happens to one batch (attempts, drops, storage's
tokens) is delivery.py's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tracescore import semconv
from tracescore.config.serve import SIGNALS, ExporterSettings
from tracescore.errors import RetryableError
from tracescore.export.delivery import Delivery
from tracescore.export.destinations import destinations, make_destinations
from tracescore.export.metrics import Telemetry
from tracescore.export.queue import MAX_BATCH_BYTES, ExportQueue, count_items
from tracescore.export.transport import Transport

__all__ = ["OtlpExporter", "count_items"]

log = logging.getLogger(__name__)

DEFAULT_MAX_QUEUE_BYTES = 64 * 1024 * 1024
# A sender woken by a request waits this long for more before it takes the queue, so that
# requests arriving close together leave in one export call (merged by the queue, up to its
# `max_batch_bytes`). Forwards then leave up to this much later: a collector's batch processor
# holds spans 200 ms by default. See `_wait_for_more` for what it saves.
DEFAULT_LINGER_S = 0.05


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
        linger: float = DEFAULT_LINGER_S,
        max_batch_bytes: int = MAX_BATCH_BYTES,
    ) -> None:
        """Configure; nothing connects until `start()`.

        Args:
            settings: endpoint, protocol, headers, TLS, compression, timeout, queue, retry.
            telemetry: where export latency, failures, forwarded and dropped spans go.
            max_queue_bytes: bound on serialized bytes waiting (the item bound is
                `settings.queue_size`).
            senders: concurrent export calls; a retrying request does not stall the others.
            transport: override for the wire protocol of every signal (default: one per
                destination, from `settings.for_signal(...)`).
            linger: seconds a sender woken from idle waits for more requests to merge.
            max_batch_bytes: bound on one merged export request.
        """
        self.settings = settings
        self.telemetry = telemetry or Telemetry()
        self._queue = ExportQueue(settings.queue_size, max_queue_bytes, max_batch_bytes)
        self._linger = linger
        self._n_senders = senders
        self._routes = make_destinations(settings, transport)
        self._delivery = Delivery(self._routes, settings.retry.policy(), self.telemetry)
        self._refused = self._delivery.refused
        """Signals a backend said it does not serve, with its answer."""
        self.dropped: Counter[tuple[str, str]] = self._delivery.dropped
        """Items dropped so far, by (signal, reason): what `serve` reports at exit."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = 0
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._hurry = asyncio.Event()
        """Set when lingering senders should take the queue now (see `_wait_for_more`)."""
        self._tasks: list[asyncio.Task[None]] = []
        self._closing = False
        self.before_send: Callable[[], Awaitable[None]] | None = None
        """Storage's hook: awaited before a batch with tokens is sent, so nothing goes
        downstream before it is on disk (a crash then cannot deliver what its sender, never
        answered, sends again)."""

    @property
    def on_settled(self) -> Callable[[list[Any]], None] | None:
        """Storage's hook: the tokens of trace requests that left for good (delivered, or
        dropped for a permanent cause); what is still queued at shutdown is not reported."""
        return self._delivery.on_settled

    @on_settled.setter
    def on_settled(self, hook: Callable[[list[Any]], None] | None) -> None:
        self._delivery.on_settled = hook

    async def start(self) -> None:
        """Open the channel or session and start the background senders."""
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._hurry = asyncio.Event()
        self._update_idle()
        for destination in destinations(self._routes):
            await destination.transport.start()
        for signal in SIGNALS:
            if signal not in self._routes:
                log.info("export: %s off (exporter.%s.enabled: false)", signal, signal)
        self._tasks = [asyncio.create_task(self._sender()) for _ in range(self._n_senders)]

    async def shutdown(self, timeout: float = 5.0) -> None:
        """Stop accepting, flush the queue within `timeout` seconds, close the transport.

        Requests still queued or in flight at the deadline are counted as dropped
        (`reason=shutdown`) and logged. Safe without `start()` and safe to call twice.
        """
        self._closing = True
        self._hurry.set()
        if self._tasks:
            try:
                await asyncio.wait_for(self._idle.wait(), timeout)
            except TimeoutError:
                log.warning("export: flush did not finish within %.1fs", timeout)
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            self._tasks = []
        left: Counter[str] = Counter()
        for batch in self._queue.drain():
            self._delivery.count_drop(batch.signal, semconv.DROP_SHUTDOWN, batch.count)
            left[batch.signal] += batch.count
        if left:
            log.warning(
                "export: shutdown: dropped what was still queued: %s",
                ", ".join(f"{n} {signal} items" for signal, n in sorted(left.items())),
            )
        self.telemetry.set_export_queue(0, 0)
        for destination in destinations(self._routes):
            await destination.transport.close()

    def problem(self) -> str | None:
        """Why the exporter makes the service unready, or None: a destination failing for
        longer than `exporter.unready_after`, or a backend refusing spans."""
        if "traces" in self._refused:
            return self._refused["traces"]
        for destination in destinations(self._routes):
            problem = destination.health.problem()
            if problem is not None:
                return problem
        return None

    def dropped_total(self, reason: str | None = None) -> int:
        """Items (spans, log records, metric points) dropped so far, of one reason or all."""
        return sum(n for (_, why), n in self.dropped.items() if reason in (None, why))

    def has_capacity(self) -> bool:
        """False when the queue is full: the receivers should answer with a retryable status."""
        return not self._closing and self._queue.has_capacity()

    def submit_traces(
        self,
        request: ExportTraceServiceRequest | bytes,
        spans: int | None = None,
        token: Any = None,
    ) -> bool:
        """Enqueue; False when the queue is full (the caller answers with back-pressure).

        Args:
            request: a request, or its serialized bytes (forwarded untouched, never re-parsed
                when `spans` is given).
            spans: number of spans in it, counted from the request when omitted.
            token: storage's name for the request, handed to `on_settled` once it settles.
        """
        return self._submit("traces", request, spans, token)

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

    def _submit(
        self, signal: str, request: Message | bytes, count: int | None, token: Any = None
    ) -> bool:
        if self._closing:
            return False
        if signal not in self._routes:
            return True  # turned off: nothing to deliver, nothing lost
        body = request if isinstance(request, bytes) else request.SerializeToString()
        if not body:
            self._delivery.settled([token] if token is not None else [])
            return True  # an empty request carries nothing to deliver
        if count is None:
            count = count_items(signal, request)
        if signal in self._refused:
            self._delivery.count_drop(signal, semconv.DROP_EXPORT_UNSUPPORTED, count)
            return True
        if not self._queue.put(signal, body, count, token):
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
            self._hurry_if_full()
        else:
            loop.call_soon_threadsafe(self._wake.set)
            loop.call_soon_threadsafe(self._update_idle)
            loop.call_soon_threadsafe(self._hurry_if_full)

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
                await self._wait_for_more()
                continue
            self.telemetry.set_export_queue(self._queue.items, self._queue.bytes)
            try:
                if batch.tokens and self.before_send is not None:
                    await self._durable()
                await self._delivery.deliver(batch)
            except asyncio.CancelledError:
                self._delivery.drop(batch, semconv.DROP_SHUTDOWN, "in flight at shutdown")
                raise
            finally:
                self._queue.done()
                self._update_idle()

    async def _wait_for_more(self) -> None:
        """Let requests that arrive close together leave in one export call: up to `linger`
        seconds, cut short by a whole batch's bytes waiting, a full queue or shutdown.

        `serve` forwards each received request as it comes, so without this every one was an
        export call of its own. With 512-span requests arriving every 12.5 ms (40k spans/s),
        lingering 50 ms cut the exporter's CPU per span to 0.66 of one call per request, over
        HTTP and gRPC alike; 20 ms saved little (bench/export_hop.py --pace-ms 12.5).
        """
        if self._linger <= 0 or self._closing or self._queue.worth_sending():
            return
        self._hurry.clear()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self._linger):
                await self._hurry.wait()

    def _hurry_if_full(self) -> None:
        if self._closing or self._queue.worth_sending():
            self._hurry.set()

    async def _durable(self) -> None:
        assert self.before_send is not None
        # Storage failed (and said so, loudly): delivering beats keeping.
        with contextlib.suppress(RetryableError):
            await self.before_send()
