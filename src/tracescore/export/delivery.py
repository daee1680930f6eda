"""One export batch taken to its destination: attempts by the retry policy, and every item
accounted for (forwarded, or dropped with a reason), once.

The exporter (otlp.py) owns the queue and the senders; a sender hands each batch it takes to
`Delivery.deliver`. A backend that does not serve a signal is warned about once and sent that
signal no more (`refused`); failures are logged once per destination and cause (health.py),
drops once per signal and reason (the counts keep the rest).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from tracescore import semconv
from tracescore.export.destinations import Destination, refuse_signal
from tracescore.export.metrics import Telemetry
from tracescore.export.queue import Batch
from tracescore.export.transport import Attempt
from tracescore.retry import RetryPolicy

__all__ = ["Delivery"]

log = logging.getLogger("tracescore.export.otlp")  # the exporter's messages, as before


class Delivery:
    """Sends batches by the retry policy and counts what they carried, delivered or not."""

    def __init__(
        self, routes: dict[str, Destination], policy: RetryPolicy, telemetry: Telemetry
    ) -> None:
        self.routes = routes
        self.policy = policy
        self.telemetry = telemetry
        self.refused: dict[str, str] = {}
        """Signals a backend said it does not serve, with its answer."""
        self.dropped: Counter[tuple[str, str]] = Counter()
        """Items dropped so far, by (signal, reason)."""
        self.on_settled: Callable[[list[Any]], None] | None = None
        """Storage's hook (see `OtlpExporter.on_settled`)."""

    async def deliver(self, item: Batch) -> None:
        """Send `item` until it is delivered, refused for good or out of retries."""
        if item.signal in self.refused:
            self.drop(item, semconv.DROP_EXPORT_UNSUPPORTED, self.refused[item.signal])
            return
        destination = self.routes[item.signal]
        transport, health = destination.transport, destination.health
        body = await transport.prepare(item.body)
        started = time.monotonic()
        attempt_no = 0
        while True:
            t0 = time.monotonic()
            result = await transport.send(item.signal, body)
            self.telemetry.observe_export_latency(item.signal, time.monotonic() - t0)
            if result.ok:
                health.succeeded()
                self._delivered(item, result)
                return
            self.telemetry.export_failure(item.signal, result.reason)
            if result.unsupported:
                self._refuse(item.signal, health.endpoint, result)
                self.drop(item, semconv.DROP_EXPORT_UNSUPPORTED, result.message)
                return
            health.failed(
                item.signal, result.cause or result.reason, result.message, result.retryable
            )
            if not result.retryable:
                self.drop(item, semconv.DROP_EXPORT_REJECTED, result.message)
                return
            delay = self.policy.delay(attempt_no, result.delay)
            if self.policy.gives_up(time.monotonic() - started, delay):
                self.drop(item, semconv.DROP_EXPORT_RETRIES_EXHAUSTED, result.message)
                return
            attempt_no += 1
            await asyncio.sleep(delay)

    def settled(self, tokens: list[Any]) -> None:
        """Hand storage the tokens of requests that left for good."""
        if tokens and self.on_settled is not None:
            self.on_settled(tokens)

    def drop(self, item: Batch, reason: str, message: str) -> None:
        """Count and log a batch that will not be delivered (storage keeps one dropped at
        shutdown for the next start)."""
        if item.tokens and self.on_settled is not None and reason == semconv.DROP_SHUTDOWN:
            # Written ahead in storage: the next start sends it, nothing is lost.
            log.info(
                "export: %d spans kept in storage for the next start (%s)", item.count, message
            )
            return
        self.settled(item.tokens)
        first = not any(why == reason and sig == item.signal for sig, why in self.dropped)
        self.count_drop(item.signal, reason, item.count)
        # Once per signal and reason (the count keeps the rest): a dead endpoint drops the same
        # way request after request; a refused signal was warned about by refuse_signal.
        loud = reason == semconv.DROP_SHUTDOWN or (
            first and reason != semconv.DROP_EXPORT_UNSUPPORTED
        )
        log.log(
            logging.WARNING if loud else logging.DEBUG,
            "export: dropped %s request with %d items to %s (%s): %s",
            item.signal,
            item.count,
            self.routes[item.signal].health.endpoint,
            reason,
            message,
        )

    def count_drop(self, signal: str, reason: str, count: int) -> None:
        self.dropped[signal, reason] += count
        if signal == "traces":
            self.telemetry.spans_dropped(reason, count)
        else:
            self.telemetry.export_dropped(signal, reason, count)

    def _refuse(self, signal: str, endpoint: str, result: Attempt) -> None:
        """Stop sending `signal` to a backend that does not serve it; warn once."""
        if signal not in self.refused:
            self.refused[signal] = refuse_signal(signal, endpoint, result.cause, result.message)

    def _delivered(self, item: Batch, result: Attempt) -> None:
        self.settled(item.tokens)
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
