"""Durations where 0 or less makes no sense are config errors naming their YAML path, and a
setting that can be off says how (null)."""

from __future__ import annotations

import pytest

from tracescore.config import parse_config
from tracescore.config.serve import ExporterSettings
from tracescore.errors import ConfigError

EXPORTER = "exporter: {{endpoint: 'http://127.0.0.1:4318', {extra}}}\n"


@pytest.mark.parametrize(
    ("yaml", "path"),
    [
        (EXPORTER.format(extra="timeout: 0"), "exporter.timeout"),
        (EXPORTER.format(extra="timeout: 0ms"), "exporter.timeout"),
        (EXPORTER.format(extra="retry: {initial_interval: 0}"), "exporter.retry.initial_interval"),
        (EXPORTER.format(extra="retry: {max_interval: 0s}"), "exporter.retry.max_interval"),
        (EXPORTER.format(extra="unready_after: 0"), "exporter.unready_after"),
        ("assembly: {max_trace_age: 0}\n", "assembly.max_trace_age"),
    ],
)
def test_a_zero_duration_that_makes_no_sense_is_an_error_naming_its_path(
    yaml: str, path: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(yaml)
    (problem,) = caught.value.problems
    assert f"{path}: must be a duration greater than 0" in problem


def test_unready_after_says_null_turns_it_off_and_null_does() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(EXPORTER.format(extra="unready_after: 0s"))
    assert "null turns it off" in caught.value.problems[0]
    config = parse_config(EXPORTER.format(extra="unready_after: null"))
    assert config.exporter is not None
    assert config.exporter.unready_after is None


def test_a_negative_duration_is_an_error_naming_its_path() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(EXPORTER.format(extra="timeout: -1s"))
    assert "exporter.timeout" in caught.value.problems[0]


def test_retry_intervals_out_of_order_are_an_error() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(EXPORTER.format(extra="retry: {initial_interval: 10s, max_interval: 1s}"))
    assert "exporter.retry" in caught.value.problems[0]


def test_a_signal_section_overrides_only_what_it_names() -> None:
    settings = ExporterSettings(
        endpoint="http://collector:4317",
        protocol="grpc",
        headers={"X-Tenant": "a"},
        logs={"endpoint": "http://events:4318", "protocol": "http/protobuf"},
        metrics={"enabled": False},
    )
    logs = settings.for_signal("logs")
    assert (logs.endpoint, logs.protocol, logs.headers) == (
        "http://events:4318",
        "http/protobuf",
        {"X-Tenant": "a"},
    )
    assert settings.for_signal("traces") is settings
    assert settings.route("traces") != settings.route("logs")
    assert not settings.signal("metrics").enabled


def test_a_bad_signal_endpoint_is_an_error_naming_its_path() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(EXPORTER.format(extra="traces: {endpoint: 'phoenix:6006'}"))
    assert "exporter.traces.endpoint" in caught.value.problems[0]
