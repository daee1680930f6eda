"""The exporter's health per destination: failing since when and why, logged once per change.

An export that fails is retried, perhaps for minutes; logging each retry says nothing new and
buries the one line that matters. So a destination's state is logged when it changes: the first
failure (WARNING, with the endpoint and the cause: DNS, refused, TLS, timeout, HTTP status), a
different cause while still failing (WARNING), and the recovery (INFO, with how long it lasted
and how many attempts failed). Readiness asks `problem()`: a destination that has failed without
a success for longer than `exporter.unready_after` makes /readyz answer 503 with its reason.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

__all__ = ["DestinationHealth"]

log = logging.getLogger("tracescore.export.otlp")


class DestinationHealth:
    """Failure state of one export destination (an endpoint and protocol)."""

    def __init__(
        self,
        endpoint: str,
        signals: str,
        unready_after: float | None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Args:
        endpoint: the URL the destination's exports go to (named in every line).
        signals: the signals that go there, as text (`traces, logs, metrics`).
        unready_after: seconds of failing before `problem()` reports it (None: never).
        clock: monotonic seconds (tests pass their own).
        """
        self.endpoint = endpoint
        self.signals = signals
        self._unready_after = unready_after
        self._clock = clock
        self.failing_since: float | None = None
        self.cause = ""
        self.message = ""
        self.failed_attempts = 0

    def failed(self, signal: str, cause: str, message: str, retrying: bool) -> None:
        """One attempt failed; logs only when the destination starts failing or the cause
        changes."""
        self.failed_attempts += 1
        self.message = message
        if self.failing_since is not None and cause == self.cause:
            log.debug("export: %s to %s failed again: %s", signal, self.endpoint, message)
            return
        first = self.failing_since is None
        if first:
            self.failing_since = self._clock()
        self.cause = cause
        then = "retrying with backoff" if retrying else "not retried (permanent)"
        after = (
            f"; /readyz fails after {self._unready_after:g}s of this"
            if first and self._unready_after is not None
            else ""
        )
        log.warning(
            "export: %s to %s %s: %s (%s); %s%s",
            signal,
            self.endpoint,
            "failing" if first else "now failing with another cause",
            cause,
            message,
            then,
            after,
        )

    def succeeded(self) -> None:
        """One attempt succeeded; logs the recovery once."""
        if self.failing_since is None:
            return
        lasted = self._clock() - self.failing_since
        log.info(
            "export: %s recovered after %.1fs (%d failed attempts, last cause: %s)",
            self.endpoint,
            lasted,
            self.failed_attempts,
            self.cause,
        )
        self.failing_since = None
        self.cause = ""
        self.message = ""
        self.failed_attempts = 0

    def problem(self) -> str | None:
        """Why the destination makes the service unready, or None."""
        if self.failing_since is None or self._unready_after is None:
            return None
        lasted = self._clock() - self.failing_since
        if lasted < self._unready_after:
            return None
        return (
            f"exporter: {self.signals} to {self.endpoint} failing for {lasted:.1f}s "
            f"({self.failed_attempts} attempts): {self.cause} ({self.message})"
        )
