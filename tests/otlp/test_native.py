"""`otlp.native`: the one way into the C extension, which `TRACESCORE_NATIVE=0` turns off."""

from __future__ import annotations

import importlib

import pytest

from support.native import requires_native
from tracescore.otlp import native


@requires_native
def test_the_extension_is_the_built_wire_codec() -> None:
    module = native.extension()
    assert module is not None  # CI builds it (tests/otlp/test_scan.py says why)
    assert module.__name__ == "tracescore.otlp._scan"
    assert callable(module.scan_grouped)
    assert callable(module.validate_request)
    # Only the wire codec: scorer, verdict and trajectory logic live in Python alone.
    for gone in ("select_calls", "check_score", "run_plan", "read_plain_genai", "bind_genai",
                 "encode_log_records", "encode_score_fields"):  # fmt: skip
        assert not hasattr(module, gone), gone
    assert native.describe().startswith("OTLP wire codec: native: C extension")


def test_without_the_extension_there_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(native.ENV, raising=False)

    def missing(name: str) -> object:
        raise ImportError(f"No module named {name!r}")

    monkeypatch.setattr(importlib, "import_module", missing)
    assert native.extension() is None
    assert not native.status().active
    assert "not built" in native.describe()
    assert native.describe().startswith("OTLP wire codec: pure Python")


@pytest.mark.parametrize("value", ["0", "false", "No", " off "])
def test_the_environment_turns_it_off(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(native.ENV, value)
    assert native.disabled()
    assert native.extension() is None
    assert f"{native.ENV}={value} chose the pure-Python path" in native.describe()


@requires_native
@pytest.mark.parametrize("value", ["", "1", "true", "yes", "on"])
def test_the_environment_keeps_it_on(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(native.ENV, value)
    assert not native.disabled()
    assert native.extension() is not None
    assert native.status().well_formed


@requires_native
def test_a_value_neither_on_nor_off_is_on_and_said(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(native.ENV, "maybe")
    current = native.status()
    assert current.active
    assert not current.well_formed
    assert "TRACESCORE_NATIVE='maybe' is neither 0 nor 1, read as 1" in current.reason
