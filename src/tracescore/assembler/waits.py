"""Scored spans that wait for late score attributes (judge scores, `judge.judge_wait` > 0).

A run whose judges were submitted comes back from the scoring hook with a `Pending` instead of
its attributes. Its held agent span (forward mode), or just the `Pending` (fanout mode, where
it emits the `evaluate {agent}` span itself), is parked here until the `Pending` is done (its
callback releases it at once) or its deadline passes (the assembler's tick releases it).
Parked spans stay in the assembler's span and byte counts (through `account`), so buffer
limits and back-pressure cover them; `release_all` lets every one go at shutdown.

Nothing here blocks: waiting is a done-callback plus a deadline checked on the tick.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tracescore.assembler._wire import Held, frame_request
from tracescore.assembler.contracts import Pending
from tracescore.assembler.outbox import Outbox
from tracescore.model.span import AttrValue

__all__ = ["Pending", "Waits", "annotated"]

log = logging.getLogger(__name__)

# The assembler's hook: a serialized span with attributes added.
Annotate = Callable[[bytes, Mapping[str, AttrValue]], bytes]


def annotated(held: Held, attributes: Mapping[str, AttrValue], annotate: Annotate) -> Held:
    """`held` with `attributes` added to its span (as it was when there are none)."""
    if not attributes:
        return held
    rs_header, ss_header, span_bytes = held
    return rs_header, ss_header, annotate(span_bytes, attributes)


@dataclass(slots=True, eq=False)
class _Wait:
    pending: Pending
    held: Held | None  # None in fanout mode: the Pending emits its own span
    nbytes: int
    deadline: float
    key: Any = None  # the held span's key in storage, when it was written ahead


class Waits:
    """Parked spans in deadline order (one `judge_wait` for all, so arrival order)."""

    def __init__(
        self,
        outbox: Outbox,
        annotate: Annotate,
        clock: Callable[[], float],
        account: Callable[[int, int], None],
        released: Callable[[Any, Held], None] | None = None,
    ) -> None:
        """Args:
        outbox: where released spans are forwarded (the assembler's own).
        annotate: adds attributes to a serialized span (the assembler's hook).
        clock: the assembler's monotonic clock; deadlines are on it.
        account: `account(spans, nbytes)` adds to the assembler's buffered counts.
        released: `released(key, span)` writes a released span ahead (storage's hook).
        """
        self._outbox = outbox
        self._released = released
        self._annotate = annotate
        self._clock = clock
        self._account = account
        self._waits: collections.OrderedDict[int, _Wait] = collections.OrderedDict()
        self._next = 0

    def __len__(self) -> int:
        return len(self._waits)

    def park(self, pending: Pending, held: Held | None, key: Any = None) -> bool:
        """Keep `held` until `pending` is done or its wait ends; False when already done.

        `key` names the held span in storage (None when storage is off)."""
        if pending.done():
            return False
        nbytes = pending.nbytes + (sum(map(len, held)) if held is not None else 0)
        number = self._next
        self._next += 1
        self._waits[number] = _Wait(pending, held, nbytes, self._clock() + pending.wait, key)
        self._account(1, nbytes)
        pending.add_done_callback(lambda: self._wake(number))
        return True

    def release_expired(self, now: float) -> int:
        """Forward the waits whose deadline has come; returns how many."""
        keys: list[int] = []
        for key, wait in self._waits.items():  # oldest first
            if wait.deadline > now:
                break
            keys.append(key)
        self._release([self._waits.pop(key) for key in keys])
        return len(keys)

    def release_all(self) -> int:
        """Forward every wait with what its attributes are now (shutdown); returns how many."""
        waits = list(self._waits.values())
        self._waits.clear()
        self._release(waits)
        return len(waits)

    def _wake(self, key: int) -> None:
        # Already gone when the deadline or a shutdown released it first.
        wait = self._waits.pop(key, None)
        if wait is not None:
            self._release([wait])

    def _release(self, waits: list[_Wait]) -> None:
        if not waits:
            return
        released: list[Held] = []
        keys: list[Any] = []
        for wait in waits:
            self._account(-1, -wait.nbytes)
            try:
                attributes = wait.pending.finish()
            except Exception:  # a bug here must not lose the held span
                log.exception("finishing the attributes of a waiting span failed; sent without")
                attributes = {}
            if wait.held is not None:
                span = annotated(wait.held, attributes, self._annotate)
                released.append(span)
                if wait.key is not None and self._released is not None:
                    self._released(wait.key, span)
                    keys.append(wait.key)
        if released:
            self._outbox.send(frame_request(released), len(released), tuple(keys) or None)
