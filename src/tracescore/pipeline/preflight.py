"""Checks `tracescore serve` makes before binding any port, reported like config errors.

The config model validates shapes; what it cannot see is the machine: environment variables
holding tokens, certificate files, an exporter being configured at all. Every problem is
collected and reported at once, each with its YAML path, so one failed start names them all.
"""

from __future__ import annotations

import os
import ssl

from tracescore.config.environment import (
    annotation_key_problems,
    bearer_token_problems,
    judge_key_problems,
)
from tracescore.config.model import Config
from tracescore.config.serve import ClientTlsSettings, ServerTlsSettings
from tracescore.errors import ConfigError
from tracescore.receiver import server_ssl_context

__all__ = ["ServeSecrets", "preflight"]


class ServeSecrets:
    """Values read from the environment at start-up (tokens), keyed by receiver."""

    def __init__(self, grpc_token: str | None = None, http_token: str | None = None) -> None:
        """Hold the bearer tokens of the gRPC and HTTP receivers (None: no auth)."""
        self.grpc_token = grpc_token
        self.http_token = http_token


def preflight(config: Config, source: str = "config") -> ServeSecrets:
    """Check what serving needs; raises ConfigError listing every problem."""
    problems: list[str] = []
    if config.exporter is None:
        problems.append(
            "exporter: tracescore serve needs a downstream OTLP endpoint "
            "(exporter: {endpoint: http://collector:4318})"
        )
    receivers = config.receivers
    if receivers.grpc is None and receivers.http is None:
        problems.append("receivers: both grpc and http are off; nothing would receive spans")
    problems.extend(bearer_token_problems(config))
    tokens: dict[str, str | None] = {}
    for name, receiver in (("grpc", receivers.grpc), ("http", receivers.http)):
        if receiver is None:
            continue
        where = f"receivers.{name}"
        tokens[name] = None
        if receiver.auth is not None:
            tokens[name] = os.environ.get(receiver.auth.bearer_token_env, "").strip() or None
        if receiver.tls is not None:
            problems.extend(_server_tls(receiver.tls, f"{where}.tls"))
    if config.exporter is not None and config.exporter.tls is not None:
        problems.extend(_client_tls(config.exporter.tls, "exporter.tls"))
    problems.extend(judge_key_problems(config))
    problems.extend(annotation_key_problems(config))
    if problems:
        raise ConfigError(problems, source)
    return ServeSecrets(tokens.get("grpc"), tokens.get("http"))


def _readable(path: str, where: str) -> str | None:
    try:
        with open(path, "rb"):
            return None
    except OSError as exc:
        return f"{where}: cannot read {path!r}: {exc.strerror or exc}"


def _server_tls(tls: ServerTlsSettings, where: str) -> list[str]:
    problems = [
        p
        for p in (
            _readable(tls.cert_file, f"{where}.cert_file"),
            _readable(tls.key_file, f"{where}.key_file"),
            _readable(tls.client_ca_file, f"{where}.client_ca_file")
            if tls.client_ca_file
            else None,
        )
        if p
    ]
    if not problems:
        try:
            server_ssl_context(tls)
        except (ssl.SSLError, ValueError) as exc:
            problems.append(f"{where}: certificate and key do not load: {exc}")
    return problems


def _client_tls(tls: ClientTlsSettings, where: str) -> list[str]:
    files = {"ca_file": tls.ca_file, "cert_file": tls.cert_file, "key_file": tls.key_file}
    problems = [
        p for key, path in files.items() if path and (p := _readable(path, f"{where}.{key}"))
    ]
    if bool(tls.cert_file) != bool(tls.key_file):
        problems.append(f"{where}: cert_file and key_file go together (mTLS)")
    return problems
