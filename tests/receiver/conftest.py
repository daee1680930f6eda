"""Receivers under test run inside a real pipeline, exporting to a real OTLP sink."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack

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
