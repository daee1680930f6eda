"""Replaying a request that a crashed process left in storage: which of its parts go out.

The assembler buffers the request's spans again as it does any request's; this decides the
rest from the request's record and what the journal says is still to send. Its forwarded
rest (part 0) goes out again unless delivered; a held agent span (part k) that was released
with its scores before the crash goes out as it was released; any other held span is held
again on its trace, or, when no trace holds its run any more (no scenario can score it),
goes out marked `tracescore.complete=false`.
"""

from __future__ import annotations

from collections.abc import Callable

from tracescore.assembler._wire import Held, cut_spans, frame_request
from tracescore.assembler.buffer import Buffer
from tracescore.assembler.waits import Annotate, annotated
from tracescore.semconv import TRACESCORE_COMPLETE
from tracescore.storage.records import Request

__all__ = ["Replay", "Send", "replay_parts"]

Key = tuple[int, int]
Send = tuple[bytes, int, tuple[Key, ...]]
"""A body to forward, its number of spans, and the keys of the parts it carries."""


def replay_parts(
    body: bytes,
    remove: dict[int, dict[int, set[int]]],
    accepted: int,
    replayed: tuple[Request, set[int], dict[int, Held]],
    hold: Callable[[bytes, str, Held, Key], bool],
    annotate: Annotate,
) -> list[Send]:
    """The bodies to forward for a replayed request, in order.

    Args:
        body: the request as received; `remove` the spans the assembler rejected in it.
        accepted: spans of it the assembler accepted (held spans among them).
        replayed: its record, the parts not yet delivered, and the held spans released
            before the crash (part -> span as released).
        hold: `hold(trace id, span id hex, span, key)` holds a span again on its trace;
            False when no trace of that id is buffered.
        annotate: the assembler's hook adding attributes to a span's bytes.
    """
    request, parts, released = replayed
    rid = request.rid
    out: list[Send] = []
    for span in request.held:
        i, j, k = span.index
        remove.setdefault(i, {}).setdefault(j, set()).add(k)
    cut: dict[tuple[int, int, int], Held] = {}
    if remove:
        body, cut = cut_spans(body, remove)
    n = accepted - len(request.held)
    if 0 in parts and n > 0:
        out.append((body, n, ((rid, 0),)))
    spans: list[Held] = []
    keys: list[Key] = []
    for part, span in enumerate(request.held, 1):
        held = released.get(part) if part in parts else None
        if part in parts and held is None and span.index in cut:
            held = cut[span.index]
            if hold(span.trace_id, span.span_id.hex(), held, (rid, part)):
                continue
            held = annotated(held, {TRACESCORE_COMPLETE: False}, annotate)
        if held is not None:
            spans.append(held)
            keys.append((rid, part))
    if spans:
        out.append((frame_request(spans), len(spans), tuple(keys)))
    return out


class Replay(Buffer):
    """What the assembler does with a replayed request's parts (`Assembler.restore`)."""

    def _resume(self, body: bytes, remove: dict[int, dict[int, set[int]]], accepted: int) -> None:
        """A replayed request's parts (see `restore`) sent as its storage record says."""
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
