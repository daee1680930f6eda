"""Tests about the C extension itself: skipped where `TRACESCORE_NATIVE=0` chose the pure-Python
path (scripts/check.d/post-no-native.sh runs the whole suite so), and failing, not skipped,
where the extension was simply not built (CI has a C compiler)."""

from __future__ import annotations

import pytest

from tracescore.otlp import native

__all__ = ["requires_native"]

requires_native = pytest.mark.skipif(
    native.disabled(), reason=f"{native.ENV}=0: the suite runs on the pure-Python path"
)
