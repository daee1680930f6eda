"""Ingest: one request's spans into the buffer, its held agent spans cut out, the rest forwarded.

Per request: spans with invalid ids are rejected (the sender learns through partial_success);
every other span is forwarded at once in the received bytes, except the agent span of a run a
scenario may match, which is cut out and held until its run is scored. Spans of traces that may
hold a run are kept as `SpanRecord`s with only the attributes trajectories need; spans of a
trace already scored are forwarded and counted as late.

A request of many traces is taken in slices (`consume_sliced`) that yield to the event loop,
so health checks and other requests are answered meanwhile; the slices do exactly what one
`consume` does, in the same order, under the buffer's lock, so a tick never sees half of it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from itertools import islice

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tracescore.assembler._wire import cut_spans
from tracescore.assembler.buffer import RECORD_OVERHEAD, Trace
from tracescore.assembler.contracts import Ingest
from tracescore.assembler.replay import Replay
from tracescore.errors import InputError
from tracescore.otlp.grouping import Grouped, TraceGroup
from tracescore.otlp.proto import check_and_group
from tracescore.storage.records import HeldSpan

__all__ = ["SLICE", "Ingestion"]

_ZERO16 = bytes(16)
_MAX_PROBLEMS = 5
# Traces (or rejected spans) taken between two yields to the event loop: 1-3 ms of bookkeeping
# at 0.25-0.5 µs a one-span trace (several for an agent run's), so /healthz waits a few
# milliseconds, not the 130-200 ms a 512k-trace request took in one go. A request with no more
# traces than this is taken in one go, as before.
SLICE = 4096

Index = tuple[int, int, int]
Hold = tuple[Index, Trace, str]
Remove = dict[int, dict[int, set[int]]]
# (wire position of the trace's first kept span, trace id, trace, whether it is new)
Touched = tuple[int, bytes, Trace, bool]


def _wire_position(touched: Touched) -> int:
    return touched[0]


class _Intake:
    """One request's bookkeeping between its slices."""

    __slots__ = (
        "accepted", "body", "groups", "holds", "kept", "kept_bytes", "late", "now", "rejects",
        "remove", "reorder", "result", "touched",
    )  # fmt: skip

    def __init__(self, body: bytes, scanned: Grouped, now: float) -> None:
        self.body = body
        self.groups, self.rejects = scanned
        self.now = now
        self.result = Ingest()
        self.remove: Remove = {}
        self.holds: list[Hold] = []
        self.touched: list[Touched] = []
        self.reorder = False
        self.accepted = self.late = self.kept = self.kept_bytes = 0


