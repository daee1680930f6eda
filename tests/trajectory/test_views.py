"""Views: every text field of a classified span encodes as UTF-8."""

from __future__ import annotations

import pytest

from tracescore.trajectory._views import _TEXT_FIELDS, SpanView, clean_view


@pytest.mark.parametrize("name", _TEXT_FIELDS)
def test_clean_view_cleans_every_text_field(name: str) -> None:
    # clean_view checks all text fields at once before cleaning any: each must be in the check.
    view = SpanView("tool", "genai", tool_name="ok")
    setattr(view, name, "bad \ud800 text")
    clean_view(view)
    assert getattr(view, name) == "bad \ufffd text"
    assert (view.tool_name if name != "tool_name" else "ok") == "ok"


def test_clean_view_leaves_ascii_and_valid_text_alone() -> None:
    view = SpanView("model", "genai", model="gpt", output="caf\u00e9", tools=("a", "b\u00e9"))
    clean_view(view)
    assert (view.model, view.output, view.tools) == ("gpt", "caf\u00e9", ("a", "b\u00e9"))


def test_clean_view_cleans_tool_names() -> None:
    view = SpanView("agent", "genai", tools=("a", "b\udc80"))
    clean_view(view)
    assert view.tools == ("a", "b\ufffd")
