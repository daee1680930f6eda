"""The exporter's protocol defaults to http/protobuf, as the OTLP exporter specification says;
an endpoint on the OTLP/gRPC port with no protocol said is refused at load, naming the fix."""

from __future__ import annotations

import pytest

from tracescore.config import parse_config
from tracescore.errors import ConfigError


def _exporter(yaml: str) -> tuple[str, str, str]:
    """The protocol each signal (traces, logs, metrics) is exported with."""
    exporter = parse_config(yaml).exporter
    assert exporter is not None
    traces, logs, metrics = (exporter.for_signal(s) for s in ("traces", "logs", "metrics"))
    return traces.protocol, logs.protocol, metrics.protocol


def test_the_default_protocol_is_http_protobuf() -> None:
    assert _exporter("exporter: {endpoint: 'http://collector:4318'}\n") == ("http/protobuf",) * 3


def test_the_grpc_port_without_a_protocol_is_an_error_naming_the_fix() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config("exporter: {endpoint: 'http://collector:4317'}\n")
    (problem,) = caught.value.problems
    assert "'http://collector:4317'" in problem
    assert "protocol: grpc" in problem
    assert "4318" in problem


@pytest.mark.parametrize(
    ("yaml", "protocols"),
    [
        ("exporter: {endpoint: 'http://c:4317', protocol: grpc}\n", ("grpc",) * 3),
        (
            "exporter: {endpoint: 'http://c:4318', logs: {endpoint: 'http://e:4317', "
            "protocol: grpc}}\n",
            ("http/protobuf", "grpc", "http/protobuf"),
        ),
        # A protocol said at the top level covers a signal's endpoint too.
        (
            "exporter: {endpoint: 'http://c:4317', protocol: grpc, "
            "metrics: {endpoint: 'http://m:4317'}}\n",
            ("grpc",) * 3,
        ),
        # Other ports are not guessed at: Phoenix takes OTLP/HTTP on 6006.
        ("exporter: {endpoint: 'http://phoenix:6006'}\n", ("http/protobuf",) * 3),
    ],
)
def test_a_protocol_said_anywhere_that_covers_the_endpoint_is_taken(
    yaml: str, protocols: tuple[str, str, str]
) -> None:
    assert _exporter(yaml) == protocols


def test_a_signal_endpoint_on_the_grpc_port_is_an_error_naming_its_path() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config("exporter: {endpoint: 'http://c:4318', traces: {endpoint: 'http://t:4317'}}\n")
    (problem,) = caught.value.problems
    assert "exporter.traces.endpoint 'http://t:4317'" in problem