class Ingestion(Replay):
    """`scan`, `consume` and `consume_sliced`: requests into the buffer."""

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

    def checked_scan(self, body: bytes, source: str = "body") -> Grouped:
        """`scan` of bytes not checked yet: refuses what `otlp.proto.check_proto_request`
        refuses (the same InputError), in one walk with the scan where the native scanner can
        vouch for the bytes (`otlp.proto.check_and_group`). Touches no state of the
        assembler, like `scan`; the refusal comes before anything is taken."""
        try:
            return check_and_group(self._reader, body, source)
        except InputError:
            raise
        except Exception as exc:  # the schema check accepted it, so this is unusual input
            raise InputError(f"unreadable OTLP request: {exc}") from exc

    def consume(
        self,
        request: ExportTraceServiceRequest | None,
        body: bytes | None = None,
        scanned: Grouped | None = None,
    ) -> Ingest:
        """Take one request in one go: its received bytes, checked against the OTLP schema and
        forwarded as they are (request: None or the same request parsed), or a parsed one
        (body None); `scanned` is `scan(body)` when the caller made it already. Not while
        `busy`: a request taken in slices is then half done."""
        # The hot path: Python-level work per span is the bottleneck (reference/performance.md),
        # so spans come from `otlp.scan` already grouped by trace (natively when built) and
        # this loops per trace and per agent candidate; shared state is updated once per
        # request. The receiver checked the bytes against the full schema (upb's verdict,
        # otlp.proto.check_proto_request); the scan decodes only the attribute keys kept.
        if self._lock.locked():
            raise RuntimeError("consume while a request is taken in slices: use consume_sliced")
        intake = self._intake(request, body, scanned)
        result, remove = intake.result, intake.remove
        for i, j, k, tid, sid, name in intake.rejects:
            self._reject(result, (i, j, k), tid, sid, name, remove)
        self._take(intake, intake.groups.items())
        self._settle(intake, intake.touched)
        return self._finish(intake)

    async def consume_sliced(
        self,
        request: ExportTraceServiceRequest | None,
        body: bytes | None = None,
        scanned: Grouped | None = None,
    ) -> Ingest:
        """`consume`, yielding to the event loop every `SLICE` traces, after any request taken
        before it; the tick's slices wait for it (`exclusive`). Its result, the buffer it
        leaves, its forwards and its storage record are `consume`'s. Callers must not cancel
        it midway (receivers shield it): the buffer would keep half of its bookkeeping."""
        async with self._lock:
            intake = self._intake(request, body, scanned)
            rejects, result, remove = intake.rejects, intake.result, intake.remove
            for start in range(0, len(rejects), SLICE):
                if start:
                    await asyncio.sleep(0)
                for i, j, k, tid, sid, name in rejects[start : start + SLICE]:
                    self._reject(result, (i, j, k), tid, sid, name, remove)
            groups = iter(intake.groups.items())
            for start in range(0, len(intake.groups), SLICE):
                if start or rejects:
                    await asyncio.sleep(0)
                self._take(intake, islice(groups, SLICE))
            touched = intake.touched
            self._settle(intake, touched[:SLICE])
            for start in range(SLICE, len(touched), SLICE):
                await asyncio.sleep(0)
                self._settle(intake, touched[start : start + SLICE], counted=True)
            return self._finish(intake)

    def _intake(
        self, request: ExportTraceServiceRequest | None, body: bytes | None, scanned: Grouped | None
    ) -> _Intake:
        if body is None:
            if request is None:
                raise TypeError("consume needs a request or its bytes")
            body = request.SerializeToString()
        return _Intake(body, self.scan(body) if scanned is None else scanned, self._clock())

    def _take(self, intake: _Intake, groups: Iterable[tuple[bytes, TraceGroup]]) -> None:
        """Per trace (otlp.grouping says what a group holds), the decisions made per span
        before: a new trace keeps its records from the first with attributes on (before it,
        nothing a trajectory reads in a trace holding no run); a known one keeps all; a scored
        one none. New traces enter the buffer in `_settle`."""
        traces, scored, scoring, now = self._traces, self._scored, self._scoring, intake.now
        touched, remove, holds = intake.touched, intake.remove, intake.holds
        agent_name, wants = self._hooks.agent_name, self._hooks.wants
        # A span the scanner flagged as maybe an agent span anchors its trace if it is one,
        # and is held (cut from the forwarded request) if a scenario may score its run; a
        # replayed request holds what its record says.
        holding = self._forwarding and self._restoring is None
        accepted = late = kept = kept_bytes = 0
        reorder = False
        for tid, group in groups:
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
                trace = Trace(records[0].trace_id, now, records)
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
                agent = agent_name(record)
                if agent is None:
                    continue
                trace.anchored = True
                wanted = wants(record, agent)
                # (An unnamed agent's run is named after its span when built, which `wants`
                # does not see: it may be scored all the same.)
                if wanted or not agent:
                    trace.scorable = True
                elif trace.scorable is None:
                    trace.scorable = False
                if holding and wanted and record.span_id not in trace.held:
                    # Not `setdefault`, which made a dict and a set for every call.
                    by_scope = remove.get(i)
                    if by_scope is None:
                        by_scope = remove[i] = {}
                    spans = by_scope.get(j)
                    if spans is None:
                        spans = by_scope[j] = set()
                    spans.add(k)
                    holds.append(((i, j, k), trace, record.span_id))
        intake.accepted += accepted
        intake.late += late
        intake.kept += kept
        intake.kept_bytes += kept_bytes
        intake.reorder = intake.reorder or reorder

    def _settle(self, intake: _Intake, touched: list[Touched], counted: bool = False) -> None:
        """Enter the request's new traces and mark its touched ones, in the order of their
        first kept span on the wire (`touched`: all of them, or a slice after the first)."""
        if not counted:
            if intake.reorder:  # traces are created and touched in the order of their first span
                intake.touched.sort(key=_wire_position)
                touched = intake.touched[: len(touched)]
            self.spans += intake.kept
            self.nbytes += intake.kept_bytes
        traces, anchored, now = self._traces, self._anchored, intake.now
        for _, tid, trace, fresh in touched:
            if fresh:
                traces[tid] = trace
            trace.last = now
            if trace.anchored:
                anchored[tid] = trace
                anchored.move_to_end(tid)

    def _finish(self, intake: _Intake) -> Ingest:
        rid = 0
        if self._journal is not None and intake.accepted:
            rid = self._write_ahead(intake.body, intake.holds, intake.touched, intake.accepted)
        result = intake.result
        self._conclude(
            result, intake.accepted, intake.late, intake.body, intake.remove, intake.holds, rid
        )
        return result

    def _write_ahead(
        self, body: bytes, holds: list[Hold], touched: list[Touched], accepted: int
    ) -> int:
        assert self._journal is not None
        held = [
            HeldSpan(index, bytes.fromhex(trace.hex), bytes.fromhex(span_id))
            for index, trace, span_id in holds
        ]
        traces = [trace.hex for _, _, trace, _ in touched]
        forwarded = self._forwarding and accepted > len(holds)
        return self._journal.accepted(body, held, traces, forwarded)

    def _conclude(
        self,
        result: Ingest,
        accepted: int,
        late: int,
        body: bytes,
        remove: Remove,
        holds: list[Hold],
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
        index: Index,
        trace_id: bytes,
        span_id: bytes,
        name: str,
        remove: Remove,
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
        self, body: bytes, remove: Remove, holds: list[Hold], accepted: int, rid: int = 0
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
