"""Config section of the LLM judges (any OpenAI-compatible chat-completions endpoint).

`judge:` at the top of the config holds the default connection (overridable per scorer by a
`judge:` block on the scorer entry) and the judge-wide limits: budgets, queue, cache, redaction,
content size and `judge_wait`. Per-scenario keys (`judge_fields`, `judge_sample`) live on the
scenario and use `JudgeFields` from here.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tracescore.judges.endpoint import (
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_RETRIES,
    DEFAULT_TEMPERATURE,
    DEFAULT_TIMEOUT_S,
    JudgeEndpoint,
)
from tracescore.units import Duration

__all__ = ["CacheSettings", "JudgeFields", "JudgeSettings", "RedactionSettings"]

# What `judge_fields.exclude` may name: a field of every tool call, or of one tool's calls.
_FIELDS = ("arguments", "results", "errors")
_WHOLE_RUN_FIELDS = ("input", "output")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class CacheSettings(_Frozen):
    """Judge answers are cached by judge digest and the exact content judged."""

    max_entries: int = Field(default=10_000, ge=0)
    """Entries kept in memory (least recently used go first); 0 turns the cache off."""
    path: str | None = None
    """Optional SQLite file that keeps answers across restarts (bounded by `max_entries` too)."""


class RedactionSettings(_Frozen):
    """Redaction applied to everything sent to a judge, before it leaves the process."""

    builtin: bool = True
    """Redact API keys, bearer tokens, passwords in URLs, JWTs and e-mail addresses."""
    patterns: tuple[str, ...] = ()
    """Extra regular expressions; every match is replaced by `[REDACTED]`."""

    @field_validator("patterns")
    @classmethod
    def patterns_compile(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in value:
            try:
                compiled = re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from None
            if compiled.match(""):
                raise ValueError(f"pattern {pattern!r} matches the empty string")
        return value


class JudgeFields(_Frozen):
    """Per scenario: which parts of a run are withheld from judges (e.g. results with PII)."""

    exclude: tuple[str, ...] = ()
    """`arguments`, `results`, `errors` (of every tool call), `<tool>.arguments`,
    `<tool>.results`, `<tool>.errors` (of one tool's calls), `input` or `output`."""

    @field_validator("exclude")
    @classmethod
    def known_fields(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for entry in value:
            if entry in _FIELDS or entry in _WHOLE_RUN_FIELDS:
                continue
            tool, _, field = entry.rpartition(".")
            if not tool or field not in _FIELDS:
                raise ValueError(
                    f"unknown judge field {entry!r}; use arguments, results, errors, input, "
                    "output or <tool>.arguments / <tool>.results / <tool>.errors"
                )
        return value

    def hides(self, field: str, tool: str | None = None) -> bool:
        """True when `field` (of `tool`'s calls, if given) is withheld."""
        return field in self.exclude or (tool is not None and f"{tool}.{field}" in self.exclude)


class JudgeSettings(JudgeEndpoint):
    """The default judge and the judge-wide limits; scorers may override connection keys."""

    base_url: str
    """Base URL of an OpenAI-compatible API, e.g. `https://api.openai.com/v1` or a local vLLM."""
    model: str = Field(min_length=1)
    """Model name sent with every judge request; part of every judge score's digest."""
    temperature: float = Field(default=DEFAULT_TEMPERATURE, ge=0.0, le=2.0)
    """Sampling temperature of the judge; part of the digest."""
    timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0.0)
    """Seconds one request may take before it is abandoned (and retried)."""
    max_retries: int = Field(default=DEFAULT_MAX_RETRIES, ge=0, le=10)
    """Retries after a timeout, a 429 or a 5xx; other 4xx answers are never retried."""
    max_concurrency: int = Field(default=DEFAULT_MAX_CONCURRENCY, ge=1, le=256)
    """Runs judged at once, and requests in flight at once to one endpoint."""

    max_calls_per_minute: int | None = Field(default=None, ge=1)
    """Judge requests allowed in any 60 s window; beyond it scores say `skipped: budget`."""
    max_tokens_per_hour: int | None = Field(default=None, ge=1)
    """Judge tokens (input + output) allowed in any hour; beyond it `skipped: budget`."""
    queue_size: int = Field(default=1000, ge=1)
    """Runs waiting for a judge; when full, new work is `skipped: queue_full` (never blocks)."""
    cache: CacheSettings = Field(default_factory=CacheSettings)
    redaction: RedactionSettings = Field(default_factory=RedactionSettings)
    max_content_chars: int = Field(default=24_000, ge=500)
    """Largest run text sent to a judge; longer text is cut in the middle with a marker."""
    judge_wait: Duration = 0.0
    """`serve`: how long a held agent span waits for judge scores (0: emit them separately)."""
    retry_backoff_s: float = Field(default=0.5, gt=0.0, le=60.0)
    """First retry delay; doubles per retry, with jitter, unless the server sends Retry-After."""
