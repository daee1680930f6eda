"""What the assembler holds between requests: traces by id, and the state its parts share.

`Buffer` is the base of `Assembler`; admission, ingest and release each add their methods in
a module of their own (`admission`, `ingest`, `release`) over this one state.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Callable
from typing import Literal

from tracescore.assembler._wire import Held
from tracescore.assembler.contracts import AssemblerHooks, Counters, Journal
from tracescore.assembler.outbox import Outbox
from tracescore.assembler.waits import Waits
from tracescore.config.serve import AssemblySettings
from tracescore.model.span import SpanRecord
from tracescore.otlp.scan import SpanReader
from tracescore.storage.records import Request

__all__ = ["RECORD_OVERHEAD", "Buffer", "Trace"]

# Bytes of one SpanRecord with its id strings and its trace's share of the buffer, before its
# attributes; used only to bound memory (assembly.max_bytes). Fitted with otlp.scan's
# ATTRIBUTE_OVERHEAD to tracemalloc on bench/capacity.py's runs (512 bytes), rounded up.
RECORD_OVERHEAD = 520
# Trace ids remembered after scoring, so late spans are counted as late: about 100 bytes each.
_SCORED_MIN, _SCORED_MAX = 10_000, 200_000


def _keep_nothing(key: str) -> bool:
    return False


class Trace:
    """One buffered trace: its kept records, its held agent spans, and when it was touched.

    `scorable`: None until an agent span arrives; then whether a scenario may score the run
    of one of its agent spans (`AssemblerHooks.wants`). A trace whose every agent span said
    no is released unbuilt: building it cost as much as scoring it (bench/capacity.py's
    `unmatched` mix), for runs no scenario matches or samples.
    """

    __slots__ = ("anchored", "first", "held", "hex", "last", "nbytes", "records", "scorable")

    def __init__(self, hex_id: str, now: float, records: list[SpanRecord]) -> None:
        self.hex = hex_id
        self.first = now
        self.last = now
        self.anchored = False
        self.records = records
        self.held: dict[str, Held] = {}
        self.nbytes = 0
        self.scorable: bool | None = None


class Buffer:
    """The assembler's state: buffered traces, counts, the outbox, waits and the journal."""

    def __init__(
        self,
        settings: AssemblySettings,
        hooks: AssemblerHooks,
        counters: Counters,
        *,
        mode: Literal["forward", "fanout"] = "forward",
        scoring: bool = True,
        clock: Callable[[], float] = time.monotonic,
        journal: Journal | None = None,
    ) -> None:
        """Set up an empty buffer.

        Args:
            settings: decision_wait, max_trace_age and the buffer limits.
            hooks: classification, scoring and forwarding (see AssemblerHooks).
            counters: service metrics.
            mode: `forward` forwards every span (holding agent spans to annotate them);
                `fanout` forwards nothing (the collector already sends the originals).
            scoring: False when no scenario is configured: spans are only forwarded.
            clock: monotonic seconds (tests pass their own).
            journal: write-ahead storage: every request is written before it is answered,
                its parts are forwarded with tokens, and `restore` replays what a crashed
                process left (None: storage off).
        """
        self.settings = settings
        self._hooks = hooks
        self._counters = counters
        self._forwarding = mode == "forward"
        self._scoring = scoring
        self._clock = clock
        # Without scenarios only ids are read: no attribute is worth decoding.
        self._reader = SpanReader(
            hooks.keep_key if scoring else _keep_nothing, hooks.agent_candidates
        )
        self._traces: dict[bytes, Trace] = {}  # insertion order = order of first span
        self._anchored: collections.OrderedDict[bytes, Trace] = collections.OrderedDict()
        self._scored: collections.OrderedDict[bytes, None] = collections.OrderedDict()
        self._scored_limit = max(_SCORED_MIN, min(_SCORED_MAX, 4 * settings.max_runs))
        self._journal = journal
        tracked = hooks.forward_tracked if journal is not None else None
        self._outbox = Outbox(hooks.forward, counters, tracked)
        released = journal.released if journal is not None else None
        self._waits = Waits(self._outbox, hooks.annotate, clock, self._account, released)
        self._restoring: tuple[Request, set[int], dict[int, Held]] | None = None
        self._restored: set[str] = set()  # traces replayed from storage, not scored yet
        # Held by a request consumed in slices (`consume_sliced`) from its first slice to its
        # last, and by each slice of a tick: neither sees half of the other's bookkeeping.
        self._lock = asyncio.Lock()
        self.spans = 0
        self.nbytes = 0

    @property
    def runs(self) -> int:
        """Traces buffered now."""
        return len(self._traces)

    @property
    def buffered_bytes(self) -> int:
        """Estimated bytes held: records, held spans and forwards waiting for the exporter."""
        return self.nbytes + self._outbox.nbytes

    @property
    def cache_bytes(self) -> int:
        """Bytes of the scanner's caches of what clients sent (attribute keys, span names,
        resources; at most otlp.scan.CACHE_BYTES_MAX): counted in `assembly.max_bytes` and in
        the bytes-buffered gauge along with `buffered_bytes`."""
        return self._reader.cache_bytes

    @property
    def busy(self) -> bool:
        """A request is being consumed in slices: another must wait its turn
        (`consume_sliced`), and a tick waits for `exclusive`."""
        return self._lock.locked()

    @property
    def exclusive(self) -> asyncio.Lock:
        """The lock a tick's slice holds so that it never runs between a request's slices."""
        return self._lock

    def _account(self, spans: int, nbytes: int) -> None:
        self.spans += spans
        self.nbytes += nbytes

    def _gauges(self) -> None:
        self._counters.set_runs_buffered(len(self._traces))
        self._counters.set_bytes_buffered(self.buffered_bytes + self._reader.cache_bytes)
