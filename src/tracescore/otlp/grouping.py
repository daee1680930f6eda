"""A request's spans grouped by trace, so the assembler's loop runs per trace, not per span.

`SpanReader.grouped` returns them: natively (`_scan.scan_grouped`, built along with the scan) or
through `group_records` below, the pure-Python twin the tests compare it with. Each group says
what the assembler decides per span without it visiting the spans: which records a new trace
keeps (it skips leading records without attributes), whether a kept record is a root, which
records may be agent spans, and where the trace's first kept span was on the wire (the order
traces are created and touched in).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeAlias

from tracescore.model.span import SpanRecord

__all__ = ["Candidate", "Grouped", "RejectedSpan", "TraceGroup", "group_records"]

_ZERO16 = bytes(16)
_ZERO8 = bytes(8)

# (rs, ss, span indices, record) of a span that may be an agent span (the reader's rule).
Candidate: TypeAlias = tuple[int, int, int, SpanRecord]
# Per trace id, in order of first appearance:
#   records: the trace's records in wire order;
#   size: their attribute bytes (a record without attributes holds none);
#   lead: how many records come before the first with attributes;
#   last_root: index in records of the last record without a parent, -1 when none;
#   candidates: the candidate records, the first `lead_candidates` of them within the lead;
#   first, first_attr: wire positions (among all spans of the request) of the trace's first
#       span and of its first span with attributes (-1 when none).
TraceGroup: TypeAlias = tuple[list[SpanRecord], int, int, int, list[Candidate], int, int, int]
# (rs, ss, span indices, trace_id, span_id, name) of a span whose ids are invalid: a trace id
# that is not 16 non-zero bytes or a span id that is not 8.
RejectedSpan: TypeAlias = tuple[int, int, int, bytes, bytes, str]
Grouped: TypeAlias = tuple[dict[bytes, TraceGroup], list[RejectedSpan]]
# What SpanReader.records gives per span (scan.ScannedRecord).
_Scanned: TypeAlias = tuple[int, int, int, bytes, bytes, int, SpanRecord, bool]


def group_records(scanned: Iterable[_Scanned]) -> Grouped:
    """Scanned records (`SpanReader.records`) grouped: the twin of `_scan.scan_grouped`."""
    built: dict[bytes, tuple[list[SpanRecord], list[Candidate], list[int]]] = {}
    rejects: list[RejectedSpan] = []
    for at, (i, j, k, tid, sid, size, record, candidate) in enumerate(scanned):
        if len(tid) != 16 or len(sid) != 8 or tid == _ZERO16 or sid == _ZERO8:
            rejects.append((i, j, k, tid, sid, record.name))
            continue
        group = built.get(tid)
        if group is None:
            # numbers: size, lead, last_root, lead_candidates, first, first_attr
            group = built[tid] = ([], [], [0, 0, -1, 0, at, -1])
        records, candidates, numbers = group
        in_lead = numbers[5] < 0
        if record.attributes:
            if in_lead:
                numbers[5] = at
            in_lead = False
        elif in_lead:
            numbers[1] += 1
        if record.parent_span_id is None:
            numbers[2] = len(records)
        numbers[0] += size
        records.append(record)
        if candidate:
            candidates.append((i, j, k, record))
            numbers[3] += in_lead
    out: dict[bytes, TraceGroup] = {}
    for tid, (records, candidates, numbers) in built.items():
        size, lead, last_root, lead_candidates, first, first_attr = numbers
        out[tid] = (records, size, lead, last_root, candidates, lead_candidates, first, first_attr)
    return out, rejects
