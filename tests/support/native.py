"""Tests about the C extension itself: skipped where `TRACESCORE_NATIVE=0` chose the pure-Python
path (scripts/check.d/post-no-native.sh runs the whole suite so), and failing, not skipped,
where the extension was simply not built (CI has a C compiler)."""

from __future__ import annotations

import pytest

from tracescore.otlp import native, scan

__all__ = ["UPB_CORRUPT", "by_path", "requires_native"]

requires_native = pytest.mark.skipif(
    native.disabled(), reason=f"{native.ENV}=0: the suite runs on the pure-Python path"
)

UPB_CORRUPT = (
    "Error parsing message with type "
    "'opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest': "
)
"""How upb's verdict on a request that is no OTLP request begins (the pure-Python path's)."""


def by_path(native_text: str, python_text: str) -> str:
    """What a message says on the path that runs: the native validator names the problem and
    where it is; on the pure-Python path the verdict is upb's, which names only the problem."""
    return native_text if scan.NATIVE else python_text
