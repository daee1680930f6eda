"""The serve sections of the config: units, validation, and examples/config.full.yaml.

`examples/config.full.yaml` is generated from the models (defaults and field docstrings), so
it can never drift from them: `pytest --update-golden` rewrites it, and the load test checks
that what it says is exactly the defaults.
"""

from __future__ import annotations

import json
import textwrap
import types
import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, BeforeValidator, ValidationError

from tracescore.config import load_config, parse_config
from tracescore.config.model import Config
from tracescore.config.serve import (
    AssemblySettings,
    ExporterSettings,
    GrpcReceiver,
    HttpReceiver,
    ServiceSettings,
    parse_duration,
    parse_optional_duration,
    parse_size,
    split_endpoint,
)
from tracescore.errors import ConfigError

FULL = Path(__file__).resolve().parents[2] / "examples" / "config.full.yaml"
EXPORTER_EXAMPLE = "http://collector:4318"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [(2, 2.0), (2.5, 2.5), ("500ms", 0.5), ("2s", 2.0), ("1m", 60.0), ("1h", 3600.0), ("3", 3.0)],
)
def test_durations_take_seconds_or_a_unit(text: object, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["2 weeks", "fast", -1, True, "1d", None])
def test_bad_durations_are_refused_with_the_value(text: object) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(text)


@pytest.mark.parametrize(
    ("text", "size"),
    [(1024, 1024), ("32MiB", 32 * 1024 * 1024), ("512KB", 512_000), ("1GiB", 1 << 30), ("7", 7)],
)
def test_sizes_take_bytes_or_a_unit(text: object, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["32 parsecs", -5, False, "MiB", 1.5])
def test_bad_sizes_are_refused(text: object) -> None:
    with pytest.raises(ValueError, match="size"):
        parse_size(text)


def test_endpoints_must_be_host_and_port() -> None:
    assert split_endpoint("[::1]:4317") == ("::1", 4317)
    with pytest.raises(ValidationError, match="host:port"):
        GrpcReceiver(endpoint="localhost")
    with pytest.raises(ValidationError, match="host:port"):
        HttpReceiver(endpoint="0.0.0.0:99999")


def test_exporter_endpoint_must_be_a_url() -> None:
    with pytest.raises(ValidationError, match="expected a URL"):
        ExporterSettings(endpoint="collector:4317")


@pytest.mark.parametrize(
    ("headers", "problem"),
    [
        ({"x-team": "a\r\nInjected: 1"}, "line break"),
        ({"x team": "a"}, "not an HTTP token"),
        ({"": "a"}, "not an HTTP token"),
    ],
)
def test_exporter_headers_must_be_sendable_and_problems_name_their_path(
    headers: dict[str, str], problem: str
) -> None:
    assert ExporterSettings(endpoint="http://c:4318", headers={"X-Team_1": "a b"}).headers
    yaml_text = f"exporter: {{endpoint: 'http://c:4318', headers: {json.dumps(headers)}}}\n"
    with pytest.raises(ConfigError, match=problem) as caught:
        parse_config(yaml_text)
    assert "exporter.headers" in str(caught.value)


def test_score_attribute_prefix_must_be_an_attribute_name() -> None:
    with pytest.raises(ValidationError, match="prefix"):
        ServiceSettings(score_attribute_prefix="eval.")


def test_units_work_through_the_yaml_loader_and_problems_name_their_path() -> None:
    config = parse_config(
        "assembly: {decision_wait: 250ms, max_bytes: 1MiB}\n"
        "receivers: {grpc: null, http: {max_body_size: 4MiB}}\n"
        "mode: fanout\n"
    )
    assert config.assembly.decision_wait == 0.25
    assert config.assembly.max_bytes == 1024 * 1024
    assert config.receivers.grpc is None
    assert config.receivers.http is not None
    assert config.receivers.http.max_body_size == 4 * 1024 * 1024
    assert config.mode == "fanout"
    with pytest.raises(ConfigError) as caught:
        parse_config("assembly: {decision_wait: soon}\nmode: sideways\n")
    text = str(caught.value)
    assert "assembly.decision_wait" in text
    assert "mode" in text


# -- examples/config.full.yaml ---------------------------------------------------------------


def _defaults() -> Config:
    return Config(exporter=ExporterSettings(endpoint=EXPORTER_EXAMPLE))


def test_full_example_holds_exactly_the_defaults() -> None:
    assert load_config(str(FULL)) == _defaults()


def test_full_example_is_generated_from_the_models(update_golden: bool) -> None:
    expected = _render_config(_defaults())
    if update_golden:
        FULL.write_text(expected)
        pytest.fail(f"rewrote {FULL}; review the diff")
    assert FULL.read_text() == expected, "run pytest --update-golden and review the diff"


def test_full_example_shows_every_serve_key() -> None:
    text = FULL.read_text()
    for model in (GrpcReceiver, ExporterSettings, AssemblySettings, ServiceSettings):
        for key in model.model_fields:
            assert f"{key}:" in text, f"{model.__name__}.{key} missing from {FULL.name}"


_HEADER = """\
# Every key of a tracescore config with its default value, generated from the config models
# (tests/config/test_serve.py; `pytest --update-golden` rewrites it). Durations take seconds
# or a unit (500ms, 2s, 1m); sizes take bytes or a unit (32MiB). The only key without a
# default is exporter.endpoint, which `tracescore serve` needs; `tracescore score` ignores
# the serve sections. Scenarios: see examples/support-agent/tracescore.yaml.

"""


def _render_config(config: Config) -> str:
    return _HEADER + "\n".join(_render_model(config, 0)) + "\n"


def _render_model(model: BaseModel, indent: int) -> list[str]:
    lines: list[str] = []
    pad = "  " * indent
    for name, field in type(model).model_fields.items():
        if field.description:
            wrapped = textwrap.wrap(" ".join(field.description.split()), 96 - len(pad))
            lines.extend(f"{pad}# {line}" for line in wrapped)
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            lines.append(f"{pad}{name}:")
            lines.extend(_render_model(value, indent + 1))
        else:
            hint = _shape_hint(field.annotation) if value is None else ""
            metadata = [*field.metadata, *_union_metadata(field.annotation)]
            lines.append(f"{pad}{name}: {_scalar(value, metadata)}{hint}")
    return lines


def _union_metadata(annotation: Any) -> list[Any]:
    """Validators of an optional field's non-null type (`Duration | None`)."""
    args = typing.get_args(annotation) if typing.get_origin(annotation) is typing.Union else ()
    return [m for a in args for m in getattr(a, "__metadata__", ())]


def _shape_hint(annotation: Any) -> str:
    """For a section that is off by default: the keys it takes, as a comment."""
    args = typing.get_args(annotation) if isinstance(annotation, types.UnionType) else ()
    models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
    if not models:
        return ""
    return f"  # or {{{', '.join(models[0].model_fields)}}}"


def _scalar(value: Any, metadata: list[Any]) -> str:
    validators = {m.func for m in metadata if isinstance(m, BeforeValidator)}
    if parse_duration in validators or (
        parse_optional_duration in validators and value is not None
    ):
        return _duration(float(value))
    if parse_size in validators:
        return _size(int(value))
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, dict):
        return "{}" if not value else repr(value)
    if isinstance(value, tuple | list):
        return "[]" if not value else repr(list(value))
    return str(value)


def _duration(seconds: float) -> str:
    if seconds >= 60 and seconds % 60 == 0:
        return f"{seconds / 60:g}m"
    if seconds >= 1:
        return f"{seconds:g}s"
    return f"{seconds * 1000:g}ms"


def _size(size: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale}{unit}"
    return str(size)
