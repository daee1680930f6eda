"""The `receivers:` section: where `tracescore serve` takes spans in (OTLP/gRPC and OTLP/HTTP).

Sizes take a number of bytes or a string with a unit (`32MiB`, `512KB`).
"""

from __future__ import annotations

from pydantic import field_validator

from tracescore.config._base import Frozen
from tracescore.units import MIB, ByteSize

__all__ = [
    "AuthSettings",
    "GrpcReceiver",
    "HttpReceiver",
    "ReceiversSettings",
    "ServerTlsSettings",
    "split_endpoint",
]


def split_endpoint(endpoint: str) -> tuple[str, int]:
    """`host:port` (or `[v6]:port`) into its parts; raises ValueError naming the value."""
    host, sep, port_text = endpoint.rpartition(":")
    if not sep or not host or not port_text.isdigit() or int(port_text) > 65535:
        raise ValueError(f"expected host:port such as 0.0.0.0:4317, got {endpoint!r}")
    return host.strip("[]"), int(port_text)


class ServerTlsSettings(Frozen):
    """TLS on a receiver: the server's certificate chain and private key (PEM files)."""

    cert_file: str
    """PEM certificate chain presented to senders."""
    key_file: str
    """PEM private key of that certificate."""
    client_ca_file: str | None = None
    """PEM CA bundle; when set, senders must present a client certificate it signed (mTLS)."""


class AuthSettings(Frozen):
    """Bearer-token authentication: requests must carry `Authorization: Bearer <token>`."""

    bearer_token_env: str
    """Name of the environment variable holding the token (the token never goes in the file)."""


class _Receiver(Frozen):
    endpoint: str
    """host:port to listen on; port 0 picks a free port (logged at start-up)."""
    max_body_size: ByteSize = 32 * MIB
    """Largest request accepted, also after decompression (so a gzip bomb is refused)."""
    tls: ServerTlsSettings | None = None
    """TLS certificate and key; null serves plaintext."""
    auth: AuthSettings | None = None
    """Bearer-token authentication; null accepts every request."""

    @field_validator("endpoint")
    @classmethod
    def _endpoint_is_host_port(cls, value: str) -> str:
        split_endpoint(value)
        return value


class GrpcReceiver(_Receiver):
    """The OTLP/gRPC receiver (TraceService/Export)."""

    endpoint: str = "0.0.0.0:4317"
    """host:port to listen on; port 0 picks a free port (logged at start-up)."""


class HttpReceiver(_Receiver):
    """The OTLP/HTTP receiver: POST /v1/traces, plus /healthz, /readyz and /metrics."""

    endpoint: str = "0.0.0.0:4318"
    """host:port to listen on; port 0 picks a free port (logged at start-up)."""


class ReceiversSettings(Frozen):
    """Where spans come in; a receiver set to null is off."""

    grpc: GrpcReceiver | None = GrpcReceiver()
    """OTLP/gRPC receiver; null turns it off."""
    http: HttpReceiver | None = HttpReceiver()
    """OTLP/HTTP receiver; null turns it off (and with it /healthz, /readyz, /metrics)."""
