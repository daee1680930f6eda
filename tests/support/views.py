"""SpanViews as plain data, so views from two readers can be compared field by field."""

from __future__ import annotations

from typing import Any

__all__ = ["comparable_view"]


def comparable_view(view: object, *, with_classes: bool = False) -> Any:
    """Every slot of `view`, lazy ones (input text, responses, Deferred values) resolved; with
    `with_classes`, each value paired with its class name (a Deferred is not its value)."""
    if view is None:
        return None
    out = {}
    for name in view.__slots__:  # type: ignore[attr-defined]
        value = getattr(view, name)
        resolved = value() if callable(value) else value
        out[name] = (value.__class__.__name__, resolved) if with_classes else resolved
    return out
