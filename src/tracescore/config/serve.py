"""Config sections of `tracescore serve`: mode, assembly limits, service; and the receivers'
(`config/receivers.py`) and the exporter's (`config/exporter.py`), re-exported here.

Durations take a number of seconds or a string with a unit (`500ms`, `2s`, `1m`, `1h`); sizes
take a number of bytes or a string with a unit (`32MiB`, `512KB`). Every key has a default here,
and `examples/config.full.yaml` shows them all (a test keeps the two in step).
"""

from __future__ import annotations

import re
from typing import Literal, TypeAlias

from pydantic import Field, ValidationInfo, field_validator

from tracescore.config._base import Frozen
from tracescore.config.exporter import (
    SIGNALS,
    ClientTlsSettings,
    Compression,
    ExporterSettings,
    ExportProtocol,
    RetrySettings,
    SignalSettings,
    check_headers,
    header_problem,
)
from tracescore.config.receivers import (
    AuthSettings,
    GrpcReceiver,
    HttpReceiver,
    ReceiversSettings,
    ServerTlsSettings,
    split_endpoint,
)
from tracescore.units import (
    MIB,
    ByteSize,
    Duration,
    PositiveDuration,
    parse_duration,
    parse_optional_duration,
    parse_size,
)

__all__ = [
    "SIGNALS",
    "AssemblySettings",
    "AuthSettings",
    "ByteSize",
    "ClientTlsSettings",
    "Compression",
    "Duration",
    "ExportProtocol",
    "ExporterSettings",
    "GrpcReceiver",
    "HttpReceiver",
    "PositiveDuration",
    "ReceiversSettings",
    "RetrySettings",
    "ServeMode",
    "ServerTlsSettings",
    "ServiceSettings",
    "SignalSettings",
    "check_headers",
    "header_problem",
    "parse_duration",
    "parse_optional_duration",
    "parse_size",
    "split_endpoint",
]

ServeMode: TypeAlias = Literal["forward", "fanout"]


class AssemblySettings(Frozen):
    """How spans are buffered into runs, and the limits that bound memory."""

    decision_wait: Duration = 2.0
    """A run is scored once its agent span arrived and its trace was quiet this long."""
    max_trace_age: PositiveDuration = 60.0
    """A run whose agent span never arrives is scored this long after its trace's first span,
    with complete: false (> 0)."""
    max_runs: int = Field(default=1_000_000, ge=1)
    """Traces buffered at once; at the limit receivers answer with a retryable status. A
    safety bound: at the defaults `max_bytes` is the limit reached first."""
    max_spans: int = Field(default=5_000_000, ge=1)
    """Span records buffered at once; at the limit receivers answer with a retryable status. A
    safety bound: at the defaults `max_bytes` is the limit reached first."""
    max_bytes: ByteSize = 512 * MIB
    """Estimated bytes buffered (records and held spans, within a few percent of what the
    process holds for them, plus the scanner's caches of keys, span names and resources: at
    most ~16 MiB, counted but never a refusal on their own); at the limit receivers answer
    with a retryable status. About 13 KiB per 20-span agent run when scorers read tool names
    and statuses, 19 KiB when they also read tool arguments and results."""


class ServiceSettings(Frozen):
    """The service itself: score attribute names, telemetry cadence, shutdown."""

    score_attribute_prefix: str = "eval"
    """Score attributes are `<prefix>.<score name>.score|label|explanation`."""
    metrics_interval: Duration | None = 10.0
    """How often the service's metrics are pushed over OTLP to the exporter's endpoint; null
    turns the push off (`/metrics` still serves them)."""
    shutdown_grace_period: Duration = 10.0
    """On SIGTERM: time to score what can be scored, forward everything held and flush."""

    @field_validator("metrics_interval", "shutdown_grace_period")
    @classmethod
    def _positive(cls, value: float | None, info: ValidationInfo) -> float | None:
        if value is not None and value <= 0:
            off = (
                " (null turns the metrics push off)"
                if info.field_name == "metrics_interval"
                else ""
            )
            raise ValueError(f"expected a duration above 0, got {value!r}{off}")
        return value

    @field_validator("score_attribute_prefix")
    @classmethod
    def _prefix_is_a_name(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", value) or value.endswith("."):
            raise ValueError(f"expected an attribute name prefix such as eval, got {value!r}")
        return value
