"""The one error hierarchy of tracescore.

Every error is classified: permanent errors are bad input (reject it, count it, never retry);
retryable errors are transport trouble (back off and try again)::

    TracescoreError
    ├── PermanentError            bad input: reject and count, never retry
    │   ├── ConfigError           a config file that cannot be used (fails start-up)
    │   ├── InputError            a trace file or request body that cannot be decoded
    │   └── ScorerError           a scorer that cannot score a run (becomes an error score)
    └── RetryableError            transport trouble: back off and retry
        ├── OverloadedError       a buffer limit is reached; the sender should retry later
        └── ExportError           the downstream endpoint failed or timed out

Messages are lowercase, name the offending value and say where it came from.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "ExportError",
    "InputError",
    "OverloadedError",
    "PermanentError",
    "RetryableError",
    "ScorerError",
    "TracescoreError",
]


class TracescoreError(Exception):
    """Base of every error tracescore raises on purpose."""

    retryable: bool = False


class PermanentError(TracescoreError):
    """Bad input: retrying the same thing fails the same way."""


class RetryableError(TracescoreError):
    """Transport or capacity trouble: the same request may succeed later."""

    retryable = True


class ConfigError(PermanentError):
    """A config file with one or more problems, each named by its YAML path."""

    def __init__(self, problems: list[str], source: str = "config") -> None:
        self.problems = list(problems)
        self.source = source
        lines = "\n".join(f"  {p}" for p in self.problems)
        super().__init__(f"{source}: {len(self.problems)} problem(s):\n{lines}")


class InputError(PermanentError):
    """A trace file, line or request body that cannot be decoded."""


class ScorerError(PermanentError):
    """A scorer could not score a run; the run gets an error score, never a silent 0."""


class OverloadedError(RetryableError):
    """A buffer limit is reached: the sender should keep the data and retry."""

    def __init__(self, message: str, retry_after_s: float = 1.0, *, reason: str) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s
        self.reason = reason
        """The limit, as the config names it (a `semconv.REFUSED_REASONS` value)."""

    def retry_in(self, seconds: float) -> OverloadedError:
        """The same refusal advising another wait (an instance may be raised again)."""
        return OverloadedError(str(self), seconds, reason=self.reason)


class ExportError(RetryableError):
    """The downstream OTLP endpoint refused or did not answer."""
