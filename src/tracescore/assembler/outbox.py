"""Forwards the exporter could not take yet, kept in order and retried on every tick."""

from __future__ import annotations

import collections
import logging
from collections.abc import Callable
from typing import Any

from tracescore import semconv
from tracescore.assembler.contracts import Counters

__all__ = ["Outbox"]

log = logging.getLogger(__name__)


class Outbox:
    """A FIFO in front of the exporter: once anything waits, later forwards wait behind it.

    Receivers refuse new requests while it is not empty, so it only ever holds what was
    accepted before the export queue filled up (plus held spans released meanwhile).
    """

    def __init__(
        self,
        forward: Callable[[bytes, int], bool],
        counters: Counters,
        tracked: Callable[[bytes, int, Any], bool] | None = None,
    ) -> None:
        """`forward(body, n_spans)` enqueues at the exporter and returns False when full;
        `tracked(body, n_spans, token)` does the same for a body written ahead in storage,
        whose token the exporter hands back once it is delivered."""
        self._forward = forward
        self._tracked = tracked
        self._counters = counters
        self._items: collections.deque[tuple[bytes, int, Any]] = collections.deque()
        self.nbytes = 0

    def __bool__(self) -> bool:
        return bool(self._items)

    def send(self, body: bytes, n: int, token: Any = None) -> None:
        """Forward now, or keep for later when the exporter is full or others wait."""
        if self._items or not self._push(body, n, token):
            self._items.append((body, n, token))
            self.nbytes += len(body)

    def _push(self, body: bytes, n: int, token: Any) -> bool:
        if token is None or self._tracked is None:
            return self._forward(body, n)
        return self._tracked(body, n, token)

    def flush(self) -> bool:
        """Hand waiting forwards to the exporter while it takes them; True when empty."""
        items = self._items
        while items:
            body, n, token = items[0]
            if not self._push(body, n, token):
                return False
            items.popleft()
            self.nbytes -= len(body)
        return True

    def abandon(self) -> int:
        """Count and log what never reached the exporter (end of shutdown); returns spans.

        What storage holds is not lost: it goes out on the next start."""
        kept = sum(n for _, n, token in self._items if token is not None and self._tracked)
        spans = sum(n for _, n, _ in self._items) - kept
        if kept:
            log.info("shutdown: %d spans kept in storage for the next start", kept)
        if spans:
            self._counters.spans_dropped(semconv.DROP_SHUTDOWN, spans)
            log.warning(
                "shutdown: %d spans in %d requests never reached the export queue",
                spans,
                len(self._items),
            )
        self._items.clear()
        self.nbytes = 0
        return spans
