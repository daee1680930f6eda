"""Views: every text field of a classified span encodes as UTF-8."""

from __future__ import annotations

import json

import pytest

from tracescore.model.span import AttrValue, SpanRecord, StatusCode
from tracescore.trajectory import BuildOptions
from tracescore.trajectory._classify import classify
from tracescore.trajectory._genai import GENAI
from tracescore.trajectory._views import _TEXT_FIELDS, SpanView, clean_view
from trajectory.spans import assistant, messages, span, text


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


BAD = "x\ud800y"  # a lone surrogate, as a JSON decoder may leave it
ANSWER = messages(assistant(text(BAD)))


def _genai(name: str, op: str, **attrs: AttrValue) -> SpanRecord:
    return span(1, name, attrs={"gen_ai.operation.name": op, **attrs})


@pytest.mark.parametrize(
    "record",
    [
        _genai(f"execute_tool {BAD}", "execute_tool"),
        span(
            1,
            "execute_tool t",
            attrs={"gen_ai.operation.name": "execute_tool", "error.type": BAD},
            status=StatusCode.ERROR,
            message=BAD,
        ),
        _genai(f"invoke_agent {BAD}", "invoke_agent"),
        _genai(
            "invoke_agent",
            "invoke_agent",
            **{
                "gen_ai.agent.name": BAD,
                "gen_ai.output.messages": ANSWER,
                "gen_ai.tool.definitions": json.dumps([{"name": BAD}]),
            },
        ),
        _genai(
            "chat",
            "chat",
            **{
                "gen_ai.response.model": BAD,
                "gen_ai.output.messages": ANSWER,
                "gen_ai.tool.definitions": json.dumps([BAD]),
            },
        ),
    ],
)
def test_the_genai_reader_returns_only_encodable_text(record: SpanRecord) -> None:
    # GENAI is marked `clean`: classify() skips clean_view for views it alone wrote.
    assert GENAI.clean
    view = classify(record, BuildOptions())
    assert view is not None
    assert view.convention == GENAI.name
    texts = [getattr(view, name) for name in _TEXT_FIELDS] + list(view.tools or ())
    assert any(t is not None for t in texts)
    for t in texts:
        if isinstance(t, str):
            t.encode("utf-8")
