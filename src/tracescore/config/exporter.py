"""The `exporter:` section: where `tracescore serve` sends spans, log events and metrics.

Durations take a number of seconds or a string with a unit (`500ms`, `2s`, `1m`, `1h`).
"""

from __future__ import annotations

import re
from typing import Literal, TypeAlias
from urllib.parse import urlsplit

from pydantic import Field, field_validator, model_validator

from tracescore.config._base import Frozen
from tracescore.retry import RetryPolicy
from tracescore.units import Duration, OptionalDuration, PositiveDuration

__all__ = [
    "SIGNALS",
    "ClientTlsSettings",
    "Compression",
    "ExportProtocol",
    "ExporterSettings",
    "RetrySettings",
    "SignalSettings",
    "check_headers",
    "header_problem",
]

# An HTTP header name (RFC 9110 token).
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def header_problem(name: str, value: str) -> str | None:
    """What keeps a header from going on the wire as it is, or None: both transports send
    headers unchanged, so a name must be an HTTP token (as gRPC metadata keys are too), and a
    value with a line break would inject headers of its own."""
    if not _HEADER_NAME.fullmatch(name):
        return f"header name {name!r} is not an HTTP token"
    if any(c in value for c in "\r\n\0"):
        return f"header {name!r} has a line break or NUL in its value"
    return None


class ClientTlsSettings(Frozen):
    """TLS towards the downstream endpoint (used with an https:// endpoint)."""

    ca_file: str | None = None
    """PEM CA bundle to verify the server; null uses the system's trust store."""
    cert_file: str | None = None
    """PEM client certificate for mTLS."""
    key_file: str | None = None
    """PEM private key of the client certificate."""


class RetrySettings(Frozen):
    """Retries of failed exports: exponential backoff with jitter, honouring Retry-After."""

    initial_interval: PositiveDuration = 0.5
    """Wait before the first retry (> 0)."""
    max_interval: PositiveDuration = 5.0
    """Longest wait between two retries (> 0)."""
    max_elapsed_time: Duration = 300.0
    """Give up on a request (dropped and counted) after this long; 0 retries forever."""

    @model_validator(mode="after")
    def _intervals_in_order(self) -> RetrySettings:
        if self.max_interval < self.initial_interval:
            raise ValueError(
                f"max_interval ({self.max_interval:g}s) is shorter than "
                f"initial_interval ({self.initial_interval:g}s)"
            )
        return self

    def policy(self) -> RetryPolicy:
        """The project's one retry policy with these intervals."""
        return RetryPolicy(self.initial_interval, self.max_interval, self.max_elapsed_time)


ExportProtocol: TypeAlias = Literal["grpc", "http/protobuf"]
Compression: TypeAlias = Literal["gzip", "none"]
SIGNALS = ("traces", "logs", "metrics")
_GRPC_PORT = 4317  # OTLP/gRPC's registered port


def _check_endpoint(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"expected a URL such as http://collector:4318, got {value!r}")
    return value


def check_headers(value: dict[str, str]) -> dict[str, str]:
    """`value` unchanged, or ValueError naming the first header that cannot be sent as it is."""
    for name, text in value.items():
        problem = header_problem(name, text)
        if problem is not None:
            raise ValueError(problem)
    return value


