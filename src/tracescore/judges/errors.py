"""Why a judge produced no value: skipped on purpose, or failed (part of `errors.ScorerError`).

A judge score with no value always carries one of these as `error`, rendered as
`<error_type>: <message>` (`skipped: budget`, `timeout: ...`), so no judge fails silently.
"""

from __future__ import annotations

from tracescore.errors import ScorerError

__all__ = ["JudgeError", "JudgeSkipped"]


class JudgeError(ScorerError):
    """A judge call failed for good: retries exhausted, a refused request, or invalid output.

    `error_type` is low-cardinality (`timeout`, `rate_limited`, `server_error`, `connection`,
    `http_<status>`, `invalid_output`, `config`) and becomes a metric attribute.
    """

    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(message)
        self.error_type = error_type


class JudgeSkipped(ScorerError):
    """Judge work deliberately not done (`queue_full`, `budget`, `shutdown`); counted."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
