"""Forward-first assembly: every span goes downstream as it arrives, except held agent spans.

Per request: spans with invalid ids are rejected (the sender learns through partial_success);
every other span is forwarded at once in the received bytes, except the agent span of a run a
scenario may match, which is cut out and held until its run is scored, then forwarded with the
score attributes. Spans of traces that may hold a run are also kept as `SpanRecord`s with only
the attributes trajectories need.

A trace is scored once an agent span (or its root) arrived and it was quiet for
`decision_wait`, or `max_trace_age` after its first span (then `complete` is false unless an
agent span or the root arrived). Spans of a trace already scored are forwarded and counted as
late. The buffer is bounded by runs, spans and bytes: at a limit `check_capacity` raises
OverloadedError and receivers answer with a retryable status instead of evicting anything.
Forwards the exporter cannot take yet wait in an outbox, retried on every tick, so nothing
accepted is lost.
"""

from __future__ import annotations

import collections
import logging
import time
from collections.abc import Callable
from typing import Literal

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tracescore.assembler._wire import Held, cut_spans, frame_request
from tracescore.assembler.contracts import (
    AssemblerHooks,
    Counters,
    Ingest,
    Journal,
    ReadyTrace,
    Reason,
)
from tracescore.assembler.outbox import Outbox
from tracescore.assembler.replay import replay_parts
from tracescore.assembler.waits import Pending, Waits
from tracescore.config.serve import AssemblySettings
from tracescore.errors import InputError, OverloadedError
from tracescore.model.span import SpanRecord
from tracescore.otlp.grouping import Grouped
from tracescore.otlp.scan import SpanReader
from tracescore.semconv import TRACESCORE_COMPLETE
from tracescore.storage.records import HeldSpan, Request

__all__ = ["Assembler"]

log = logging.getLogger(__name__)

_ZERO16 = bytes(16)
_MAX_PROBLEMS = 5
# Bytes of one SpanRecord with its id strings and its trace's share of the buffer, before its
# attributes; used only to bound memory (assembly.max_bytes). Fitted with otlp.scan's
# ATTRIBUTE_OVERHEAD to tracemalloc on bench/capacity.py's runs (512 bytes), rounded up.
RECORD_OVERHEAD = 520
# Trace ids remembered after scoring, so late spans are counted as late: about 100 bytes each.
_SCORED_MIN, _SCORED_MAX = 10_000, 200_000
# Time from a trace being due to its tick scoring it (the service ticks at most every 0.25 s).
_TICK_S = 0.25
# Retry-After when the export queue is full: when the downstream takes more is not known here.
_EXPORT_RETRY_S = 1.0
_RETRY_MAX_S = 30.0


def _keep_nothing(key: str) -> bool:
    return False


def _wire_position(touched: tuple[int, bytes, _Trace, bool]) -> int:
    return touched[0]


class _Trace:
    __slots__ = ("anchored", "first", "held", "hex", "last", "nbytes", "records")

    def __init__(self, hex_id: str, now: float, records: list[SpanRecord]) -> None:
        self.hex = hex_id
        self.first = now
        self.last = now
        self.anchored = False
        self.records = records
        self.held: dict[str, Held] = {}
        self.nbytes = 0