class SignalSettings(Frozen):
    """Where one signal (traces, logs or metrics) goes, when not where the exporter's top-level
    settings say; every key left out is taken from the exporter's."""

    enabled: bool = True
    """false: this signal is not exported at all (nothing queued, nothing counted as lost)."""
    endpoint: str | None = None
    """Base URL for this signal only; null uses `exporter.endpoint`."""
    protocol: ExportProtocol | None = None
    """Transport for this signal only; null uses `exporter.protocol`."""
    headers: dict[str, str] | None = None
    """Headers for this signal only (replacing, not merged with, `exporter.headers`)."""
    tls: ClientTlsSettings | None = None
    """TLS for this signal only; null uses `exporter.tls`."""
    compression: Compression | None = None
    """Compression for this signal only; null uses `exporter.compression`."""

    @field_validator("endpoint")
    @classmethod
    def _endpoint_is_url(cls, value: str | None) -> str | None:
        return None if value is None else _check_endpoint(value)

    @field_validator("headers")
    @classmethod
    def _headers_are_sendable(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        return None if value is None else check_headers(value)


class ExporterSettings(Frozen):
    """The downstream OTLP endpoint: traces, logs and metrics all go there unless a signal's
    own section (`traces`, `logs`, `metrics`) says otherwise."""

    endpoint: str
    """Base URL, e.g. `http://collector:4318`; https:// turns TLS on. For http/protobuf the
    paths /v1/traces, /v1/logs and /v1/metrics are appended."""
    protocol: ExportProtocol = "http/protobuf"
    """Transport to the endpoint: http/protobuf (the default, as in the OTLP exporter
    specification; it costs the service less CPU per span than gRPC) or grpc. An endpoint on
    port 4317, the OTLP/gRPC port, needs `protocol: grpc` said."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra headers (gRPC metadata) sent with every export."""
    tls: ClientTlsSettings | None = None
    """CA and client certificate for an https:// endpoint; null uses system defaults."""
    compression: Compression = "none"
    """Compression of exported requests: none (the default: on a local hop gzip costs more CPU
    than it saves; see the README) or gzip (for a slow or metered link)."""
    timeout: PositiveDuration = 10.0
    """Deadline of one export attempt (> 0)."""
    queue_size: int = Field(default=1000, ge=1)
    """Requests waiting to be sent; when full, receivers answer with a retryable status."""
    retry: RetrySettings = RetrySettings()
    """Retry policy of failed exports."""
    unready_after: OptionalDuration = 30.0
    """/readyz answers 503 (naming the endpoint and the cause) once every export attempt has
    failed for this long; null keeps readiness independent of the exporter."""
    traces: SignalSettings = SignalSettings()
    """Where spans go, if not to `endpoint` (or `enabled: false` to send none)."""
    logs: SignalSettings = SignalSettings()
    """Where the `gen_ai.evaluation.result` log events go, if not to `endpoint`."""
    metrics: SignalSettings = SignalSettings()
    """Where the service's own metrics go, if not to `endpoint`."""

    @field_validator("endpoint")
    @classmethod
    def _endpoint_is_url(cls, value: str) -> str:
        return _check_endpoint(value)

    @field_validator("headers")
    @classmethod
    def _headers_are_sendable(cls, value: dict[str, str]) -> dict[str, str]:
        return check_headers(value)

    @model_validator(mode="after")
    def _protocol_fits_port(self) -> ExporterSettings:
        # The default changed from grpc to http/protobuf: a config written for the old
        # default names the gRPC port and would now send OTLP/HTTP to it, failing only at the
        # first export. Say so at start-up instead, where the fix is one line.
        said = "protocol" in self.model_fields_set
        endpoints = [("exporter.endpoint", self.endpoint, said)]
        for name in SIGNALS:
            section = self.signal(name)
            if section.endpoint is not None:
                chosen = said or section.protocol is not None
                endpoints.append((f"exporter.{name}.endpoint", section.endpoint, chosen))
        for where, endpoint, chosen in endpoints:
            if not chosen and urlsplit(endpoint).port == _GRPC_PORT:
                raise ValueError(
                    f"{where} {endpoint!r} is on {_GRPC_PORT}, the OTLP/gRPC port, and the "
                    "exporter's protocol defaults to http/protobuf (port 4318): add "
                    "`protocol: grpc`, or use the endpoint's OTLP/HTTP port"
                )
        return self

    def signal(self, name: str) -> SignalSettings:
        """The section of one signal (`traces`, `logs` or `metrics`)."""
        if name not in SIGNALS:
            raise ValueError(f"unknown signal {name!r}; expected one of {', '.join(SIGNALS)}")
        section: SignalSettings = getattr(self, name)
        return section

    def for_signal(self, name: str) -> ExporterSettings:
        """These settings with one signal's overrides applied: what its transport uses.

        The metrics reader can take `endpoint`, `protocol`, `headers`, `tls`, `compression`
        and `timeout` from the result (and `signal("metrics").enabled` says whether to export).
        """
        section = self.signal(name)
        update = {
            key: getattr(section, key)
            for key in ("endpoint", "protocol", "headers", "tls", "compression")
            if getattr(section, key) is not None
        }
        return self.model_copy(update=update) if update else self

    def route(self, name: str) -> tuple[object, ...]:
        """What identifies one signal's destination: signals with equal routes share one
        connection (one gRPC channel, one HTTP session)."""
        s = self.for_signal(name)
        headers = tuple(sorted(s.headers.items()))
        return (s.endpoint, s.protocol, headers, s.tls, s.compression)
