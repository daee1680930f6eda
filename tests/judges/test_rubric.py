"""`llm_rubric`: a criterion in plain words, with optional labels and examples."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from judges._helpers import client_for, run, shop_run
from support.fake_openai_process import FakeOpenAI
from tracescore.config.scorers import parse_scorer
from tracescore.judges.rubric import LlmRubric
from tracescore.model import Score

Factory = Callable[..., FakeOpenAI]
CRITERIA = "The agent tells the customer when the order ships."


def scorer(**params: Any) -> LlmRubric:
    built = parse_scorer({"type": "llm_rubric", "criteria": CRITERIA, **params})
    assert isinstance(built, LlmRubric)
    return built


def judge(server: FakeOpenAI, s: LlmRubric) -> Score:
    client = client_for(server)

    async def go() -> Score:
        try:
            return await s.ascore(shop_run(), client)
        finally:
            await client.aclose()

    return run(go())


def test_a_plain_rubric_returns_the_judges_score_and_explanation(
    fake_openai_factory: Factory,
) -> None:
    server = fake_openai_factory([{"json": {"score": 0.75, "explanation": "says tomorrow"}}])
    score = judge(server, scorer(threshold=0.7))
    assert (score.value, score.passed, score.label, score.explanation) == (
        0.75, True, "pass", "says tomorrow",
    )  # fmt: skip
    system = server.chat_bodies()[0]["messages"][0]["content"]
    assert f"Criterion:\n{CRITERIA}" in system
    assert "Give a score between 0 and 1" in system


def test_labels_as_a_mapping_make_the_score_the_labels(fake_openai_factory: Factory) -> None:
    server = fake_openai_factory([{"json": {"label": "partly", "explanation": "vague"}}])
    score = judge(server, scorer(labels={"yes": 1.0, "partly": 0.4, "no": 0.0}))
    assert (score.value, score.label) == (0.4, "partly")
    body = server.chat_bodies()[0]
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["label"]["enum"] == ["yes", "partly", "no"]
    assert "score" not in schema["properties"]
    assert '"partly" (score 0.4)' in body["messages"][0]["content"]


def test_a_label_outside_the_list_is_repaired(fake_openai_factory: Factory) -> None:
    server = fake_openai_factory(
        [
            {"json": {"score": 1, "label": "great", "explanation": "e"}},
            {"json": {"score": 1, "label": "good", "explanation": "e"}},
        ]
    )
    score = judge(server, scorer(labels=["good", "bad"]))
    assert (score.value, score.label) == (1.0, "good")
    assert "label" in server.chat_bodies()[1]["messages"][-1]["content"]


def test_a_score_outside_0_1_is_refused_twice_into_an_error(fake_openai_factory: Factory) -> None:
    server = fake_openai_factory([{"json": {"score": 7, "explanation": "e"}}] * 2)
    score = judge(server, scorer())
    assert score.value is None
    assert score.error is not None
    assert score.error.startswith("invalid_output: judge 'judge-model' gave invalid output twice")


def test_examples_are_shown_to_the_judge(fake_openai_factory: Factory) -> None:
    server = fake_openai_factory([{"json": {"score": 1, "label": "good", "explanation": "e"}}])
    examples = [
        {"input": "when?", "output": "Tuesday", "score": 1, "label": "good"},
        {"output": "soon", "label": "bad", "explanation": "no date"},
    ]
    judge(server, scorer(labels=["good", "bad"], examples=examples))
    system = server.chat_bodies()[0]["messages"][0]["content"]
    assert (
        'Example 1:\n  request: when?\n  answer: Tuesday\n  judgement: score 1, label "good"'
        in system
    )
    assert "  because: no date" in system


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"criteria": "  "}, "criteria is empty"),
        ({"labels": []}, "labels is empty"),
        ({"labels": ["a", "a"]}, "duplicate labels"),
        ({"labels": {"a": 1.5}}, "label 'a' maps to 1.5"),
        ({"labels": ["a"], "examples": [{"output": "x", "label": "b"}]}, "examples[0].label 'b'"),
        ({"examples": [{"score": 1}]}, "an example needs an input, an output or both"),
        ({"examples": [{"output": "x"}]}, "an example needs a score, a label or both"),
    ],
)
def test_a_rubric_that_cannot_check_anything_is_refused(
    params: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message.replace("[", r"\[").replace("]", r"\]")):
        scorer(**params)
