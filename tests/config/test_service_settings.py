"""The `service` section: durations that must be above 0 are config errors naming their YAML
path; `metrics_interval: null` is how the OTLP metrics push is turned off."""

from __future__ import annotations

import pytest

from tracescore.config import parse_config
from tracescore.errors import ConfigError

BASE = "exporter: {endpoint: 'http://127.0.0.1:4318'}\n"


@pytest.mark.parametrize("value", ["0", "0s", "0ms", "-5", "-0.5"])
def test_a_metrics_interval_of_zero_or_less_is_an_error_naming_the_path(value: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(BASE + f"service:\n  metrics_interval: {value}\n", "serve.yaml")
    text = str(caught.value)
    assert "serve.yaml:3: service.metrics_interval:" in text
    assert "above 0" in text or "duration" in text
    if value in ("0", "0s", "0ms"):
        assert "null turns the metrics push off" in text


def test_a_shutdown_grace_period_of_zero_is_an_error() -> None:
    with pytest.raises(ConfigError, match=r"service\.shutdown_grace_period: expected a duration"):
        parse_config(BASE + "service: {shutdown_grace_period: 0}\n")


def test_null_turns_the_metrics_push_off_and_a_duration_sets_it() -> None:
    off = parse_config(BASE + "service: {metrics_interval: null}\n")
    assert off.service.metrics_interval is None
    assert (
        parse_config(BASE + "service: {metrics_interval: 500ms}\n").service.metrics_interval == 0.5
    )
    assert parse_config(BASE).service.metrics_interval == 10.0
