"""Release: scoring the traces that are due and forwarding their held spans with scores.

A trace is due once an agent span (or its root) arrived and it was quiet for `decision_wait`,
or `max_trace_age` after its first span. Its held agent spans go out annotated with their
run's scores, or park in `Waits` until their judge scores come. A trace whose agent spans no
scenario may score (`Trace.scorable`) is not built and nothing is emitted for it; it holds no
span (one replayed from storage under another config may, and it goes out unscored).
"""

from __future__ import annotations

import logging

from tracescore.assembler._wire import Held, frame_request
from tracescore.assembler.buffer import Buffer, Trace
from tracescore.assembler.contracts import Annotations, ReadyTrace, Reason
from tracescore.assembler.waits import Pending
from tracescore.semconv import TRACESCORE_COMPLETE

__all__ = ["Release"]

log = logging.getLogger(__name__)
_UNSCORED: Annotations = {}


class Release(Buffer):
    """Ticks and shutdown: due traces scored, their held spans released."""

    def tick(self, now: float | None = None, limit: int | None = None) -> int:
        """Score the traces that are due (at most `limit`, oldest first); returns how many.

        The service calls it with a limit, again and again until fewer than `limit` were due,
        yielding to the event loop in between: a tick's worth of runs scored in one go kept
        requests waiting for as long as that took (hundreds of milliseconds under load).
        """
        now = self._clock() if now is None else now
        s = self.settings
        quiet: list[bytes] = []
        wait = s.decision_wait
        room = len(self._traces) if limit is None else limit
        for tid, trace in self._anchored.items():  # least recently touched first
            if now - trace.last < wait or len(quiet) >= room:
                break
            quiet.append(tid)
        due: list[tuple[Trace, Reason]] = [(self._pop(tid), "quiet") for tid in quiet]
        aged: list[bytes] = []
        room -= len(due)
        for tid, trace in self._traces.items():  # oldest first
            if now - trace.first < s.max_trace_age or len(aged) >= room:
                break
            aged.append(tid)
        due.extend((self._pop(tid), "max_age") for tid in aged)
        self._release(due)
        if self._waits:
            self._waits.release_expired(now)
        self._outbox.flush()
        self._gauges()
        return len(due)

    def drain(self) -> int:
        """Score every buffered trace now (shutdown); returns the number scored.

        Spans that then wait for judge scores stay parked until `drain_waits`, so the judges
        get the rest of the grace period first.
        """
        due: list[tuple[Trace, Reason]] = [
            (self._pop(tid), "shutdown") for tid in list(self._traces)
        ]
        self._release(due)
        self._outbox.flush()
        self._gauges()
        return len(due)

    def _pop(self, tid: bytes) -> Trace:
        trace = self._traces.pop(tid)
        self._anchored.pop(tid, None)
        self.spans -= len(trace.records) + len(trace.held)
        self.nbytes -= trace.nbytes
        if self._journal is not None:
            self._journal.scored(trace.hex)
        self._scored[tid] = None
        if len(self._scored) > self._scored_limit:
            self._scored.popitem(last=False)
        return trace

    def _release(self, due: list[tuple[Trace, Reason]]) -> None:
        if not due:
            return
        released: list[Held] = []
        journal, keys, replayed = self._journal, [], self._restored
        for (trace, _), by_span in zip(due, self._score(due), strict=True):
            restored = False
            if replayed:  # only after a restart that replayed traces from storage
                restored = trace.hex in replayed
                replayed.discard(trace.hex)
            for span_id, (rs_header, ss_header, span_bytes) in trace.held.items():
                attrs = by_span.get(span_id)
                key = journal.take_held(trace.hex, span_id) if journal is not None else None
                if isinstance(attrs, Pending):  # waits for its judge scores (judge_wait > 0)
                    if self._waits.park(attrs, (rs_header, ss_header, span_bytes), key):
                        continue
                    attrs = attrs.finish()
                if not attrs and restored:  # replayed from storage, and its run not scored
                    attrs = {TRACESCORE_COMPLETE: False}
                if attrs:
                    span_bytes = self._hooks.annotate(span_bytes, attrs)
                released.append((rs_header, ss_header, span_bytes))
                if key is not None and journal is not None:
                    journal.released(key, released[-1])
                    keys.append(key)
            if not self._forwarding:  # fanout: runs whose evaluate span waits for judges
                for value in by_span.values():
                    if isinstance(value, Pending) and not self._waits.park(value, None):
                        value.finish()
        if released:
            self._outbox.send(frame_request(released), len(released), tuple(keys) or None)

    def _score(self, due: list[tuple[Trace, Reason]]) -> list[Annotations]:
        """Each trace's annotations, in the order `due`: the score hook's for the traces a
        scenario may score, none for the others, which are not built."""
        # The trace's own list: popped, nothing appends to it any more.
        readies = [
            ReadyTrace(t.hex, t.records, t.anchored, reason)
            for t, reason in due
            if t.scorable is not False
        ]
        scored: list[Annotations] = []
        if readies:
            try:
                scored = self._hooks.score(readies)
            except Exception:  # a scoring bug must not lose the held spans
                hexes = ", ".join(ready.trace_id for ready in readies[:3])
                log.exception(
                    "scoring %d traces (%s...) failed; their held spans go out unscored",
                    len(readies),
                    hexes,
                )
                scored = [{}] * len(readies)
        if len(readies) == len(due):  # (the commonest case: every trace may be scored)
            return scored
        by_ready = iter(scored)
        return [_UNSCORED if t.scorable is False else next(by_ready) for t, _ in due]

    def drain_waits(self) -> int:
        """Release every span still waiting for judge scores (shutdown, after the judges')."""
        released = self._waits.release_all()
        self._outbox.flush()
        self._gauges()
        return released
