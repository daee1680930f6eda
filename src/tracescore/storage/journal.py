"""What tracescore holds, written ahead: which requests are still needed, and why.

A request stays needed while a part of it has not left for good (its forwarded rest, each
agent span held out of it) or one of its traces is still buffered for scoring; then it is
retired. Parts travel to the exporter with a token naming them (`Key`s), and the exporter
reports them settled once delivered (or dropped for a permanent cause). A segment file is
deleted once no needed request is in it or in an older one.

On start-up `recover()` reads what an earlier process left and hands back every request that
is still needed, with the parts still to send, so the pipeline can replay them into the
assembler before the receivers open.

The window that cannot be closed: a part that the downstream acknowledged is recorded as
settled by the next fsync (milliseconds later). A crash between the two sends it again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tracescore import semconv
from tracescore.config.storage import StorageSettings
from tracescore.errors import OverloadedError
from tracescore.storage import records
from tracescore.storage.log import Damage, SegmentLog
from tracescore.storage.records import HeldSpan, Request

__all__ = ["Held", "Journal", "Key", "Recovered", "Token"]

log = logging.getLogger(__name__)

Key = tuple[int, int]
"""(request id, part): part 0 is a request's forwarded rest, part k its k-th held span."""
Token = tuple[Key, ...]
"""The parts one forwarded body carries."""
Held = tuple[bytes, bytes, bytes]


@dataclass(slots=True)
class Recovered:
    """A request an earlier process left needed, and what of it is still to send."""

    request: Request
    segment: int
    parts: set[int]
    """Parts not settled."""
    released: dict[int, Held] = field(default_factory=dict)
    """Held spans already released with their scores (part -> span), not yet delivered."""


@dataclass(slots=True)
class _Live:
    segment: int
    parts: set[int]
    traces: int


