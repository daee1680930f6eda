"""`otlp.native.extension`: the C extension where it was built, None where it was not."""

from __future__ import annotations

import importlib

import pytest

from tracescore.otlp import native


def test_the_extension_is_the_built_module() -> None:
    module = native.extension()
    assert module is not None  # CI builds it (tests/otlp/test_scan.py says why)
    assert module.__name__ == "tracescore.otlp._scan"
    assert callable(module.select_calls)


def test_without_the_extension_there_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> object:
        raise ImportError(f"No module named {name!r}")

    monkeypatch.setattr(importlib, "import_module", missing)
    assert native.extension() is None
