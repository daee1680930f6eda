"""Admission: whether the buffer has room for another request, and when it will."""

from __future__ import annotations

from tracescore import semconv
from tracescore.assembler.buffer import Buffer
from tracescore.errors import OverloadedError

__all__ = ["Admission"]

# Time from a trace being due to its tick scoring it (the service ticks at most every 0.25 s).
_TICK_S = 0.25
# Retry-After when the export queue is full: when the downstream takes more is not known here.
_EXPORT_RETRY_S = 1.0
_RETRY_MAX_S = 30.0


class Admission(Buffer):
    """The buffer limits (`assembly.max_runs`, `max_spans`, `max_bytes`) and the export queue,
    checked before a request is read."""

    def check_capacity(self) -> None:
        """Raise OverloadedError when a new request must be refused with a retryable status;
        its `retry_after_s` is when space frees (the next trace due is scored)."""
        s = self.settings
        if self._outbox:
            self._outbox.flush()
        if len(self._traces) >= s.max_runs:
            reason, problem = semconv.REFUSED_MAX_RUNS, f"{len(self._traces)} runs buffered"
        elif self.spans >= s.max_spans:
            reason, problem = semconv.REFUSED_MAX_SPANS, f"{self.spans} spans buffered"
        elif (held := self.buffered_bytes) and held + self.cache_bytes >= s.max_bytes:
            # The scanner's caches count too, but alone they never refuse a request: scoring
            # cannot free them, so an empty buffer still takes one (they hold at most
            # otlp.scan.CACHE_BYTES_MAX, ~16 MiB).
            reason = semconv.REFUSED_MAX_BYTES
            problem = (
                f"{held + self.cache_bytes} bytes buffered, {self.cache_bytes} of them "
                "the scanner's caches"
            )
        elif self._outbox or not self._hooks.downstream_ready():
            # Not only a slow downstream: an OTLP/HTTP export shares the event loop with
            # scoring, so a process taking more than it scores backs its queue up first.
            raise OverloadedError(
                f"export queue full ({semconv.REFUSED_EXPORT_QUEUE}): the downstream endpoint is "
                "slow or down, or this process is behind its load",
                _EXPORT_RETRY_S,
                reason=semconv.REFUSED_EXPORT_QUEUE,
            )
        else:
            return
        raise OverloadedError(f"{problem} ({reason})", self.space_frees_in(), reason=reason)

    def space_frees_in(self) -> float:
        """Seconds until the buffer is likely to have room: the trace due first (quiet for
        `decision_wait`, or `max_trace_age` old) plus a tick to score it."""
        s = self.settings
        due = _RETRY_MAX_S
        for trace in self._anchored.values():  # least recently touched first
            due = trace.last + s.decision_wait - self._clock()
            break
        for trace in self._traces.values():  # oldest first
            due = min(due, trace.first + s.max_trace_age - self._clock())
            break
        return min(_RETRY_MAX_S, max(0.0, due) + _TICK_S)
