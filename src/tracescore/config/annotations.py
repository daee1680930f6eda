"""The `annotations:` section: scores sent to a viewer's own annotation API.

Span attributes and evaluation events carry every score to any OTLP backend; some viewers show
scores natively only when they arrive through their own API. Phoenix shows span annotations in
its Annotations panel, its spans table and its trace annotation charts.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import Field, field_validator

from tracescore.config._base import Frozen
from tracescore.config.exporter import RetrySettings, check_headers
from tracescore.units import Duration

__all__ = ["AnnotationsSettings", "PhoenixAnnotationSettings"]


class PhoenixAnnotationSettings(Frozen):
    """Every score as a span annotation on the scored span in Arize Phoenix."""

    endpoint: str
    """Phoenix's HTTP base URL, e.g. `http://127.0.0.1:6006` (annotations go to
    `/v1/span_annotations` under it)."""
    api_key_env: str | None = None
    """Environment variable holding a Phoenix API key (sent as a bearer token), when Phoenix
    has authentication on."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra HTTP headers sent with every request."""
    batch_size: int = Field(default=100, ge=1, le=10_000)
    """Annotations per request at most."""
    flush_interval: Duration = Field(default=1.0, gt=0)
    """Longest wait before a partial batch is sent."""
    queue_size: int = Field(default=10_000, ge=1)
    """Annotations waiting to be sent; past it new ones are dropped and counted."""
    timeout: Duration = Field(default=10.0, gt=0)
    """Deadline of one request."""
    retry: RetrySettings = RetrySettings()
    """Retries of failed requests (429, 5xx, connection errors), honouring Retry-After."""

    @field_validator("endpoint")
    @classmethod
    def _endpoint_is_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"expected Phoenix's URL such as http://phoenix:6006, got {value!r}")
        return value.rstrip("/")

    @field_validator("headers")
    @classmethod
    def _headers_are_sendable(cls, value: dict[str, str]) -> dict[str, str]:
        return check_headers(value)


class AnnotationsSettings(Frozen):
    """Viewers that get every score through their own annotation API (tracescore serve)."""

    phoenix: PhoenixAnnotationSettings | None = None
    """Arize Phoenix span annotations; off when absent."""
