"""Every trajectory test also checks the flat-run fast path against the general builder.

Whenever the fast path answers a trace (hand-written spans, recorded fixtures, generated
cases), the general path builds the same trace too and must give the same trajectory and no
warning: so every trace the tests here build is a comparison case.
"""

from __future__ import annotations

from typing import Any

import pytest

from tracescore.model.span import SpanRecord
from tracescore.model.trajectory import Trajectory
from tracescore.trajectory import BuildOptions, _build


def checked_flat_run(
    spans: list[SpanRecord], options: BuildOptions, views: dict[str, Any]
) -> Trajectory | None:
    """`build_flat_run`, asserting its answer is the general path's."""
    flat = _build.build_flat_run(spans, options, views)
    if flat is not None:
        _build._flat_run = None
        try:
            general, warnings = _build._build_trace(spans[0].trace_id, spans, options)
        finally:
            _build._flat_run = checked_flat_run
        assert warnings == []
        assert general == [flat]
    return flat


@pytest.fixture(autouse=True)
def _flat_runs_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_build, "_flat_run", checked_flat_run)
