"""Every judge's schema says all its reply validator checks.

The scripted server answers with the least value the request's schema admits, as a server that
enforces the schema (OpenAI strict structured outputs, vLLM or llama.cpp guided decoding) may.
Each judge must then score with that one request: no repair round trip, no `invalid_output`.
Before the schema was keyed by call, `llm_tool_call_accuracy` got `{"evaluations": []}` here for
a run with calls, and failed after a second paid request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from judges._helpers import client_for, run, shop_run
from support.fake_openai import minimal_instance
from support.fake_openai_process import FakeOpenAI
from tracescore.config.scorers import parse_scorer
from tracescore.judges.answer_schema import keyed_answer_model
from tracescore.judges.prompts import output_schema
from tracescore.judges.tool_call_accuracy import CallVerdict
from tracescore.model import Score, ToolCall, Trajectory

Factory = Callable[..., FakeOpenAI]

TWO_CALLS = shop_run(
    steps=(
        ToolCall("lookup_order", "c1", {"order_id": "A-42"}, {"eta": "tomorrow"}),
        ToolCall("lookup_order", "c2", {"order_id": "A-43"}, {"eta": "friday"}),
    )
)

JUDGES: list[tuple[dict[str, Any], float]] = [
    ({"type": "llm_tool_call_accuracy"}, 0.0),  # both calls judged, neither appropriate
    ({"type": "llm_trajectory"}, 0.1),  # neither necessary nor in order, nothing missing
    ({"type": "llm_rubric", "criteria": "polite"}, 0.0),
    ({"type": "llm_rubric", "criteria": "polite", "labels": {"good": 1.0, "bad": 0.0}}, 1.0),
    ({"type": "answer_relevancy"}, 1.0),  # the first verdict in the enum: fully
]


def judge(server: FakeOpenAI, params: dict[str, Any], trajectory: Trajectory) -> Score:
    scorer = parse_scorer(params)
    client = client_for(server)

    async def go() -> Score:
        try:
            return await scorer.ascore(trajectory, client)  # type: ignore[attr-defined, no-any-return]
        finally:
            await client.aclose()

    return run(go())


@pytest.mark.parametrize(("params", "value"), JUDGES, ids=lambda p: str(p))
def test_the_least_answer_the_schema_admits_scores_in_one_request(
    fake_openai_factory: Factory, params: dict[str, Any], value: float
) -> None:
    server = fake_openai_factory([{"minimal": True}])
    score = judge(server, params, TWO_CALLS)
    assert score.error is None, score.error
    assert score.value == pytest.approx(value)
    assert len(server.chat_bodies()) == 1


def test_the_call_keys_are_required_and_nothing_else_is_allowed() -> None:
    model = keyed_answer_model("A", CallVerdict, (1, 3), (("missing_tools", list[str]),))
    schema = output_schema(model)
    evaluations = schema["$defs"][schema["properties"]["evaluations"]["$ref"].rsplit("/", 1)[1]]
    assert evaluations["required"] == ["call_1", "call_3"]
    assert evaluations["additionalProperties"] is False
    assert schema["additionalProperties"] is False
    assert sorted(minimal_instance(schema, schema)["evaluations"]) == ["call_1", "call_3"]
    assert keyed_answer_model("A", CallVerdict, (1, 3), (("missing_tools", list[str]),)) is model
