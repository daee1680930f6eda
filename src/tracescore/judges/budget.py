"""Judge budgets: requests per minute and tokens per hour, over sliding windows.

A budget never blocks: when it is spent, the caller skips the judge (`skipped: budget`) and
counts it. Token use is known only after a reply, so requests already in flight may overshoot
the token budget by their own size; the next request is refused.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

__all__ = ["JudgeBudget"]

_MINUTE = 60.0
_HOUR = 3600.0


class JudgeBudget:
    """Sliding-window limits shared by every judge client of one runner."""

    def __init__(
        self,
        max_calls_per_minute: int | None = None,
        max_tokens_per_hour: int | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`clock` returns seconds; injected so tests can move time without sleeping."""
        self.max_calls_per_minute = max_calls_per_minute
        self.max_tokens_per_hour = max_tokens_per_hour
        self._clock = clock
        self._calls: deque[float] = deque()
        self._tokens: deque[tuple[float, int]] = deque()
        self._token_sum = 0

    def try_call(self) -> str | None:
        """Record one request if the budget allows it; otherwise say which limit is spent."""
        now = self._clock()
        self._expire(now)
        if self.max_calls_per_minute is not None and len(self._calls) >= self.max_calls_per_minute:
            return f"max_calls_per_minute={self.max_calls_per_minute} reached"
        if self.max_tokens_per_hour is not None and self._token_sum >= self.max_tokens_per_hour:
            return (
                f"max_tokens_per_hour={self.max_tokens_per_hour} reached "
                f"({self._token_sum} tokens in the last hour)"
            )
        self._calls.append(now)
        return None

    def spend_tokens(self, tokens: int) -> None:
        """Record tokens (input + output) used by a reply."""
        if tokens > 0:
            self._tokens.append((self._clock(), tokens))
            self._token_sum += tokens

    @property
    def tokens_last_hour(self) -> int:
        """Tokens recorded in the last hour."""
        self._expire(self._clock())
        return self._token_sum

    def _expire(self, now: float) -> None:
        while self._calls and self._calls[0] <= now - _MINUTE:
            self._calls.popleft()
        while self._tokens and self._tokens[0][0] <= now - _HOUR:
            self._token_sum -= self._tokens.popleft()[1]
