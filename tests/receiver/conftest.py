"""Receivers under test run inside a real pipeline, exporting to a real OTLP sink."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from support.otlp_sink import OtlpSink
from support.serve_thread import ServeThread
from tracescore.config import parse_config

SHOP = """
scenarios:
  - name: shop
    match: {agent: shop_agent}
    gates:
      - {type: called_tool, tool: get_weather}
"""


@pytest.fixture
def sink() -> Iterator[OtlpSink]:
    """A gRPC OTLP sink the pipeline exports to."""
    with OtlpSink("grpc") as running:
        yield running


@pytest.fixture
def serve_factory(sink: OtlpSink) -> Iterator[Callable[..., ServeThread]]:
    """`serve_factory(yaml)` runs a pipeline with both receivers on free loopback ports."""
    with ExitStack() as stack:

        def start(extra: str = "", receivers: str | None = None) -> ServeThread:
            receivers = receivers or (
                "receivers:\n  grpc: {endpoint: '127.0.0.1:0'}\n  http: {endpoint: '127.0.0.1:0'}\n"
            )
            text = (
                f"{SHOP}{receivers}"
                f"exporter: {{endpoint: '{sink.endpoint}', protocol: grpc}}\n"
                "service: {shutdown_grace_period: 3s}\n"
                f"{extra}"
            )
            return stack.enter_context(ServeThread(parse_config(text)))

        yield start


@pytest.fixture
def serve(serve_factory: Callable[..., ServeThread]) -> ServeThread:
    """A pipeline with the default settings."""
    return serve_factory()


@pytest.fixture(scope="session")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key (made by the openssl CLI)."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    try:
        subprocess.run(
            [
                "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                "-keyout", str(key), "-out", str(cert),
            ],
            check=True,
            capture_output=True,
        )  # fmt: skip
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"openssl cannot make a test certificate: {exc}")
    return cert, key