class Assembler:
    """Buffers what runs need, holds agent spans, decides when runs are scored."""

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
        self._traces: dict[bytes, _Trace] = {}  # insertion order = order of first span
        self._anchored: collections.OrderedDict[bytes, _Trace] = collections.OrderedDict()
        self._scored: collections.OrderedDict[bytes, None] = collections.OrderedDict()
        self._scored_limit = max(_SCORED_MIN, min(_SCORED_MAX, 4 * settings.max_runs))
        self._journal = journal
        tracked = hooks.forward_tracked if journal is not None else None
        self._outbox = Outbox(hooks.forward, counters, tracked)
        released = journal.released if journal is not None else None
        self._waits = Waits(self._outbox, hooks.annotate, clock, self._account, released)
        self._restoring: tuple[Request, set[int], dict[int, Held]] | None = None
        self._restored: set[str] = set()  # traces replayed from storage, not scored yet
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

    # -- admission -------------------------------------------------------------------------

    def check_capacity(self) -> None:
        """Raise OverloadedError when a new request must be refused with a retryable status;
        its `retry_after_s` is when space frees (the next trace due is scored)."""
        s = self.settings
        if self._outbox:
            self._outbox.flush()
        if len(self._traces) >= s.max_runs:
            problem = f"{len(self._traces)} runs buffered (assembly.max_runs)"
        elif self.spans >= s.max_spans:
            problem = f"{self.spans} spans buffered (assembly.max_spans)"
        elif self.buffered_bytes >= s.max_bytes:
            problem = f"{self.buffered_bytes} bytes buffered (assembly.max_bytes)"
        elif self._outbox or not self._hooks.downstream_ready():
            raise OverloadedError(
                "export queue full: the downstream endpoint is slow or down", _EXPORT_RETRY_S
            )
        else:
            return
        raise OverloadedError(problem, self.space_frees_in())

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

    # -- ingest ----------------------------------------------------------------------------

    def scan(self, body: bytes) -> Grouped:
        """The spans of checked request bytes grouped by trace, for `consume(..., scanned)`.

        It touches no state of the assembler (only the reader's caches, which tolerate a
        concurrent scan), so receivers run it in a worker thread for large bodies: the native
        scan releases the GIL every few hundred microseconds and the event loop keeps
        answering meanwhile."""
        try:
            return self._reader.grouped(body)
        except Exception as exc:  # the schema check accepted it, so this is unusual input
            raise InputError(f"unreadable OTLP request: {exc}") from exc

    def consume(
        self,
        request: ExportTraceServiceRequest | None,
        body: bytes | None = None,
        scanned: Grouped | None = None,
    ) -> Ingest:
        """Take one request: its received bytes, checked against the OTLP schema and forwarded
        as they are (request: None or the same request parsed), or a parsed one (body None);
        `scanned` is `scan(body)` when the caller made it already."""
        # The hot path: Python-level work per span is the bottleneck (reference/performance.md),
        # so spans come from `otlp.scan` already grouped by trace (natively when built) and
        # this loops per trace and per agent candidate; shared state is updated once per
        # request. The receiver checked the bytes against the full schema (upb's verdict,
        # otlp.proto.check_proto_request); the scan decodes only the attribute keys kept.
        if body is None:
            if request is None:
                raise TypeError("consume needs a request or its bytes")
            body = request.SerializeToString()
        now = self._clock()
        result = Ingest()
        remove: dict[int, dict[int, set[int]]] = {}
        holds: list[tuple[tuple[int, int, int], _Trace, str]] = []
        # (wire position of the trace's first kept span, trace id, trace, whether it is new)
        touched: list[tuple[int, bytes, _Trace, bool]] = []
        reorder = False
        accepted = late = kept = kept_bytes = 0
        traces, scored, scoring = self._traces, self._scored, self._scoring
        groups, rejects = self.scan(body) if scanned is None else scanned
        for i, j, k, tid, sid, name in rejects:
            self._reject(result, (i, j, k), tid, sid, name, remove)
        # Per trace (otlp.grouping says what a group holds), the decisions made per span before:
        # a new trace keeps its records from the first with attributes on (before it, nothing a
        # trajectory reads in a trace holding no run); a known one keeps all; a scored one none.
        for tid, group in groups.items():
            records, size, lead, last_root, candidates, lead_candidates, first, first_attr = group
            n = len(records)
            accepted += n
            if not scoring:
                continue
            trace = traces.get(tid)
            fresh = trace is None
            if trace is None:
                if tid in scored:
                    late += n
                    continue
                if lead == n:
                    continue
                if lead:  # its first kept span comes later on the wire than its first span
                    records, candidates = records[lead:], candidates[lead_candidates:]
                    n -= lead
                    last_root -= lead
                    first = first_attr
                    reorder = True
                # A list of its own, made for this request.
                trace = _Trace(records[0].trace_id, now, records)
            else:
                trace.records.extend(records)
            size += RECORD_OVERHEAD * n  # leading spans without attributes hold 0
            trace.nbytes += size
            kept += n
            kept_bytes += size
            touched.append((first, tid, trace, fresh))
            if last_root >= 0:
                trace.anchored = True
            for i, j, k, record in candidates:  # the scanner's cheap test: the others cannot be
                self._candidate(record, trace, (i, j, k), remove, holds)
        if reorder:  # traces are created and touched in the order of their first kept span
            touched.sort(key=_wire_position)
        self.spans += kept
        self.nbytes += kept_bytes
        anchored = self._anchored
        for _, tid, trace, fresh in touched:
            if fresh:
                traces[tid] = trace
            trace.last = now
            if trace.anchored:
                anchored[tid] = trace
                anchored.move_to_end(tid)
        rid = 0
        if self._journal is not None and accepted:
            rid = self._write_ahead(body, holds, touched, accepted)
        self._conclude(result, accepted, late, body, remove, holds, rid)
        return result

    def _write_ahead(
        self,
        body: bytes,
        holds: list[tuple[tuple[int, int, int], _Trace, str]],
        touched: list[tuple[int, bytes, _Trace, bool]],
        accepted: int,
    ) -> int:
        assert self._journal is not None
        held = [
            HeldSpan(index, bytes.fromhex(trace.hex), bytes.fromhex(span_id))
            for index, trace, span_id in holds
        ]
        traces = [trace.hex for _, _, trace, _ in touched]
        forwarded = self._forwarding and accepted > len(holds)
        return self._journal.accepted(body, held, traces, forwarded)

    def _candidate(
        self,
        record: SpanRecord,
        trace: _Trace,
        index: tuple[int, int, int],
        remove: dict[int, dict[int, set[int]]],
        holds: list[tuple[tuple[int, int, int], _Trace, str]],
    ) -> None:
        """A span the scanner flagged as maybe an agent span: anchor its trace if it is one,
        and hold it (cut from the forwarded request) if a scenario may score its run."""
        agent = self._hooks.agent_name(record)
        if agent is None:
            return
        trace.anchored = True
        if (
            self._forwarding
            and self._restoring is None  # a replayed request holds what its record says
            and record.span_id not in trace.held
            and self._hooks.wants(record, agent)
        ):
            i, j, k = index
            remove.setdefault(i, {}).setdefault(j, set()).add(k)
            holds.append((index, trace, record.span_id))

    def _conclude(
        self,
        result: Ingest,
        accepted: int,
        late: int,
        body: bytes,
        remove: dict[int, dict[int, set[int]]],
        holds: list[tuple[tuple[int, int, int], _Trace, str]],
        rid: int = 0,
    ) -> None:
        """Count a consumed request's spans and forward what it does not hold."""
        result.accepted = accepted
        if late:
            self._counters.spans_late(late)
        if accepted:
            self._counters.spans_received(accepted)
        if result.rejected:
            self._counters.spans_rejected(result.rejected)
        if self._restoring is not None:
            self._resume(body, remove, accepted)
        elif self._forwarding:
            self._forward_request(body, remove, holds, accepted, rid)
        self._gauges()

    def _reject(
        self,
        result: Ingest,
        index: tuple[int, int, int],
        trace_id: bytes,
        span_id: bytes,
        name: str,
        remove: dict[int, dict[int, set[int]]],
    ) -> None:
        i, j, k = index
        result.rejected += 1
        remove.setdefault(i, {}).setdefault(j, set()).add(k)
        if len(result.problems) < _MAX_PROBLEMS:
            where = f"resource_spans[{i}].scope_spans[{j}].spans[{k}] ({name!r})"
            if len(trace_id) != 16 or trace_id == _ZERO16:
                what = f"trace_id must be 16 non-zero bytes, got {trace_id.hex()!r}"
            else:
                what = f"span_id must be 8 non-zero bytes, got {span_id.hex()!r}"
            result.problems.append(f"{where}: {what}")

    def _forward_request(
        self,
        body: bytes,
        remove: dict[int, dict[int, set[int]]],
        holds: list[tuple[tuple[int, int, int], _Trace, str]],
        accepted: int,
        rid: int = 0,
    ) -> None:
        if remove:
            body, cut = cut_spans(body, remove)
            for index, trace, span_id in holds:
                held = cut[index]
                trace.held[span_id] = held
                size = len(held[0]) + len(held[1]) + len(held[2])
                trace.nbytes += size
                self.nbytes += size
                self.spans += 1
        n = accepted - len(holds)
        if n:
            self._outbox.send(body, n, ((rid, 0),) if rid else None)

    # -- recovery --------------------------------------------------------------------------

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

    def _resume(self, body: bytes, remove: dict[int, dict[int, set[int]]], accepted: int) -> None:
        assert self._restoring is not None
        sends = replay_parts(
            body, remove, accepted, self._restoring, self._rehold, self._hooks.annotate
        )
        for send_body, n, token in sends:
            self._outbox.send(send_body, n, token)

    def _rehold(self, trace_id: bytes, span_hex: str, held: Held, key: tuple[int, int]) -> bool:
        trace = self._traces.get(trace_id)
        if trace is None or self._journal is None:
            return False
        trace.held[span_hex] = held
        size = len(held[0]) + len(held[1]) + len(held[2])
        trace.nbytes += size
        self.nbytes += size
        self.spans += 1
        self._restored.add(trace.hex)
        self._journal.hold(trace.hex, span_hex, key)
        return True

    # -- deciding --------------------------------------------------------------------------

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
        due: list[tuple[_Trace, Reason]] = [(self._pop(tid), "quiet") for tid in quiet]
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
        due: list[tuple[_Trace, Reason]] = [
            (self._pop(tid), "shutdown") for tid in list(self._traces)
        ]
        self._release(due)
        self._outbox.flush()
        self._gauges()
        return len(due)

    def _pop(self, tid: bytes) -> _Trace:
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

    def _release(self, due: list[tuple[_Trace, Reason]]) -> None:
        if not due:
            return
        released: list[Held] = []
        # The trace's own list: popped, nothing appends to it any more.
        readies = [ReadyTrace(t.hex, t.records, t.anchored, reason) for t, reason in due]
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
        journal, keys = self._journal, []
        for (trace, _), by_span in zip(due, scored, strict=True):
            restored = trace.hex in self._restored
            self._restored.discard(trace.hex)
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

    def drain_waits(self) -> int:
        """Release every span still waiting for judge scores (shutdown, after the judges')."""
        released = self._waits.release_all()
        self._outbox.flush()
        self._gauges()
        return released

    def _account(self, spans: int, nbytes: int) -> None:
        self.spans += spans
        self.nbytes += nbytes

    # -- forwarding ------------------------------------------------------------------------

    def flush_outbox(self) -> bool:
        """Hand waiting forwards to the exporter; True when nothing waits any more."""
        return self._outbox.flush()

    def abandon_outbox(self) -> int:
        """Count and log forwards that never reached the exporter; returns their spans."""
        return self._outbox.abandon()

    def _gauges(self) -> None:
        self._counters.set_runs_buffered(len(self._traces))
        self._counters.set_bytes_buffered(self.buffered_bytes)
