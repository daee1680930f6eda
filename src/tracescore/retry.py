"""The one retry policy of tracescore, and the one `Retry-After` parser.

Both clients that retry (the OTLP exporter and the LLM judges' client) wait by this policy:
exponential backoff from an initial interval, doubled per attempt up to a maximum, with
randomization factor 0.5 as the collector's exporterhelper uses (senders that failed together
do not all come back at the same instant); a wait the server asked for (`Retry-After`, gRPC
RetryInfo) replaces the computed one.

Nothing here imports the rest of tracescore, so every layer may use it.
"""

from __future__ import annotations

import email.utils
import math
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC

__all__ = ["RetryPolicy", "parse_retry_after", "retry_after_from_headers"]

RANDOMIZATION = 0.5


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff with jitter; `max_elapsed` of 0 retries forever."""

    initial: float
    """Wait before the first retry, in seconds (before jitter)."""
    maximum: float
    """Longest wait between two retries, in seconds (jitter included)."""
    max_elapsed: float = 0.0
    """Give up once the next wait would end this long after the first attempt (0: never)."""

    def delay(
        self, attempt: int, server_delay: float | None = None, rng: random.Random | None = None
    ) -> float:
        """Seconds to wait before retry number `attempt + 1` (`attempt` counts from 0).

        A delay the server asked for wins over the computed one (it knows when it will have
        room); it is never negative.
        """
        if server_delay is not None:
            return max(0.0, server_delay)
        base = min(self.maximum, self.initial * (2**attempt))
        jitter = (rng or random).uniform(1 - RANDOMIZATION, 1 + RANDOMIZATION)
        return float(min(self.maximum, base * jitter))

    def gives_up(self, elapsed: float, delay: float) -> bool:
        """True when waiting `delay` more seconds would pass `max_elapsed` since the start."""
        return bool(self.max_elapsed) and elapsed + delay > self.max_elapsed


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a `Retry-After` value: delay-seconds (RFC 9110; fractions are
    accepted too, as some servers send them) or an HTTP-date; None when absent or unreadable.

    Args:
        value: the header's value.
        now: the current time as a Unix timestamp (default: the clock), for HTTP-dates.
    """
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # HTTP-dates are GMT (RFC 9110 section 5.6.7)
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def retry_after_from_headers(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from a response's headers: `retry-after-ms` (OpenAI's and Azure's
    millisecond form) or else `retry-after`; None when neither is usable.

    `headers` is looked up with lowercase names (aiohttp's and httpx's header maps are
    case-insensitive; a plain dict must use lowercase keys).
    """
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            value = float(millis) / 1000
        except ValueError:
            value = None
        if value is not None and math.isfinite(value):
            return max(0.0, value)
    return parse_retry_after(headers.get("retry-after"))
