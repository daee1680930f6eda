"""`agent_name_of`: the agent name `classify` gives, read without the whole view where GenAI's
own dispatch reads an `invoke_agent` span (the assembler asks it of every candidate span)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tracescore import semconv
from tracescore.model.span import SpanRecord
from tracescore.otlp import read_trace_files
from tracescore.trajectory import BuildOptions, agent_name_of, classify
from trajectory.spans import agent, span

_OPTIONS = BuildOptions()


def _by_classify(record: SpanRecord) -> str | None:
    view = classify(record, _OPTIONS)
    if view is None or view.role != "agent":
        return None
    return view.agent_name or ""


def test_every_recorded_span_gets_the_name_classify_gives() -> None:
    data = Path(__file__).parent.parent / "testdata"
    paths = sorted(str(p) for p in data.glob("frameworks/*.otlp.json"))
    paths += sorted(str(p) for p in data.glob("traces/*/input.otlp.json"))
    spans = read_trace_files(paths).spans
    named = [agent_name_of(record, _OPTIONS) for record in spans]
    assert named == [_by_classify(record) for record in spans]
    assert sum(name is not None for name in named) > 10  # agent spans were among them


_OP = semconv.GEN_AI_OPERATION_NAME
_AGENT = semconv.OP_INVOKE_AGENT


@pytest.mark.parametrize(
    ("name", "attrs", "scope"),
    [
        ("invoke_agent shop", {_OP: _AGENT, semconv.GEN_AI_AGENT_NAME: "shop"}, ""),
        ("invoke_agent shop", {_OP: _AGENT}, ""),  # the name's suffix
        ("invoke_agent", {_OP: _AGENT, semconv.GEN_AI_AGENT_ID: "asst_1"}, ""),  # the id
        ("invoke_agent", {_OP: _AGENT}, ""),  # unnamed: ""
        ("invoke_agent", {_OP: _AGENT, semconv.GEN_AI_AGENT_NAME: 7}, ""),  # not text
        ("x", {_OP: _AGENT, semconv.GEN_AI_AGENT_NAME: "caf\udce9"}, ""),  # a lone surrogate
        ("agent run", {_OP: _AGENT, semconv.MASTRA_SPAN_TYPE: "agent_run"}, ""),  # Mastra too
        ("agent run", {_OP: _AGENT, "logfire.msg": "x"}, semconv.PYDANTIC_AI_SCOPE),
        ("ai.generateText", {_OP: _AGENT}, ""),  # Vercel's name prefix
        ("chat", {_OP: "chat"}, ""),
        ("invoke_agent shop", {}, ""),  # GenAI's name prefix, no operation
        ("invoke_agent shop", {_OP: b"invoke_agent"}, ""),  # not a str
    ],
)
def test_edge_spans_get_the_name_classify_gives(
    name: str, attrs: dict[str, object], scope: str
) -> None:
    record = dataclasses.replace(span(1, name, attrs=attrs), scope=scope)  # type: ignore[arg-type]
    assert agent_name_of(record, _OPTIONS) == _by_classify(record)


def test_a_str_subclass_operation_is_read_as_classify_reads_it() -> None:
    class Op(str):
        pass

    record = dataclasses.replace(agent(1, "shop"), attributes={_OP: Op(_AGENT)})
    assert agent_name_of(record, _OPTIONS) == _by_classify(record)
