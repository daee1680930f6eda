"""When a refused request should come back: in turn, at the rate requests are getting in.

The buffer knows when its first trace is due (`Admission.space_frees_in`), but a service
behind its load frees room a request at a time, at the rate it scores, not all at once. Told
that one short wait, every refused sender came back together a tick later and was refused
again; over OTLP/gRPC each refusal costs about a receive (grpcio reads the message before the
handler runs), so the retries ate the core that scoring needed.

So refusals are handed retry times one after another: the first when the buffer says room
frees, each next one later by the interval at which requests were admitted over the last
second or two. A queue of refused requests is told to come back at the rate room is made.
Once refusals stop, the turns fall behind the clock and the buffer's estimate is all that is
said again. Measured with bench/overload.py (docs/performance.md, "Refused requests come back
in turn"): offered 1.5-2 times its capacity, the service took 1.16-1.55 times the spans a
second it took with one wait for all, at 15-35% less CPU a span.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["RetrySchedule"]

# Admissions are counted per window; the rate is this window's and the one before it.
_WINDOW_S = 1.0
# The longest wait advised: senders' retry budgets run to minutes (the collector's
# exporterhelper gives up after 300 s by default); a longer wait would outlive many of them.
_MAX_S = 30.0


class RetrySchedule:
    """Counts admitted requests and hands each refused one its turn to come back."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._window_start = clock()
        self._admitted = 0
        self._previous = 0
        self._next = 0.0
        """The last turn handed out (a `clock` time)."""

    def admitted(self) -> None:
        """A request passed admission."""
        self._roll(self._clock())
        self._admitted += 1

    def rate(self) -> float:
        """Requests admitted a second, over the current window and the one before."""
        return self._rate(self._clock())

    def retry_in(self, floor_s: float) -> float:
        """Seconds a request refused now should wait: its turn after those refused before
        it, at least `floor_s` (when the buffer says room frees), at most `_MAX_S`."""
        now = self._clock()
        rate = self._rate(now)
        if rate <= 0.0:  # nothing got in lately: when room frees is all that is known
            return min(_MAX_S, floor_s)
        # The first refused goes when room frees; each next one an admission interval later.
        turn = min(max(self._next + 1.0 / rate, now + floor_s), now + _MAX_S)
        self._next = turn
        return turn - now

    def _rate(self, now: float) -> float:
        self._roll(now)
        return (self._previous + self._admitted) / (_WINDOW_S + now - self._window_start)

    def _roll(self, now: float) -> None:
        elapsed = now - self._window_start
        if elapsed < _WINDOW_S:
            return
        if elapsed < 2 * _WINDOW_S:
            self._previous, self._window_start = self._admitted, self._window_start + _WINDOW_S
        else:  # no admission for a whole window: the rate now is the current window's
            self._previous, self._window_start = 0, now
        self._admitted = 0