class Journal:
    """The write-ahead journal of one `tracescore serve`."""

    def __init__(self, settings: StorageSettings) -> None:
        """Open the folder; nothing is read until `recover()`, nothing written until `start()`."""
        self.settings = settings
        interval = settings.sync_interval if settings.sync == "batch" else 0.0
        self.log = SegmentLog(Path(settings.directory), settings.segment_bytes, interval)
        self._live: dict[int, _Live] = {}  # in request order, so in segment order
        self._held: dict[tuple[str, str], Key] = {}  # (trace hex, span hex) of a held span
        self._traces: dict[str, list[int]] = {}  # trace hex -> requests that fed it
        # A trace is done with once it is scored and every span held of it is released: until
        # then its requests stay, so a crash replays the whole run, not just its agent span.
        self._key_trace: dict[Key, str] = {}
        self._unreleased: dict[str, int] = {}  # trace hex -> held spans not released yet
        self._scored_waiting: set[str] = set()  # scored, some held span not released yet
        self._next = 1
        self._resuming = 0
        self._started = False
        self.damage = Damage()
        self.recovered_requests = 0

    # -- start-up --------------------------------------------------------------------------

    def recover(self) -> list[Recovered]:
        """Every request an earlier process left needed, oldest first; damage is logged."""
        started = time.monotonic()
        self.log.open()
        found: dict[int, Recovered] = {}
        top = 0
        for segment, kind, payload in self.log.scan(self.damage):
            try:
                top = self._replay(found, segment, kind, payload, top)
            except (ValueError, IndexError) as exc:  # a CRC-valid record we cannot read
                self.damage.regions += 1
                self.damage.bytes += len(payload)
                log.warning("storage: unreadable record of kind %d skipped: %s", kind, exc)
        self._next = top + 1
        if self.damage.regions:
            log.warning(
                "storage: %d damaged region(s), %d bytes, skipped in %s (a crash mid-write "
                "or a damaged disk); every intact record is kept",
                self.damage.regions,
                self.damage.bytes,
                ", ".join(self.damage.files),
            )
        left = list(found.values())
        self.recovered_requests = len(left)
        if left or self.log.sizes:
            log.info(
                "storage: recovered %d request(s) from %s in %.2fs",
                len(left),
                self.settings.directory,
                time.monotonic() - started,
            )
        if not left:  # nothing needed: every old segment can go
            self.log.release_through(self.log.segment - 1)
        return left

    def _replay(
        self, found: dict[int, Recovered], segment: int, kind: int, payload: bytes, top: int
    ) -> int:
        if kind == records.REQUEST:
            request = records.decode_request(payload)
            parts = set(range(1, len(request.held) + 1))
            if request.forwarded:
                parts.add(0)
            found[request.rid] = Recovered(request, segment, parts)
            return max(top, request.rid)
        if kind == records.RELEASED:
            (rid, part), held = records.decode_released(payload)
            if rid in found:
                found[rid].released[part] = held
        elif kind == records.SETTLED:
            for rid, part in records.decode_keys(payload):
                top = max(top, rid)  # ids are never reused, even once their requests are gone
                if rid in found:
                    found[rid].parts.discard(part)
        elif kind == records.RETIRED:
            for rid in records.decode_ids(payload):
                top = max(top, rid)
                found.pop(rid, None)
        else:
            raise ValueError(f"unknown record kind {kind}")
        return top

    def start(self) -> None:
        """Start the committer (on the running event loop)."""
        self.log.start()
        self._started = True

    def resume(self, recovered: Recovered) -> None:
        """Take a recovered request back as live; its traces follow through `accepted`."""
        self._live[recovered.request.rid] = _Live(recovered.segment, set(recovered.parts), 0)
        self._resuming = recovered.request.rid

    def resumed(self) -> None:
        """The request being resumed is replayed; retire it if nothing needs it."""
        rid, self._resuming = self._resuming, 0
        self._maybe_retire(rid)

    # -- the assembler's side --------------------------------------------------------------

    def check_capacity(self) -> None:
        """Raise OverloadedError at the disk limit or after a write failed."""
        if self.log.failure is not None:
            raise self.log.failure
        used = self.log.disk_bytes
        if used >= self.settings.max_bytes:
            reason = semconv.REFUSED_STORAGE_FULL
            raise OverloadedError(
                f"{used} bytes in {self.settings.directory} ({reason})", reason=reason
            )

    def accepted(
        self, body: bytes, held: Sequence[HeldSpan], traces: Sequence[str], forwarded: bool
    ) -> int:
        """Write an accepted request ahead; returns its id (the key of its parts).

        While a recovered request is replayed (`resume`) nothing is written: only its traces
        are counted again.
        """
        rid = self._resuming
        if rid:
            self._track(rid, traces)
            return rid
        rid = self._next
        self._next += 1
        segment = self.log.append(
            records.REQUEST, *records.encode_request(rid, forwarded, held, body)
        )
        parts = set(range(1, len(held) + 1))
        if forwarded:
            parts.add(0)
        self._live[rid] = _Live(segment, parts, 0)
        for part, span in enumerate(held, 1):
            self.hold(span.trace_id.hex(), span.span_id.hex(), (rid, part))
        self._track(rid, traces)
        if not parts and not traces:
            self._maybe_retire(rid)
        return rid

    def hold(self, trace_hex: str, span_hex: str, key: Key) -> None:
        """A span is held (again, when recovered) under `key`."""
        self._held[(trace_hex, span_hex)] = key
        self._key_trace[key] = trace_hex
        self._unreleased[trace_hex] = self._unreleased.get(trace_hex, 0) + 1

    def take_held(self, trace_hex: str, span_hex: str) -> Key | None:
        """The key of a held span being released (None when it was never written)."""
        return self._held.pop((trace_hex, span_hex), None)

    def released(self, key: Key, held: Held) -> None:
        """A held span leaves with its score attributes: write it so a restart sends it as is."""
        self.log.append(records.RELEASED, records.encode_released(key, held))
        trace = self._key_trace.pop(key, None)
        if trace is None:
            return
        left = self._unreleased[trace] - 1
        if left:
            self._unreleased[trace] = left
            return
        del self._unreleased[trace]
        if trace in self._scored_waiting:
            self._scored_waiting.discard(trace)
            self._trace_done(trace)

    def scored(self, trace_hex: str) -> None:
        """A buffered trace was scored: done with once its held spans are released too."""
        if self._unreleased.get(trace_hex):
            self._scored_waiting.add(trace_hex)
        else:
            self._trace_done(trace_hex)

    def _trace_done(self, trace_hex: str) -> None:
        for rid in self._traces.pop(trace_hex, ()):
            live = self._live.get(rid)
            if live is not None:
                live.traces -= 1
                self._maybe_retire(rid)

    def _track(self, rid: int, traces: Iterable[str]) -> None:
        live = self._live[rid]
        for trace in traces:
            self._traces.setdefault(trace, []).append(rid)
            live.traces += 1

    # -- the exporter's side ---------------------------------------------------------------

    def settled(self, tokens: Sequence[Token]) -> None:
        """Parts that left for good (delivered, or dropped for a permanent cause)."""
        keys = [key for token in tokens for key in token]
        if not keys:
            return
        self.log.append(records.SETTLED, records.encode_keys(keys))
        for rid, part in keys:
            live = self._live.get(rid)
            if live is not None:
                live.parts.discard(part)
                self._maybe_retire(rid)

    def commit(self) -> asyncio.Future[None]:
        """Resolved once everything written so far is on disk (see SegmentLog.commit)."""
        return self.log.commit()

    # -- retiring --------------------------------------------------------------------------

    def _maybe_retire(self, rid: int) -> None:
        live = self._live.get(rid)
        if live is None or live.parts or live.traces > 0 or rid == self._resuming:
            return
        first = next(iter(self._live))
        del self._live[rid]
        self.log.append(records.RETIRED, records.encode_ids([rid]))
        if rid == first:
            oldest = next(iter(self._live.values())).segment if self._live else self.log.segment
            self.log.release_through(oldest - 1)

    @property
    def live_requests(self) -> int:
        """Requests still needed."""
        return len(self._live)

    async def close(self) -> None:
        """Sync what is written and stop the committer; log what the log cost."""
        await self.log.close()
        if not self._started:
            return
        wal = self.log
        log.info(
            "storage: %d fsync(s), %.2f ms each on average; %d request(s) left for the next "
            "start, %d bytes in %s",
            wal.syncs,
            1000 * wal.sync_seconds / max(1, wal.syncs),
            len(self._live),
            wal.disk_bytes,
            self.settings.directory,
        )
