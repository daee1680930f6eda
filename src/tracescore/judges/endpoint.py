"""The judge connection block: which OpenAI-compatible endpoint and model answer, and how.

The same block appears at the top of the config (`judge:`, where `base_url` and `model` are
required) and on any judge scorer (`judge:`, every key optional, overriding the top level).
This module imports nothing from `tracescore.config`: the scorer registry imports it.
"""

from __future__ import annotations

import math
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "DEFAULT_MAX_CONCURRENCY",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_TEMPERATURE",
    "DEFAULT_TIMEOUT_S",
    "ENDPOINT_KEYS",
    "JudgeEndpoint",
    "ResolvedEndpoint",
]

# The defaults of the connection keys, in one place (the top-level section shows them too).
DEFAULT_TEMPERATURE = 0.0
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_RETRIES = 2
DEFAULT_MAX_CONCURRENCY = 4

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class JudgeEndpoint(BaseModel):
    """A judge connection; on a scorer every key left out is taken from the top-level judge."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    base_url: str | None = None
    """Base URL of an OpenAI-compatible API, e.g. `https://api.openai.com/v1` or a local vLLM."""
    model: str | None = Field(default=None, min_length=1)
    """Model name sent with every judge request; part of every judge score's digest."""
    api_key_env: str | None = None
    """Name of the environment variable holding the API key (the key never goes in the file)."""
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    """Sampling temperature of the judge; part of the digest."""
    timeout_s: float | None = Field(default=None, gt=0.0)
    """Seconds one request may take before it is abandoned (and retried)."""
    max_retries: int | None = Field(default=None, ge=0, le=10)
    """Retries after a timeout, a 429 or a 5xx; other 4xx answers are never retried."""
    max_concurrency: int | None = Field(default=None, ge=1, le=256)
    """Requests in flight at once to this endpoint."""
    headers: dict[str, str] | None = Field(default=None, repr=False)
    """Extra HTTP headers (e.g. for a proxy); never logged or emitted."""

    @field_validator("base_url")
    @classmethod
    def base_url_is_http(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^https?://[^/\s]+", value):
            raise ValueError(
                f"expected an http(s) URL such as http://127.0.0.1:8000/v1, got {value!r}"
            )
        return value

    @field_validator("api_key_env")
    @classmethod
    def api_key_env_is_a_name(cls, value: str | None) -> str | None:
        # A key pasted here by mistake must not end up in logs via the error message.
        if value is not None and not _ENV_NAME.match(value):
            raise ValueError(
                "expected the name of an environment variable (letters, digits, '_'), "
                "not the key itself"
            )
        return value

    @field_validator("temperature", "timeout_s")
    @classmethod
    def finite(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ValueError(f"expected a finite number, got {value!r}")
        return value


ENDPOINT_KEYS: tuple[str, ...] = tuple(JudgeEndpoint.model_fields)


class ResolvedEndpoint(BaseModel):
    """A scorer's effective connection: its own `judge:` keys over the top-level ones."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str
    model: str
    api_key_env: str | None = None
    temperature: float = DEFAULT_TEMPERATURE
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_retries: int = DEFAULT_MAX_RETRIES
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    headers: dict[str, str] = Field(default_factory=dict, repr=False)

    @classmethod
    def merge(cls, *layers: JudgeEndpoint | None) -> ResolvedEndpoint:
        """Later layers win key by key; raises ValueError naming the keys nobody set."""
        values: dict[str, Any] = {}
        for layer in layers:
            if layer is None:
                continue
            for key in ENDPOINT_KEYS:
                value = getattr(layer, key)
                if value is not None:
                    values[key] = value
        missing = [k for k in ("base_url", "model") if k not in values]
        if missing:
            raise ValueError(
                f"no judge {' or '.join(missing)} configured: add a top-level `judge:` section "
                "or a `judge:` block on the scorer"
            )
        return cls(**values)

    @property
    def identity(self) -> tuple[str, float]:
        """What a judge score depends on besides the scorer: model and temperature."""
        return (self.model, self.temperature)

    @property
    def connection_key(self) -> tuple[Any, ...]:
        """Endpoints with equal keys share one client (and its connection pool)."""
        return (
            self.base_url,
            self.model,
            self.api_key_env,
            self.temperature,
            self.timeout_s,
            self.max_retries,
            self.max_concurrency,
            tuple(sorted(self.headers.items())),
        )
