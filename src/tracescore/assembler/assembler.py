"""Forward-first assembly: every span goes downstream as it arrives, except held agent spans.

Per request (`ingest`): spans with invalid ids are rejected; every other span is forwarded at
once in the received bytes, except the agent span of a run a scenario may match, which is cut
out and held until its run is scored, then forwarded with the score attributes (`release`).

A trace is scored once an agent span (or its root) arrived and it was quiet for
`decision_wait`, or `max_trace_age` after its first span (then `complete` is false unless an
agent span or the root arrived). The buffer is bounded by runs, spans and bytes: at a limit
`check_capacity` raises OverloadedError and receivers answer with a retryable status instead of
evicting anything (`admission`). Forwards the exporter cannot take yet wait in an outbox,
retried on every tick, so nothing accepted is lost.
"""

from __future__ import annotations

from tracescore.assembler._wire import Held
from tracescore.assembler.admission import Admission
from tracescore.assembler.ingest import Ingestion
from tracescore.assembler.release import Release
from tracescore.storage.records import Request

__all__ = ["Assembler"]


class Assembler(Admission, Ingestion, Release):
    """Buffers what runs need, holds agent spans, decides when runs are scored."""

    def restore(self, request: Request, parts: set[int], released: dict[int, Held]) -> None:
        """Replay a request that a crashed process left in storage (before receivers open).

        Its spans are buffered again for scoring. Of its parts only those in `parts` go out:
        its forwarded rest (part 0) as before; each held span released with its scores before
        the crash (`released`) as it was released; every other held span is held again on its
        trace, and is scored with its run or, when no run could be scored, forwarded with
        `tracescore.complete=false`.
        """
        self._restoring = (request, parts, released)
        try:
            self.consume(None, request.body)
        finally:
            self._restoring = None

    def flush_outbox(self) -> bool:
        """Hand waiting forwards to the exporter; True when nothing waits any more."""
        return self._outbox.flush()

    def abandon_outbox(self) -> int:
        """Count and log forwards that never reached the exporter; returns their spans."""
        return self._outbox.abandon()
