"""`answer_relevancy`: does the final answer address the request."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from judges._helpers import client_for, run, shop_run
from support.fake_openai_process import FakeOpenAI
from tracescore.config.scorers import parse_scorer
from tracescore.judges.relevancy import AnswerRelevancy
from tracescore.model import Score, Trajectory

Factory = Callable[..., FakeOpenAI]


def judge(server: FakeOpenAI, trajectory: Trajectory) -> Score:
    s = parse_scorer({"type": "answer_relevancy"})
    assert isinstance(s, AnswerRelevancy)
    client = client_for(server)

    async def go() -> Score:
        try:
            return await s.ascore(trajectory, client)
        finally:
            await client.aclose()

    return run(go())


@pytest.mark.parametrize(
    ("verdict", "value", "label"),
    [
        ("fully", 1.0, "relevant"),
        ("partially", 0.5, "partially_relevant"),
        ("not", 0.0, "irrelevant"),
    ],
)
def test_the_verdict_sets_value_and_label(
    fake_openai_factory: Factory, verdict: str, value: float, label: str
) -> None:
    server = fake_openai_factory([{"json": {"verdict": verdict, "reasoning": "because"}}])
    score = judge(server, shop_run())
    assert (score.value, score.label) == (value, label)
    assert score.explanation.endswith(": because")
    user = server.chat_bodies()[0]["messages"][1]["content"]
    assert "Where is my order A-42?" in user
    assert "Order A-42 ships tomorrow." in user


@pytest.mark.parametrize(
    ("changes", "why"),
    [({"input": None}, "no user request recorded"), ({"output": ""}, "no final answer recorded")],
)
def test_nothing_to_judge_is_not_scorable_without_a_call(
    fake_openai_factory: Factory, changes: dict[str, object], why: str
) -> None:
    server = fake_openai_factory([])
    score = judge(server, shop_run(**changes))
    assert (score.value, score.error) == (None, None)
    assert why in score.explanation
    assert server.requests() == []
