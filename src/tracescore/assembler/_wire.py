"""Byte-level surgery on serialized ExportTraceServiceRequests.

Forwarding a request without its held agent spans by deleting them from the parsed message and
calling `SerializeToString` costs about as much as parsing it again (reference/performance.md
B.1c). Walking the protobuf wire format three levels deep (request → ResourceSpans → ScopeSpans
→ Span) touches only tags and lengths, so the forwarded bytes are the received bytes with a few
records cut out and two length prefixes rewritten.

Indices match the parsed message: every occurrence of a repeated message field on the wire is
one element, in order, which is also how the protobuf parser builds the repeated field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from tracescore.otlp.native import extension
from tracescore.otlp.wire import WireError, read_varint, skip_group, varint

_native = extension()
_native_cut = None if _native is None else _native.cut_spans

__all__ = ["Held", "WireError", "cut_spans", "frame_request", "python_cut_spans"]

# Field numbers (opentelemetry/proto/trace/v1/trace.proto, collector/trace/v1/*.proto).
_RESOURCE_SPANS = 1
_SCOPE_SPANS = 2
_SPANS = 2
_LEN = 2
_TAG_RESOURCE_SPANS = bytes([(_RESOURCE_SPANS << 3) | _LEN])
_TAG_SCOPE_SPANS = bytes([(_SCOPE_SPANS << 3) | _LEN])
_TAG_SPANS = bytes([(_SPANS << 3) | _LEN])

# One held span: the ResourceSpans fields other than scope_spans (the resource and schema url),
# the ScopeSpans fields other than spans (the scope and schema url), and the Span itself.
Held = tuple[bytes, bytes, bytes]


def _fields(buf: bytes, start: int, end: int) -> Iterable[tuple[int, int, int, int, int]]:
    """(field number, wire type, field start, payload start, field end) of each field."""
    pos = start
    while pos < end:
        field_start = pos
        tag, pos = read_varint(buf, pos)
        number, wire = tag >> 3, tag & 7
        if wire == 2:
            length, pos = read_varint(buf, pos)
            payload, pos = pos, pos + length
        elif wire == 0:
            _, pos = read_varint(buf, pos)
            payload = pos
        elif wire == 1:
            payload, pos = pos, pos + 8
        elif wire == 5:
            payload, pos = pos, pos + 4
        elif wire == 3 and number:  # a group: forwarded as it came, like an unknown field
            payload, pos = pos, skip_group(buf, pos, end, number)
        else:
            raise WireError(f"unsupported wire type {wire} in field {number}")
        if pos > end:
            raise WireError(f"field {number} runs past the end of its message")
        yield number, wire, field_start, payload, pos


Removals = Mapping[int, Mapping[int, frozenset[int] | set[int]]]


def cut_spans(body: bytes, remove: Removals) -> tuple[bytes, dict[tuple[int, int, int], Held]]:
    """`body` without the spans at `remove[rs_index][ss_index] = {span indices}`.

    Returns the remaining request and, per removed `(rs, ss, span)` index, what is needed to
    frame that span again later. A ScopeSpans or ResourceSpans left without spans is dropped.
    Raises WireError on malformed input (the parser accepted it, so this means a bug here).
    Runs in C when the `otlp._scan` extension was built: walking every span of a request in
    Python to cut one in twenty out cost about 5k instructions per span forwarded.
    """
    if _native_cut is None:
        return python_cut_spans(body, remove)
    try:
        return _native_cut(body, remove)  # type: ignore[no-any-return]
    except ValueError as exc:
        raise WireError(str(exc)) from exc


def python_cut_spans(
    body: bytes, remove: Removals
) -> tuple[bytes, dict[tuple[int, int, int], Held]]:
    """The pure-Python twin of the native `cut_spans` (same arguments, same result)."""
    view = memoryview(body)
    out: list[bytes | memoryview] = []
    held: dict[tuple[int, int, int], Held] = {}
    rs_index = -1
    for number, wire, start, payload, end in _fields(body, 0, len(body)):
        if number != _RESOURCE_SPANS or wire != _LEN:
            out.append(view[start:end])
            continue
        rs_index += 1
        by_scope = remove.get(rs_index)
        if not by_scope:
            out.append(view[start:end])
            continue
        rs_body = _cut_resource(body, view, payload, end, rs_index, by_scope, held)
        if rs_body is not None:
            out.extend((_TAG_RESOURCE_SPANS, varint(len(rs_body)), rs_body))
    return b"".join(out), held


def _cut_resource(
    body: bytes,
    view: memoryview,
    start: int,
    end: int,
    rs_index: int,
    by_scope: Mapping[int, frozenset[int] | set[int]],
    held: dict[tuple[int, int, int], Held],
) -> bytes | None:
    header: list[memoryview] = []
    parts: list[bytes | memoryview] = []
    # (position in parts, scope index, payload start, payload end, span indices to drop)
    cuts: list[tuple[int, int, int, int, frozenset[int] | set[int]]] = []
    had_scopes = kept_scopes = False
    ss_index = -1
    for number, wire, f_start, payload, f_end in _fields(body, start, end):
        if number != _SCOPE_SPANS or wire != _LEN:
            header.append(view[f_start:f_end])
            parts.append(view[f_start:f_end])
            continue
        ss_index += 1
        had_scopes = True
        drop = by_scope.get(ss_index)
        if drop:
            cuts.append((len(parts), ss_index, payload, f_end, drop))
            parts.append(b"")  # filled below, once the resource header is known
        else:
            parts.append(view[f_start:f_end])
            kept_scopes = True
    rs_header = b"".join(header)
    for position, scope_index, payload, f_end, drop in cuts:
        key = (rs_index, scope_index)
        ss_body = _cut_scope(body, view, payload, f_end, key, drop, rs_header, held)
        if ss_body is not None:
            parts[position] = b"".join((_TAG_SCOPE_SPANS, varint(len(ss_body)), ss_body))
            kept_scopes = True
    if had_scopes and not kept_scopes:
        return None
    return b"".join(parts)


def _cut_scope(
    body: bytes,
    view: memoryview,
    start: int,
    end: int,
    key: tuple[int, int],
    drop: frozenset[int] | set[int],
    rs_header: bytes,
    held: dict[tuple[int, int, int], Held],
) -> bytes | None:
    header: list[memoryview] = []
    parts: list[memoryview] = []
    taken: list[tuple[int, bytes]] = []
    kept_spans = False
    sp_index = -1
    pos = start
    kept_from = start  # start of a run of kept fields not yet appended to parts
    pending = sorted(drop, reverse=True)
    next_drop = pending.pop()
    while pos < end:
        # The hot loop of the cut: inlined tag and length reads for the common case (a
        # one-byte tag and a length below 16 KiB); anything else takes the generic path.
        tag = body[pos]
        if tag == 0x12:
            length = body[pos + 1]
            if length < 0x80:
                payload = pos + 2
            elif body[pos + 2] < 0x80:
                length = (length & 0x7F) | (body[pos + 2] << 7)
                payload = pos + 3
            else:
                length, payload = read_varint(body, pos + 1)
            f_end = payload + length
            if f_end > end:
                raise WireError("a span runs past the end of its scope")
            sp_index += 1
            if sp_index == next_drop:
                if kept_from < pos:
                    parts.append(view[kept_from:pos])
                taken.append((sp_index, body[payload:f_end]))
                kept_from = f_end
                next_drop = pending.pop() if pending else -1
            else:
                kept_spans = True
            pos = f_end
            continue
        for number, wire, f_start, f_payload, f_end in _fields(body, pos, end):
            # One field only: the generic path for scope, schema url and unknown fields, and
            # for a span whose tag is not the one-byte 0x12 (upb takes up to 5 bytes).
            if number == _SPANS and wire == _LEN:
                sp_index += 1
                if sp_index == next_drop:
                    if kept_from < pos:
                        parts.append(view[kept_from:pos])
                    taken.append((sp_index, body[f_payload:f_end]))
                    kept_from = f_end
                    next_drop = pending.pop() if pending else -1
                else:
                    kept_spans = True
            else:
                header.append(view[f_start:f_end])
            pos = f_end
            break
    if kept_from < end:
        parts.append(view[kept_from:end])
    ss_header = b"".join(header)
    for sp_index, span in taken:
        held[(*key, sp_index)] = (rs_header, ss_header, span)
    if not kept_spans:
        return None
    return b"".join(parts)


def frame_request(spans: Iterable[Held]) -> bytes:
    """An ExportTraceServiceRequest holding `spans`, grouped by resource and scope.

    Written as one list of pieces joined once, each length prefix computed from the sizes of
    what it frames: joining each scope, then each resource, then the request copied every
    span's bytes three times (a sixth of releasing a run, callgrind, bench/pipeline_cpu.py).
    """
    grouped: dict[bytes, dict[bytes, list[bytes]]] = {}
    for rs_header, ss_header, span in spans:
        scopes = grouped.get(rs_header)
        if scopes is None:
            scopes = grouped[rs_header] = {}
        framed = scopes.get(ss_header)
        if framed is None:
            framed = scopes[ss_header] = []
        framed.append(span)
    out: list[bytes] = []
    for rs_header, scopes in grouped.items():
        rs_at = len(out)
        out += (b"", rs_header)  # the resource's tag and length, once its size is known
        rs_size = len(rs_header)
        for ss_header, span_list in scopes.items():
            ss_at = len(out)
            out += (b"", ss_header)
            ss_size = len(ss_header)
            for span in span_list:
                length = varint(len(span))
                out += (_TAG_SPANS, length, span)
                ss_size += 1 + len(length) + len(span)
            ss_head = _TAG_SCOPE_SPANS + varint(ss_size)
            out[ss_at] = ss_head
            rs_size += len(ss_head) + ss_size
        out[rs_at] = _TAG_RESOURCE_SPANS + varint(rs_size)
    return b"".join(out)
